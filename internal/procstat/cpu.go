//go:build unix

package procstat

import (
	"runtime"
	"syscall"
	"time"
)

// ReadUsage returns the process's usage (getrusage(RUSAGE_SELF): every
// thread's).
func ReadUsage() (Usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, err
	}
	return Usage{User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano()),
		MaxRSS: maxRSSBytes(int64(ru.Maxrss))}, nil
}

// maxRSSBytes converts ru_maxrss to bytes: Linux and the BSDs count it in
// KiB, macOS in bytes.
func maxRSSBytes(maxrss int64) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return maxrss
	}
	return maxrss << 10
}

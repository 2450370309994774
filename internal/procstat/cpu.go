//go:build unix

package procstat

import (
	"os"
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

// ExitedMaxRSS returns the peak resident set size of the exited process
// p, in bytes (its getrusage ru_maxrss); 0 if unknown.
func ExitedMaxRSS(p *os.ProcessState) int64 {
	ru, ok := p.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return maxRSSBytes(int64(ru.Maxrss))
}

// maxRSSBytes converts ru_maxrss to bytes: Linux and the BSDs count it in
// KiB, macOS in bytes.
func maxRSSBytes(maxrss int64) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return maxrss
	}
	return maxrss << 10
}

//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS returns the peak resident set size of the exited process p, in
// bytes: getrusage's ru_maxrss, which Linux and the BSDs count in KiB and
// macOS in bytes. 0 if unknown.
func maxRSS(p *os.ProcessState) int64 {
	ru, ok := p.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

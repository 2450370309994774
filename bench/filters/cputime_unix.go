//go:build unix

package filters

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time, user and system, that the process has used,
// and true. Time per operation measured with it, unlike wall-clock time,
// does not grow while the process waits for a core, which on a machine
// shared with other work is most of the noise of a benchmark.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

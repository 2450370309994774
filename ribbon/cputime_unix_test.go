//go:build unix

package ribbon

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system: on a
// busy machine a benchmark's wall time measures the other processes as
// much as the code, its CPU time mostly the code (and the garbage
// collection it causes).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build !unix

package ribbon

import "time"

// cpuTime is 0 where the process's CPU time is not measured: the
// benchmarks then report no CPU time.
func cpuTime() time.Duration { return 0 }

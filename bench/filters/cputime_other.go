//go:build !unix

package filters

import "time"

// CPUTime returns false: this system has no getrusage, and callers fall
// back to wall-clock time.
func CPUTime() (time.Duration, bool) { return 0, false }

//go:build !unix

package procstat

import (
	"errors"
	"os"
)

// ReadUsage returns an error: this system has no getrusage.
func ReadUsage() (Usage, error) {
	return Usage{}, errors.New("procstat: CPU time needs getrusage (Unix)")
}

// ExitedMaxRSS returns 0: this system's process state has no peak RSS.
func ExitedMaxRSS(*os.ProcessState) int64 { return 0 }

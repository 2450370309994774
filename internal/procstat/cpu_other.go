//go:build !unix

package procstat

import "errors"

// ReadUsage returns an error: this system has no getrusage.
func ReadUsage() (Usage, error) {
	return Usage{}, errors.New("procstat: CPU time needs getrusage (Unix)")
}

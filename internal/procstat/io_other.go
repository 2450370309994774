//go:build !linux

package procstat

import (
	"errors"
	"os"
)

var errNotLinux = errors.New("procstat: the page cache and device counters need Linux")

func syncAll() error { return errNotLinux }

func deviceNumber(string) (major, minor uint64, err error) { return 0, 0, errNotLinux }

// flock does nothing: the page cache cannot be dropped here (syncAll
// fails first), so there is nothing to keep a measurement from.
func flock(*os.File, bool) error { return nil }

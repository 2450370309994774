//go:build !linux

package procstat

import "errors"

var errNotLinux = errors.New("procstat: the page cache and device counters need Linux")

func syncAll() error { return errNotLinux }

func deviceNumber(string) (major, minor uint64, err error) { return 0, 0, errNotLinux }

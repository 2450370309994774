//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package vfs

import (
	"errors"
	"io/fs"
	"os"
)

// flock fails where syscall.Flock does not exist: opening a store without the
// protection of its LOCK file would let two processes corrupt it.
func flock(f *os.File, shared bool) error {
	return &fs.PathError{Op: "lock", Path: f.Name(), Err: errors.ErrUnsupported}
}

// funlock has no lock to release where flock fails.
func funlock(*os.File) error { return nil }

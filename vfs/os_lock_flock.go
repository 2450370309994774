//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// flock takes a non-blocking flock on f, shared or exclusive: a store whose
// directory is in use must fail to open at once, not hang.
func flock(f *os.File, shared bool) error {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	err, serr := flockCall(f, how|syscall.LOCK_NB)
	switch {
	case err != nil:
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	case errors.Is(serr, syscall.EWOULDBLOCK):
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: ErrLocked}
	case serr != nil:
		return &fs.PathError{Op: "flock", Path: f.Name(), Err: serr}
	}
	return nil
}

// funlock releases f's flock: the lock of its open file description,
// whichever descriptors refer to it.
func funlock(f *os.File) error {
	err, serr := flockCall(f, syscall.LOCK_UN)
	if err == nil {
		err = serr
	}
	if err != nil {
		return &fs.PathError{Op: "unlock", Path: f.Name(), Err: err}
	}
	return nil
}

// flockCall calls flock(2) on f's descriptor with how, again while a signal
// interrupts it: err is why the descriptor could not be had (f closed),
// serr what flock returned.
func flockCall(f *os.File, how int) (err, serr error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return err, nil
	}
	err = rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Flock(int(fd), how)
			if serr != syscall.EINTR {
				return
			}
		}
	})
	return err, serr
}

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// syncData is fdatasync: it skips flushing metadata that reading the data back
// does not need (timestamps), which makes the WAL's per-commit sync cheaper.
func syncData(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		// Control fails only when the file is closed; say so the way
		// os.File.Sync does, so that errors.Is(err, fs.ErrClosed) holds.
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: fs.ErrClosed}
	}
	if serr != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Default is the operating system's file system, as NewOS returns it.
var Default FS = NewOS()

// NewOS returns the operating system's file system. File.Sync is fdatasync on
// Linux (the file's size is among the metadata fdatasync flushes, so appended
// data is durable) and os.File.Sync elsewhere; SyncDir opens the directory and
// fsyncs it. Lock uses flock(2), which holds across processes and, because
// every Lock opens a fresh file description, within one process too. On file
// systems that emulate flock with byte-range locks (some NFS setups) a second
// Lock from the same process may succeed; keep databases on local disks.
func NewOS() FS { return osFS{} }

type osFS struct{}

// osFile is an *os.File whose Sync flushes only what reading the data back
// needs (see syncData).
type osFile struct{ *os.File }

func (f osFile) Sync() error { return syncData(f.File) }

func (osFS) Create(name string) (File, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) Lock(name string) (io.Closer, error) {
	// A fresh open file description per Lock is what makes a second Lock in
	// the same process conflict: flock locks belong to descriptions.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f, false); err != nil {
		f.Close()
		return nil, err
	}
	return lockFile{f}, nil
}

func (osFS) LockShared(name string) (io.Closer, error) {
	f, err := os.Open(name) // read-only, and never created
	if err != nil {
		return nil, err
	}
	if err := flock(f, true); err != nil {
		f.Close()
		return nil, err
	}
	return lockFile{f}, nil
}

// lockFile is a locked file, unlocked and closed by Close.
type lockFile struct{ f *os.File }

// Close unlocks the file, then closes it. Closing alone would release the
// lock only once no descriptor refers to the file's open description: a
// child process forked meanwhile (by any goroutine of the process) holds a
// copy of every descriptor until it execs, so a Lock right after Close,
// a DB reopened, could find the directory still locked.
func (l lockFile) Close() error {
	return errors.Join(funlock(l.f), l.f.Close())
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	// fsync of a regular file would succeed and sync the wrong thing; refuse,
	// as MemFS does, so a caller passing a file name learns of it.
	fi, err := d.Stat()
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "syncdir", Path: dir, Err: syscall.ENOTDIR}
	}
	if err == nil {
		err = d.Sync()
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (osFS) PathJoin(elem ...string) string { return filepath.Join(elem...) }

func (osFS) PathBase(path string) string { return filepath.Base(path) }

func (osFS) PathDir(path string) string { return filepath.Dir(path) }

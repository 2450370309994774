//go:build unix

package vfs

import (
	"io/fs"
	"syscall"
)

// Map maps the whole file, read-only and shared (Mapper), and on Linux
// advises the system that it will be read at random (madvise(2)
// MADV_RANDOM, as AdviseRandom does for reads): a fault reads the page it
// needs, not the pages around it.
func (f osFile) Map() (*Mapping, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size <= 0 || int64(int(size)) != size {
		return nil, ErrNotMappable
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var data []byte
	var mapErr error
	if err := rc.Control(func(fd uintptr) {
		data, mapErr = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	}); err != nil {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: fs.ErrClosed}
	}
	if mapErr != nil {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: mapErr}
	}
	adviseMappedRandom(data)
	return &Mapping{name: f.Name(), data: data, unmap: syscall.Munmap}, nil
}

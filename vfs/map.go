package vfs

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
)

// Mapper is a File whose contents can be mapped into the process's memory
// for reading (mmap(2), read-only, shared). A read of a mapped file copies
// from memory the kernel fills from its page cache: no system call, where
// ReadAt makes one per read — most of the cost of reading a block already
// in the page cache.
//
// It is optional: a File without it is read with ReadAt. The OS file has it
// on Unix systems. Counting and Injecting do not pass it through: their
// files are read with ReadAt, so that every read is counted, or can fail.
type Mapper interface {
	// Map maps the file's current contents. The file must not change size
	// while mapped: a read past its end then faults, which Mapping.ReadAt
	// reports as ErrMappedFault. A file of no bytes cannot be mapped
	// (ErrNotMappable).
	Map() (*Mapping, error)
}

// ErrNotMappable is Map's error for a file that cannot be mapped: one with
// no Mapper, or one of no bytes. The caller reads the file with ReadAt.
var ErrNotMappable = errors.New("vfs: the file cannot be mapped")

// ErrMappedFault is the error of a read of a Mapping that faulted: the
// system could not supply a page of the file — an I/O error of the device,
// or the file truncated beneath the mapping. The kernel reports it with
// SIGBUS, which Mapping.ReadAt turns into this error rather than a crash.
var ErrMappedFault = errors.New("vfs: a read of a mapped file faulted (an I/O error, or the file truncated)")

// Map maps f's contents, if f is a Mapper; otherwise it returns
// ErrNotMappable.
func Map(f File) (*Mapping, error) {
	if m, ok := f.(Mapper); ok {
		return m.Map()
	}
	return nil, ErrNotMappable
}

// Mapping is a file's contents mapped into memory, read with ReadAt until
// Close. It is safe for concurrent reads; Close must not run beside one.
type Mapping struct {
	name  string
	data  []byte
	unmap func([]byte) error
}

// Size returns the number of bytes mapped.
func (m *Mapping) Size() int64 { return int64(len(m.data)) }

// ReadAt implements io.ReaderAt over the mapped bytes. A fault of the
// mapping — the system unable to read a page, or the file shorter than
// when it was mapped — is ErrMappedFault, wrapped with the file and the
// offset, never a crash: the copy runs with debug.SetPanicOnFault, and the
// fault's panic is recovered here.
func (m *Mapping) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 {
		return 0, fmt.Errorf("vfs: read of %s at offset %d: negative offset", m.name, off)
	}
	if len(p) == 0 {
		return 0, nil // as os.File's ReadAt
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n, err = m.copyAt(p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// copyAt copies m.data[off:] into p, turning a fault into ErrMappedFault.
func (m *Mapping) copyAt(p []byte, off int64) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			// Only a memory fault is turned into an error: any other
			// panic is a bug, and goes on.
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			n, err = 0, fmt.Errorf("vfs: read of %s at offset %d: %w", m.name, off, ErrMappedFault)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return copy(p, m.data[off:]), nil
}

// Close unmaps the file. The Mapping must not be read after.
func (m *Mapping) Close() error {
	if m.data == nil {
		return nil
	}
	err := m.unmap(m.data)
	m.data = nil
	if err != nil {
		return fmt.Errorf("vfs: unmap %s: %w", m.name, err)
	}
	return nil
}

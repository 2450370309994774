package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"syscall"
	"time"
)

// memFile is an open handle on a MemFS node. Its fields are guarded by the
// file system's mutex, which also guards the node.
type memFile struct {
	fs       *MemFS
	n        *memNode
	name     string
	writable bool
	off      int64
	closed   bool
}

// check returns the error an operation op on f must fail with, if any.
func (f *memFile) check(op string) error {
	if f.closed {
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	}
	// Directories open read-only, so Write fails with EBADF, as on Linux.
	if f.n.isDir && op == "read" {
		return &fs.PathError{Op: op, Path: f.name, Err: syscall.EISDIR}
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.off:])
	f.off += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: errors.New("negative offset")}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write"); err != nil {
		return 0, err
	}
	if !f.writable {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
	}
	f.n.writeAt(p, f.off)
	f.off += int64(len(p))
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("sync"); err != nil {
		return err
	}
	f.n.syncLocked()
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat"); err != nil {
		return nil, err
	}
	return f.n.info(f.fs.PathBase(f.name)), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("close"); err != nil {
		return err
	}
	f.closed = true
	return nil
}

// writeAt writes p at off, zero-filling any gap past the end, as a write
// after another handle truncated the file does.
func (n *memNode) writeAt(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	if n.syncedShared && off < int64(len(n.synced)) {
		n.synced = bytes.Clone(n.synced)
		n.syncedShared = false
	}
	end := off + int64(len(p))
	if old := int64(len(n.data)); end > old {
		if end > int64(cap(n.data)) {
			grown := make([]byte, old, max(end, 2*int64(cap(n.data))))
			copy(grown, n.data)
			n.data = grown
		}
		n.data = n.data[:end]
		if off > old {
			clear(n.data[old:off])
		}
	}
	copy(n.data[off:], p)
}

// truncate empties a file. The durable contents are untouched: a crash before
// the next Sync brings them back.
func (n *memNode) truncate() {
	// A fresh array, so that later writes cannot reach the one synced uses.
	n.data = nil
	n.syncedShared = false
}

// syncLocked makes a file's contents, or a directory's entries, durable.
func (n *memNode) syncLocked() {
	if n.isDir {
		n.syncedChildren = maps.Clone(n.children)
		return
	}
	n.synced = n.data[:len(n.data):len(n.data)]
	n.syncedShared = true
}

func (n *memNode) info(name string) os.FileInfo {
	return memFileInfo{name: name, size: int64(len(n.data)), isDir: n.isDir}
}

// memFileInfo describes a MemFS node. MemFS keeps no times or permissions.
type memFileInfo struct {
	name  string
	size  int64
	isDir bool
}

func (fi memFileInfo) Name() string       { return fi.name }
func (fi memFileInfo) Size() int64        { return fi.size }
func (fi memFileInfo) ModTime() time.Time { return time.Time{} }
func (fi memFileInfo) IsDir() bool        { return fi.isDir }
func (fi memFileInfo) Sys() any           { return nil }

func (fi memFileInfo) Mode() fs.FileMode {
	if fi.isDir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

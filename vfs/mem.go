package vfs

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MemFS is an in-memory FS that remembers, besides what is visible, what is
// durable — each file's contents as of its last File.Sync and each directory's
// entries as of its last SyncDir — so that CrashClone can build the file
// system a crash would leave. It is safe for concurrent use.
//
// Names are slash-separated and all resolve below one root, "/": "a/b" and
// "/a/b" are the same file, and ".." at the root stays at the root. The root
// always exists and is always durable.
//
// MemFS does not rename directories (Rename of a directory fails with
// errors.ErrUnsupported): bloomkv never does, and forbidding it keeps every
// directory reachable by exactly one path, before and after a crash.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
}

// memNode is a file or a directory: an inode, which may be reachable under
// more than one name (an open handle to a removed file, or both names of a
// rename after a crash that kept one side of it).
type memNode struct {
	isDir bool

	// data is a file's contents as readers see them; synced is what a crash
	// keeps. INVARIANT: synced equals data[:len(synced)] whenever
	// syncedShared is set, and then the two may share one array; a write
	// below len(synced) copies synced first. That makes Sync O(1) for the
	// append-only files an LSM writes.
	data         []byte
	synced       []byte
	syncedShared bool

	// children are a directory's entries as List sees them; syncedChildren
	// are the entries as of its last SyncDir, which a crash keeps.
	children       map[string]*memNode
	syncedChildren map[string]*memNode

	// locked and sharedLocks are held per node, as flock is held per
	// inode: Lock's exclusive lock, and how many LockShared locks are held.
	// INVARIANT: never both locked and sharedLocks > 0.
	locked      bool
	sharedLocks int
}

func newMemDir() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}}
}

// NewMem returns an empty in-memory file system holding only the root "/".
func NewMem() *MemFS { return &MemFS{root: newMemDir()} }

// walk resolves name to its parent directory, its base name within it, and
// its node, which is nil if the parent exists but the entry does not. For the
// root, dir is nil. Errors are *fs.PathError with op.
func (m *MemFS) walk(op, name string) (dir *memNode, base string, n *memNode, err error) {
	if name == "" {
		return nil, "", nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOENT}
	}
	p := path.Clean("/" + name)
	if p == "/" {
		return nil, "", m.root, nil
	}
	parts := strings.Split(p[1:], "/")
	dir = m.root
	for _, part := range parts[:len(parts)-1] {
		c := dir.children[part]
		if c == nil {
			return nil, "", nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOENT}
		}
		if !c.isDir {
			return nil, "", nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
		}
		dir = c
	}
	base = parts[len(parts)-1]
	return dir, base, dir.children[base], nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.createLocked("open", name)
	if err != nil {
		return nil, err
	}
	n.truncate()
	return &memFile{fs: m, n: n, name: name, writable: true}, nil
}

// createLocked returns the file at name, adding an empty one if it is missing.
func (m *MemFS) createLocked(op, name string) (*memNode, error) {
	dir, base, n, err := m.walk(op, name)
	switch {
	case err != nil:
		return nil, err
	case n == nil:
		n = &memNode{}
		dir.children[base] = n
	case n.isDir:
		return nil, &fs.PathError{Op: op, Path: name, Err: syscall.EISDIR}
	}
	return n, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.walk("open", name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
	}
	return &memFile{fs: m, n: n, name: name}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, n, err := m.walk("remove", name)
	switch {
	case err != nil:
		return err
	case n == nil:
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOENT}
	case dir == nil:
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EBUSY}
	case n.isDir && len(n.children) > 0:
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	return nil
}

// linkError is the error of an operation on two names (rename, link), as
// the os package reports it: an *os.LinkError holding the bare cause, not
// the *fs.PathError that walking one of the names returned.
func linkError(op, oldname, newname string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &os.LinkError{Op: op, Old: oldname, New: newname, Err: err}
}

// Rename implements FS.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	linkErr := func(err error) error { return linkError("rename", oldname, newname, err) }
	odir, obase, on, err := m.walk("rename", oldname)
	if err != nil {
		return linkErr(err)
	}
	ndir, nbase, nn, err := m.walk("rename", newname)
	switch {
	case err != nil:
		return linkErr(err)
	case on == nil:
		return linkErr(syscall.ENOENT)
	case odir == nil || ndir == nil:
		return linkErr(syscall.EBUSY)
	case on.isDir:
		return linkErr(errors.ErrUnsupported)
	case nn != nil && nn.isDir:
		// os.Rename refuses a directory target with EEXIST on every platform.
		return linkErr(syscall.EEXIST)
	case on == nn:
		// POSIX: renaming a file onto another link to itself does nothing.
		return nil
	}
	delete(odir.children, obase)
	ndir.children[nbase] = on
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.dirLocked("open", dir)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(n.children)), nil
}

// dirLocked returns the directory at name.
func (m *MemFS) dirLocked(op, name string) (*memNode, error) {
	_, _, n, err := m.walk(op, name)
	switch {
	case err != nil:
		return nil, err
	case n == nil:
		return nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOENT}
	case !n.isDir:
		return nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
	}
	return n, nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dir == "" {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOENT}
	}
	p := path.Clean("/" + dir)
	if p == "/" {
		return nil
	}
	d := m.root
	for _, part := range strings.Split(p[1:], "/") {
		c := d.children[part]
		if c == nil {
			c = newMemDir()
			d.children[part] = c
		} else if !c.isDir {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		d = c
	}
	return nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.walk("stat", name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: syscall.ENOENT}
	}
	return n.info(path.Base(path.Clean("/" + name))), nil
}

// Lock implements FS. The lock belongs to the file, not to its name: after the
// LOCK file is removed and created again, the new file is unlocked.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.createLocked("open", name)
	if err != nil {
		return nil, err
	}
	if n.locked || n.sharedLocks > 0 {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	n.locked = true
	return &memLock{fs: m, n: n, name: name}, nil
}

// LockShared implements FS.
func (m *MemFS) LockShared(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.walk("open", name)
	switch {
	case err != nil:
		return nil, err
	case n == nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
	case n.isDir:
		return nil, &fs.PathError{Op: "lock", Path: name, Err: syscall.EISDIR}
	case n.locked:
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	n.sharedLocks++
	return &memLock{fs: m, n: n, name: name, shared: true}, nil
}

// memLock is a held MemFS lock.
type memLock struct {
	fs     *MemFS
	n      *memNode
	name   string
	shared bool
	closed bool
}

func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.closed {
		return &fs.PathError{Op: "close", Path: l.name, Err: fs.ErrClosed}
	}
	l.closed = true
	if l.shared {
		l.n.sharedLocks--
	} else {
		l.n.locked = false
	}
	return nil
}

// SyncDir implements FS.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.dirLocked("syncdir", dir)
	if err != nil {
		return err
	}
	n.syncLocked()
	return nil
}

// PathJoin implements FS.
func (*MemFS) PathJoin(elem ...string) string { return path.Join(elem...) }

// PathBase implements FS.
func (*MemFS) PathBase(p string) string { return path.Base(p) }

// PathDir implements FS.
func (*MemFS) PathDir(p string) string { return path.Dir(p) }

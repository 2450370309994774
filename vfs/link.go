package vfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Linker is implemented by the file systems that make hard links: a second
// name for an existing file, sharing its contents. The OS file system, MemFS
// and the wrappers of one (Counting, Injecting) implement it.
type Linker interface {
	// Link creates newname as a hard link to the file oldname, as os.Link
	// does: newname must not exist. Like Create, it does not make the new
	// entry durable: SyncDir of newname's directory does. The file's
	// contents are durable as far as they were: a link shares them.
	Link(oldname, newname string) error
}

// Link makes newname a hard link to oldname if fs implements Linker, and
// otherwise returns an *os.LinkError wrapping errors.ErrUnsupported.
// LinkUnsupported tells such an error, and the ones a file system that
// cannot link the two names returns, from other failures.
func Link(fs FS, oldname, newname string) error {
	if l, ok := fs.(Linker); ok {
		return l.Link(oldname, newname)
	}
	return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fmt.Errorf("%T does not make hard links: %w", fs, errors.ErrUnsupported)}
}

// LinkUnsupported reports whether err, from Link, says that the file
// system cannot link these two names — they are on different devices
// (EXDEV), it makes no hard links at all (errors.ErrUnsupported, EPERM,
// ENOTSUP, which some file systems return for link(2)), or the file has as
// many links as it may (EMLINK) — rather than that the link failed for
// another reason (a missing file, an existing target, a full disk). A
// caller that wants a copy of the file then copies it.
func LinkUnsupported(err error) bool {
	for _, e := range []error{errors.ErrUnsupported, syscall.EXDEV, syscall.EPERM, syscall.ENOTSUP, syscall.EMLINK} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Link implements Linker: newname becomes a second entry for oldname's
// node, as link(2) makes one. A crash keeps it only once newname's
// directory is synced (see CrashClone, which keeps two links to one file
// as links to one file).
func (m *MemFS) Link(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	linkErr := func(err error) error { return linkError("link", oldname, newname, err) }
	_, _, on, err := m.walk("link", oldname)
	if err != nil {
		return linkErr(err)
	}
	ndir, nbase, nn, err := m.walk("link", newname)
	switch {
	case err != nil:
		return linkErr(err)
	case on == nil:
		return linkErr(syscall.ENOENT)
	case on.isDir:
		return linkErr(syscall.EPERM) // link(2) of a directory
	case ndir == nil || nn != nil:
		return linkErr(syscall.EEXIST)
	}
	ndir.children[nbase] = on
	return nil
}

// Link implements Linker, passing the call on (see the package function
// Link for a wrapped FS that makes no links).
func (c *Counting) Link(oldname, newname string) error { return Link(c.fs, oldname, newname) }

// Link implements Linker: an operation of kind OpLink, failed when the
// policy picks it, and otherwise passed on (see the package function Link).
func (f *Injecting) Link(oldname, newname string) error {
	if err := f.check(OpLink, oldname, newname); err != nil {
		return err
	}
	return Link(f.fs, oldname, newname)
}

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
	"testing"
)

// errClass names the class of err that callers branch on, so that two file
// systems can be compared by behaviour rather than by message.
func errClass(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, ErrLocked):
		return "locked"
	case errors.Is(err, ErrInjected):
		return "injected"
	case errors.Is(err, fs.ErrClosed):
		return "closed"
	case errors.Is(err, fs.ErrNotExist):
		return "notexist"
	case errors.Is(err, errors.ErrUnsupported):
		return "unsupported"
	case errors.As(err, &errno):
		return errnoNames[errno]
	}
	return "other"
}

var errnoNames = map[syscall.Errno]string{
	syscall.EBADF:     "EBADF",
	syscall.EBUSY:     "EBUSY",
	syscall.EEXIST:    "EEXIST",
	syscall.EISDIR:    "EISDIR",
	syscall.ENOTDIR:   "ENOTDIR",
	syscall.ENOTEMPTY: "ENOTEMPTY",
}

// writeFile creates name holding data through fsys; durable says whether to
// Sync it.
func writeFile(t testing.TB, fsys FS, name, data string, durable bool) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatalf("Write(%q): %v", name, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			t.Fatalf("Sync(%q): %v", name, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close(%q): %v", name, err)
	}
}

// readFile returns the contents of name, read through fsys with Read.
func readFile(fsys FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

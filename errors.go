package bloomkv

import (
	"errors"
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/vfs"
)

// The sentinel errors of the package; test for them with errors.Is.
var (
	// ErrNotFound is returned by Get for a key that has no live value.
	ErrNotFound = errors.New("bloomkv: not found")
	// ErrClosed is returned by every call on a closed DB, snapshot or
	// iterator.
	ErrClosed = errors.New("bloomkv: closed")
	// ErrCorruption is wrapped by every error that reports damaged on-disk
	// data; the error names the file and the offset.
	ErrCorruption = base.ErrCorruption
	// ErrLocked is returned by Open when another DB, in this process or
	// another, has the directory open — any DB for a read-write Open, a
	// read-write one for a read-only Open.
	ErrLocked = vfs.ErrLocked
	// ErrDBDoesNotExist is wrapped by Open's error when the directory holds
	// no DB and Options.ErrorIfNotExists or ReadOnly is set. The error also
	// wraps fs.ErrNotExist.
	ErrDBDoesNotExist = errors.New("bloomkv: no DB in the directory")
	// ErrDBAlreadyExists is wrapped by Open's error when the directory
	// holds a DB and Options.ErrorIfExists is set. The error also wraps
	// fs.ErrExist.
	ErrDBAlreadyExists = errors.New("bloomkv: a DB exists in the directory")
	// ErrReadOnly is returned by every write, Flush, Compact and Resume of
	// a DB opened with Options.ReadOnly.
	ErrReadOnly = errors.New("bloomkv: read-only")
)

// ArgumentError reports an argument the DB refuses: which one, and why.
// Nothing was changed by the call that returned it.
type ArgumentError struct {
	Arg    string // e.g. "key", "value", "opts.MemtableSize"
	Reason string
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("bloomkv: invalid %s: %s", e.Arg, e.Reason)
}

func argError(arg, format string, args ...any) error {
	return &ArgumentError{Arg: arg, Reason: fmt.Sprintf(format, args...)}
}

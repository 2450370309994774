package vfs

import (
	"io"
	"os"
)

// File is an open file. Create returns a file opened for reading and writing;
// Open returns one opened for reading only, on which Write fails.
//
// Read and Write share one offset, which starts at 0 and advances by the bytes
// each call transfers; ReadAt neither uses nor moves it. Implementations are
// safe for concurrent use, as io.ReaderAt requires of ReadAt; concurrent Read
// or Write calls on one File transfer their bytes in an unspecified order.
//
// After Close every method fails with an error wrapping fs.ErrClosed.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer

	// Sync makes the file's contents durable: once it returns nil, every byte
	// written to the file before the call (through any handle) survives a
	// crash, provided the file's directory entry is durable too (see
	// FS.SyncDir). Sync on a directory opened with Open makes its entries
	// durable, as FS.SyncDir does.
	Sync() error

	// Stat describes the open file; Size is its current length, durable or not.
	Stat() (os.FileInfo, error)
}

// FS is a hierarchical file system. Names are paths built with PathJoin; a
// relative name is resolved against the implementation's working directory
// (the process's for the OS, "/" for a MemFS).
//
// Methods that change a directory entry (Create of a new file, Rename, Remove,
// MkdirAll, Lock of a new file) do not make that change durable: SyncDir of
// the directory does. Implementations are safe for concurrent use.
type FS interface {
	// Create creates the named file, or truncates it to zero length if it
	// exists, and opens it for reading and writing. The parent directory must
	// exist. Truncating an existing file is a change to its contents, durable
	// after File.Sync, not after SyncDir.
	Create(name string) (File, error)

	// Open opens the named file (or directory) for reading.
	Open(name string) (File, error)

	// Remove removes the named file or empty directory. Open files stay
	// readable through their handles.
	Remove(name string) error

	// Rename renames oldname to newname, atomically replacing newname if it
	// exists and is a file: a concurrent Open of newname sees the old file or
	// the new one, never neither. After a crash, the rename has happened only
	// if SyncDir of newname's directory (and of oldname's, if different)
	// returned nil after it.
	Rename(oldname, newname string) error

	// List returns the names of the entries of dir, without the directory
	// part, sorted.
	List(dir string) ([]string, error)

	// MkdirAll creates dir and any missing parents, as os.MkdirAll does. It
	// returns nil if dir already exists as a directory.
	MkdirAll(dir string) error

	// Stat describes the named file or directory.
	Stat(name string) (os.FileInfo, error)

	// Lock takes an exclusive lock on the named file, creating the file if it
	// is missing. While the returned io.Closer is open, every other Lock of the
	// same file — from this process or any other — fails at once with an error
	// wrapping ErrLocked; it never waits. Closing the io.Closer releases the
	// lock, as does the death of the process.
	Lock(name string) (io.Closer, error)

	// LockShared takes a shared lock on the named file, which must exist: it
	// creates nothing, so that a reader that locks a directory changes
	// nothing in it. Any number of shared locks on a file coexist; while one
	// is held, Lock of the file fails at once with an error wrapping
	// ErrLocked, and while Lock's is held, LockShared fails so. It never
	// waits. Closing the io.Closer releases the lock, as does the death of
	// the process.
	LockShared(name string) (io.Closer, error)

	// SyncDir makes the entries of directory dir durable: once it returns nil,
	// every entry created, renamed into, renamed out of or removed from dir
	// before the call survives a crash as it is now.
	SyncDir(dir string) error

	// PathJoin joins path elements with this FS's separator.
	PathJoin(elem ...string) string

	// PathBase returns the last element of path.
	PathBase(path string) string

	// PathDir returns all but the last element of path: the directory to pass
	// to SyncDir after creating or renaming path.
	PathDir(path string) string
}

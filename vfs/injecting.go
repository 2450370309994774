package vfs

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// OpKind is the kind of an operation an Injecting file system sees.
type OpKind int

// The operations an Injecting file system counts and may fail. Path helpers
// (PathJoin, PathBase, PathDir) do no I/O and are not operations, nor is
// releasing a lock.
const (
	OpCreate OpKind = iota
	OpOpen
	OpRemove
	OpRename
	OpList
	OpMkdirAll
	OpStat // FS.Stat and File.Stat
	OpLock
	OpSyncDir
	OpRead
	OpReadAt
	OpWrite
	OpSync
	OpClose
	OpLink
)

var opKindNames = [...]string{
	OpCreate:   "create",
	OpOpen:     "open",
	OpRemove:   "remove",
	OpRename:   "rename",
	OpList:     "list",
	OpMkdirAll: "mkdirall",
	OpStat:     "stat",
	OpLock:     "lock",
	OpSyncDir:  "syncdir",
	OpRead:     "read",
	OpReadAt:   "readat",
	OpWrite:    "write",
	OpSync:     "sync",
	OpClose:    "close",
	OpLink:     "link",
}

func (k OpKind) String() string {
	if k >= 0 && int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op is one operation, as an Injecting file system's policy sees it.
type Op struct {
	Kind OpKind
	// Name is the file or directory operated on; for a File method, the name
	// it was opened with.
	Name string
	// NewName is the target of a rename or a link, and empty for other
	// operations.
	NewName string
	// Index is the operation's position among all operations through this
	// Injecting, counting from 0.
	Index int64
}

func (op Op) String() string {
	if op.Kind == OpRename || op.Kind == OpLink {
		return fmt.Sprintf("op %d: %s %s -> %s", op.Index, op.Kind, op.Name, op.NewName)
	}
	return fmt.Sprintf("op %d: %s %s", op.Index, op.Kind, op.Name)
}

// Injecting is an FS that passes every call to the FS it wraps, except the
// operations its policy picks, which fail with an error wrapping ErrInjected.
//
// A failed operation is not passed on, so it has no effect — with one
// exception: a failed Close still closes the wrapped file (as close(2) does
// even when it reports an error), so that injected failures leak nothing.
//
// Every operation takes the next Index, atomically, before the policy sees
// it: a workload that issues its operations from one goroutine sees the same
// indexes on every run. The usual loop fails operation i for i = 0, 1, 2, …
// (FailAt) until a run ends with Injected() == 0, having tried a failure at
// every point of the workload. The policy may be called concurrently.
type Injecting struct {
	fs       FS
	policy   func(Op) bool
	ops      atomic.Int64
	injected atomic.Int64
}

// NewInjecting returns an Injecting over fs that fails each operation for
// which policy returns true; a nil policy fails nothing (the Injecting then
// only counts). A nil fs gives an Injecting whose every operation fails.
func NewInjecting(fs FS, policy func(Op) bool) *Injecting {
	if fs == nil {
		fs = errFS{"NewInjecting"}
	}
	return &Injecting{fs: fs, policy: policy}
}

// FailAt returns a policy that fails the operation with the given index, and
// only it.
func FailAt(index int64) func(Op) bool {
	return func(op Op) bool { return op.Index == index }
}

// Ops returns the number of operations seen so far, failed or not.
func (f *Injecting) Ops() int64 { return f.ops.Load() }

// Injected returns the number of operations failed so far.
func (f *Injecting) Injected() int64 { return f.injected.Load() }

// check numbers an operation and returns the error it must fail with, if the
// policy picks it.
func (f *Injecting) check(kind OpKind, name, newName string) error {
	op := Op{Kind: kind, Name: name, NewName: newName, Index: f.ops.Add(1) - 1}
	if f.policy == nil || !f.policy(op) {
		return nil
	}
	f.injected.Add(1)
	return fmt.Errorf("%w: %s", ErrInjected, op)
}

// Create implements FS.
func (f *Injecting) Create(name string) (File, error) {
	if err := f.check(OpCreate, name, ""); err != nil {
		return nil, err
	}
	file, err := f.fs.Create(name)
	if err != nil {
		return nil, err
	}
	return &injectingFile{fs: f, f: file, name: name}, nil
}

// Open implements FS.
func (f *Injecting) Open(name string) (File, error) {
	if err := f.check(OpOpen, name, ""); err != nil {
		return nil, err
	}
	file, err := f.fs.Open(name)
	if err != nil {
		return nil, err
	}
	return &injectingFile{fs: f, f: file, name: name}, nil
}

// Remove implements FS.
func (f *Injecting) Remove(name string) error {
	if err := f.check(OpRemove, name, ""); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

// Rename implements FS.
func (f *Injecting) Rename(oldname, newname string) error {
	if err := f.check(OpRename, oldname, newname); err != nil {
		return err
	}
	return f.fs.Rename(oldname, newname)
}

// List implements FS.
func (f *Injecting) List(dir string) ([]string, error) {
	if err := f.check(OpList, dir, ""); err != nil {
		return nil, err
	}
	return f.fs.List(dir)
}

// MkdirAll implements FS.
func (f *Injecting) MkdirAll(dir string) error {
	if err := f.check(OpMkdirAll, dir, ""); err != nil {
		return err
	}
	return f.fs.MkdirAll(dir)
}

// Stat implements FS.
func (f *Injecting) Stat(name string) (os.FileInfo, error) {
	if err := f.check(OpStat, name, ""); err != nil {
		return nil, err
	}
	return f.fs.Stat(name)
}

// Lock implements FS.
func (f *Injecting) Lock(name string) (io.Closer, error) {
	if err := f.check(OpLock, name, ""); err != nil {
		return nil, err
	}
	return f.fs.Lock(name)
}

// LockShared implements FS; it is an OpLock operation.
func (f *Injecting) LockShared(name string) (io.Closer, error) {
	if err := f.check(OpLock, name, ""); err != nil {
		return nil, err
	}
	return f.fs.LockShared(name)
}

// SyncDir implements FS.
func (f *Injecting) SyncDir(dir string) error {
	if err := f.check(OpSyncDir, dir, ""); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}

// PathJoin implements FS.
func (f *Injecting) PathJoin(elem ...string) string { return f.fs.PathJoin(elem...) }

// PathBase implements FS.
func (f *Injecting) PathBase(path string) string { return f.fs.PathBase(path) }

// PathDir implements FS.
func (f *Injecting) PathDir(path string) string { return f.fs.PathDir(path) }

// injectingFile subjects each method of an open file to its FS's policy.
type injectingFile struct {
	fs   *Injecting
	f    File
	name string
}

func (f *injectingFile) Read(p []byte) (int, error) {
	if err := f.fs.check(OpRead, f.name, ""); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}

func (f *injectingFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpReadAt, f.name, ""); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}

func (f *injectingFile) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.name, ""); err != nil {
		return 0, err
	}
	return f.f.Write(p)
}

func (f *injectingFile) Sync() error {
	if err := f.fs.check(OpSync, f.name, ""); err != nil {
		return err
	}
	return f.f.Sync()
}

// AdviseRandom passes the advice on (RandomAdviser). No fault is injected
// into it: advice changes no data, so its failure loses nothing.
func (f *injectingFile) AdviseRandom() error { return AdviseRandom(f.f) }

func (f *injectingFile) Stat() (os.FileInfo, error) {
	if err := f.fs.check(OpStat, f.name, ""); err != nil {
		return nil, err
	}
	return f.f.Stat()
}

func (f *injectingFile) Close() error {
	injected := f.fs.check(OpClose, f.name, "")
	err := f.f.Close()
	if injected != nil {
		return injected
	}
	return err
}

// Prefetch passes the advice on (Prefetcher); it is not counted, and no
// fault is injected into it.
func (f *injectingFile) Prefetch(off, n int64) error { return Prefetch(f.f, off, n) }

package vfs

import (
	"errors"
	"io"
	"os"
	"path"
)

// errFS stands in for the nil FS a wrapper was given, so that the mistake
// surfaces as an error from the first operation rather than as a nil-pointer
// panic deep inside the store.
type errFS struct{ ctor string }

func (e errFS) err() error { return errors.New("vfs: " + e.ctor + " was given a nil FS") }

func (e errFS) Create(string) (File, error)          { return nil, e.err() }
func (e errFS) Open(string) (File, error)            { return nil, e.err() }
func (e errFS) Remove(string) error                  { return e.err() }
func (e errFS) Rename(string, string) error          { return e.err() }
func (e errFS) List(string) ([]string, error)        { return nil, e.err() }
func (e errFS) MkdirAll(string) error                { return e.err() }
func (e errFS) Stat(string) (os.FileInfo, error)     { return nil, e.err() }
func (e errFS) Lock(string) (io.Closer, error)       { return nil, e.err() }
func (e errFS) LockShared(string) (io.Closer, error) { return nil, e.err() }
func (e errFS) SyncDir(string) error                 { return e.err() }
func (errFS) PathJoin(elem ...string) string         { return path.Join(elem...) }
func (errFS) PathBase(p string) string               { return path.Base(p) }
func (errFS) PathDir(p string) string                { return path.Dir(p) }

package vfs

import "errors"

// ErrLocked is wrapped by the error FS.Lock returns when the file is already
// locked by another holder, in this process or another. The root package
// re-exports it as bloomkv.ErrLocked.
var ErrLocked = errors.New("bloomkv: locked by another holder")

// ErrInjected is wrapped by every error an Injecting file system fabricates,
// so that a test can tell an injected failure from a real one.
var ErrInjected = errors.New("vfs: injected error")

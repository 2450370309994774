//go:build !linux

package vfs

import "os"

// syncData is os.File.Sync where fdatasync is not available (on Darwin it is
// F_FULLFSYNC, which also flushes the drive's cache).
func syncData(f *os.File) error { return f.Sync() }

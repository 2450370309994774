//go:build unix && !linux

package vfs

// adviseMappedRandom does nothing: the syscall package has no madvise here.
func adviseMappedRandom([]byte) {}

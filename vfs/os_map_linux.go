package vfs

import "syscall"

// adviseMappedRandom turns off read-around for faults of the mapping: only
// advice, so an error changes nothing.
func adviseMappedRandom(data []byte) { _ = syscall.Madvise(data, syscall.MADV_RANDOM) }

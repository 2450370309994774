//go:build !linux

package sstable

import "time"

var start = time.Now()

// threadCPU returns the time since the package's tests started: where the
// thread's CPU time is not to be had, the wall clock's.
func threadCPU() time.Duration { return time.Since(start) }

// lockThread does nothing where threadCPU is the wall clock.
func lockThread() func() { return func() {} }

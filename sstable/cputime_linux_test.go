package sstable

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time the calling thread has run: on a busy
// machine, a benchmark's own cost without the time it waited to run.
// The caller stays on its thread (lockThread).
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// lockThread keeps the calling goroutine on its thread, so that
// threadCPU's readings are of one thread; the returned func undoes it.
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

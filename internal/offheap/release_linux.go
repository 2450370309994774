package offheap

import "syscall"

// canRelease reports whether releasePages gives pages back on this system.
const canRelease = true

// releasePages gives b, whole pages, back to the system: they stop
// counting in the process's resident memory and read as zeros when next
// touched. b stays mapped and usable. It reports whether the system took
// them: the advice may fail, which only costs memory.
func releasePages(b []byte) bool {
	return syscall.Madvise(b, syscall.MADV_DONTNEED) == nil
}

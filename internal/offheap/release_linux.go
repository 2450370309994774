package offheap

import "syscall"

// releasePages gives the whole pages inside b back to the system: they
// stop counting in the process's resident memory and read as zeros when
// next touched. b stays mapped and usable. It returns the bytes released.
func releasePages(b []byte) int {
	const page = 4096
	start := (page - int(uintptrOf(b))%page) % page
	if start >= len(b) {
		return 0
	}
	end := start + (len(b)-start)/page*page
	if end-start < page {
		return 0
	}
	if syscall.Madvise(b[start:end], syscall.MADV_DONTNEED) != nil {
		return 0 // advice: a failure only costs memory
	}
	return end - start
}

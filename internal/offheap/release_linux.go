package offheap

import "syscall"

// releasePages gives the whole pages inside b back to the system: they
// stop counting in the process's resident memory and read as zeros when
// next touched. b stays mapped and usable.
func releasePages(b []byte) {
	const page = 4096
	start := (page - int(uintptrOf(b))%page) % page
	end := start + (len(b)-start)/page*page
	if end-start >= page {
		_ = syscall.Madvise(b[start:end], syscall.MADV_DONTNEED) // advice: a failure only costs memory
	}
}

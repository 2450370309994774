//go:build unix

package offheap

import "syscall"

func mmap(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return b, err == nil
}

func munmap(b []byte) {
	// Munmap fails only for an address range that is not a mapping, which
	// Buffer's construction rules out.
	if err := syscall.Munmap(b); err != nil {
		panic("offheap: munmap: " + err.Error())
	}
}

//go:build !unix

package offheap

func mmap(int) ([]byte, bool) { return nil, false }

func munmap([]byte) {}

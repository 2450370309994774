// Package offheap allocates byte buffers outside the Go heap, for memory
// whose lifetime the caller manages by hand: the memtable's arena chunks.
//
// Why: the garbage collector lets the heap grow to about twice what was live
// after the last collection (GOGC=100), so every byte kept live on the heap
// costs about two bytes of resident memory. A store's largest live objects
// — memtables holding megabytes of keys and values for seconds — are the
// worst case. Memory mapped here costs one byte per byte, only once a page
// is first written, and the collector neither counts nor scans it.
//
// The price is manual lifetime: Free unmaps the buffer, and any later use of
// it, or of a slice of it, faults. Callers must know that nothing refers to a
// buffer before they free it (the memtable counts references for this).
//
// On systems without mmap, and if mmap fails, Alloc falls back to the Go
// heap; Free of such a buffer does nothing and the collector reclaims it.
package offheap

// Buffer is memory from Alloc. The zero Buffer is empty.
type Buffer struct {
	// Bytes is the memory, len == cap == the size asked for.
	Bytes  []byte
	mapped bool // Bytes is a mapping of its own, for Free to unmap
}

// Alloc returns n zeroed bytes, off the Go heap where the system allows.
// n must be positive.
func Alloc(n int) Buffer {
	if n <= 0 {
		panic("offheap: Alloc of a non-positive size")
	}
	if b, ok := mmap(n); ok {
		return Buffer{Bytes: b, mapped: true}
	}
	return Buffer{Bytes: make([]byte, n)}
}

// Free returns b's memory to the system. b and every slice of it must not
// be used afterwards. Freeing the zero Buffer does nothing.
func Free(b Buffer) {
	if b.mapped {
		munmap(b.Bytes)
	}
}

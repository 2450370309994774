package offheap

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Allocator hands out buffers of any size for callers that allocate and
// free them one by one — the block cache's blocks — without a system call
// per buffer and without a whole page for each.
//
// Sizes up to MaxClassSize are rounded up to a size class: 16 classes per
// power of two, so a buffer wastes less than 1/16 of its size. Each class
// carves its buffers out of slabs of about 256 KiB mapped by Alloc, and
// keeps freed buffers on a free list for the next Alloc of that class. A
// larger buffer gets a mapping of its own, unmapped by Free.
//
// Slabs are not unmapped until Release: the allocator holds, per class,
// the most that class ever had in use at once. Its user bounds that (the
// block cache's capacity bounds the bytes it holds). But Free gives the
// whole pages inside a freed buffer of ReleaseFrom bytes or more back to
// the system (on Linux), so that what waits on a free list costs little.
//
// An Allocator is safe for concurrent use. The zero value is ready.
type Allocator struct {
	// ReleaseFrom is the class size from which Free gives a buffer's
	// pages back; 0 means DefaultReleaseFrom. Set it before the first
	// Alloc. A buffer's release costs a system call, and its reuse a page
	// fault per page touched again: worth it where buffers are freed
	// seldom and may wait long for the next Alloc of their class (a
	// table's filter and index, freed when a compaction deletes the
	// table), not for the blocks a cache evicts at the rate it reads.
	ReleaseFrom int

	classes [numClasses]sizeClass

	// inUse counts the bytes handed out and not freed, at their class
	// size (a large buffer at its own); kept the bytes of the freed
	// buffers on the free lists that stay resident: all of a buffer below
	// ReleaseFrom, the part outside its whole pages above. Their sum is
	// what the allocator keeps in memory: Resident.
	inUse, kept atomic.Int64

	mu    sync.Mutex
	large map[*byte]Buffer // buffers above MaxClassSize, by address
}

const (
	minClassShift = 8                                    // the smallest class is 256 bytes
	classesPerPow = 16                                   // classes per power of two
	MaxClassSize  = 256 << 10                            // larger buffers get their own mapping
	slabSize      = 256 << 10                            // a slab holds at least one buffer
	numClasses    = (18-minClassShift)*classesPerPow + 1 // up to 2^18 = MaxClassSize
)

type sizeClass struct {
	mu    sync.Mutex
	free  []freed // buffers freed, ready for reuse
	slabs []Buffer
	// carve is what is left of the newest slab.
	carve []byte
}

// freed is a buffer on a free list and its bytes that stayed resident when
// it was freed (counted in Allocator.kept).
type freed struct {
	p        *byte
	resident int
}

// classOf returns the index and size of the smallest class holding n bytes,
// 0 < n ≤ MaxClassSize.
func classOf(n int) (index, size int) {
	if n <= 1<<minClassShift {
		return 0, 1 << minClassShift
	}
	// n is in (2^p, 2^(p+1)]; the classes there are 2^p·(1 + i/16), i = 1…16.
	p := bits.Len(uint(n-1)) - 1
	step := 1 << (p - 4)
	i := (n - (1 << p) + step - 1) / step // 1…16
	return (p-minClassShift)*classesPerPow + i, 1<<p + i*step
}

// classSize returns the size of class index, classOf's inverse.
func classSize(index int) int {
	if index == 0 {
		return 1 << minClassShift
	}
	p := (index-1)/classesPerPow + minClassShift
	i := (index-1)%classesPerPow + 1
	return 1<<p + i<<(p-4)
}

// SizeOf returns the capacity of the buffer Alloc(n) returns: what it
// costs in memory. n must be positive.
func SizeOf(n int) int {
	if n > MaxClassSize {
		return n
	}
	_, size := classOf(n)
	return size
}

// Alloc returns a buffer of length n and capacity its class's size, not
// zeroed. n must be positive. Free it with Free, on this allocator.
func (a *Allocator) Alloc(n int) []byte {
	if n <= 0 {
		panic("offheap: Alloc of a non-positive size")
	}
	if n > MaxClassSize {
		b := Alloc(n)
		a.mu.Lock()
		if a.large == nil {
			a.large = make(map[*byte]Buffer)
		}
		a.large[unsafe.SliceData(b.Bytes)] = b
		a.mu.Unlock()
		a.inUse.Add(int64(n))
		return b.Bytes
	}
	index, size := classOf(n)
	a.inUse.Add(int64(size))
	c := &a.classes[index]
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := len(c.free); k > 0 {
		f := c.free[k-1]
		c.free = c.free[:k-1]
		a.kept.Add(-int64(f.resident))
		return unsafe.Slice(f.p, size)[:n]
	}
	if len(c.carve) < size {
		slab := Alloc(max(slabSize/size, 1) * size)
		c.slabs = append(c.slabs, slab)
		c.carve = slab.Bytes
	}
	b := c.carve[:n:size]
	c.carve = c.carve[size:]
	return b
}

// Free returns b, a buffer from a.Alloc (its length may have changed, its
// capacity must not), for reuse. Neither b nor any slice of it may be used
// afterwards.
func (a *Allocator) Free(b []byte) {
	if cap(b) > MaxClassSize {
		a.mu.Lock()
		buf, ok := a.large[unsafe.SliceData(b)]
		delete(a.large, unsafe.SliceData(b))
		a.mu.Unlock()
		if !ok {
			panic("offheap: Free of a buffer this allocator did not allocate")
		}
		a.inUse.Add(-int64(len(buf.Bytes)))
		Free(buf)
		return
	}
	index, size := classOf(cap(b))
	if size != cap(b) {
		panic("offheap: Free of a buffer whose capacity is not a size class")
	}
	a.inUse.Add(-int64(size))
	resident := size
	if size >= a.releaseFrom() {
		resident -= releasePages(b[:size])
	}
	a.kept.Add(int64(resident))
	c := &a.classes[index]
	c.mu.Lock()
	c.free = append(c.free, freed{unsafe.SliceData(b), resident})
	c.mu.Unlock()
}

// DefaultReleaseFrom is Allocator.ReleaseFrom's default: freed buffers of
// 16 KiB and more give their pages back, smaller ones — a cache's blocks,
// reused soon — stay resident for reuse.
const DefaultReleaseFrom = 16 << 10

// releaseFrom returns the class size from which a's Free gives pages back:
// ReleaseFrom, or DefaultReleaseFrom for 0.
func (a *Allocator) releaseFrom() int {
	if a.ReleaseFrom > 0 {
		return a.ReleaseFrom
	}
	return DefaultReleaseFrom
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Resident returns the bytes the allocator holds in memory: its buffers in
// use and what stays resident of the freed ones it keeps for reuse (all of
// those below ReleaseFrom; of the larger ones, the part outside their
// whole pages, which went back to the system). The rest of its slabs is
// mapped but was never written, and costs nothing.
func (a *Allocator) Resident() int64 { return a.inUse.Load() + a.kept.Load() }

// Trim gives back to the system the whole pages inside every freed buffer
// kept for reuse that still holds them (those below ReleaseFrom), as Free
// does from ReleaseFrom up, and returns the bytes released: for a user
// that holds fewer buffers from now on — a cache whose capacity shrank —
// so that what it no longer holds stops counting in Resident and in the
// process's resident memory. A buffer of a page-multiple class, such as
// the 4 KiB one the cache's page-sized blocks take, gives back all of
// itself (slabs are page-aligned); the next Alloc of a trimmed buffer
// faults its pages back in.
func (a *Allocator) Trim() int64 {
	var released int64
	for i := range a.classes {
		c := &a.classes[i]
		size := classSize(i)
		c.mu.Lock()
		for k := range c.free {
			f := &c.free[k]
			if f.resident == size {
				n := releasePages(unsafe.Slice(f.p, size))
				f.resident -= n
				released += int64(n)
			}
		}
		c.mu.Unlock()
	}
	a.kept.Add(-released)
	return released
}

// InUse returns the bytes of the buffers handed out and not freed, at
// their class sizes: Resident less what the free lists keep.
func (a *Allocator) InUse() int64 { return a.inUse.Load() }

// Release unmaps every slab and large buffer. Every buffer the allocator
// handed out must have been freed or abandoned: none may be used again. The
// allocator is then empty and may be used afresh.
func (a *Allocator) Release() {
	for i := range a.classes {
		c := &a.classes[i]
		c.mu.Lock()
		for _, s := range c.slabs {
			Free(s)
		}
		c.slabs, c.free, c.carve = nil, nil, nil
		c.mu.Unlock()
	}
	a.mu.Lock()
	for _, b := range a.large {
		Free(b)
	}
	a.large = nil
	a.mu.Unlock()
	a.inUse.Store(0)
	a.kept.Store(0)
}

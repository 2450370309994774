package offheap

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Allocator hands out buffers of any size for callers that allocate and
// free them one by one — the block cache's blocks, a table's filter and
// index — without a system call per buffer and without a whole page for
// each, and keeps in memory an amount bounded by what is in use, not by
// the most each size ever had in use.
//
// Sizes up to MaxClassSize are rounded up to a size class: 16 classes per
// power of two, so a buffer wastes less than 1/16 of its size. A class
// carves its buffers out of slabs: 256 KiB aligned to their size (so that
// a buffer's slab is its address rounded down), each cut out of a mapping
// of twice that and cut into buffers of one class while it holds any. A
// larger buffer gets a mapping of its own, unmapped by Free.
//
// # Memory given back
//
// The allocator counts memory in 4 KiB pages. A page of a slab is in use
// while a buffer in use overlaps it; it is kept while no buffer in use
// overlaps it but it may still be resident (it was handed out since it
// was last given back to the system with MADV_DONTNEED); otherwise it is
// released. Free keeps the pages it leaves unused, so that the next
// Alloc of a nearby size reuses them without a page fault, except that it
// releases them at once:
//
//   - for a class of ReleaseFrom bytes or more (buffers freed seldom,
//     that may wait long for the next of their class);
//   - while Resident is above the limit, if SetLimit set one (the block
//     cache sets its capacity).
//
// And whenever the kept pages pass an eighth of the bytes in use plus a
// slab, Free trims: every kept page of every slab is released (Trim). So
// what the allocator keeps beyond its buffers in use is at most that
// bound, whatever sizes it has seen, and between two trims more than that
// bound was freed: a trim's cost, a pass over the slabs, is spread over at
// least a slab's worth of frees. The limit is for a user that must stay
// within a size when that bound is not enough (blocks of sizes whose slabs
// are partly empty): it keeps Resident within the limit by freeing (the
// block cache evicts), and each Free above the limit gives back what it
// leaves unused. Below the limit no Free pays a release for it: a user
// whose buffers in use and the bound fit its limit (the block cache's
// headroom) does not give back and fault in pages at every Free.
//
// A class takes buffers from its slabs with a free buffer before it takes
// a new slab, so that the frees of a shrinking class empty whole slabs. A
// slab whose every buffer is free gives all its pages back (one system
// call) and leaves its class for a pool any class takes slabs from;
// slabs beyond poolSlabs in the pool are unmapped. So a class whose
// buffers are all freed holds nothing, and the pages kept are only those
// of the free buffers of slabs still partly in use.
//
// INVARIANT: a slab page's user count is the number of buffers in use that
// overlap it; a page with users is marked resident; kept pages are those
// marked resident without users. Resident is the resident pages' bytes
// plus the large buffers'; InUse the buffers in use at their class sizes
// (the large ones at their own), at most Resident.
//
// INVARIANT: a slab is in exactly one place: its class's (with a buffer
// in use), the pool (none in use), or unmapped. A slab of a class is in
// the class's partial list exactly when it has a free buffer.
//
// An Allocator is safe for concurrent use. The zero value is ready.
type Allocator struct {
	// ReleaseFrom is the class size from which Free gives a buffer's
	// pages back at once; 0 means DefaultReleaseFrom. Set it before the
	// first Alloc. A release costs a system call, and the reuse a page
	// fault per page touched again: worth it where buffers are freed
	// seldom and may wait long for the next Alloc of their class (a
	// table's filter and index, freed when a compaction deletes the
	// table), not for the blocks a cache evicts at the rate it reads.
	ReleaseFrom int

	// limit is SetLimit's; 0 for none.
	limit atomic.Int64

	classes [numClasses]sizeClass

	// inUse counts the bytes handed out and not freed, at their class
	// size (a large buffer at its own); residentPages and keptPages the
	// slabs' pages marked resident, and those of them without users;
	// large the large buffers' bytes.
	inUse, residentPages, keptPages, large atomic.Int64
	// trimming is set while a Free's trim runs, so that concurrent Frees
	// over the bound do not trim at once.
	trimming atomic.Bool

	mu       sync.Mutex
	pool     []*slab          // slabs with no buffer in use
	largeBuf map[*byte]Buffer // buffers above MaxClassSize, by address
}

const (
	minClassShift = 8                                    // the smallest class is 256 bytes
	classesPerPow = 16                                   // classes per power of two
	MaxClassSize  = 256 << 10                            // larger buffers get their own mapping
	numClasses    = (18-minClassShift)*classesPerPow + 1 // up to 2^18 = MaxClassSize

	pageSize  = 4096
	slabSize  = 256 << 10 // holds at least one buffer of every class
	slabPages = slabSize / pageSize
	// poolSlabs is how many slabs with no buffer in use stay mapped.
	poolSlabs = 16
	// keptFraction: Free trims when the kept pages pass 1/keptFraction of
	// the bytes in use, plus a slab.
	keptFraction = 8
)

// slab is slabSize bytes, aligned to slabSize, cut into buffers of one
// class while any of them is in use. Its fields are guarded by the lock of
// its class while it has one, by Allocator.mu while in the pool.
type slab struct {
	mem []byte // slabSize bytes, aligned
	buf Buffer // the memory to Free when unmapped

	class   int      // its class's index, while it has buffers in use
	size    int      // that class's size
	free    []uint16 // its free buffers' indexes, a stack
	used    int      // its buffers in use
	partial int      // its index in its class's partial list, -1 if absent

	users    [slabPages]uint8 // buffers in use overlapping each page
	resident uint64           // bit i: page i is resident (or may be)
}

type sizeClass struct {
	mu sync.Mutex
	// partial lists the class's slabs with a free buffer: Alloc takes the
	// last.
	partial []*slab
	// slabs maps every slab of the class, by address, for Free.
	slabs map[uintptr]*slab
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

// SetLimit sets the resident memory above which Free gives back the pages
// a freed buffer leaves unused instead of keeping them for reuse; 0 or
// less: no limit. It may be called at any time.
func (a *Allocator) SetLimit(limit int64) { a.limit.Store(max(limit, 0)) }

// Alloc returns a buffer of length n and capacity its class's size, not
// zeroed. n must be positive. Free it with Free, on this allocator.
func (a *Allocator) Alloc(n int) []byte {
	if n <= 0 {
		panic("offheap: Alloc of a non-positive size")
	}
	if n > MaxClassSize {
		b := Alloc(n)
		a.mu.Lock()
		if a.largeBuf == nil {
			a.largeBuf = make(map[*byte]Buffer)
		}
		a.largeBuf[unsafe.SliceData(b.Bytes)] = b
		a.mu.Unlock()
		a.inUse.Add(int64(n))
		a.large.Add(int64(n))
		return b.Bytes
	}
	index, size := classOf(n)
	c := &a.classes[index]
	c.mu.Lock()
	if len(c.partial) == 0 {
		a.addSlab(c, index, size)
	}
	s := c.partial[len(c.partial)-1]
	k := len(s.free) - 1
	i := int(s.free[k])
	s.free = s.free[:k]
	s.used++
	if k == 0 {
		c.removePartial(s)
	}
	// The pages the buffer overlaps become in use: kept ones are reused,
	// released ones will be resident once touched.
	var taken, faulted int64
	for p := i * size / pageSize; p <= (i*size+size-1)/pageSize; p++ {
		if s.users[p] == 0 {
			if s.resident&(1<<p) != 0 {
				taken++
			} else {
				s.resident |= 1 << p
				faulted++
			}
		}
		s.users[p]++
	}
	c.mu.Unlock()
	// Only the counters that change: atomic adds contend between Ps.
	if taken != 0 {
		a.keptPages.Add(-taken)
	}
	if faulted != 0 {
		a.residentPages.Add(faulted)
	}
	a.inUse.Add(int64(size))
	return s.mem[i*size : i*size+n : i*size+size]
}

// newSlab maps a slab: slabSize bytes aligned to slabSize, cut from a
// mapping of twice that, whose rest is never touched and costs address
// space only.
func newSlab() *slab {
	b := Alloc(2 * slabSize)
	off := (slabSize - int(uintptrOf(b.Bytes)%slabSize)) % slabSize
	return &slab{buf: b, mem: b.Bytes[off : off+slabSize : off+slabSize], partial: -1}
}

// addSlab gives class c (index, of size size), which has no free buffer, a
// slab: one from the pool, else a new mapping. c.mu is held.
func (a *Allocator) addSlab(c *sizeClass, index, size int) {
	a.mu.Lock()
	var s *slab
	if k := len(a.pool); k > 0 {
		s = a.pool[k-1]
		a.pool = a.pool[:k-1]
	}
	a.mu.Unlock()
	if s == nil {
		s = newSlab()
	}
	s.class, s.size, s.used = index, size, 0
	n := slabSize / size
	s.free = s.free[:0]
	for i := n - 1; i >= 0; i-- { // the lowest address on top
		s.free = append(s.free, uint16(i))
	}
	if c.slabs == nil {
		c.slabs = make(map[uintptr]*slab)
	}
	c.slabs[uintptrOf(s.mem)] = s
	s.partial = len(c.partial)
	c.partial = append(c.partial, s)
}

// removePartial drops s from c's partial list. c.mu is held.
func (c *sizeClass) removePartial(s *slab) {
	last := c.partial[len(c.partial)-1]
	c.partial[s.partial], last.partial = last, s.partial
	c.partial = c.partial[:len(c.partial)-1]
	s.partial = -1
}

// Free returns b, a buffer from a.Alloc (its length may have changed, its
// capacity must not), for reuse. Neither b nor any slice of it may be used
// afterwards.
func (a *Allocator) Free(b []byte) {
	if cap(b) > MaxClassSize {
		a.mu.Lock()
		buf, ok := a.largeBuf[unsafe.SliceData(b)]
		delete(a.largeBuf, unsafe.SliceData(b))
		a.mu.Unlock()
		if !ok {
			panic("offheap: Free of a buffer this allocator did not allocate")
		}
		a.inUse.Add(-int64(len(buf.Bytes)))
		a.large.Add(-int64(len(buf.Bytes)))
		Free(buf)
		return
	}
	index, size := classOf(cap(b))
	if size != cap(b) {
		panic("offheap: Free of a buffer whose capacity is not a size class")
	}
	p := uintptrOf(b)
	base := p &^ (slabSize - 1)
	c := &a.classes[index]
	c.mu.Lock()
	s := c.slabs[base]
	if s == nil || (p-base)%uintptr(size) != 0 {
		c.mu.Unlock()
		panic("offheap: Free of a buffer this allocator did not allocate")
	}
	off := int(p - base)
	i := off / size
	// The pages only this buffer used become kept; then released, from
	// ReleaseFrom up and above the limit.
	first, last := off/pageSize, (off+size-1)/pageSize
	var freed int64
	for q := first; q <= last; q++ {
		s.users[q]--
		if s.users[q] == 0 {
			freed++
		}
	}
	var released int64
	if limit := a.limit.Load(); size >= a.releaseFrom() || limit > 0 && a.Resident() > limit {
		if s.users[first] != 0 {
			first++
		}
		if s.users[last] != 0 {
			last--
		}
		released = s.release(first, last+1)
	}
	s.free = append(s.free, uint16(i))
	s.used--
	switch {
	case s.used == 0:
		released += a.retire(c, s)
	case len(s.free) == 1:
		s.partial = len(c.partial)
		c.partial = append(c.partial, s)
	}
	c.mu.Unlock()
	a.inUse.Add(-int64(size))
	if freed != released {
		a.keptPages.Add(freed - released)
	}
	if released != 0 {
		a.residentPages.Add(-released)
	}
	if a.keptPages.Load()*pageSize > a.inUse.Load()/keptFraction+slabSize && canRelease && a.trimming.CompareAndSwap(false, true) {
		a.Trim()
		a.trimming.Store(false)
	}
}

// retire gives back the pages of s, a slab of class c with no buffer in
// use, and moves it to the pool, or unmaps it if the pool is full. It
// returns the pages it released. c.mu is held.
func (a *Allocator) retire(c *sizeClass, s *slab) int64 {
	if s.partial >= 0 {
		c.removePartial(s)
	}
	delete(c.slabs, uintptrOf(s.mem))
	// Every page is without users: one call gives back those resident.
	var released int64
	if n := bits.OnesCount64(s.resident); n > 0 && releasePages(s.mem) {
		s.resident, released = 0, int64(n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pool) < poolSlabs {
		a.pool = append(a.pool, s)
		return released
	}
	// Unmapped, the pages the system refused to release go too.
	n := int64(bits.OnesCount64(s.resident))
	a.keptPages.Add(-n)
	a.residentPages.Add(-n)
	Free(s.buf)
	return released
}

// release gives pages [from, to) of s back to the system and returns how
// many it released; none if the system refused. Every page in the range
// has no users and is marked resident.
func (s *slab) release(from, to int) int64 {
	if from >= to || !releasePages(s.mem[from*pageSize:to*pageSize]) {
		return 0
	}
	for q := from; q < to; q++ {
		s.resident &^= 1 << q
	}
	return int64(to - from)
}

// trim releases every kept page of s and returns how many.
func (s *slab) trim() int64 {
	var released int64
	for q := 0; q < slabPages; {
		if s.users[q] != 0 || s.resident&(1<<q) == 0 {
			q++
			continue
		}
		end := q + 1
		for end < slabPages && s.users[end] == 0 && s.resident&(1<<end) != 0 {
			end++
		}
		released += s.release(q, end)
		q = end
	}
	return released
}

// DefaultReleaseFrom is Allocator.ReleaseFrom's default: freed buffers of
// 16 KiB and more give their pages back at once, smaller ones — a cache's
// blocks, reused soon — are kept for reuse.
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

// Resident returns the bytes the allocator holds in memory: the pages of
// its slabs that buffers in use overlap, those it keeps for reuse, and its
// large buffers. It counts a page from the Alloc of a buffer over it, so
// that it is at least the process's memory for it once the buffer is
// written; the rest of its slabs is mapped but not written since it was
// released, and costs nothing.
func (a *Allocator) Resident() int64 { return a.residentPages.Load()*pageSize + a.large.Load() }

// Kept returns the bytes of the pages kept for reuse: resident, with no
// buffer in use over them.
func (a *Allocator) Kept() int64 { return a.keptPages.Load() * pageSize }

// InUse returns the bytes of the buffers handed out and not freed, at
// their class sizes.
func (a *Allocator) InUse() int64 { return a.inUse.Load() }

// Trim gives back to the system every page kept for reuse and returns
// the bytes released: for a user that holds fewer buffers from now on — a
// cache whose capacity shrank — so that what it no longer holds stops
// counting in Resident and in the process's resident memory. Free trims
// by itself when the kept pages pass their bound. The next Alloc over a
// trimmed page faults it back in.
func (a *Allocator) Trim() int64 {
	var released int64
	for i := range a.classes {
		c := &a.classes[i]
		c.mu.Lock()
		for _, s := range c.slabs {
			released += s.trim()
		}
		c.mu.Unlock()
	}
	a.mu.Lock()
	for _, s := range a.pool {
		released += s.trim()
	}
	a.mu.Unlock()
	a.keptPages.Add(-released)
	a.residentPages.Add(-released)
	return released * pageSize
}

// Release unmaps every slab and large buffer. Every buffer the allocator
// handed out must have been freed or abandoned: none may be used again. The
// allocator is then empty and may be used afresh.
func (a *Allocator) Release() {
	for i := range a.classes {
		c := &a.classes[i]
		c.mu.Lock()
		for _, s := range c.slabs {
			Free(s.buf)
		}
		c.slabs, c.partial = nil, nil
		c.mu.Unlock()
	}
	a.mu.Lock()
	for _, s := range a.pool {
		Free(s.buf)
	}
	for _, b := range a.largeBuf {
		Free(b)
	}
	a.pool, a.largeBuf = nil, nil
	a.mu.Unlock()
	a.inUse.Store(0)
	a.residentPages.Store(0)
	a.keptPages.Store(0)
	a.large.Store(0)
}

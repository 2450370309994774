// Package cache is the block cache: a byte-bounded, sharded LRU of decoded
// SSTable blocks shared by every table of a DB, so that a hot block is read
// from its file once.
//
// Blocks are identified by the table's file number and the block's offset.
// Admit says whether a block a point lookup missed is worth inserting:
// every block while the cache has room, then only one missed lately
// before (admission.go).
//
// # Memory
//
// A cached block lives outside the Go heap, in memory from an
// offheap.Allocator owned by the cache: the cache is most of what a DB
// keeps in memory for long, and on the heap the garbage collector's growth
// would make each of its bytes cost about two. Insert copies a block in;
// a block's buffer is freed for reuse when it has been evicted and every
// reader has released it, so a DB that reads does not produce garbage at
// the rate it reads blocks.
//
// The cache's memory is what its allocator holds, Resident: the pages its
// blocks overlap and the freed pages the allocator keeps for the next
// blocks. Each shard's LRU list holds blocks of at most a target, at
// their buffers' size classes: at most its share of the capacity less an
// eighth (headroom), which takes the rounding of buffers to pages and the
// pages kept for reuse. The allocator's limit is the capacity, so that a
// block freed above it gives its pages back; and if the cache's memory
// passes its capacity after an Insert — blocks of many sizes, whose pages
// hold more than their buffers — the cache lowers the target by the
// excess and a margin, gives back the pages kept if they are more than
// the headroom, and evicts, a shard's least recently used block at a time
// in turn, until it fits. It raises the target again, a step per Insert,
// while its memory is a sixteenth or more below its capacity. So the
// target settles where the blocks, their pages' rounding and the pages
// kept for reuse fit the capacity, and an Insert seldom finds the cache at
// it: there, each eviction gives back pages that the next Inserts fault
// in again, a system call and page faults per block (a cache fixed at
// seven eighths took twice the CPU time per Get of one whose allocator
// was unbounded, in bloomkv bench's readrandom with 4 KiB index
// partitions under a 16 MiB MemoryLimit).
//
// That makes references explicit: Get and Insert return a Handle, whose
// bytes stay valid, unchanged, until Release. A block evicted while held
// stays valid for its holders and is freed by the last Release.
//
// INVARIANT: an entry's buffer is freed exactly once, when its reference
// count — one for the cache while the entry is resident, one per Handle —
// drops to zero.
//
// INVARIANT: a shard's size is the sum of the capacities of its resident
// entries' buffers and, after every Insert returns, at most the target it
// read, between half its share and lruCapacity of the cache's capacity — a
// block larger than the target is not cached.
//
// INVARIANT: after an Insert or SetCapacity returns, Resident is at most
// the cache's capacity, or the cache holds no block: only blocks evicted
// while readers hold them, and blocks being inserted concurrently, hold
// memory beyond it.
//
// INVARIANT: the allocator's memory is returned to the system only when the
// cache is closed and no entry remains (resident or held): Close, then the
// last Release.
package cache

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/offheap"
)

// Key names a block: the table file it belongs to and its offset there.
type Key struct {
	FileNum uint64
	Offset  uint64
}

const numShards = 16

// Cache is a sharded LRU cache of blocks bounded by total bytes. It is safe
// for concurrent use. A nil *Cache caches nothing.
type Cache struct {
	shards [numShards]shard
	hits   atomic.Uint64
	misses atomic.Uint64
	// rejected counts the misses Admit did not admit.
	rejected atomic.Uint64

	alloc  offheap.Allocator
	closed atomic.Bool
	// capacity bounds the cache's memory, Resident; shardCapacity is every
	// shard's target, in [share/2, lruCapacity(capacity)], which fit
	// lowers and raises (share = capacity/numShards).
	capacity, shardCapacity atomic.Int64
	// nextShard is the shard fit evicts from next, in turn.
	nextShard atomic.Uint32
	// live counts the entries not yet freed, plus one until Close; the
	// allocator is released when it drops to zero.
	live atomic.Int64
}

// New returns a cache that holds at most capacity bytes of memory
// (Resident): blocks of at most lruCapacity(capacity) per shard, and the
// pages its allocator keeps. A capacity ≤ 0 gives a cache that holds
// nothing but still counts misses. Close it to return its memory.
func New(capacity int64) *Cache {
	c := &Cache{}
	capacity = max(capacity, 0)
	for i := range c.shards {
		c.shards[i].init(lruCapacity(capacity))
	}
	c.capacity.Store(capacity)
	c.shardCapacity.Store(lruCapacity(capacity))
	c.alloc.SetLimit(capacity)
	c.live.Store(1)
	return c
}

// headroomFraction: each shard's LRU list holds blocks of at most its
// share of the capacity less 1/headroomFraction of it (see Memory in the
// package doc).
const headroomFraction = 8

// lruCapacity returns the bytes of blocks each shard of a cache of
// capacity holds at most: a sixteenth of capacity, less the headroom.
func lruCapacity(capacity int64) int64 {
	share := capacity / numShards
	return share - share/headroomFraction
}

func (c *Cache) shard(k Key) *shard { return c.shardOf(keyHash(k)) }

// shardOf returns the shard of a key whose keyHash is h: its top bits.
func (c *Cache) shardOf(h uint64) *shard { return &c.shards[h>>60] }

// Handle is a reference to a block. Its bytes stay valid and unchanged
// until Release, which must be called exactly once; the zero Handle holds
// nothing and its Release does nothing.
type Handle struct {
	block []byte
	e     *entry // nil for a block outside the cache
}

// Uncached returns a Handle on block, a buffer outside any cache that the
// garbage collector reclaims: Release does nothing. It lets code that reads
// blocks treat cached and uncached ones alike.
func Uncached(block []byte) Handle { return Handle{block: block} }

// Bytes returns the block. It must not be modified, nor used after Release.
func (h Handle) Bytes() []byte { return h.block }

// Release drops the reference.
func (h Handle) Release() {
	if h.e != nil {
		h.e.unref()
	}
}

// Get returns a Handle on the block cached under k and marks it recently
// used.
func (c *Cache) Get(k Key) (Handle, bool) {
	if c == nil {
		return Handle{}, false
	}
	e := c.shard(k).get(k)
	if e == nil {
		c.misses.Add(1)
		return Handle{}, false
	}
	c.hits.Add(1)
	return Handle{block: e.block, e: e}, true
}

// Insert caches a copy of block under k, evicting the least recently used
// blocks of its shard to make room, and returns a Handle on the copy. If a
// concurrent reader cached k first, the Handle is on its block (the same
// bytes). A block the cache cannot hold — larger than a shard, or the cache
// is nil or closed — is copied to the heap and returned Uncached. The
// caller may reuse block as soon as Insert returns.
func (c *Cache) Insert(k Key, block []byte) Handle {
	if c == nil || len(block) == 0 || int64(offheap.SizeOf(len(block))) > c.shardCapacity.Load() {
		return Uncached(bytes.Clone(block))
	}
	// Counted live before closed is checked, so that a Close that has not
	// been seen cannot release the allocator under this Insert.
	c.live.Add(1)
	if c.closed.Load() {
		c.dropLive()
		return Uncached(bytes.Clone(block))
	}
	buf := c.alloc.Alloc(len(block))
	copy(buf, block)
	e := &entry{key: k, block: buf, cache: c}
	e.refs.Store(2) // the cache's and the Handle's
	if resident := c.shard(k).add(e); resident != e {
		c.free(buf)
		if resident == nil { // closed meanwhile, or shrunk below the block
			return Uncached(bytes.Clone(block))
		}
		return Handle{block: resident.block, e: resident}
	}
	c.fit()
	return Handle{block: buf, e: e}
}

// fit brings the cache's memory within its capacity if it passed it: it
// lowers the shards' target by the excess and a margin, gives back the
// pages the allocator keeps for reuse if they are more than the headroom
// (a pass over the allocator's slabs, so not for fewer), then evicts the
// least recently used block of each shard in turn until it fits or no
// shard holds a block. Each eviction's Free, above the allocator's limit,
// gives back the pages the block leaves unused. A sixteenth or more below
// its capacity, it raises the target by a step instead.
func (c *Cache) fit() {
	capacity, resident := c.capacity.Load(), c.alloc.Resident()
	share := capacity / numShards
	if resident <= capacity {
		if target := c.shardCapacity.Load(); resident < capacity-capacity/16 && target < lruCapacity(capacity) {
			c.shardCapacity.CompareAndSwap(target, min(target+share/256+1, lruCapacity(capacity)))
		}
		return
	}
	target := c.shardCapacity.Load()
	c.shardCapacity.CompareAndSwap(target, max(target-(resident-capacity)/numShards-share/64, share/2))
	if c.alloc.Kept() > capacity/headroomFraction {
		c.alloc.Trim()
	}
	for empty := 0; empty < numShards && c.alloc.Resident() > capacity; {
		s := &c.shards[c.nextShard.Add(1)%numShards]
		s.mu.Lock()
		if lru := s.head.prev; lru != &s.head {
			s.evict(lru)
			empty = 0
		} else {
			empty++
		}
		s.mu.Unlock()
	}
}

// SetCapacity makes the cache hold at most capacity bytes of memory from
// now on (≤ 0: none), as New's: it scales the shards' target with the
// capacity (what fit learnt of the blocks' pages holds at any capacity)
// and evicts the least recently used blocks of each shard until they fit
// it. When the capacity shrinks, the
// buffers freed by the evictions, and any others the allocator keeps for
// reuse, give their pages back to the system (offheap.Allocator.Trim), so
// that the memory the cache holds shrinks with it — but for evicted
// blocks that readers still hold, whose buffers are freed by their last
// Release and reused by the next blocks.
func (c *Cache) SetCapacity(capacity int64) {
	if c == nil {
		return
	}
	capacity = max(capacity, 0)
	c.alloc.SetLimit(capacity)
	old := c.capacity.Swap(capacity)
	target := lruCapacity(capacity)
	if old > 0 {
		scaled := int64(float64(c.shardCapacity.Load()) * float64(capacity) / float64(old))
		target = min(target, max(scaled, capacity/numShards/2))
	}
	c.shardCapacity.Store(target)
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.capacity = target
		for s.size > s.capacity && s.head.prev != &s.head {
			s.evict(s.head.prev)
		}
		s.mu.Unlock()
	}
	if capacity < old {
		c.alloc.Trim()
	}
	c.fit()
}

// Close drops every cached block and makes the cache cache nothing more.
// Blocks still held stay valid until released; the cache's memory is
// returned to the system after the last Release. Close is idempotent.
func (c *Cache) Close() {
	if c == nil || c.closed.Swap(true) {
		return
	}
	for i := range c.shards {
		c.shards[i].clear()
	}
	c.dropLive()
}

func (c *Cache) free(buf []byte) {
	if poisonFreed {
		whole := buf[:cap(buf)]
		for i := range whole {
			whole[i] = 0xdb
		}
	}
	c.alloc.Free(buf)
	c.dropLive()
}

func (c *Cache) dropLive() {
	if c.live.Add(-1) == 0 {
		c.alloc.Release()
	}
}

// Metrics is a snapshot of the cache's counters.
type Metrics struct {
	Hits, Misses uint64
	// Rejected counts the misses of point lookups that the cache did not
	// admit (Admit): the blocks read and not cached.
	Rejected uint64
	Blocks   int   // blocks held
	Bytes    int64 // bytes held, counting each block's whole buffer
	Capacity int64 // the bound of the cache's memory (Resident)
}

// Resident returns the bytes of memory the cache holds: the pages its
// blocks overlap, and those of freed blocks its allocator keeps for reuse.
func (c *Cache) Resident() int64 {
	if c == nil {
		return 0
	}
	return c.alloc.Resident()
}

// Metrics returns the cache's counters now.
func (c *Cache) Metrics() Metrics {
	if c == nil {
		return Metrics{}
	}
	m := Metrics{Hits: c.hits.Load(), Misses: c.misses.Load(), Rejected: c.rejected.Load(), Capacity: c.capacity.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		m.Blocks += len(s.items)
		m.Bytes += s.size
		s.mu.Unlock()
	}
	return m
}

// entry is one cached block.
type entry struct {
	key        Key
	block      []byte // from cache.alloc; cap(block) is what it costs
	cache      *Cache
	refs       atomic.Int32
	prev, next *entry // the shard's LRU ring, while resident
}

func (e *entry) ref() { e.refs.Add(1) }

func (e *entry) unref() {
	switch n := e.refs.Add(-1); {
	case n == 0:
		e.cache.free(e.block)
	case n < 0:
		panic("cache: a Handle was released twice")
	}
}

// shard is one LRU list: a map for lookup and an intrusive doubly linked
// ring whose head.next is the most recently used entry.
type shard struct {
	mu       sync.Mutex
	capacity int64 // the cache's target, as add last read it
	size     int64
	items    map[Key]*entry
	head     entry // sentinel of the ring
	closed   bool
	door     doorkeeper
}

func (s *shard) init(capacity int64) {
	s.capacity = capacity
	s.items = make(map[Key]*entry)
	s.head.prev, s.head.next = &s.head, &s.head
}

// get returns the entry under k with a reference for the caller, or nil.
func (s *shard) get(k Key) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.items[k]
	if !ok {
		return nil
	}
	e.ref()
	s.unlink(e)
	s.pushFront(e)
	return e
}

// add makes e, holding the cache's reference and the caller's, resident,
// evicting from the LRU end until it fits the cache's target, and returns
// it. If another entry
// is resident under e.key already, it returns that one, with a reference
// for the caller, and leaves e alone; after clear, or if e is larger than
// the target (which SetCapacity or fit lowered since Insert's check), it
// returns nil.
func (s *shard) add(e *entry) *entry {
	n := int64(cap(e.block))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.capacity = e.cache.shardCapacity.Load()
	if s.closed || n > s.capacity {
		return nil
	}
	if old, ok := s.items[e.key]; ok {
		old.ref()
		s.unlink(old)
		s.pushFront(old)
		return old
	}
	for s.size+n > s.capacity && s.head.prev != &s.head {
		s.evict(s.head.prev)
	}
	s.items[e.key] = e
	s.pushFront(e)
	s.size += n
	return e
}

// evict drops e from the shard and the cache's reference to it.
func (s *shard) evict(e *entry) {
	s.unlink(e)
	s.size -= int64(cap(e.block))
	delete(s.items, e.key)
	e.unref()
}

// clear evicts every entry and refuses new ones.
func (s *shard) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for s.head.next != &s.head {
		s.evict(s.head.next)
	}
}

func (s *shard) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (s *shard) pushFront(e *entry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
}

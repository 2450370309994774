// Package cache is the block cache: a byte-bounded, sharded LRU of decoded
// SSTable blocks shared by every table of a DB, so that a hot block is read
// from its file once.
//
// Blocks are identified by the table's file number and the block's offset.
// A cached block is immutable: readers may keep slices of it (a Get's value
// aliases its block) after it is evicted, because eviction only drops the
// cache's reference and the garbage collector keeps the bytes alive.
//
// INVARIANT: a shard's size is the sum of the lengths of its entries and,
// after every Add returns, at most its capacity — except that one block
// larger than a shard's capacity is never cached at all.
package cache

import (
	"sync"
	"sync/atomic"
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
}

// New returns a cache that holds at most capacity bytes of blocks
// (capacity/16 per shard). A capacity ≤ 0 gives a cache that holds nothing
// but still counts misses.
func New(capacity int64) *Cache {
	c := &Cache{}
	for i := range c.shards {
		c.shards[i].init(max(capacity, 0) / numShards)
	}
	return c
}

func (c *Cache) shard(k Key) *shard {
	// Fibonacci hashing of both fields spreads sequential offsets.
	h := (k.FileNum*0x9e3779b97f4a7c15 ^ k.Offset) * 0xbf58476d1ce4e5b9
	return &c.shards[h>>60]
}

// Get returns the block cached under k and marks it recently used.
func (c *Cache) Get(k Key) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	b, ok := c.shard(k).get(k)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return b, ok
}

// Add caches block under k, evicting the least recently used blocks of its
// shard to make room. The cache keeps block; the caller must not modify it.
func (c *Cache) Add(k Key, block []byte) {
	if c != nil {
		c.shard(k).add(k, block)
	}
}

// Metrics is a snapshot of the cache's counters.
type Metrics struct {
	Hits, Misses uint64
	Blocks       int   // blocks held
	Bytes        int64 // bytes held
	Capacity     int64
}

// Metrics returns the cache's counters now.
func (c *Cache) Metrics() Metrics {
	if c == nil {
		return Metrics{}
	}
	m := Metrics{Hits: c.hits.Load(), Misses: c.misses.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		m.Blocks += len(s.items)
		m.Bytes += s.size
		m.Capacity += s.capacity
		s.mu.Unlock()
	}
	return m
}

// shard is one LRU list: a map for lookup and an intrusive doubly linked
// ring whose head.next is the most recently used entry.
type shard struct {
	mu       sync.Mutex
	capacity int64
	size     int64
	items    map[Key]*entry
	head     entry // sentinel of the ring
}

type entry struct {
	key        Key
	block      []byte
	prev, next *entry
}

func (s *shard) init(capacity int64) {
	s.capacity = capacity
	s.items = make(map[Key]*entry)
	s.head.prev, s.head.next = &s.head, &s.head
}

func (s *shard) get(k Key) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.items[k]
	if !ok {
		return nil, false
	}
	s.unlink(e)
	s.pushFront(e)
	return e.block, true
}

func (s *shard) add(k Key, block []byte) {
	n := int64(len(block))
	if n > s.capacity {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.items[k]; ok { // a concurrent reader cached it first
		s.unlink(e)
		s.size -= int64(len(e.block))
		delete(s.items, k)
	}
	for s.size+n > s.capacity {
		lru := s.head.prev
		s.unlink(lru)
		s.size -= int64(len(lru.block))
		delete(s.items, lru.key)
	}
	e := &entry{key: k, block: block}
	s.items[k] = e
	s.pushFront(e)
	s.size += n
}

func (s *shard) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (s *shard) pushFront(e *entry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
}

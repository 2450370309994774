package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/offheap"
)

// TestLRUModel drives one shard with random inserts and gets and compares
// it with a model: a slice ordered from least to most recently used,
// evicted from the front until the buffers' sizes fit the shard's
// capacity.
func TestLRUModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	c := New(numShards * 1000)
	defer c.Close()
	s := &c.shards[0]
	type item struct {
		k    Key
		n    int
		fill byte
	}
	var model []item
	find := func(k Key) int {
		for i, it := range model {
			if it.k == k {
				return i
			}
		}
		return -1
	}
	for op := range 20_000 {
		k := Key{FileNum: uint64(rng.IntN(3)), Offset: uint64(rng.IntN(40))}
		if i := find(k); rng.IntN(2) == 0 && i < 0 {
			n := 1 + rng.IntN(300)
			buf := c.alloc.Alloc(n)
			for j := range buf {
				buf[j] = byte(op)
			}
			c.live.Add(1)
			e := &entry{key: k, block: buf, cache: c}
			e.refs.Store(2)
			if got := s.add(e); got != e {
				t.Fatalf("op %d: add of a new key returned another entry", op)
			}
			e.unref()
			model = append(model, item{k, n, byte(op)})
			size := 0
			for _, it := range model {
				size += offheap.SizeOf(it.n)
			}
			for size > int(s.capacity) {
				size -= offheap.SizeOf(model[0].n)
				model = model[1:]
			}
		} else {
			e := s.get(k)
			if (e != nil) != (i >= 0) {
				t.Fatalf("op %d: get %v = %v, model has it: %v", op, k, e != nil, i >= 0)
			}
			if e != nil {
				it := model[i]
				if !bytes.Equal(e.block, bytes.Repeat([]byte{it.fill}, it.n)) {
					t.Fatalf("op %d: block under %v is not what was added", op, k)
				}
				e.unref()
				model = append(append(model[:i], model[i+1:]...), it)
			}
		}
		if len(s.items) != len(model) {
			t.Fatalf("op %d: %d entries, model %d", op, len(s.items), len(model))
		}
	}
}

// capacityFor returns the smallest capacity whose shards' LRU lists hold
// blocks of lru bytes.
func capacityFor(lru int64) int64 {
	c := lru * numShards
	for lruCapacity(c) < lru {
		c += numShards
	}
	return c
}

func TestOversizedBlockNotCached(t *testing.T) {
	capacity := capacityFor(320) // 320 bytes of blocks a shard
	c := New(capacity)
	defer c.Close()
	k := Key{1, 0}
	c.Insert(k, make([]byte, 321)).Release()
	if _, ok := c.Get(k); ok {
		t.Fatal("a block larger than a shard was cached")
	}
	h := c.Insert(k, bytes.Repeat([]byte{7}, 320))
	if !bytes.Equal(h.Bytes(), bytes.Repeat([]byte{7}, 320)) {
		t.Fatal("Insert's Handle does not hold the block")
	}
	h.Release()
	h, ok := c.Get(k)
	if !ok {
		t.Fatal("a block of exactly a shard's capacity was not cached")
	}
	h.Release()
	m := c.Metrics()
	if m.Hits != 1 || m.Misses != 1 || m.Blocks != 1 || m.Bytes != 320 || m.Capacity != capacity {
		t.Fatalf("metrics %+v", m)
	}
}

// TestHeldBlockOutlivesEviction checks the reference rule: a block evicted
// while a reader holds it keeps its bytes until released, and is then
// freed for reuse; Close with blocks held releases the memory only after
// the last of them.
func TestHeldBlockOutlivesEviction(t *testing.T) {
	c := New(capacityFor(4352)) // one 4 KiB block a shard
	want := bytes.Repeat([]byte("held"), 1024)
	c.Insert(Key{1, 0}, want).Release()
	held, ok := c.Get(Key{1, 0})
	if !ok {
		t.Fatal("not cached")
	}
	// Evict it: every other key that lands in its shard takes its place.
	s := c.shard(Key{1, 0})
	for off := uint64(1); len(s.items) == 0 || s.items[Key{1, 0}] != nil; off++ {
		if c.shard(Key{1, off}) == s {
			c.Insert(Key{1, off}, bytes.Repeat([]byte{byte(off)}, 4096)).Release()
		}
	}
	if !bytes.Equal(held.Bytes(), want) {
		t.Fatal("an evicted block changed while held")
	}
	if got := c.live.Load(); got != 1+2 { // the cache's, the resident block's, the held one's
		t.Fatalf("live = %d, want 3", got)
	}
	held.Release()
	if got := c.live.Load(); got != 2 {
		t.Fatalf("after the last Release of an evicted block live = %d, want 2", got)
	}
	h, _ := c.Get(Key{1, s.head.next.key.Offset})
	c.Close()
	if got := c.live.Load(); got != 1 {
		t.Fatalf("after Close with a block held live = %d, want 1", got)
	}
	if len(h.Bytes()) != 4096 {
		t.Fatal("a block held across Close lost its bytes")
	}
	h.Release()
	if got := c.live.Load(); got != 0 {
		t.Fatalf("after the last Release live = %d, want 0", got)
	}
	if _, ok := c.Get(Key{1, 0}); ok {
		t.Fatal("a closed cache returned a block")
	}
	if h := c.Insert(Key{2, 0}, want); !bytes.Equal(h.Bytes(), want) || h.e != nil {
		t.Fatal("Insert into a closed cache: want an uncached copy")
	}
	c.Close() // idempotent
}

func TestInsertTwiceSharesBlock(t *testing.T) {
	c := New(1 << 20)
	defer c.Close()
	a := c.Insert(Key{1, 0}, []byte("first"))
	b := c.Insert(Key{1, 0}, []byte("other"))
	if string(b.Bytes()) != "first" || a.e != b.e {
		t.Fatalf("second Insert of a key gave %q, want the resident block", b.Bytes())
	}
	a.Release()
	b.Release()
	if got := c.live.Load(); got != 2 { // the cache's and the block's: the second copy was freed
		t.Fatalf("live = %d, want 2", got)
	}
}

func TestNilCache(t *testing.T) {
	var c *Cache
	if h := c.Insert(Key{}, []byte("x")); string(h.Bytes()) != "x" {
		t.Fatal("nil cache's Insert lost the block")
	}
	if _, ok := c.Get(Key{}); ok {
		t.Fatal("nil cache returned a block")
	}
	if c.Metrics() != (Metrics{}) {
		t.Fatal("nil cache has metrics")
	}
	c.Close()
	Handle{}.Release()
}

func TestConcurrent(t *testing.T) {
	c := New(64 << 10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				k := Key{FileNum: uint64(g % 2), Offset: uint64(i % 300)}
				h, ok := c.Get(k)
				if !ok {
					h = c.Insert(k, []byte(fmt.Sprint(k)))
				}
				if string(h.Bytes()) != fmt.Sprint(k) {
					t.Errorf("block under %v is %q", k, h.Bytes())
					return
				}
				h.Release()
			}
		}()
	}
	wg.Wait()
	if m := c.Metrics(); m.Bytes > m.Capacity || m.Hits+m.Misses != 20_000 {
		t.Fatalf("metrics %+v", m)
	}
	c.Close()
	if got := c.live.Load(); got != 0 {
		t.Fatalf("after Close and every Release live = %d", got)
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := New(64 << 20)
	defer c.Close()
	for i := range 1000 {
		c.Insert(Key{1, uint64(i) * 4096}, make([]byte, 4096)).Release()
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			h, _ := c.Get(Key{1, uint64(i%1000) * 4096})
			h.Release()
			i++
		}
	})
}

// TestSetCapacity fills a cache with blocks of the 4 KiB class, shrinks
// it to a quarter and checks that it holds at most the new capacity, the
// most recently used blocks among what it kept (LRU per shard: each
// shard keeps a suffix of its insertion order), and that the memory it
// holds (Resident) is what its blocks take — the evicted buffers' pages
// given back; then grows it again and checks that it fills to the new
// capacity, and that a block larger than a shard of a shrunk cache is
// handed back uncached.
func TestSetCapacity(t *testing.T) {
	const blockSize, capacity = 4000, 1 << 20
	c := New(capacity)
	defer c.Close()
	block := bytes.Repeat([]byte{7}, blockSize)
	insert := func(from, to int) {
		for i := from; i < to; i++ {
			c.Insert(Key{FileNum: 1, Offset: uint64(i)}, block).Release()
		}
	}
	insert(0, 512)
	c.SetCapacity(capacity / 4)
	m := c.Metrics()
	if m.Capacity != capacity/4 || m.Bytes > capacity/4 || m.Blocks == 0 {
		t.Fatalf("after SetCapacity(%d): %+v", capacity/4, m)
	}
	if got := c.Resident(); got != m.Bytes {
		t.Errorf("Resident %d after the shrink, want the blocks' %d bytes (the freed buffers' pages given back)", got, m.Bytes)
	}
	// Per shard, the blocks kept are the last inserted of that shard.
	lastKept := map[*shard]bool{}
	for i := 511; i >= 0; i-- {
		k := Key{FileNum: 1, Offset: uint64(i)}
		s := c.shard(k)
		h, ok := c.Get(k)
		h.Release()
		if ok && lastKept[s] {
			t.Fatalf("block %d kept though a later block of its shard was evicted", i)
		}
		if !ok {
			lastKept[s] = true
		}
	}
	c.SetCapacity(capacity)
	insert(1000, 1512)
	if m := c.Metrics(); m.Capacity != capacity || m.Bytes > capacity || m.Bytes < capacity/2 {
		t.Errorf("after growing back to %d and inserting 2 MB: %+v", capacity, m)
	}
	c.SetCapacity(1 << 14) // 1 KiB per shard: no block fits
	h := c.Insert(Key{FileNum: 2}, block)
	if h.e != nil || !bytes.Equal(h.Bytes(), block) {
		t.Errorf("a block larger than a shard of the shrunk cache: cached %v", h.e != nil)
	}
	h.Release()
	if m := c.Metrics(); m.Blocks != 0 || m.Bytes != 0 {
		t.Errorf("after SetCapacity(16 KiB): %+v, want nothing held", m)
	}
}

// TestResidentWithinCapacity inserts blocks whose sizes shift from phase
// to phase — data blocks of 3-5 KB, then index partitions and small
// blocks of 200 B-2 KB, then blocks of exactly 4 KiB — three times the
// capacity of each, and checks the cache's guarantee after every Insert:
// its memory (Resident) within its capacity, whatever sizes it has seen.
// After the last phase, which evicted every block of the others, each
// shard's LRU list is full of 4 KiB blocks — as many as its share less
// the headroom holds, so that the memory the earlier sizes left was given
// back rather than taken from the blocks, and the cache's memory is their
// pages and one kept.
func TestResidentWithinCapacity(t *testing.T) {
	const capacity = 4 << 20
	c := New(capacity)
	defer c.Close()
	rng := rand.New(rand.NewPCG(56, 56))
	block := make([]byte, 5000)
	key := uint64(0)
	for _, phase := range []struct{ lo, hi int }{{3000, 5000}, {200, 2000}, {4096, 4096}} {
		for inserted := 0; inserted < 3*capacity; {
			n := phase.lo + rng.IntN(phase.hi-phase.lo+1)
			key++
			c.Insert(Key{FileNum: 1, Offset: key}, block[:n]).Release()
			inserted += n
			if got := c.Resident(); got > capacity {
				t.Fatalf("phase %v, %d bytes inserted: Resident %d, above the capacity %d", phase, inserted, got, capacity)
			}
		}
	}
	m := c.Metrics()
	if want := numShards * (lruCapacity(capacity) / 4096) * 4096; m.Bytes != want {
		t.Errorf("after the 4 KiB phase the cache holds %d bytes of blocks, want %d (every shard full)", m.Bytes, want)
	}
	// Each Insert takes the buffer the one before evicted: the page of
	// the last evicted is kept for the next.
	if got, want := c.Resident(), m.Bytes+4096; got != want {
		t.Errorf("Resident %d, want %d: the 4 KiB blocks' pages (page-aligned) and the page of the block the last Insert evicted", got, want)
	}
}

// BenchmarkInsertEvict measures an Insert into a full cache, which evicts
// a block to make room and reuses or gives back its memory: blocks of 4
// KiB and a page more (one size class), and blocks of 1-8 KiB (data
// blocks of any compression, index partitions).
func BenchmarkInsertEvict(b *testing.B) {
	for _, tc := range []struct {
		name   string
		lo, hi int
	}{{"one-class", 4100, 4100}, {"mixed", 1 << 10, 8 << 10}} {
		b.Run(tc.name, func(b *testing.B) {
			c := New(16 << 20)
			defer c.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			sizes := make([]int, 4099)
			for i := range sizes {
				sizes[i] = tc.lo + rng.IntN(tc.hi-tc.lo+1)
			}
			block := make([]byte, tc.hi)
			for i := range 8192 { // fill it
				c.Insert(Key{FileNum: 1, Offset: uint64(i)}, block[:sizes[i%len(sizes)]]).Release()
			}
			i := 8192
			for b.Loop() {
				c.Insert(Key{FileNum: 1, Offset: uint64(i)}, block[:sizes[i%len(sizes)]]).Release()
				i++
			}
		})
	}
}

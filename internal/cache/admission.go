package cache

// Admission. A block that a point lookup (Get, MultiGet) misses is cached
// if its shard has room for it without evicting — a cache filling up
// admits every block — and otherwise only if a point lookup missed it
// lately before: on its second miss, not its first. Each shard keeps a
// doorkeeper, a Bloom filter of the blocks its lookups missed, in two
// generations: the current one records misses until their blocks add up
// to a shard's share of the capacity, then becomes the previous one, and
// the one before it is cleared to record anew. A block counts as missed
// lately if either generation holds it: missed within the last one to two
// cache's worth of misses.
//
// Why: a lookup of a key drawn from data many times the cache's size
// reads a block that no later lookup is likely to find cached before it is
// evicted; caching it costs a copy into memory no core has touched lately
// and an eviction, a fifth of such a Get's time (BenchmarkGetAtScale: 1M
// keys, an 8 MiB cache) for no hit. A block read again within a cache's
// worth of misses is one a cache of that size would have kept; it is
// cached from its second miss on, one miss later than if every block
// were. TinyLFU (and Ristretto, Badger's cache) admits by a frequency
// sketch with a doorkeeper like this one in front; the doorkeeper alone
// is the part that pays here, where the choice is between a block and
// nothing rather than a block and the one it evicts.
//
// An Iterator's blocks and the index partitions are inserted without
// asking: an Iterator reads a block's entries one after another, and a
// partition is read by every lookup of its keys.

// doorkeeperBytesPerBit is the blocks' bytes each bit of a generation
// stands for: 256, 16 bits for a 4 KiB block, the tables' default, where
// the filter's 2 probes give about 1.4% false positives. Smaller blocks
// raise the rate: blocks admitted at their first miss, as a cache without
// a doorkeeper would admit them. Both generations cost a 1,024th of the
// capacity.
const doorkeeperBytesPerBit = 256

// doorkeeper is a shard's record of the blocks its point lookups missed
// lately. Its shard's mutex guards it.
type doorkeeper struct {
	cur, prev []uint64
	// recorded is the bytes of the misses recorded in cur, and window
	// what it may record: the shard's share of the capacity when cur was
	// cleared.
	recorded, window int64
}

// seen reports whether either generation holds the block of hash h, and
// records it, of size bytes, in the current one. window is the shard's
// share of the cache's capacity now.
func (d *doorkeeper) seen(h uint64, size, window int64) bool {
	if d.cur == nil || d.recorded >= d.window {
		d.rotate(window)
	}
	// Two probes by double hashing of h's halves, the second odd.
	lo, hi := uint32(h), uint32(h>>32)|1
	seen := d.has(d.prev, lo, hi) || d.has(d.cur, lo, hi)
	for i := range uint32(2) {
		bit := (lo + i*hi) % uint32(len(d.cur)*64)
		d.cur[bit/64] |= 1 << (bit % 64)
	}
	d.recorded += size
	return seen
}

func (d *doorkeeper) has(bits []uint64, lo, hi uint32) bool {
	if len(bits) == 0 {
		return false
	}
	for i := range uint32(2) {
		bit := (lo + i*hi) % uint32(len(bits)*64)
		if bits[bit/64]&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}

// rotate makes the current generation the previous one, and the previous
// one, cleared and sized for window bytes of blocks, the current one.
func (d *doorkeeper) rotate(window int64) {
	words := int(min(max(window/doorkeeperBytesPerBit/64, 1), 1<<25))
	next := d.prev
	if len(next) == words {
		clear(next)
	} else {
		next = make([]uint64, words)
	}
	d.prev, d.cur = d.cur, next
	d.recorded, d.window = 0, max(window, 1)
}

// keyHash mixes both fields of k into 64 bits (splitmix64's finalizer over
// a Fibonacci hash, which spreads sequential offsets): its top bits pick
// the shard, all of them the doorkeeper's probes.
func keyHash(k Key) uint64 {
	x := k.FileNum*0x9e3779b97f4a7c15 ^ k.Offset
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Admit records that a point lookup missed the block under k, of size
// bytes, and reports whether the caller, now reading the block, should
// cache it (Insert): whether its shard has room for it without evicting,
// or a point lookup missed it lately before. A nil or closed cache, or
// one of no capacity, admits nothing.
func (c *Cache) Admit(k Key, size int) bool {
	if c == nil || c.closed.Load() {
		return false
	}
	window := c.capacity.Load() / numShards
	if window <= 0 {
		return false
	}
	h := keyHash(k)
	s := c.shardOf(h)
	s.mu.Lock()
	admit := s.size+int64(size) <= s.capacity || s.door.seen(h, int64(size), window)
	s.mu.Unlock()
	if !admit {
		c.rejected.Add(1)
	}
	return admit
}

package cache

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDoorkeeperModel drives a doorkeeper with misses of keys drawn from a
// pool four generations wide, against a model: the sets of the keys
// missed in the current generation and in the one before, rotated as the
// doorkeeper rotates, when the bytes recorded reach the window. A key the
// model holds must be seen (a Bloom filter has no false negatives); of the
// keys it does not hold, the share seen must be within the false-positive
// rate the filter's sizing gives, with room for chance.
func TestDoorkeeperModel(t *testing.T) {
	for _, tc := range []struct {
		name         string
		window, size int64
	}{
		{"4 KiB blocks", 64 << 10, 4 << 10},
		{"1 KiB blocks", 64 << 10, 1 << 10},
		{"blocks past the window", 4 << 10, 16 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perGeneration := int(max((tc.window+tc.size-1)/tc.size, 1))
			rng := rand.New(rand.NewPCG(1, uint64(tc.size)))
			var d doorkeeper
			var cur, prev map[uint64]bool
			var recorded int64
			fp, trials := 0, 0
			for range 200_000 {
				if cur == nil || recorded >= tc.window {
					prev, cur, recorded = cur, map[uint64]bool{}, 0
				}
				h := keyHash(Key{FileNum: 1, Offset: uint64(rng.IntN(4 * perGeneration))})
				want := cur[h] || prev[h]
				got := d.seen(h, tc.size, tc.window)
				cur[h], recorded = true, recorded+tc.size
				switch {
				case want && !got:
					t.Fatalf("a key missed within the last two generations was not seen")
				case !want:
					trials++
					if got {
						fp++
					}
				}
			}
			// Each generation holds at most perGeneration keys in
			// window/doorkeeperBytesPerBit bits, probed twice: a key
			// in neither is seen with probability at most that of
			// either filter at its fullest, twice its rate.
			bits := float64(max(tc.window/doorkeeperBytesPerBit/64, 1) * 64)
			rate := 2 * math.Pow(1-math.Exp(-2*float64(perGeneration)/bits), 2)
			bound := rate + 4*math.Sqrt(rate*(1-rate)/float64(trials))
			if got := float64(fp) / float64(trials); got > bound {
				t.Fatalf("%d of %d keys not missed lately seen (%.4f), want at most %.4f", fp, trials, got, bound)
			}
			t.Logf("%d of %d keys not missed lately seen (bound %.4f)", fp, trials, bound)
		})
	}
}

// TestAdmit checks the cache's admission: every block while the block's
// shard has room for it, and once it has none, a block at its second miss
// and not its first, counted in Metrics.Rejected; and none in a cache
// that is nil, closed or of no capacity.
func TestAdmit(t *testing.T) {
	const size = 4096
	var none *Cache
	closed := New(1 << 20)
	closed.Close()
	for name, c := range map[string]*Cache{"nil": none, "closed": closed, "no capacity": New(0)} {
		for miss := range 2 {
			if c.Admit(Key{1, 0}, size) {
				t.Errorf("a %s cache admitted a block at miss %d", name, miss+1)
			}
		}
	}

	c := New(capacityFor(8 * size))
	defer c.Close()
	k := Key{1, 0}
	s := c.shard(k)
	for range 3 {
		if !c.Admit(k, size) {
			t.Fatal("a shard with room did not admit a block at its first miss")
		}
	}
	// Fill k's shard: every key of it until no block fits.
	next := uint64(1)
	for s.size+size <= s.capacity {
		if o := (Key{2, next}); c.shard(o) == s {
			c.Insert(o, make([]byte, size)).Release()
		}
		next++
	}
	before := c.Metrics().Rejected
	fresh := Key{3, 0}
	for c.shard(fresh) != s {
		fresh.Offset++
	}
	if c.Admit(fresh, size) {
		t.Fatal("a full shard admitted a block at its first miss")
	}
	if !c.Admit(fresh, size) {
		t.Fatal("a full shard did not admit a block at its second miss")
	}
	if got := c.Metrics().Rejected - before; got != 1 {
		t.Fatalf("Rejected counted %d, want 1", got)
	}
}

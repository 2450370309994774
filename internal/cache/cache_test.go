package cache

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestLRUModel drives one shard with random adds and gets and compares it
// with a model: a slice ordered from least to most recently used, evicted
// from the front until the bytes fit.
func TestLRUModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var s shard
	s.init(1000)
	type item struct {
		k Key
		n int
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
		if rng.IntN(2) == 0 {
			n := rng.IntN(300)
			s.add(k, make([]byte, n))
			if i := find(k); i >= 0 {
				model = append(model[:i], model[i+1:]...)
			}
			model = append(model, item{k, n})
			size := 0
			for _, it := range model {
				size += it.n
			}
			for size > 1000 {
				size -= model[0].n
				model = model[1:]
			}
		} else {
			b, ok := s.get(k)
			i := find(k)
			if ok != (i >= 0) {
				t.Fatalf("op %d: get %v = %v, model has it: %v", op, k, ok, i >= 0)
			}
			if ok {
				if len(b) != model[i].n {
					t.Fatalf("op %d: block of %d bytes, model %d", op, len(b), model[i].n)
				}
				it := model[i]
				model = append(append(model[:i], model[i+1:]...), it)
			}
		}
		if len(s.items) != len(model) {
			t.Fatalf("op %d: %d entries, model %d", op, len(s.items), len(model))
		}
	}
}

func TestOversizedBlockNotCached(t *testing.T) {
	c := New(16 * 100) // 100 bytes a shard
	k := Key{1, 0}
	c.Add(k, make([]byte, 101))
	if _, ok := c.Get(k); ok {
		t.Fatal("a block larger than a shard was cached")
	}
	c.Add(k, make([]byte, 100))
	if _, ok := c.Get(k); !ok {
		t.Fatal("a block of exactly a shard's capacity was not cached")
	}
	m := c.Metrics()
	if m.Hits != 1 || m.Misses != 1 || m.Blocks != 1 || m.Bytes != 100 || m.Capacity != 1600 {
		t.Fatalf("metrics %+v", m)
	}
}

func TestNilCache(t *testing.T) {
	var c *Cache
	c.Add(Key{}, []byte("x"))
	if _, ok := c.Get(Key{}); ok {
		t.Fatal("nil cache returned a block")
	}
	if c.Metrics() != (Metrics{}) {
		t.Fatal("nil cache has metrics")
	}
}

func TestConcurrent(t *testing.T) {
	c := New(64 << 10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				k := Key{FileNum: uint64(g), Offset: uint64(i % 300)}
				if b, ok := c.Get(k); ok {
					if string(b) != fmt.Sprint(k) {
						t.Errorf("block under %v is %q", k, b)
						return
					}
				} else {
					c.Add(k, []byte(fmt.Sprint(k)))
				}
			}
		}()
	}
	wg.Wait()
	if m := c.Metrics(); m.Bytes > m.Capacity || m.Hits+m.Misses != 20_000 {
		t.Fatalf("metrics %+v", m)
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := New(64 << 20)
	for i := range 1000 {
		c.Add(Key{1, uint64(i) * 4096}, make([]byte, 4096))
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(Key{1, uint64(i%1000) * 4096})
			i++
		}
	})
}

package fuse

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/radix"
)

// TestDistinct checks distinct against slices.Sort and slices.Compact, on
// both sides of radix.MinLen and of the sizes where it sorts by another
// number of top bytes, and on sets whose keys share digits (which the
// radix sort skips) or repeat. One set of buffers serves every case, in
// turn larger and smaller than the one before, as the pool's sets do.
func TestDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	gens := map[string]func() uint64{
		"random":       rng.Uint64,
		"small values": func() uint64 { return rng.Uint64N(1 << 12) },
		"high digits":  func() uint64 { return rng.Uint64N(256) << 56 },
		"shared low":   func() uint64 { return rng.Uint64()&^0xffff | 0xabcd },
		"few values":   func() uint64 { return []uint64{0, 1, 1 << 63, ^uint64(0)}[rng.IntN(4)] },
	}
	gens["repeats"] = func() uint64 { return rng.Uint64N(20_000) * 0x9e3779b97f4a7c15 }
	gens["random top"] = func() uint64 { return rng.Uint64N(1<<16) << 48 }
	bufs := new(buffers)
	for name, gen := range gens {
		for _, n := range []int{1, 2, 100, radix.MinLen - 1, radix.MinLen, radix.MinLen + 1, 5000, 1<<16 + 1, 30_000} {
			hashes := make([]uint64, n)
			for i := range hashes {
				hashes[i] = gen()
			}
			before := slices.Clone(hashes)
			want := slices.Clone(hashes)
			slices.Sort(want)
			want = slices.Compact(want)
			if got := bufs.distinct(hashes); !slices.Equal(got, want) {
				t.Fatalf("%s, n = %d: distinct differs from sort and compact", name, n)
			}
			if !slices.Equal(hashes, before) {
				t.Fatalf("%s, n = %d: distinct modified its argument", name, n)
			}
		}
	}
}

func BenchmarkDistinct(b *testing.B) {
	hashes := randomHashes(1_000_000, 1)
	b.Run("radix", func(b *testing.B) {
		bufs := new(buffers)
		for range b.N {
			bufs.distinct(hashes)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(hashes)), "ns/key")
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for range b.N {
			keys := slices.Clone(hashes)
			slices.Sort(keys)
			_ = slices.Compact(keys)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(hashes)), "ns/key")
	})
}

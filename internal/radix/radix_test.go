package radix

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSort checks Sort against slices.Sort, on both sides of MinLen and on
// sets whose keys share digits (which the radix sort skips).
func TestSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	gens := map[string]func() uint64{
		"random":       rng.Uint64,
		"small values": func() uint64 { return rng.Uint64N(1 << 12) },
		"high digits":  func() uint64 { return rng.Uint64N(256) << 56 },
		"shared low":   func() uint64 { return rng.Uint64()&^0xffff | 0xabcd },
		"few values":   func() uint64 { return []uint64{0, 1, 1 << 63, ^uint64(0)}[rng.IntN(4)] },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 100, MinLen - 1, MinLen, MinLen + 1, 5000, 30_000} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = gen()
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			Sort(keys, make([]uint64, n+3)) // a longer buf is allowed
			if !slices.Equal(keys, want) {
				t.Fatalf("%s, n = %d: Sort differs from slices.Sort", name, n)
			}
		}
	}
}

func BenchmarkSort(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	keys := make([]uint64, 1_000_000)
	for i := range keys {
		keys[i] = rng.Uint64()
	}
	work, buf := make([]uint64, len(keys)), make([]uint64, len(keys))
	for _, bc := range []struct {
		name string
		sort func([]uint64)
	}{
		{"radix", func(s []uint64) { Sort(s, buf) }},
		{"slices.Sort", slices.Sort[[]uint64]},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				copy(work, keys)
				bc.sort(work)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(keys)), "ns/key")
		})
	}
}

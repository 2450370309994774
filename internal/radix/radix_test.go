package radix

import (
	"cmp"
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

// TestSortTop checks SortTop against a stable sort by the top bytes
// (slices.SortStableFunc) from MinLen up, and against slices.Sort below,
// for every number of digits.
func TestSortTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1, 100, MinLen - 1, MinLen, 5000} {
		for digits := 0; digits <= 9; digits++ {
			keys := make([]uint64, n)
			for i := range keys {
				// Few distinct top bytes, so that runs of equal ones are
				// long and their order shows.
				keys[i] = rng.Uint64N(4)<<62 | rng.Uint64N(3)<<54 | rng.Uint64N(1<<40)
			}
			want := slices.Clone(keys)
			if n < MinLen {
				slices.Sort(want)
			} else {
				shift := 64 - 8*min(max(digits, 1), 8)
				slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>shift, b>>shift) })
			}
			SortTop(keys, make([]uint64, n), digits)
			if !slices.Equal(keys, want) {
				t.Fatalf("n = %d, digits = %d: SortTop differs from a stable sort by the top bytes", n, digits)
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

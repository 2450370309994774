package radix

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDistinct checks Distinct against slices.Sort and slices.Compact on
// both sides of MinLen and of the sizes where it sorts by another number
// of top bytes, for random values, values sharing their top bytes, and
// repeats.
func TestDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	gens := map[string]func() uint64{
		"random":       rng.Uint64,
		"small values": func() uint64 { return rng.Uint64N(1 << 12) },
		"repeats":      func() uint64 { return rng.Uint64N(3000) * 0x9e3779b97f4a7c15 },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, MinLen - 1, MinLen, 5000, 1<<16 + 1} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = gen()
			}
			want := slices.Compact(slices.Sorted(slices.Values(keys)))
			if got := Distinct(keys, make([]uint64, n)); !slices.Equal(got, want) {
				t.Fatalf("%s, n = %d: Distinct differs from sort and compact", name, n)
			}
		}
	}
}

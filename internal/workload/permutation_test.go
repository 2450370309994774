package workload

import (
	"math/rand/v2"
	"testing"
)

// TestPermutation checks that the order is a permutation of 0 … n−1 (each
// number exactly once, against a count per number), that it depends on
// the random source's seed, and that it is shuffled: about as many
// neighbouring pairs ascend by one as in a random order (n−1)/n, not
// most of them.
func TestPermutation(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 17, 1000, 1 << 16, 1<<16 + 3, 300_001} {
		p := newPermutation(rand.New(rand.NewPCG(1, 2)), n)
		seen := make([]int, n)
		consecutive := 0
		for i := range n {
			x := p.at(i)
			if x < 0 || x >= n {
				t.Fatalf("n=%d: at(%d) = %d, outside [0, %d)", n, i, x, n)
			}
			seen[x]++
			if i > 0 && x == p.at(i-1)+1 {
				consecutive++
			}
		}
		for x, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: %d appears %d times, want once", n, x, c)
			}
		}
		// In a random order each of the n−1 neighbouring pairs ascends by
		// one with probability 1/n: about one in all. 8 is far above
		// that, and far below an order kept in runs.
		if n >= 1000 && consecutive > 8 {
			t.Errorf("n=%d: %d neighbouring pairs ascend by one, want about 1: not shuffled", n, consecutive)
		}
	}
	a := newPermutation(rand.New(rand.NewPCG(1, 2)), 1000)
	b := newPermutation(rand.New(rand.NewPCG(1, 2)), 1000)
	c := newPermutation(rand.New(rand.NewPCG(3, 2)), 1000)
	same, other := true, false
	for i := range 1000 {
		same = same && a.at(i) == b.at(i)
		other = other || a.at(i) != c.at(i)
	}
	if !same {
		t.Error("two permutations of one seed differ")
	}
	if !other {
		t.Error("permutations of seeds 1 and 3 are the same")
	}
}

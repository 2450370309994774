package ribbon

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomHashes returns n hashes from a fixed seed: distinct in practice (a
// repeat among a million has probability 3·10^−8).
func randomHashes(n int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = rng.Uint64()
	}
	return hs
}

// probes yields n hashes from seed by SplitMix64, a bijection of a counter,
// so they are distinct; none is in a set of randomHashes but with
// probability n·|set|/2^64 (below 10^−6 for the sizes used here).
func probes(n int, seed uint64, yield func(h uint64)) {
	x := seed * 0x9e3779b97f4a7c15
	for range n {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		yield(z ^ z>>31)
	}
}

// binomialBounds returns the interval mean ± z·σ of Binomial(trials, p),
// outside which a count falls with probability below 10^−6 for z = 5.
func binomialBounds(trials int, p, z float64) (lo, hi float64) {
	mean := float64(trials) * p
	sd := math.Sqrt(mean * (1 - p))
	return mean - z*sd, mean + z*sd
}

var filterCache = map[[2]int]*Filter{}

// builtFilter returns the filter of randomHashes(n, 1) at bits bits, built
// once per test binary: several tests share the large ones.
func builtFilter(t testing.TB, n, bits int) (*Filter, []uint64) {
	t.Helper()
	hashes := randomHashes(n, 1)
	if f, ok := filterCache[[2]int{n, bits}]; ok {
		return f, hashes
	}
	f, err := Build(hashes, bits)
	if err != nil {
		t.Fatalf("Build(%d hashes, %d bits): %v", n, bits, err)
	}
	filterCache[[2]int{n, bits}] = f
	return f, hashes
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

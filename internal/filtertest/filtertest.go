// Package filtertest holds what the tests and benchmarks of the static
// filter packages (fuse, ribbon) share: hashes to build from and to probe
// with, the binomial interval their false-positive counts must fall in,
// and the process's CPU time.
package filtertest

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/bloomkv/bloomkv/internal/procstat"
)

// RandomHashes returns n hashes from a fixed seed: distinct in practice (a
// repeat among a million has probability 3·10^−8).
func RandomHashes(n int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = rng.Uint64()
	}
	return hs
}

// Probes yields n hashes from seed by SplitMix64, a bijection of a counter,
// so they are distinct; none is in a set of RandomHashes but with
// probability n·|set|/2^64 (below 10^−6 for the sizes the tests use).
func Probes(n int, seed uint64, yield func(h uint64)) {
	x := seed * 0x9e3779b97f4a7c15
	for range n {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		yield(z ^ z>>31)
	}
}

// BinomialBounds returns the interval mean ± z·σ of Binomial(trials, p),
// outside which a count falls with probability below 10^−6 for z = 5.
func BinomialBounds(trials int, p, z float64) (lo, hi float64) {
	mean := float64(trials) * p
	sd := math.Sqrt(mean * (1 - p))
	return mean - z*sd, mean + z*sd
}

// CPUTime returns the CPU time the process has used, user and system, or
// 0 where it cannot be read: on a busy machine a benchmark's wall time
// measures the other processes as much as the code, its CPU time mostly
// the code (and the garbage collection it causes).
func CPUTime() time.Duration {
	u, err := procstat.ReadUsage()
	if err != nil {
		return 0
	}
	return u.CPU()
}

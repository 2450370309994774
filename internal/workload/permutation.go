package workload

import (
	"math/bits"
	"math/rand/v2"
)

// permutation is a pseudo-random order of 0 … n−1 computed, not stored:
// at(i) is the i-th number in it. A fill of ten million keys held as a
// shuffled []int is 80 MB live on the Go heap for the whole fill — in
// every engine's process alike, and more than most engines' own memory,
// and the collector lets the heap grow to twice what is live — so the
// fills that write every key once compute their order instead.
//
// It is a Feistel network on the smallest domain of 2^(2h) numbers that
// holds n, each half h bits, with rounds keyed from the workload's random
// source: a bijection of that domain. A number at or past n is mapped
// again until it falls below n (cycle walking), which keeps the
// bijection on 0 … n−1; the domain is less than 4n, so that takes under
// four steps on average.
type permutation struct {
	n    uint64
	half uint   // bits per half
	mask uint64 // 2^half − 1
	keys [permutationRounds]uint64
}

// permutationRounds is the Feistel rounds: four make a keyed network
// indistinguishable from a random permutation for a benchmark's purposes
// (Luby–Rackoff: three for a pseudo-random one, four for a strong one).
const permutationRounds = 4

// newPermutation returns a permutation of 0 … n−1, n ≥ 0, keyed by r.
func newPermutation(r *rand.Rand, n int) *permutation {
	p := &permutation{n: uint64(n)}
	if n > 1 {
		p.half = uint(bits.Len64(uint64(n-1))+1) / 2
	}
	p.mask = 1<<p.half - 1
	for i := range p.keys {
		p.keys[i] = r.Uint64()
	}
	return p
}

// at returns the i-th number of the order, 0 ≤ i < n.
func (p *permutation) at(i int) int {
	x := uint64(i)
	for {
		x = p.encrypt(x)
		if x < p.n {
			return int(x)
		}
	}
}

// encrypt maps x, a number of the domain, through the network.
func (p *permutation) encrypt(x uint64) uint64 {
	left, right := x>>p.half, x&p.mask
	for _, k := range p.keys {
		left, right = right, left^(mix(right^k)&p.mask)
	}
	return left<<p.half | right
}

// mix is SplitMix64's finalizer: every bit of x affects every bit of the
// result.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

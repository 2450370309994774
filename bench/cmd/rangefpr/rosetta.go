package main

import (
	"math"

	"github.com/bloomkv/bloomkv/bloom"
)

// rosettaLevels is the levels above the keys' own of the Rosetta filter
// the command measures beside Grafite: ranges up to 2^7 = 128 values (the
// widest measured) are covered by a few dyadic intervals of those levels.
const rosettaLevels = 7

// rosettaKeyLevelShare is the share of the bits the keys' own level gets,
// the best for these widths of the shares tried (0.5, 0.7, 0.85, 0.95):
// every query ends at that level, and the narrower the ranges the less
// the levels above prune.
const rosettaKeyLevelShare = 0.95

// rosetta is the other candidate design, measured for comparison only: a
// hierarchy of Bloom filters over the dyadic prefixes of the keys'
// integers (Luo et al., "Rosetta: A Robust Space-Time Optimized Range
// Filter for Key-Value Stores", SIGMOD 2020). Level k holds x>>k for every
// key x. A range is cut into maximal dyadic intervals of level at most
// rosettaLevels; an interval whose level says "maybe" is checked down to
// the keys' level, where a "maybe" answers true. The keys' level gets
// rosettaKeyLevelShare of the bits, the levels above the rest, evenly.
type rosetta struct {
	levels [rosettaLevels + 1]*bloom.Classic
}

func newRosetta(xs []uint64, bitsPerKey float64) (*rosetta, error) {
	n := float64(len(xs))
	total := bitsPerKey * n
	r := new(rosetta)
	for k := range r.levels {
		bits := total * rosettaKeyLevelShare
		if k > 0 {
			bits = total * (1 - rosettaKeyLevelShare) / rosettaLevels
		}
		probes := max(1, int(math.Round(math.Ln2*bits/n)))
		f, err := bloom.NewClassicSize(uint64(bits), probes)
		if err != nil {
			return nil, err
		}
		for _, x := range xs {
			f.AddHash(prefixHash(k, x>>k))
		}
		r.levels[k] = f
	}
	return r, nil
}

// prefixHash is the 64-bit hash of prefix p of level k (SplitMix64's
// finalizer of a value that differs per level).
func prefixHash(k int, p uint64) uint64 {
	x := p*0x9e3779b97f4a7c15 + uint64(k+1)*0xbf58476d1ce4e5b9
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// mayContain reports whether a key may lie in [a, b].
func (r *rosetta) mayContain(a, b uint64) bool {
	for x := a; ; {
		k := 0
		for k < rosettaLevels && x%(1<<(k+1)) == 0 && x+(1<<(k+1))-1 <= b && x+(1<<(k+1))-1 >= x {
			k++
		}
		if r.probe(k, x>>k) {
			return true
		}
		next := x + 1<<k
		if next-1 >= b || next == 0 {
			return false
		}
		x = next
	}
}

// probe checks prefix p of level k down to the keys' level.
func (r *rosetta) probe(k int, p uint64) bool {
	if !r.levels[k].MayContainHash(prefixHash(k, p)) {
		return false
	}
	return k == 0 || r.probe(k-1, 2*p) || r.probe(k-1, 2*p+1)
}

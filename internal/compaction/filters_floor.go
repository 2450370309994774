package compaction

import (
	"math"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// FalsePositiveFloor returns the information-theoretic floor of the
// expected false-positive reads of a lookup for an absent key
// (ExpectedFalsePositiveReads) in a tree of shape s whose filters spend
// an average of avg bits per key: the fewest reads of perfect filters —
// a false-positive rate of 2^−b at b bits per key, any b ≥ 0 — optimally
// allocated. No filter of n keys answers at rate 2^−b in fewer than about
// n·b bits (Carter et al., 1978), whatever its family, so no allocation
// of any filters within the budget gives s fewer expected reads.
func FalsePositiveFloor(s Shape, avg float64) float64 {
	return floorReads(s, avg, func(int) float64 { return 1 })
}

// maxFilterFraming is the most bytes a serialized filter of a family
// BestAllocation chooses from spends besides its payload, the memory a
// table's decoded filter holds (sstable.Filter.SizeBytes): a fuse or
// Ribbon filter's 48-byte header and 4-byte checksum; a Bloom filter's
// are 36 and 4.
const maxFilterFraming = 52

// FamilyFalsePositiveFloor is FalsePositiveFloor for the filters
// BestAllocation chooses from, in tables of up to s's size: level i's
// filters cost c_i bits per key per bit of −log2 of their rate, c_i the
// least ratio of payload bits per key (FilterSpec.BitsPerKey at the
// level's keys per table, less the framing a decoded filter does not
// hold) to −log2 rate over the candidates — a Ribbon filter's, its slots
// per key, 1.053 in tables of 10^6 keys, 1.056 of 10^4, more below 10^3
// (at least 128 slots); a fuse filter's at 16 bits, 1.13 in tables of
// 10^6 keys, 1.29 of 10^4; a Bloom filter's is 1.44 at best. avg counts
// payload bits or serialized ones: the floor holds for both. Every
// candidate, and every mix of them, has a rate of at least 2^(−b/c_i) at
// b bits per key, so the floor bounds from below the expected reads of
// every plan of these families within the budget: BestAllocation's, and
// Pebble's progressive widths at any offset.
func FamilyFalsePositiveFloor(s Shape, avg float64) float64 {
	var c [manifest.NumLevels]float64
	for level := range c {
		if s.runs(level) == 0 {
			continue
		}
		n := s.tableKeys(level)
		c[level] = math.Inf(1)
		for _, cand := range bestCandidates() {
			if cand.fpr < 1 {
				payload := cand.spec.BitsPerKey(n) - 8*maxFilterFraming/float64(n)
				c[level] = min(c[level], payload/-math.Log2(cand.fpr))
			}
		}
	}
	return floorReads(s, avg, func(level int) float64 { return c[level] })
}

// floorReads returns the fewest expected reads of filters whose rate at b
// bits per key in level i is 2^(−b/c(i)), within avg bits per key on s:
// the optimum of the convex problem min Σ_i r_i·2^(−b_i/c_i) subject to
// Σ_i n_i·b_i ≤ N·avg, b_i ≥ 0 (r_i the runs of level i, n_i its keys),
// Monkey's water-filling. For a price λ per bit each level takes b_i =
// max(0, c_i·log2(r_i·ln 2 / (c_i·λ·n_i))), where one more bit per key
// removes λ·n_i reads, and λ is bisected until the memory is the budget.
// It returns the sum of the runs (no filters) for avg ≤ 0, and 0 for a
// tree without data.
func floorReads(s Shape, avg float64, c func(level int) float64) float64 {
	type level struct{ runs, keys, c float64 }
	var levels []level
	var runs float64
	for i := range manifest.NumLevels {
		if r := s.runs(i); r > 0 {
			levels = append(levels, level{float64(r), s.keys(i), c(i)})
			runs += float64(r)
		}
	}
	budget := s.totalKeys() * avg
	if !(budget > 0) || len(levels) == 0 {
		return runs
	}
	// bits returns level l's bits per key at the price e^x per bit.
	bits := func(l level, x float64) float64 {
		return max(0, l.c*(math.Log2(l.runs*math.Ln2/(l.c*l.keys))-x/math.Ln2))
	}
	memory := func(x float64) float64 {
		var m float64
		for _, l := range levels {
			m += l.keys * bits(l, x)
		}
		return m
	}
	// The memory falls as the price rises: at e^−200 every level takes
	// some hundreds of bits per key, more than any budget, at e^40 none.
	lo, hi := -200.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if memory(mid) > budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	var reads float64
	for _, l := range levels {
		reads += l.runs * math.Exp2(-bits(l, hi)/l.c)
	}
	return reads
}

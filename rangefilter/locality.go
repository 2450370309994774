package rangefilter

import (
	"math"
	"math/bits"
	"slices"

	"github.com/bloomkv/bloomkv/internal/murmur"
)

// maxUniverse bounds the reduced universe, so that the sum of two values
// below it never overflows.
const maxUniverse = 1 << 63

// intFilter is Grafite's range filter over integers: the set of mapped key
// values x, each translated by the smallest (min) and hashed into a reduced
// universe of r values by
//
//	h(x) = (q(⌊x/r⌋) + x mod r) mod r,   q(b) = ⌊mix(b ⊕ seed)·r / 2^64⌋
//
// with mix a 64-bit finalizer (murmur.Mix13, Stafford's variant 13 of
// MurmurHash3's), so that consecutive block numbers get unrelated offsets.
// The set is kept sorted, in Elias–Fano form. Within one block of r
// consecutive values h is a rotation, so a range of fewer than r values
// maps to at most two blocks, each a cyclic interval of [0, r): at most four
// successor queries. The keys of the range's own blocks never answer it
// falsely (h is one-to-one on a block); a key of another block lands in
// the range's image with probability (its length)/r for a random q.
type intFilter struct {
	seed uint64
	r    uint64 // the reduced universe, 1 to span+1
	min  uint64 // the smallest mapped value
	span uint64 // the largest mapped value − min
	ef   eliasFano
}

// universe returns r = ⌊n·2^(bitsPerKey−2)⌋ capped at span+1, the number
// of mapped values from the smallest to the largest: a universe that small
// needs no hashing, and h is then one-to-one — the filter is exact.
func universe(n, span uint64, bitsPerKey float64) uint64 {
	r := min(float64(n)*math.Exp2(bitsPerKey-2), maxUniverse)
	if span < maxUniverse && r >= float64(span)+1 {
		return span + 1
	}
	return max(uint64(r), n)
}

// offset is q(b), the block's rotation, below r.
func (f *intFilter) offset(block uint64) uint64 {
	hi, _ := bits.Mul64(murmur.Mix13(block^f.seed), f.r)
	return hi
}

// hash is h(x) for a translated value x ≤ span.
func (f *intFilter) hash(x uint64) uint64 { return f.rotate(f.offset(x/f.r), x%f.r) }

// rotate is (off + i) mod r for a block's rotation off and a value's
// place i in its block, both below r.
func (f *intFilter) rotate(off, i uint64) uint64 {
	h := off + i
	if h >= f.r {
		h -= f.r
	}
	return h
}

// buildIntFilter builds the filter of vals: sorted, distinct, at least one.
// hashed and buf are scratch space of len(vals) or more.
func buildIntFilter(vals, hashed, buf []uint64, bitsPerKey float64, seed uint64) intFilter {
	n := uint64(len(vals))
	f := intFilter{seed: seed, min: vals[0], span: vals[n-1] - vals[0]}
	f.r = universe(n, f.span, bitsPerKey)
	hashed = hashed[:n]
	// hash(x) of sorted values, each block's rotation computed once: x −
	// start is x mod r while x is in the block that starts at start.
	start, off := uint64(0), f.offset(0)
	for i, v := range vals {
		x := v - f.min
		if x-start >= f.r {
			start = x - x%f.r
			off = f.offset(x / f.r)
		}
		hashed[i] = f.rotate(off, x-start)
	}
	sortHashes(hashed, buf)
	hashed = slices.Compact(hashed)
	f.ef = buildEliasFano(hashed, f.r)
	return f
}

// mayContain reports whether the set may hold a value in [a, b], a ≤ b,
// in the mapped values' space. Values outside [min, min+span] are
// answered exactly.
func (f *intFilter) mayContain(a, b uint64) bool {
	if b < f.min || a > f.min+f.span {
		return false
	}
	a = max(a, f.min) - f.min
	b = min(b-f.min, f.span)
	if b-a >= f.r-1 {
		// The range's image is all of [0, r), which holds every key's hash.
		return true
	}
	ba, bb := a/f.r, b/f.r
	if ba == bb {
		return f.cyclic(f.hash(a), b-a)
	}
	// Two blocks: a to the end of its block, then the start of b's to b.
	return f.cyclic(f.hash(a), f.r-1-a%f.r) || f.cyclic(f.offset(bb), b%f.r)
}

// cyclic reports whether the set holds a value in the cyclic interval of
// length+1 values from s, length < r.
func (f *intFilter) cyclic(s, length uint64) bool {
	if e := s + length; e < f.r {
		return f.ef.anyIn(s, e)
	}
	return f.ef.anyIn(s, f.r-1) || f.ef.anyIn(0, s+length-f.r)
}

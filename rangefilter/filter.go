package rangefilter

import (
	"bytes"
	"math"
)

// Filter is a decoded range filter: a view over its encoding, which it
// reads in place and never copies, so that the encoding must stay
// unchanged while the filter is used. Queries allocate nothing and are
// safe for concurrent use.
type Filter struct {
	km     keyMap
	f      intFilter
	keys   uint64
	values uint64
	data   []byte
}

// Decode validates an encoded filter — its checksums, every field, every
// section's padding and the structure queries rely on — and returns the
// filter as a view over data. Damaged or truncated input returns an error
// wrapping ErrCorrupt that says what is wrong and where.
func Decode(data []byte) (*Filter, error) {
	f := new(Filter)
	if err := decode(data, f); err != nil {
		return nil, err
	}
	return f, nil
}

// MayContainRange reports whether the table may hold a key in the
// half-open range [lo, hi) — lo ≤ key < hi, the bounds of an iterator.
// False means no key of the table is in the range; true, that one may be.
// An empty range (hi ≤ lo) is false. Bounds need not share the table's
// common prefix: a bound outside the keys' prefix is answered exactly.
func (f *Filter) MayContainRange(lo, hi []byte) bool {
	if bytes.Compare(lo, hi) >= 0 {
		return false
	}
	a, aAbove, b, strict, bAbove := f.km.ceilPair(lo, hi)
	if aAbove {
		return false
	}
	switch {
	case bAbove:
		b = f.km.last
	case strict:
		if b == 0 {
			return false
		}
		b-- // every key below hi maps below b
	}
	return a <= b && f.f.mayContain(a, b)
}

// Keys returns the distinct keys the filter was built from.
func (f *Filter) Keys() uint64 { return f.keys }

// SizeBytes returns the length of the filter's encoding.
func (f *Filter) SizeBytes() int { return len(f.data) }

// BitsPerKey returns the encoding's bits per distinct key, everything
// counted.
func (f *Filter) BitsPerKey() float64 { return 8 * float64(len(f.data)) / float64(f.keys) }

// Exact reports whether the filter holds the keys' mapped values
// themselves, unhashed — their span fits the universe the bits per key
// buy. Its only false positives then come from keys the mapping does not
// tell apart, and it answers falsely only for ranges that end inside one of
// those groups.
func (f *Filter) Exact() bool { return f.f.span < maxUniverse && f.f.r == f.f.span+1 }

// FalsePositiveBound returns the design's bound on the probability that
// the filter answers true for a range with no key that covers width
// consecutive values of the key mapping (for decimal, big-endian integer
// and prefix/suffix keys within the mapping's positions, width
// consecutive integers): width·n/r for n distinct values hashed into a
// universe of r, capped at 1, and 0 for an exact filter.
func (f *Filter) FalsePositiveBound(width uint64) float64 {
	if f.Exact() {
		return 0
	}
	return math.Min(1, float64(width)*float64(f.values)/float64(f.f.r))
}

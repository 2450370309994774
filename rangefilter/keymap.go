package rangefilter

import (
	"bytes"
	"math/bits"
)

// maxPositions is the most key bytes after the common prefix the mapping
// reads: the ones after that never tell two keys apart in the filter.
const maxPositions = 256

// maxTrailing is the most positions of one symbol the mapping keeps after
// the last position with more than one.
const maxTrailing = 16

// keyMap maps byte-string keys to integers in order, as a view over the
// bytes of an encoded filter. A key is the table's common prefix, then a
// suffix read as a number in a mixed radix: position i of the suffix is a
// digit whose alphabet A_i is the set of bytes the table's keys have there,
// plus an end mark, smaller than any byte, if some key ends there. A byte
// b ∈ A_i is the digit "the symbols of A_i below b", the end mark 0 and
// every position after the end 0, so that
//
//	f(key) = Σ d_i · Π_{i<j<P} a_j  over positions i < P,  a_j = |A_j|
//
// sorts as the keys do: decimal digits become a radix-10 number,
// big-endian integers a radix-256 one, a byte every key shares costs
// nothing. P stops where the product Π a_i would pass 2^64, at
// maxPositions, or one position after the last with more than one symbol
// (the one after lets a bound longer than such keys round up); keys alike
// in their first P positions share a value.
//
// INVARIANT: radix[i] = a_i ≥ 1 for i < p, and Π a_i ≤ 2^64: last =
// Π a_i − 1 is every value's bound.
type keyMap struct {
	prefix []byte // the keys' common prefix
	alpha  []byte // 32 bytes per position: the 256-bit set of its bytes
	ends   []byte // 64-bit words: bit i set if some key ends at position i
	p      int    // positions
	last   uint64 // Π a_i − 1: the largest value
	radix  [maxPositions]uint16
}

// digit returns byte c's digit at position i: the symbols of A_i below c,
// and whether c is in A_i.
func (m *keyMap) digit(i int, c byte) (d uint64, present bool) {
	set := m.alpha[32*i : 32*i+32]
	w := uint64(c >> 6)
	n := 0
	for j := range w {
		n += bits.OnesCount64(word(set, j))
	}
	x := word(set, w)
	n += bits.OnesCount64(x & (uint64(1)<<(c&63) - 1))
	return uint64(n) + m.end(i), x>>(c&63)&1 != 0
}

// end is 1 if some key ends at position i, else 0.
func (m *keyMap) end(i int) uint64 { return word(m.ends, uint64(i)/64) >> (i % 64) & 1 }

// ceil maps any byte string s to a value v no larger than f(k) for every
// key k ≥ s — for a key itself v = f(k) — or reports above if s is above
// every key. strict reports that f(k) < v for every key k < s; it fails
// only for an s that agrees with a key in all P positions and goes on
// after them.
//
// Why v ≤ f(k) for a key k ≥ s: let j be the first position where they
// differ. Before j, s's bytes are k's, so in the alphabets, and the digits
// agree. If s ends at j, v has 0s from j on. Otherwise k[j] > s[j]: if
// s[j] ∈ A_j, v's digit at j is below k's, and the digits after it add at
// most one unit of position j; if not, v takes the digit of the next
// symbol of A_j — at most k's — and 0s after. If j ≥ P, v = f(k).
func (m *keyMap) ceil(s []byte) (v uint64, strict, above bool) {
	c := len(m.prefix)
	n := min(len(s), c)
	switch cmp := bytes.Compare(s[:n], m.prefix[:n]); {
	case cmp < 0, cmp == 0 && len(s) < c:
		return 0, true, false // s is below every key
	case cmp > 0:
		return 0, true, true
	}
	s = s[c:]
	// v is computed in 128 bits, hi:v: a digit a_i (a byte above every
	// symbol of A_i) carries into the position before, and can carry out
	// of the first to Π a_i, 2^64 at most.
	var hi uint64
	exact := true // every digit so far is s's own byte
	for i := range m.p {
		d, present := uint64(0), true
		if exact && i < len(s) {
			d, present = m.digit(i, s[i])
		}
		h, l := bits.Mul64(v, uint64(m.radix[i]))
		var carry uint64
		v, carry = bits.Add64(l, d, 0)
		hi = hi*uint64(m.radix[i]) + h + carry
		if !present {
			// The next symbol up, or one unit more at position i−1 if
			// none: 0s after, and every key below s is below v.
			exact = false
		}
	}
	if hi != 0 || v > m.last {
		return 0, true, true
	}
	return v, !exact || len(s) <= m.p, false
}

// alphabets accumulates the alphabets of the keys' suffixes while a
// filter is built.
type alphabets struct {
	sets [maxPositions][4]uint64
	ends [maxPositions / 64]uint64
}

func (a *alphabets) add(suffix []byte) {
	n := min(len(suffix), maxPositions)
	for i, c := range suffix[:n] {
		a.sets[i][c>>6] |= 1 << (c & 63)
	}
	if n < maxPositions {
		a.ends[n/64] |= 1 << (n % 64)
	}
}

// keyMap returns the mapping of the alphabets, with its own bytes.
func (a *alphabets) keyMap(prefix []byte) keyMap {
	m := keyMap{prefix: prefix}
	reached := 0
	for i := range maxPositions {
		r := uint64(a.ends[i/64] >> (i % 64) & 1)
		for _, w := range a.sets[i] {
			r += uint64(bits.OnesCount64(w))
		}
		last, ok := growProduct(m.last, r)
		if r == 0 || !ok {
			break
		}
		m.last = last
		m.radix[i] = uint16(r)
		reached = i + 1
		if r > 1 {
			m.p = i + 1
		}
	}
	// Up to maxTrailing positions of one symbol more, free in values: a
	// bound that differs from the keys there, or goes on after keys that
	// end there (key+"\x00"), rounds up instead of sharing a key's value.
	m.p = min(reached, m.p+maxTrailing)
	alpha := make([]uint64, 0, 4*m.p)
	for i := range m.p {
		alpha = append(alpha, a.sets[i][:]...)
	}
	m.alpha = wordsToBytes(alpha)
	ends := make([]uint64, (m.p+63)/64)
	copy(ends, a.ends[:])
	if m.p%64 != 0 {
		ends[len(ends)-1] &= 1<<(m.p%64) - 1
	}
	m.ends = wordsToBytes(ends)
	return m
}

// keyDigits is the digit of every byte at each position of a mapping, for
// mapping a table's keys while it is built: one lookup a byte where ceil
// counts bits.
type keyDigits []uint16

// digits returns m's table of digits, reusing t's memory.
func (m *keyMap) digits(t keyDigits) keyDigits {
	t = append(t[:0], make(keyDigits, 256*m.p)...)
	for i := range m.p {
		for c := range 256 {
			d, _ := m.digit(i, byte(c))
			t[256*i+c] = uint16(d)
		}
	}
	return t
}

// value is f(suffix) for the suffix of a key the mapping was built from:
// ceil's value for it, which TestKeyDigits checks.
func (m *keyMap) value(t keyDigits, suffix []byte) uint64 {
	v := uint64(0)
	for i := range m.p {
		v *= uint64(m.radix[i])
		if i < len(suffix) {
			v += uint64(t[256*i+int(suffix[i])])
		}
	}
	return v
}

// growProduct returns (last+1)·r − 1, the largest value of a mapping with
// one more position of r symbols, and false if that passes 2^64 − 1.
func growProduct(last, r uint64) (uint64, bool) {
	h, l := bits.Mul64(last, r)
	l, c := bits.Add64(l, r-1, 0)
	return l, h == 0 && c == 0 && r > 0
}

package rangefilter

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/bloomkv/bloomkv/internal/bytealg"
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
	// below[i][w] is the digit of the first byte value of word w of
	// position i's set: the symbols of the words before it, and the end
	// mark. A digit then costs one popcount.
	below [maxPositions][4]uint16
}

// digit returns byte c's digit at position i: the symbols of A_i below c,
// and whether c is in A_i.
func (m *keyMap) digit(i int, c byte) (d uint64, present bool) {
	w := uint64(c >> 6)
	x := word(m.alpha, 4*uint64(i)+w)
	n := uint64(m.below[i][w]) + uint64(bits.OnesCount64(x&(uint64(1)<<(c&63)-1)))
	return n, x>>(c&63)&1 != 0
}

// countBelow fills below from the alphabets and end marks.
func (m *keyMap) countBelow() {
	for i := range m.p {
		n := uint16(m.end(i))
		for w := range uint64(4) {
			m.below[i][w] = n
			n += uint16(bits.OnesCount64(word(m.alpha, 4*uint64(i)+w)))
		}
	}
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
	suffix, where := m.strip(s)
	if where != 0 {
		return 0, true, where > 0
	}
	st := m.steps(ceilState{}, suffix, 0, m.p)
	return m.result(&st, suffix)
}

// ceilPair is ceil of lo and of hi, computing the digits of the positions
// the two share once: the bounds of a short range share most of theirs.
func (m *keyMap) ceilPair(lo, hi []byte) (a uint64, aAbove bool, b uint64, bStrict, bAbove bool) {
	los, lw := m.strip(lo)
	his, hw := m.strip(hi)
	if lw != 0 || hw != 0 {
		a, _, aAbove = m.ceil(lo)
		b, bStrict, bAbove = m.ceil(hi)
		return
	}
	shared := min(bytealg.CommonPrefix(los, his), m.p)
	st := m.steps(ceilState{}, los, 0, shared)
	lst, hst := m.steps(st, los, shared, m.p), m.steps(st, his, shared, m.p)
	a, _, aAbove = m.result(&lst, los)
	b, bStrict, bAbove = m.result(&hst, his)
	return
}

// strip returns s after the common prefix, and where = 0 if s starts with
// it, −1 if s is below every key, +1 if above.
func (m *keyMap) strip(s []byte) (suffix []byte, where int) {
	c := len(m.prefix)
	n := min(len(s), c)
	switch cmp := bytes.Compare(s[:n], m.prefix[:n]); {
	case cmp < 0, cmp == 0 && len(s) < c:
		return nil, -1
	case cmp > 0:
		return nil, 1
	}
	return s[c:], 0
}

// ceilState is ceil's value so far, in 128 bits, hi:v: a digit a_i (a
// byte above every symbol of A_i) carries into the position before, and
// can carry out of the first to Π a_i, 2^64 at most.
type ceilState struct {
	v, hi   uint64
	inexact bool // some digit so far is not the bound's own byte
}

// steps adds the digits of suffix s at positions from ≤ i < to ≤ p to
// st, ceil's value of the positions before from, and returns it. A
// position's digit d joins the value as hi:v = hi:v · a_i + d, in 128
// bits; from the first byte not in its position's alphabet on — the next
// symbol up, or one unit more at the position before if none, and 0s
// after — and past the end of s, the digits are 0, and every key below s
// is below the value.
func (m *keyMap) steps(st ceilState, s []byte, from, to int) ceilState {
	v, hi := st.v, st.hi
	radix, below := m.radix[:to], m.below[:to]
	alpha := m.alpha[:32*to] // INVARIANT: 32 bytes a position, to ≤ p
	i := from
	if !st.inexact {
		for n := min(to, len(s)); i < n; i++ {
			c := s[i]
			w := int(c >> 6)
			x := binary.LittleEndian.Uint64(alpha[32*i+8*w:])
			d := uint64(below[i][w]) + uint64(bits.OnesCount64(x&(uint64(1)<<(c&63)-1)))
			r := uint64(radix[i])
			h, l := bits.Mul64(v, r)
			var carry uint64
			v, carry = bits.Add64(l, d, 0)
			hi = hi*r + h + carry
			if x>>(c&63)&1 == 0 {
				st.inexact = true
				i++
				break
			}
		}
	}
	for ; i < to; i++ {
		r := uint64(radix[i])
		h, l := bits.Mul64(v, r)
		v, hi = l, hi*r+h
	}
	st.v, st.hi = v, hi
	return st
}

func (m *keyMap) result(st *ceilState, s []byte) (v uint64, strict, above bool) {
	if st.hi != 0 || st.v > m.last {
		return 0, true, true
	}
	return st.v, st.inexact || len(s) <= m.p, false
}

// alphabets accumulates, while a filter is built, the bytes its keys have
// at each position counted from the key's first byte, and where keys end.
// It counts from the first byte because the common prefix is known only
// once every key is in: keyMap then reads the positions after it.
type alphabets struct {
	sets [][4]uint64 // the 256-bit set of each position's bytes
	ends []uint64    // bit i set if some key ends at position i
}

// reset empties a for keys of at most n bytes, keeping its memory.
func (a *alphabets) reset(n int) {
	a.sets = append(a.sets[:0], make([][4]uint64, n)...)
	a.ends = append(a.ends[:0], make([]uint64, n/64+1)...)
}

// add adds key's bytes from position from on, and its end. The bytes
// before from must have been added already, as a key's that shares them
// with the key added before it has: a sorted run of keys adds each byte
// after the prefix it shares with the previous key, once. reset must have
// made room for len(key)+1 positions.
func (a *alphabets) add(key []byte, from int) {
	sets := a.sets[:len(key)]
	for i := from; i < len(key); i++ {
		c := key[i]
		sets[i][c>>6] |= 1 << (c & 63)
	}
	a.ends[len(key)/64] |= 1 << (len(key) % 64)
}

// keyMap returns the mapping of the alphabets of the positions after
// prefix, the keys' common prefix, with its own bytes.
func (a *alphabets) keyMap(prefix []byte) keyMap {
	m := keyMap{prefix: prefix}
	c := len(prefix)
	set := func(i int) [4]uint64 {
		if c+i < len(a.sets) {
			return a.sets[c+i]
		}
		return [4]uint64{}
	}
	end := func(i int) uint64 {
		if j := c + i; j/64 < len(a.ends) {
			return a.ends[j/64] >> (j % 64) & 1
		}
		return 0
	}
	reached := 0
	for i := range maxPositions {
		r := end(i)
		for _, w := range set(i) {
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
		w := set(i)
		alpha = append(alpha, w[:]...)
	}
	m.alpha = wordsToBytes(alpha)
	ends := make([]uint64, (m.p+63)/64)
	for i := range m.p {
		ends[i/64] |= end(i) << (i % 64)
	}
	m.ends = wordsToBytes(ends)
	m.countBelow()
	return m
}

// placeValues is, for mapping a table's keys while it is built, what each
// byte adds to a value at each position of a mapping: entry 256·i + c is
// d_i(c)·W_i, byte c's digit at position i times the position's weight
// W_i = Π_{i<j<P} a_j, so that f(key) = Σ_i placeValues[256·i + key[i]] —
// one lookup a byte where ceil counts bits and multiplies. The products
// are exact: d_i < a_i, so d_i·W_i < Π_{j≥i} a_j ≤ 2^64.
type placeValues []uint64

// placeValues returns m's table, reusing t's memory.
func (m *keyMap) placeValues(t placeValues) placeValues {
	t = append(t[:0], make(placeValues, 256*m.p)...)
	w := uint64(1)
	for i := m.p - 1; i >= 0; i-- {
		for c := range 256 {
			d, _ := m.digit(i, byte(c))
			t[256*i+c] = d * w
		}
		// w becomes W_{i−1}. It reaches 2^64, and wraps to 0, only where
		// every a_j before i is 1: their one digit, 0, needs no weight.
		w *= uint64(m.radix[i])
	}
	return t
}

// growProduct returns (last+1)·r − 1, the largest value of a mapping with
// one more position of r symbols, and false if that passes 2^64 − 1.
func growProduct(last, r uint64) (uint64, bool) {
	h, l := bits.Mul64(last, r)
	l, c := bits.Add64(l, r-1, 0)
	return l, h == 0 && c == 0 && r > 0
}

package rangefilter

import (
	"encoding/binary"
	"math/bits"
)

// sampleRate is the number of zeros of the high bits between two select
// samples: a select scans at most that many zeros and the ones between
// them, about 16 words, and the samples cost 32/sampleRate bits per bucket,
// 0.06 to 0.13 bits per element.
const sampleRate = 512

// eliasFano is a sorted set of m distinct integers below a universe r in
// Elias–Fano form, as a view over the bytes of an encoded filter. Each
// value v is split into its l low bits, stored packed in low, and its high
// part v>>l, stored in unary in high: element i sets bit (v_i>>l) + i, and
// bucket b (the values whose high part is b) ends at the (b+1)-th zero. With
// l = ⌊log2(r/m)⌋ that takes m·l + m + ⌈r/2^l⌉ ≤ m·(l+3) bits, and
// samples[j] holds the position of zero number j·sampleRate so that
// finding the start of a bucket costs a bounded scan.
//
// INVARIANT: as built, or as validated by checkEliasFano: high has exactly
// m ones and buckets zeros in its first m+buckets bits, its last such bit
// is a zero and every bit after them is 0; low holds m·l bits, then zeros
// to the end of a padding word; samples is exact. The queries rely on it to
// stay inside the slices.
type eliasFano struct {
	l       uint   // low bits per element, 0 to 63
	m       uint64 // elements, ≥ 1
	buckets uint64 // (r−1)>>l + 1: the zeros of high
	low     []byte // little-endian 64-bit words
	high    []byte // little-endian 64-bit words
	samples []byte // little-endian uint32 positions in high
}

// lowBits is ⌊log2(r/m)⌋ for 1 ≤ m ≤ r.
func lowBits(r, m uint64) uint { return uint(bits.Len64(r/m) - 1) }

func lowLen(m uint64, l uint) uint64   { return 8 * ((m*uint64(l)+63)/64 + 1) }
func highLen(m, buckets uint64) uint64 { return 8 * ((m + buckets + 63) / 64) }
func samplesLen(buckets uint64) uint64 {
	return (4*((buckets+sampleRate-1)/sampleRate) + 7) &^ 7
}

// buildEliasFano encodes vals, sorted, distinct, below r, at least one.
func buildEliasFano(vals []uint64, r uint64) eliasFano {
	m := uint64(len(vals))
	l := lowBits(r, m)
	e := eliasFano{l: l, m: m, buckets: (r-1)>>l + 1}
	low := make([]uint64, lowLen(m, l)/8)
	high := make([]uint64, highLen(m, e.buckets)/8)
	mask := uint64(1)<<l - 1
	for i, v := range vals {
		if l > 0 {
			off := uint64(i) * uint64(l)
			w, s := off/64, off%64
			low[w] |= (v & mask) << s
			if s+uint64(l) > 64 {
				low[w+1] |= (v & mask) >> (64 - s)
			}
		}
		p := v>>l + uint64(i)
		high[p/64] |= 1 << (p % 64)
	}
	e.low = wordsToBytes(low)
	e.high = wordsToBytes(high)
	e.samples = make([]byte, samplesLen(e.buckets))
	i := uint64(0)
	for k := uint64(0); k < e.buckets; k += sampleRate {
		for i < m && vals[i]>>l <= k {
			i++
		}
		binary.LittleEndian.PutUint32(e.samples[4*(k/sampleRate):], uint32(i+k))
	}
	return e
}

func wordsToBytes(words []uint64) []byte {
	b := make([]byte, 0, 8*len(words))
	for _, w := range words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func word(b []byte, i uint64) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }

// lowAt returns the low bits of element i.
func (e *eliasFano) lowAt(i uint64) uint64 {
	if e.l == 0 {
		return 0
	}
	off := i * uint64(e.l)
	w, s := off/64, off%64
	x := word(e.low, w) >> s
	if s+uint64(e.l) > 64 {
		x |= word(e.low, w+1) << (64 - s)
	}
	return x & (uint64(1)<<e.l - 1)
}

func (e *eliasFano) highBit(p uint64) bool { return word(e.high, p/64)>>(p%64)&1 != 0 }

// select0 returns the position in high of zero number k, k < buckets.
func (e *eliasFano) select0(k uint64) uint64 {
	j := k / sampleRate
	pos := uint64(binary.LittleEndian.Uint32(e.samples[4*j:]))
	k -= j * sampleRate
	w := pos / 64
	z := ^word(e.high, w) &^ (uint64(1)<<(pos%64) - 1) // the zeros from pos on
	for {
		c := uint64(bits.OnesCount64(z))
		if k < c {
			return 64*w + selectInWord(z, k)
		}
		k -= c
		w++
		z = ^word(e.high, w)
	}
}

// nextOne returns the position of the first one of high at or after p; one
// must exist.
func (e *eliasFano) nextOne(p uint64) uint64 {
	w := p / 64
	x := word(e.high, w) &^ (uint64(1)<<(p%64) - 1)
	for x == 0 {
		w++
		x = word(e.high, w)
	}
	return 64*w + uint64(bits.TrailingZeros64(x))
}

// anyIn reports whether the set holds a value in [c, d], c ≤ d below the
// universe. It finds the successor of c: the first element of c's bucket
// whose low bits reach c's, or else the first element of a later bucket.
func (e *eliasFano) anyIn(c, d uint64) bool {
	hc := c >> e.l
	var p uint64 // the first bit of bucket hc
	if hc > 0 {
		p = e.select0(hc-1) + 1
	}
	i := p - hc // the first element whose high part is hc or more
	lc := c & (uint64(1)<<e.l - 1)
	for ; e.highBit(p); p, i = p+1, i+1 {
		if lo := e.lowAt(i); lo >= lc {
			return hc<<e.l|lo <= d
		}
	}
	// p is the zero that ends bucket hc: element i, if any, is in a later one.
	if i == e.m || d>>e.l == hc {
		return false
	}
	return (e.nextOne(p)-i)<<e.l|e.lowAt(i) <= d
}

// selectInWord returns the position of set bit number k (from 0) of w,
// which has more than k.
func selectInWord(w uint64, k uint64) uint64 {
	for b := uint64(0); ; b += 8 {
		by := byte(w >> b)
		c := uint64(bits.OnesCount8(by))
		if k < c {
			return b + uint64(selectInByte[by][k])
		}
		k -= c
	}
}

// selectInByte[b][k] is the position of set bit number k of b.
var selectInByte = func() (t [256][8]uint8) {
	for b := range 256 {
		k := 0
		for i := range 8 {
			if b>>i&1 != 0 {
				t[b][k] = uint8(i)
				k++
			}
		}
	}
	return t
}()

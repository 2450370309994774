package ribbon

import "math/bits"

// band is the working memory of a build: the rows of the banded system,
// one per slot. Row i, when set, has its first coefficient at column i
// (lo's bit 0), its others at columns i+1 to i+127 (the rest of lo, then
// hi), and its right-hand side in res.
//
// INVARIANT: a row is empty (lo = hi = res = 0) or has lo's bit 0 set.
type band struct {
	lo, hi []uint64
	res    []uint32
}

// reset makes b an empty band of m slots, reusing its memory.
func (b *band) reset(m int) {
	b.lo = resize(b.lo, m)
	b.hi = resize(b.hi, m)
	b.res = resize(b.res, m)
	clear(b.lo)
	clear(b.hi)
	clear(b.res)
}

// resize returns s with length n, reallocated only if its capacity is short.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// add adds the equation of one key to the band by on-the-fly Gaussian
// elimination: its row starts at column s (s+127 < m) with coefficients
// lo (bit 0 set) and hi, and right-hand side r. While the slot at the row's
// first coefficient is taken, the row is reduced by that slot's row and
// shifted to its next set coefficient; it lands in the first empty slot.
// It reports false if the row reduces to no coefficients with a non-zero
// right-hand side: the system has no solution (with these hashes and this
// seed). A row that reduces to nothing with a zero right-hand side is
// implied by the others, and is dropped.
func (b *band) add(s uint64, lo, hi uint64, r uint32) bool {
	for {
		// INVARIANT: lo's bit 0 is set, and the row's last set coefficient
		// is at a column below m, so s < m.
		if b.lo[s] == 0 {
			b.lo[s], b.hi[s], b.res[s] = lo, hi, r
			return true
		}
		lo ^= b.lo[s]
		hi ^= b.hi[s]
		r ^= b.res[s]
		if lo == 0 {
			if hi == 0 {
				return r == 0
			}
			tz := uint64(bits.TrailingZeros64(hi))
			s += 64 + tz
			lo, hi = hi>>tz, 0
			continue
		}
		tz := uint64(bits.TrailingZeros64(lo))
		s += tz
		lo, hi = lo>>tz|hi<<(64-tz), hi>>tz
	}
}

// solve writes into words the solution of the banded system, r bits a
// slot, laid out as the payload is (see the package doc): block k of 64
// slots is r words, word j of it holding bit j of slots 64k to 64k+63.
// An empty slot's bits are set to 0 (any value satisfies the system).
//
// It back-substitutes from the last slot down, keeping for each result
// bit j a 128-bit window of the solution's bit j at slots i to i+127:
// slot i's bit is its row's right-hand side bit XOR the parity of its
// other coefficients AND the window. At the first slot of a block the
// window's low word is that block's word j.
func (b *band) solve(words []uint64, r int) {
	var winLo, winHi [MaxBits]uint64
	m := len(b.lo)
	for i := m - 1; i >= 0; i-- {
		lo, hi, res := b.lo[i], b.hi[i], b.res[i]
		for j := range r {
			wl, wh := winLo[j]<<1, winHi[j]<<1|winLo[j]>>63
			bit := (uint64(res>>j) ^ uint64(bits.OnesCount64(lo&wl^hi&wh))) & 1
			winLo[j], winHi[j] = wl|bit, wh
		}
		if i%64 == 0 {
			copy(words[i/64*r:], winLo[:r])
		}
	}
}

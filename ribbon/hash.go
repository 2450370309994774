package ribbon

import (
	"math/bits"

	"github.com/bloomkv/bloomkv/internal/murmur"
)

// Odd constants that make a key's coefficients from its mixed hash.
const (
	coeffSalt1 = 0x9e3779b97f4a7c15
	coeffSalt2 = 0xc2b2ae3d27d4eb4f
)

// mix returns the hash of key hash h under seed: murmur64(h + seed). For a
// fixed seed it is a bijection, so distinct key hashes stay distinct.
func mix(h, seed uint64) uint64 { return murmur.Mix64(h + seed) }

// row returns the equation of the key whose mixed hash is x in a filter
// of m slots: its first column s = ⌊x·(m−127)/2^64⌋, in [0, m−128];
// its 128 coefficients lo (bit 0 always set) and hi; and its fingerprint,
// x's low 32 bits, of which a filter of r-bit results keeps the low r.
// The start depends on x's high bits, the fingerprint on its low ones,
// and the coefficients on two further murmur64 rounds of x, with
// different salts: independent of each other, so they run in parallel.
func row(x, m uint64) (s, lo, hi uint64, fp uint32) {
	s, _ = bits.Mul64(x, m-127)
	lo = murmur.Mix64(x ^ coeffSalt1)
	hi = murmur.Mix64(x ^ coeffSalt2)
	return s, lo | 1, hi, uint32(x)
}

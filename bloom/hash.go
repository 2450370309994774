package bloom

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/bloomkv/bloomkv/internal/murmur"
)

// Hash returns the 64-bit hash every filter in this package derives its
// probes from: xxhash64 of item. Callers that test one item against many
// filters (an LSM lookup checks a filter per table) hash once and use the
// filters' ...Hash methods.
func Hash(item []byte) uint64 { return xxhash.Sum64(item) }

// HashString is Hash for a string, without converting it to a byte slice.
func HashString(item string) uint64 { return xxhash.Sum64String(item) }

// remix derives a second 64-bit hash from h (the finalizer of SplitMix64,
// murmur.Mix13). It is a bijection whose output bits each depend on every
// input bit, so bits taken from remix(h) are independent, for practical
// purposes, of bits taken from h itself.
func remix(h uint64) uint64 { return murmur.Mix13(h) }

// reduce maps x uniformly onto [0, n) with a multiply and a shift instead of
// a division (Lemire's "fastrange"); it uses the high bits of x.
func reduce(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// ClassicLocations appends to dst the k bit positions, each in [0, m), that
// the classic filter (and the counting filter, for counters) of m bits and k
// probes uses for an item of hash h, and returns the extended slice.
//
// The positions follow Kirsch and Mitzenmacher's double hashing: probe i is
// h1 + i·h2 with h1 = h and h2 = remix(h), mapped onto [0, m) by reduce. The
// Redis-shared filter uses the same positions, so a filter moves between
// memory and Redis bit for bit.
func ClassicLocations(dst []uint64, h uint64, m uint64, k int) []uint64 {
	h1, h2 := h, remix(h)
	for range k {
		dst = append(dst, reduce(h1, m))
		h1 += h2
	}
	return dst
}

package ribbon

import "math"

// The range of result widths, in bits. A filter of width r has the
// false-positive rate 2^−r: 50% at 1 bit, 0.39% at 8, 0.0015% at 16,
// 2.3·10^−10 at 32.
const MinBits, MaxBits = 1, 32

// Limits on a filter's size.
const (
	// minSlots is the fewest slots a filter has: one row's 128
	// coefficients.
	minSlots = 128
	// maxKeys is the most distinct hashes Build accepts; its band then
	// takes some 45 GiB.
	maxKeys = 1 << 31
	// maxSlots bounds the slots of a filter: SlotsFor(maxKeys) is below it.
	maxSlots = 1 << 32
)

// checkBits returns an *ArgumentError for a result width outside
// [MinBits, MaxBits].
func checkBits(bits int) error {
	if !validBits(bits) {
		return argError("bits", bits, "the result width must be in [%d, %d]", MinBits, MaxBits)
	}
	return nil
}

// validBits reports whether bits is in [MinBits, MaxBits].
func validBits(bits int) bool { return bits >= MinBits && bits <= MaxBits }

// overhead returns ε, the spare slots per key of a filter of n ≥ 1
// keys: 0 up to 631 keys (where rounding up to 64 slots, and to at least
// 128, leaves spare enough), then (log10 n − 2.8)/60 but at least
// minOverhead: 0.05 up to 631,000 keys, 0.053 at 10^6. A Standard Ribbon
// system has no solution when some stretch of the band gets more rows than
// its rows can be pushed along within their 128 columns; the longer the
// band, the more such stretches, so ε grows with log n to keep the failure
// rate of one attempt low (the package doc gives the measured rates).
func overhead(n int) float64 {
	e := (math.Log10(float64(n)) - 2.8) / 60
	if e <= 0 {
		return 0
	}
	return max(minOverhead, e)
}

// minOverhead is the least ε of a filter of more than 631 keys. Banding
// inserts the rows in the order of their starts, so the rows pushed along
// past their start queue up ahead of the next, on the order of 1/ε of
// them, and each new row is reduced against about half of that queue: at ε = 0.0185
// (what (log10 n − 2.8)/60 gives for 8,000 keys, the bench's table size,
// and about what RocksDB's Ribbon configuration gives) a build took 61 ns
// a key, at 0.03 57, at 0.04 49, at 0.05 42 and at 0.06 42 (r = 10,
// amd64). 0.05 buys that third of the build for 3% more slots — 0.3 bits
// a key at r = 10, which the planners see in BitsPerKey.
const minOverhead = 0.05

// SlotsFor returns the slots of the filter Build makes of n ≥ 1 distinct
// hashes: n·(1+ε) rounded up to a multiple of 64, and at least 128.
func SlotsFor(n int) uint64 {
	m := uint64(math.Ceil(float64(n) * (1 + overhead(n))))
	return max(minSlots, (m+63)/64*64)
}

// payloadWords returns the 64-bit words of the solution of a filter of
// slots slots (a multiple of 64) and r-bit results.
func payloadWords(slots, r uint64) uint64 { return slots / 64 * r }

// encodedSize returns the bytes of a serialized filter of slots slots and
// r-bit results: header, payload and checksum.
func encodedSize(slots, r uint64) uint64 {
	return headerLen + 8*payloadWords(slots, r) + checksumLen
}

// SizeBytes returns the exact size in bytes of the serialized form
// (MarshalBinary) of the filter Build makes of n distinct hashes with
// r-bit results: header, payload and checksum. It needs no build, so that
// a planner can weigh a Ribbon filter against a Bloom filter for a table
// of n keys: 8·SizeBytes(n, r)/n is the bits per key (see BitsPerKey).
//
// It returns 0 for arguments Build refuses: n < 1, more than 2^31 keys, or
// r outside [MinBits, MaxBits]; and for a filter larger than an int can
// count on this platform.
func SizeBytes(n, r int) int {
	if n < 1 || uint64(n) > maxKeys || !validBits(r) {
		return 0
	}
	size := encodedSize(SlotsFor(n), uint64(r))
	if size > math.MaxInt {
		return 0
	}
	return int(size)
}

// BitsPerKey returns the bits per key of the serialized filter Build makes
// of n distinct hashes with r-bit results, 8·SizeBytes(n, r)/n; 0 where
// SizeBytes is 0.
func BitsPerKey(r, n int) float64 {
	size := SizeBytes(n, r)
	if size == 0 {
		return 0
	}
	return 8 * float64(size) / float64(n)
}

// FalsePositiveRate returns the false-positive rate of a filter with r-bit
// results: 2^−r, the probability that a key not in the set finds its
// fingerprint's low r bits in its row's r parities. For a width Build
// refuses it returns 1, the rate of having no filter.
func FalsePositiveRate(r int) float64 {
	if !validBits(r) {
		return 1
	}
	return math.Ldexp(1, -r)
}

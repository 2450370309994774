package fuse

import (
	"math"
)

// The range of fingerprint widths, in bits. A filter of width w has the
// false-positive rate 2^−w: 50% at 1 bit, 0.39% at 8, 0.0015% at 16.
const MinBits, MaxBits = 1, 16

// Limits on a filter's size.
const (
	// maxSegmentLength is the library's cap on the segment length.
	maxSegmentLength = 262144
	// maxSlots is the most slots a filter may have: the library counts them,
	// and computes the slots of a hash, in uint32.
	maxSlots = math.MaxUint32
	// maxKeys is the most distinct hashes Build accepts. At 2^31 keys a
	// filter has about 2.4·10^9 slots, within maxSlots; the library's build
	// then needs some 40 GiB.
	maxKeys = 1 << 31
)

// checkBits returns an *ArgumentError for a fingerprint width outside
// [MinBits, MaxBits].
func checkBits(bits int) error {
	if !validBits(bits) {
		return argError("bits", bits, "the fingerprint width must be in [%d, %d]", MinBits, MaxBits)
	}
	return nil
}

// validBits reports whether bits is in [MinBits, MaxBits].
func validBits(bits int) bool { return bits >= MinBits && bits <= MaxBits }

// shape returns the segment length L and segment count S of the filter the
// library builds for n ≥ 1 distinct keys; it has (S+2)·L slots.
//
// It is copied from BinaryFuse[T].initializeParameters, with
// calculateSegmentLength and calculateSizeFactor for arity 3, in
// binaryfusefilter.go of github.com/FastFilter/xorfilter
// v0.4.2-0.20260120015552-4e5a4d9df65a, expression for expression, so that
// its floating-point results are the library's. (When a build of 5 to
// 999,999 keys retries, the library may halve L and set S to 2S+2, which
// keeps (S+2)·L: the slot count, and so the size, is this one's either
// way.) TestSizeBytes and TestShapeMatchesLibrary check it against the
// library.
func shape(n uint32) (segLen, segCount uint32) {
	const arity = 3
	// calculateSegmentLength: n ≥ 1 here, so the library's n == 0 case is
	// left out.
	segLen = uint32(1) << int(math.Floor(math.Log(float64(n))/math.Log(3.33)+2.25))
	if segLen > maxSegmentLength {
		segLen = maxSegmentLength
	}
	capacity := uint32(0)
	if n > 1 {
		// calculateSizeFactor.
		sizeFactor := math.Max(1.125, 0.875+0.25*math.Log(1000000)/math.Log(float64(n)))
		capacity = uint32(math.Round(float64(n) * sizeFactor))
	}
	totalSegmentCount := (capacity + segLen - 1) / segLen
	if totalSegmentCount < arity {
		totalSegmentCount = arity
	}
	return segLen, totalSegmentCount - (arity - 1)
}

// slotsFor returns the slots of the filter Build makes of n distinct keys.
func slotsFor(n uint32) uint64 {
	segLen, segCount := shape(n)
	return (uint64(segCount) + 2) * uint64(segLen)
}

// payloadWords returns the 64-bit words that hold slots slots of w bits,
// packed, and one word of padding after them (see Filter.slot).
func payloadWords(slots, w uint64) uint64 { return (slots*w+63)/64 + 1 }

// encodedSize returns the bytes of a serialized filter of slots slots of w
// bits: header, payload and checksum.
func encodedSize(slots, w uint64) uint64 {
	return headerLen + 8*payloadWords(slots, w) + checksumLen
}

// SizeBytes returns the exact size in bytes of the serialized form
// (MarshalBinary) of the filter Build makes of n distinct hashes with
// fingerprints of bits bits: header, payload and checksum. It computes the
// library's size rule without building anything, so that a planner can
// weigh a fuse filter against a Bloom filter for a table of n keys:
// 8·SizeBytes(n, bits)/n is the bits per key, which tends to 1.125·bits
// for large n (see the package doc).
//
// It returns 0 for arguments Build refuses: n < 1, more than 2^31 keys, or
// bits outside [MinBits, MaxBits]; and for a filter larger than an int can
// count on this platform.
func SizeBytes(n int, bits int) int {
	if n < 1 || uint64(n) > maxKeys || !validBits(bits) {
		return 0
	}
	size := encodedSize(slotsFor(uint32(n)), uint64(bits))
	if size > math.MaxInt {
		return 0
	}
	return int(size)
}

// FalsePositiveRate returns the false-positive rate of a filter with
// fingerprints of bits bits: 2^−bits, the probability that a key not in the
// set finds its fingerprint in the XOR of its three slots. For a width
// Build refuses it returns 1, the rate of having no filter.
func FalsePositiveRate(bits int) float64 {
	if !validBits(bits) {
		return 1
	}
	return math.Ldexp(1, -bits)
}

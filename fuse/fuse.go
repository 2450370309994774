package fuse

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/FastFilter/xorfilter"
	"github.com/bloomkv/bloomkv/internal/murmur"
)

// Filter is an immutable binary fuse filter over a set of 64-bit key
// hashes, with fingerprints of w bits (Bits) for a false-positive rate of
// 2^−w. Get one from Build, or decode one with UnmarshalBinary or
// UnmarshalBinaryInto; a zero Filter answers no query (MayContainHash
// panics) and has no encoding. A Filter is never modified after it is made,
// so any number of goroutines may query it at once — but not while one of
// them decodes into it.
//
// INVARIANT: segLen is a power of two, segMask = segLen−1, segCountLen =
// S·segLen for a segment count S ≥ 1, (S+2)·segLen ≤ maxSlots, mask =
// 2^w−1, and words holds payloadWords((S+2)·segLen, w) words whose bytes are
// the serialized payload (see the package doc): slot i is bits [i·w, i·w+w)
// of the bytes read as one little-endian number, every bit after the last
// slot is 0, and at least 8 bytes follow the start of the last slot, so an
// 8-byte load at any slot's first byte stays inside words.
type Filter struct {
	words       []uint64
	seed        uint64
	segLen      uint64 // L, the length of a segment
	segMask     uint64 // L−1
	segCountLen uint64 // S·L: a key's first slot h0 is in [0, S·L)
	w           uint64 // fingerprint bits
	mask        uint64 // 2^w − 1
	keys        uint64 // distinct hashes built from
}

// Build returns the filter of the keys whose 64-bit hashes are hashes, with
// fingerprints of bits bits (false-positive rate 2^−bits). Use bloom.Hash or
// bloom.HashString for the hashes: the same hash then serves a table's
// filter whatever its family (Bloom, fuse or Ribbon).
//
// Hashes may repeat and come in any order: Build sorts a copy and drops the
// repeats (hashes itself is not modified), so Keys counts distinct hashes.
// It builds the library's filter with 8-bit fingerprints when bits ≤ 8 and
// with 16-bit ones above, and keeps the low bits bits of every slot (see
// the package doc).
//
// Errors: bits outside [MinBits, MaxBits] or more than 2^31 distinct
// hashes return an *ArgumentError naming the argument; no hashes return
// ErrEmpty; a construction that fails after all the library's attempts
// returns an error wrapping ErrBuild. Callers fall back to a Bloom filter
// (or, for an empty table, to no filter).
func Build(hashes []uint64, bits int) (*Filter, error) {
	if err := checkBits(bits); err != nil {
		return nil, err
	}
	if len(hashes) == 0 {
		return nil, ErrEmpty
	}
	// The library notices repeats while it builds, and when that does not
	// resolve them it sorts the keys and starts again with a new seed:
	// removing them first is cheaper, and counts the distinct keys.
	b := bufferPool.Get(len(hashes))
	defer bufferPool.Put(b, len(hashes))
	keys := b.distinct(hashes)
	n := len(keys)
	if uint64(n) > maxKeys {
		return nil, argError("hashes", fmt.Sprintf("%d distinct hashes", n), "a filter holds at most %d", uint64(maxKeys))
	}
	if size := encodedSize(slotsFor(uint32(n)), uint64(bits)); size > math.MaxInt {
		return nil, argError("hashes", fmt.Sprintf("%d distinct hashes", n),
			"the filter needs %d bytes, more than this platform can hold in one slice", size)
	}
	if bits <= 8 {
		lib, err := xorfilter.BuildBinaryFuse[uint8](&b.lib, keys)
		if err != nil {
			return nil, buildError(n, bits, err)
		}
		return fromLibrary(&lib, bits, n)
	}
	lib, err := xorfilter.BuildBinaryFuse[uint16](&b.lib, keys)
	if err != nil {
		return nil, buildError(n, bits, err)
	}
	return fromLibrary(&lib, bits, n)
}

func buildError(n, bits int, err error) error {
	return fmt.Errorf("%w: %d distinct hashes, %d-bit fingerprints: %v", ErrBuild, n, bits, err)
}

// fromLibrary packs the low w bits of each slot of lib, a filter of n
// distinct keys, into a Filter. lib's slots may be the memory of a
// library builder about to be reused: the Filter holds none of it.
func fromLibrary[T uint8 | uint16](lib *xorfilter.BinaryFuse[T], w, n int) (*Filter, error) {
	segLen, segCount := uint64(lib.SegmentLength), uint64(lib.SegmentCount)
	slots := (segCount + 2) * segLen
	// The library's filters always satisfy this; checking it makes sure the
	// query below stays inside the payload even if a new version changed
	// its layout.
	if segLen == 0 || segLen&(segLen-1) != 0 || segLen > maxSegmentLength || segCount == 0 ||
		slots > maxSlots || uint64(len(lib.Fingerprints)) != slots ||
		uint64(lib.SegmentLengthMask) != segLen-1 || uint64(lib.SegmentCountLength) != segCount*segLen {
		return nil, fmt.Errorf("%w: the library built an unexpected filter: segment length %d, %d segments, %d slots",
			ErrBuild, segLen, segCount, len(lib.Fingerprints))
	}
	f := &Filter{
		words:       make([]uint64, payloadWords(slots, uint64(w))),
		seed:        lib.Seed,
		segLen:      segLen,
		segMask:     segLen - 1,
		segCountLen: segCount * segLen,
		w:           uint64(w),
		mask:        1<<w - 1,
		keys:        uint64(n),
	}
	out := wordBytes(f.words)
	// At the library's own widths a slot is its byte or two: copied, not
	// packed bit by bit.
	switch fps := any(lib.Fingerprints).(type) {
	case []uint8:
		if w == 8 {
			copy(out, fps)
			return f, nil
		}
	case []uint16:
		if w == 16 {
			for i, v := range fps {
				binary.LittleEndian.PutUint16(out[2*i:], v)
			}
			return f, nil
		}
	}
	var acc uint64 // bits not yet stored, the first at bit 0
	used := uint64(0)
	for _, fp := range lib.Fingerprints {
		v := uint64(fp) & f.mask
		acc |= v << used
		used += f.w
		if used >= 64 {
			binary.LittleEndian.PutUint64(out, acc)
			out = out[8:]
			used -= 64
			acc = v >> (f.w - used) // the bits of v that did not fit; 0 if all did
		}
	}
	if used > 0 {
		binary.LittleEndian.PutUint64(out, acc)
	}
	return f, nil
}

// wordBytes returns the memory of words as bytes.
func wordBytes(words []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), 8*len(words))
}

// MayContainHash reports whether the key whose hash is h may be in the
// set. False is certain: every hash Build was given answers true. A hash
// not in the set answers true with probability 2^−Bits.
//
// It computes what the library's BinaryFuse.Contains does (see locate),
// then compares the XOR of the three w-bit slots with the fingerprint's low
// w bits. It makes no call, allocates nothing and branches only on the
// width; its three loads are independent, so a query waits for about one
// memory access, not three. Its inlining cost is over three times the
// compiler's budget, so it is itself a call — a leaf without a stack frame.
func (f *Filter) MayContainHash(h uint64) bool {
	fp, h0, h1, h2 := f.locate(h)
	p := unsafe.Pointer(unsafe.SliceData(f.words))
	// At 8 and 16 bits a slot is a byte or two at a fixed place: loading
	// just them saves 15–20% of a query over the general packed path
	// (measured on amd64, at 10^4 and 10^6 keys).
	switch f.w {
	case 8:
		return uint8(fp) == slot8(p, h0)^slot8(p, h1)^slot8(p, h2)
	case 16:
		return uint16(fp) == slot16(p, h0)^slot16(p, h1)^slot16(p, h2)
	}
	return (fp^f.slot(p, h0)^f.slot(p, h1)^f.slot(p, h2))&f.mask == 0
}

// locate returns the fingerprint and the three slots of the key whose hash
// is h, exactly as the library's Contains and getHashFromHash compute them:
// hash = murmur64(h+seed) (mixsplit), the fingerprint hash ^ hash>>32, h0
// the high half of hash·S·L, and h1, h2 at the same place in the next two
// segments with their low bits XORed with bits 18 up and 0 up of hash. The
// library works in uint32; every value here is below slots ≤ 2^32−1, so
// uint64 gives the same results.
func (f *Filter) locate(h uint64) (fp, h0, h1, h2 uint64) {
	hash := murmur.Mix64(h + f.seed)
	h0, _ = bits.Mul64(hash, f.segCountLen)
	h1 = (h0 + f.segLen) ^ ((hash >> 18) & f.segMask)
	h2 = (h0 + 2*f.segLen) ^ (hash & f.segMask)
	return hash ^ hash>>32, h0, h1, h2
}

// slot returns slot i of the filter whose payload starts at p (its w bits,
// and up to 41 bits above them): one 8-byte little-endian load at the
// slot's first byte, which the compiler makes a single unaligned load on
// amd64 and arm64. The slot functions do their own address arithmetic:
// bounds checks on the three loads would cost a fifth of a query, and the
// invariant makes them unnecessary.
func (f *Filter) slot(p unsafe.Pointer, i uint64) uint64 {
	// INVARIANT: i < slots, so 8 bytes from byte i·w/8 lie inside words.
	off := i * f.w
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, off/8))[:]) >> (off % 8)
}

// slot8 returns slot i of an 8-bit filter whose payload starts at p.
func slot8(p unsafe.Pointer, i uint64) uint8 { return *(*uint8)(unsafe.Add(p, i)) }

// slot16 returns slot i of a 16-bit filter whose payload starts at p.
func slot16(p unsafe.Pointer, i uint64) uint16 {
	return binary.LittleEndian.Uint16((*[2]byte)(unsafe.Add(p, 2*i))[:])
}

// Bits returns the fingerprint width w, in bits.
func (f *Filter) Bits() int { return int(f.w) }

// Keys returns the number of distinct hashes the filter was built from.
func (f *Filter) Keys() uint64 { return f.keys }

// Slots returns the number of w-bit slots, (S+2)·L for S segments of L
// slots: about 1.125 per key for large sets, more for small ones.
func (f *Filter) Slots() uint64 { return f.segCountLen + 2*f.segLen }

// SizeBytes returns the memory of the packed slots, the filter's payload:
// ⌈Slots·Bits/64⌉ 64-bit words and one word of padding.
func (f *Filter) SizeBytes() int { return 8 * len(f.words) }

// BitsPerKey returns the bits of the serialized filter (header and
// checksums included) per key, or +Inf for a zero Filter.
func (f *Filter) BitsPerKey() float64 {
	return 8 * float64(encodedSize(f.Slots(), f.w)) / float64(f.keys)
}

// ExpectedFalsePositiveRate returns FalsePositiveRate(Bits()), 2^−w: the
// rate to expect for keys not in the set (1 for a zero Filter).
func (f *Filter) ExpectedFalsePositiveRate() float64 { return FalsePositiveRate(f.Bits()) }

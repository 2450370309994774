package sstable

import (
	"math"

	"github.com/bloomkv/bloomkv/bloom"
)

// bloomCodec is the Bloom family: bloom.Blocked, a cache-line-blocked
// Bloom filter (one 64-byte block per key, its probes all in that block),
// in bloom's serialized format.
type bloomCodec struct{}

func (bloomCodec) name() string { return "bloom" }

func (bloomCodec) check(bits float64) error { return bloom.CheckBitsPerKey(bits) }

func (bloomCodec) build(hashes []uint64, bits float64) ([]byte, Filter, error) {
	f, err := bloom.BuildBlocked(hashes, bits)
	if err != nil {
		return nil, nil, err
	}
	encoded, err := f.MarshalBinary()
	return encoded, f, err
}

func (bloomCodec) decode(block []byte, alloc func(words int) []uint64) (Filter, error) {
	f := new(bloom.Blocked)
	if err := f.UnmarshalBinaryInto(block, alloc); err != nil {
		return nil, err
	}
	return f, nil
}

func (bloomCodec) falsePositiveRate(bits float64) float64 {
	return bloom.BlockedFalsePositiveRate(bits, bloom.BlockedProbes(bits))
}

// bitsPerKey is the serialized filter's bits per key: n keys at bits each,
// rounded up to whole 512-bit blocks, and bloom's 36-byte header and 4-byte
// checksum.
func (bloomCodec) bitsPerKey(bits float64, n int) float64 {
	const blockBits, overheadBits = 512, (36 + 4) * 8
	blocks := max(1, math.Ceil(float64(n)*bits/blockBits))
	return (blocks*blockBits + overheadBits) / float64(n)
}

// bloomBitsForRate returns the bits per key of the Bloom filter that
// stands in for a filter of false-positive rate p (see errFilterFallback):
// the fewest, to a tenth, that reach p, within the family's range.
func bloomBitsForRate(p float64) float64 {
	return min(max(math.Ceil(bloom.BlockedBitsPerKey(p)*10)/10, 1), bloom.MaxBitsPerKey)
}

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

// falsePositiveRate is the filter's expected rate at bits per key, with
// the probes bloom.BlockedProbes chooses at bits rounded to 1/1024. A
// table's bits per key, its filter's bytes over its keys, differ from
// table to table, and a DB asks for each table it opens, under its mutex:
// BlockedProbes remembers its choice by bits per key, half a millisecond
// of sums to make, and asked at every table's own bits it would make them
// again for each table, and remember one more for every table ever
// opened. On the grid they are made once and bounded in number; the
// choice differs from the exact one only within 1/2048 bit of where two
// probe counts give the same rate.
func (bloomCodec) falsePositiveRate(bits float64) float64 {
	return bloom.BlockedFalsePositiveRate(bits, bloom.BlockedProbes(math.Round(bits*1024)/1024))
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

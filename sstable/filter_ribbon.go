package sstable

import (
	"errors"
	"fmt"
	"math"

	"github.com/bloomkv/bloomkv/ribbon"
)

// ribbonCodec is the ribbon family: ribbon.Filter, a Standard Ribbon
// filter of r-bit results (false-positive rate 2^-r at 1.03·r to 1.05·r
// bits per key from 10^4 to 10^6 keys), in package ribbon's serialized
// format. Like a fuse filter it is static: every key is known when the
// filter is built, and none is added later.
//
// A table's set is built as a Ribbon filter unless a Bloom filter of the
// same false-positive rate would be smaller — a Ribbon filter has at
// least 128 slots, which costs a table of a few keys more — or the
// construction fails with every seed it tries; then the table gets that
// Bloom filter (errFilterFallback).
type ribbonCodec struct{}

func (ribbonCodec) name() string { return "ribbon" }

func (ribbonCodec) check(bits float64) error {
	if bits != math.Trunc(bits) || bits < ribbon.MinBits || bits > ribbon.MaxBits {
		return fmt.Errorf("ribbon result bits %v: must be an integer in [%d, %d]", bits, ribbon.MinBits, ribbon.MaxBits)
	}
	return nil
}

func (ribbonCodec) build(hashes []uint64, bits float64) ([]byte, Filter, error) {
	r := int(bits)
	if ribbon.BitsPerKey(r, len(hashes)) > rateStandInBitsPerKey(r, len(hashes)) {
		return nil, nil, errFilterFallback
	}
	f, err := ribbon.Build(hashes, r)
	if errors.Is(err, ribbon.ErrBuild) {
		return nil, nil, errFilterFallback
	}
	if err != nil {
		return nil, nil, err
	}
	encoded, err := f.MarshalBinary()
	return encoded, f, err
}

func (ribbonCodec) decode(block []byte, alloc func(words int) []uint64) (Filter, error) {
	f := new(ribbon.Filter)
	if err := f.UnmarshalBinaryInto(block, alloc); err != nil {
		return nil, err
	}
	return f, nil
}

func (ribbonCodec) falsePositiveRate(bits float64) float64 {
	return ribbon.FalsePositiveRate(int(bits))
}

// bitsPerKey is what a table of n keys spends: the Ribbon filter's bits
// per key, or its Bloom stand-in's where that is smaller (see build).
func (ribbonCodec) bitsPerKey(bits float64, n int) float64 {
	r := int(bits)
	return min(ribbon.BitsPerKey(r, n), rateStandInBitsPerKey(r, n))
}

package sstable

import (
	"errors"
	"fmt"
	"math"

	"github.com/bloomkv/bloomkv/fuse"
)

// fuseCodec is the fuse family: fuse.Filter, a binary fuse filter of
// w-bit fingerprints (false-positive rate 2^-w at about 1.125·w bits per
// key), in package fuse's serialized format. An SSTable is where a static
// filter wins: every key is known when the filter is built, and none is
// added later.
//
// A table's set is built as a fuse filter unless a Bloom filter of the
// same false-positive rate would be smaller — small sets cost a fuse
// filter more per key — or the construction fails; then the table gets
// that Bloom filter (errFilterFallback).
type fuseCodec struct{}

func (fuseCodec) name() string { return "fuse" }

func (fuseCodec) check(bits float64) error {
	if bits != math.Trunc(bits) || bits < fuse.MinBits || bits > fuse.MaxBits {
		return fmt.Errorf("fuse fingerprint bits %v: must be an integer in [%d, %d]", bits, fuse.MinBits, fuse.MaxBits)
	}
	return nil
}

func (c fuseCodec) build(hashes []uint64, bits float64) ([]byte, Filter, error) {
	w := int(bits)
	if fuseBitsPerKey(w, len(hashes)) > rateStandInBitsPerKey(w, len(hashes)) {
		return nil, nil, errFilterFallback
	}
	f, err := fuse.Build(hashes, w)
	if errors.Is(err, fuse.ErrBuild) {
		return nil, nil, errFilterFallback
	}
	if err != nil {
		return nil, nil, err
	}
	encoded, err := f.MarshalBinary()
	return encoded, f, err
}

func (fuseCodec) decode(block []byte, alloc func(words int) []uint64) (Filter, error) {
	f := new(fuse.Filter)
	if err := f.UnmarshalBinaryInto(block, alloc); err != nil {
		return nil, err
	}
	return f, nil
}

func (fuseCodec) falsePositiveRate(bits float64) float64 { return fuse.FalsePositiveRate(int(bits)) }

// bitsPerKey is what a table of n keys spends: the fuse filter's bits per
// key, or its Bloom stand-in's where that is smaller (see build).
func (fuseCodec) bitsPerKey(bits float64, n int) float64 {
	w := int(bits)
	return min(fuseBitsPerKey(w, n), rateStandInBitsPerKey(w, n))
}

// fuseBitsPerKey is the serialized size of a w-bit fuse filter over n
// keys, in bits per key.
func fuseBitsPerKey(w, n int) float64 { return float64(fuse.SizeBytes(n, w)) * 8 / float64(n) }

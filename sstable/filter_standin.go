package sstable

import (
	"sync"

	"github.com/bloomkv/bloomkv/ribbon"
)

// The fuse and ribbon families' filters of width w have the
// false-positive rate 2^−w; where one cannot be built, or costs more, a
// table gets the Bloom filter of that rate instead (errFilterFallback).

// rateStandInBitsPerKey is the serialized size of the Bloom filter that
// stands in for a filter of rate 2^−w over n keys, in bits per key.
func rateStandInBitsPerKey(w, n int) float64 {
	return bloomCodec{}.bitsPerKey(rateStandInBits(w), n)
}

// rateStandInBits returns the bits per key of the Bloom filter that
// stands in for a filter of rate 2^−w: bloomBitsForRate(2^−w), a
// bisection over the blocked filter's false-positive sums of some
// milliseconds, found once per width — every fuse or Ribbon table a DB
// writes, and every plan of its filter allocation, asks.
func rateStandInBits(w int) float64 {
	memo := &rateStandIns[w]
	memo.once.Do(func() { memo.bits = bloomBitsForRate(ribbon.FalsePositiveRate(w)) })
	return memo.bits
}

// rateStandIns are rateStandInBits' answers, by width; the ribbon
// family's widths include the fuse family's.
var rateStandIns [ribbon.MaxBits + 1]struct {
	once sync.Once
	bits float64
}

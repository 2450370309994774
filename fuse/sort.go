package fuse

import (
	"math"
	"slices"
)

// distinct returns the distinct values of hashes, sorted, in a new slice:
// hashes itself is not modified.
//
// Sorting a million hashes with slices.Sort costs more than the library's
// construction of their filter (about 110 ns a hash against 75 on the
// machine BenchmarkDistinct ran on); a least significant digit radix sort,
// eight passes of one byte each, costs less than half of that, so it sorts
// all but small sets.
func distinct(hashes []uint64) []uint64 {
	keys := slices.Clone(hashes)
	if len(keys) < radixSortMin || uint64(len(keys)) > math.MaxUint32 {
		slices.Sort(keys)
	} else {
		radixSort(keys, make([]uint64, len(keys)))
	}
	return slices.Compact(keys)
}

// radixSortMin is the fewest hashes distinct radix-sorts: below it the
// passes over the counts cost more than they save.
const radixSortMin = 512

// radixSort sorts keys, fewer than 2^32 of them, using buf, of the same
// length, as scratch space.
func radixSort(keys, buf []uint64) {
	// One pass over the keys counts the values of all eight digits.
	var counts [8][256]uint32
	for _, k := range keys {
		counts[0][byte(k)]++
		counts[1][byte(k>>8)]++
		counts[2][byte(k>>16)]++
		counts[3][byte(k>>24)]++
		counts[4][byte(k>>32)]++
		counts[5][byte(k>>40)]++
		counts[6][byte(k>>48)]++
		counts[7][byte(k>>56)]++
	}
	src, dst := keys, buf
	for d := range 8 {
		c, shift := &counts[d], uint(8*d)
		// A digit all keys share leaves their order as it is.
		if int(c[byte(src[0]>>shift)]) == len(src) {
			continue
		}
		// Counts become the positions where each digit's keys start.
		pos := uint32(0)
		for v := range c {
			c[v], pos = pos, pos+c[v]
		}
		for _, k := range src {
			v := byte(k >> shift)
			dst[c[v]] = k
			c[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// Package radix sorts 64-bit integers by a least significant digit radix
// sort: eight passes of one byte each, after one pass that counts every
// digit, skipping the bytes all values share. It costs a few passes over
// the values where a comparison sort costs log n of them, so it wins from a
// few hundred values up (MinLen); the filters built from a table's hashes
// sort millions at a time.
//
// SortTop sorts by the high bytes alone, in fewer passes: enough to bring
// equal values together where a caller only needs to find repeats of
// random values, as Distinct, which the fuse and Ribbon filters' builds
// share, does.
package radix

import "slices"

// MinLen is the fewest values Sort and SortTop radix-sort: below it the
// passes over the counts cost more than they save, and they call
// slices.Sort.
const MinLen = 512

// Sort sorts keys in increasing order, using buf, at least as long as
// keys, as scratch space. buf's contents afterwards are unspecified.
func Sort(keys, buf []uint64) { SortTop(keys, buf, 8) }

// SortTop sorts keys in increasing order of their top digits bytes (1 to
// 8; 8 is Sort), keeping the order of keys whose top bytes are equal — or
// sorts them wholly, below MinLen keys: either way every run of keys with
// equal top bytes is contiguous, and the runs are in increasing order. It
// makes digits passes over the keys, where Sort makes eight, and uses buf,
// at least as long as keys, as scratch space; buf's contents afterwards
// are unspecified. Digits outside [1, 8] are taken as the nearest bound.
func SortTop(keys, buf []uint64, digits int) {
	if len(keys) < MinLen || uint64(len(keys)) > 1<<32-1 {
		slices.Sort(keys)
		return
	}
	first := 8 - min(max(digits, 1), 8) // the lowest digit sorted by
	// One pass over the keys counts the values of the digits sorted by.
	// INVARIANT: fewer than 2^32 keys, so a count fits in a uint32.
	var counts [8][256]uint32
	if first == 0 {
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
	} else {
		for _, k := range keys {
			for d := first; d < 8; d++ {
				counts[d][byte(k>>(8*d))]++
			}
		}
	}
	src, dst := keys, buf[:len(keys)]
	for d := first; d < 8; d++ {
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

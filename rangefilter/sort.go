package rangefilter

import "slices"

// radixSortMin is the fewest values sortHashes radix-sorts: below it the
// passes over the counts cost more than they save.
const radixSortMin = 512

// sortHashes sorts s, using buf, of at least its length, as scratch space.
// The hashes of a table's values are sorted but for one rotation when they
// all lie in one block (an exact filter): that takes a linear pass. Others
// take a least significant digit radix sort, one byte a pass, which skips
// the bytes all values share — the high ones, below a universe of
// n·2^(B−2) — and costs a few passes where slices.Sort costs log n.
func sortHashes(s, buf []uint64) {
	cut := -1
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] {
			if cut >= 0 {
				cut = -2
				break
			}
			cut = i
		}
	}
	switch {
	case cut == -1:
		return
	case cut > 0 && s[len(s)-1] <= s[0]:
		rotate(s, cut)
	case len(s) < radixSortMin:
		slices.Sort(s)
	default:
		radixSort(s, buf[:len(s)])
	}
}

// rotate moves s[cut:] before s[:cut] in place.
func rotate(s []uint64, cut int) {
	slices.Reverse(s[:cut])
	slices.Reverse(s[cut:])
	slices.Reverse(s)
}

// radixSort sorts keys, fewer than 2^32, using buf, of the same length.
func radixSort(keys, buf []uint64) {
	var counts [8][256]uint32
	for _, k := range keys {
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	src, dst := keys, buf
	for d := range 8 {
		c, shift := &counts[d], uint(8*d)
		if int(c[byte(src[0]>>shift)]) == len(src) {
			continue // a byte every key shares leaves the order as it is
		}
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

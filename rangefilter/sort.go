package rangefilter

import (
	"slices"

	"github.com/bloomkv/bloomkv/internal/radix"
)

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
	default:
		radix.Sort(s, buf)
	}
}

// rotate moves s[cut:] before s[:cut] in place.
func rotate(s []uint64, cut int) {
	slices.Reverse(s[:cut])
	slices.Reverse(s[cut:])
	slices.Reverse(s)
}

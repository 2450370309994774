package ribbon

import (
	"slices"

	"github.com/bloomkv/bloomkv/internal/radix"
)

// distinctSorted sorts keys in place by their top bytes and drops their
// repeats, returning the distinct values; scratch, as long as keys, is the
// sort's working space.
//
// Mixed hashes are random, so sorting by as few top bytes as bring the
// mean run of equal top bytes to at most one value (two passes up to
// 65,536 keys, three up to 16,777,216) puts them in the order of their
// starts, up to runs of a value or two; each run of more than one value is
// then sorted to drop its repeats. The order lets banding walk the band
// from its first slot to its last instead of jumping about it.
func distinctSorted(keys, scratch []uint64) []uint64 {
	digits := 1
	for digits < 8 && uint64(len(keys)) > 1<<(8*digits) {
		digits++
	}
	radix.SortTop(keys, scratch, digits)
	shift := uint(64 - 8*digits)
	w := 0 // keys[:w] are the distinct values so far
	for i := 0; i < len(keys); {
		top, j := keys[i]>>shift, i+1
		for j < len(keys) && keys[j]>>shift == top {
			j++
		}
		if j == i+1 {
			keys[w] = keys[i]
			w++
			i = j
			continue
		}
		// Writes go to keys[w], w ≤ the index read: a run's values are
		// read before they are overwritten.
		run := keys[i:j]
		slices.Sort(run)
		prev := run[0]
		keys[w] = prev
		w++
		for _, v := range run[1:] {
			if v != prev {
				keys[w] = v
				w++
			}
			prev = v
		}
		i = j
	}
	return keys[:w]
}

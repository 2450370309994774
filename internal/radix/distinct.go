package radix

import "slices"

// Distinct sorts keys in place and drops their repeats, returning the
// distinct values, sorted, in keys' storage; scratch, at least as long as
// keys, is the sort's working space, its contents afterwards unspecified.
//
// It is made for random values, such as a table's key hashes: a full sort
// finds their repeats but costs (eight passes of a radix sort, or log n
// of a comparison sort, more than building a filter of them), and only
// values with equal high bits can be equal. So Distinct sorts by the top
// bytes alone (SortTop), as few as bring the mean run of equal top bytes
// to at most one value (two passes up to 65,536 values, three up to
// 16,777,216), then sorts each run of more than one value and drops its
// repeats — a pass that, for distinct values, moves nothing. Values that
// are not random (small integers, all sharing their top bytes) make one
// long run, which slices.Sort sorts: never worse than a comparison sort.
func Distinct(keys, scratch []uint64) []uint64 {
	digits := topDigits(len(keys))
	SortTop(keys, scratch, digits)
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

// topDigits returns the fewest top bytes of n random values whose
// 256^digits patterns are at least n: then a run of equal top bytes holds
// one value on average, at most.
func topDigits(n int) int {
	digits := 1
	for digits < 8 && uint64(n) > 1<<(8*digits) {
		digits++
	}
	return digits
}

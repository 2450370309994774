package ribbon

import "github.com/bloomkv/bloomkv/internal/radix"

// distinctSorted sorts keys in place and drops their repeats, returning
// the distinct values (radix.Distinct); scratch, as long as keys, is the
// sort's working space. Sorted, mixed hashes are in the order of their
// rows' starts, which lets banding walk the band from its first slot to
// its last instead of jumping about it.
func distinctSorted(keys, scratch []uint64) []uint64 { return radix.Distinct(keys, scratch) }

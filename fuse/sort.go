package fuse

import (
	"slices"

	"github.com/bloomkv/bloomkv/internal/radix"
)

// distinct returns the distinct values of hashes, sorted, in a new slice:
// hashes itself is not modified.
//
// Sorting a million hashes with slices.Sort costs more than the library's
// construction of their filter (about 110 ns a hash against 75 on the
// machine BenchmarkDistinct ran on); a least significant digit radix sort,
// eight passes of one byte each (package radix), costs less than half of
// that.
func distinct(hashes []uint64) []uint64 {
	keys := slices.Clone(hashes)
	radix.Sort(keys, make([]uint64, len(keys)))
	return slices.Compact(keys)
}

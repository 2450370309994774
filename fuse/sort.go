package fuse

import (
	"slices"

	"github.com/FastFilter/xorfilter"
	"github.com/bloomkv/bloomkv/internal/buildpool"
	"github.com/bloomkv/bloomkv/internal/radix"
)

// buffers are the memory of one Build: the distinct hashes, the radix
// sort's scratch space and the library's construction arrays, some 42
// bytes a key, recycled between builds of up to maxPooledKeys hashes
// (bufferPool).
type buffers struct {
	lib           xorfilter.BinaryFuseBuilder
	keys, scratch []uint64
}

// maxPooledKeys is the largest build whose buffers are recycled, in
// hashes: at most about 2.8 MiB a set. A 2 MiB table of 128-byte entries
// has some 16,000 keys.
const maxPooledKeys = 1 << 16

var bufferPool = buildpool.New[buffers](maxPooledKeys)

// distinct returns the distinct values of hashes, sorted, in b.keys:
// hashes itself is not modified (see radix.Distinct).
func (b *buffers) distinct(hashes []uint64) []uint64 {
	b.keys = append(b.keys[:0], hashes...)
	b.scratch = slices.Grow(b.scratch[:0], len(hashes))[:len(hashes)]
	return radix.Distinct(b.keys, b.scratch)
}

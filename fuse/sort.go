package fuse

import (
	"slices"
	"sync"

	"github.com/FastFilter/xorfilter"
	"github.com/bloomkv/bloomkv/internal/radix"
)

// buffers are the memory of one Build: the distinct hashes, the radix
// sort's scratch space and the library's construction arrays, some 42
// bytes a key. A fill or compaction builds filter after filter of similar
// sizes, so they are recycled (bufferPool) rather than allocated and
// zeroed afresh — but only those of builds up to maxPooledKeys, so that a
// pooled set stays small whatever tables were built, and, like all of a
// sync.Pool, sets left unused are freed by the garbage collector.
type buffers struct {
	lib           xorfilter.BinaryFuseBuilder
	keys, scratch []uint64
}

// maxPooledKeys is the largest build whose buffers are recycled, in
// hashes: at most about 2.8 MiB a set. A 2 MiB table of 128-byte entries
// has some 16,000 keys.
const maxPooledKeys = 1 << 16

// INVARIANT: every set in bufferPool has only been used for builds of at
// most maxPooledKeys hashes, so its slices hold no more than those need.
var bufferPool = sync.Pool{New: func() any { return new(buffers) }}

// getBuffers returns a set of buffers for a build of n hashes; putBuffers
// returns it after the build.
func getBuffers(n int) *buffers {
	if n > maxPooledKeys {
		return new(buffers)
	}
	return bufferPool.Get().(*buffers)
}

// putBuffers returns b, used for a build of n hashes, to the pool if n is
// at most maxPooledKeys, and drops it otherwise.
func putBuffers(b *buffers, n int) {
	if n <= maxPooledKeys {
		bufferPool.Put(b)
	}
}

// distinct returns the distinct values of hashes, sorted, in b.keys:
// hashes itself is not modified (see radix.Distinct).
func (b *buffers) distinct(hashes []uint64) []uint64 {
	b.keys = append(b.keys[:0], hashes...)
	b.scratch = slices.Grow(b.scratch[:0], len(hashes))[:len(hashes)]
	return radix.Distinct(b.keys, b.scratch)
}

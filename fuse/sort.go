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
// hashes itself is not modified.
//
// A sort of the values finds their repeats, but costs: sorting a million
// hashes with slices.Sort costs more than the library's construction of
// their filter (about 110 ns a hash against 75 on the machine
// BenchmarkDistinct ran on), and a full radix sort (eight passes of one
// byte) was a quarter of a build's CPU time in a profile of 10,000 keys.
// Hashes are random, and only values with equal high
// bits can be equal: distinct sorts by the top bytes alone, as few as
// bring the mean run of equal top bytes to at most one value (two
// passes up to 65,536 hashes, three up to 16,777,216), then sorts each run
// of more than one value and drops its repeats — a pass that, for
// distinct hashes, moves nothing. Values that are not random (small
// integers, all sharing their top bytes) make one long run, which
// slices.Sort sorts: never worse than a comparison sort.
func (b *buffers) distinct(hashes []uint64) []uint64 {
	b.keys = append(b.keys[:0], hashes...)
	b.scratch = slices.Grow(b.scratch[:0], len(hashes))[:len(hashes)]
	keys := b.keys
	digits := topDigits(len(keys))
	radix.SortTop(keys, b.scratch, digits)
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

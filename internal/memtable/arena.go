package memtable

import (
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/offheap"
)

// arena hands out immutable copies of key‖value pairs carved from large
// chunks. It is append-only: bytes already handed out are never written
// again, which is what lets readers use them without a lock. Only the writer
// (under Memtable.wmu) calls alloc.
//
// The chunks come from package offheap: outside the Go heap, so a
// memtable's megabytes of keys and values cost their size in memory, not
// the twice that the garbage collector's heap growth would make of them,
// and the collector never scans them. They are freed by free, when the
// memtable's last reference is dropped: to pool, if the memtable has one
// (see Pool), else to the system. A new chunk comes from pool first.
type arena struct {
	chunk     []byte // current chunk; len is the used prefix
	chunkSize int
	chunks    []offheap.Buffer // every chunk and large allocation, for free
	allocated atomic.Int64     // bytes of chunks and large allocations (Memtable.ArenaBytes)
	pool      *Pool            // nil: none
}

// Chunk sizes: large enough that per-chunk overhead and the unused tail of a
// chunk are small, small enough that a tiny memtable does not pin megabytes.
const (
	minChunkSize     = 4 << 10
	maxChunkSize     = 1 << 20
	defaultChunkSize = 128 << 10
)

// chunkSizeFor picks the chunk size for a memtable expected to hold about
// sizeHint bytes: ~1/32 of it, so the partly used last chunk wastes at most
// about 3%.
func chunkSizeFor(sizeHint int64) int {
	if sizeHint <= 0 {
		return defaultChunkSize
	}
	return int(min(max(sizeHint/32, minChunkSize), maxChunkSize))
}

// alloc returns a copy of key‖value. The result's capacity equals its
// length so that an append by a careless caller reallocates instead of
// overwriting the next entry.
func (a *arena) alloc(key, value []byte) []byte {
	n := len(key) + len(value)
	if n == 0 {
		return []byte{}
	}
	if n > a.chunkSize/4 {
		// A big entry gets its own allocation: putting it in a chunk would
		// throw away the rest of the current chunk or most of a new one.
		kv := a.newBuffer(n)
		copy(kv[copy(kv, key):], value)
		return kv
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = a.newChunk()[:0]
	}
	start := len(a.chunk)
	a.chunk = append(append(a.chunk, key...), value...)
	return a.chunk[start:len(a.chunk):len(a.chunk)]
}

// newChunk returns a chunk of chunkSize bytes, from the pool if it keeps
// one.
func (a *arena) newChunk() []byte {
	if a.pool != nil {
		if b, ok := a.pool.get(); ok {
			a.chunks = append(a.chunks, b)
			a.allocated.Add(int64(len(b.Bytes)))
			return b.Bytes
		}
	}
	return a.newBuffer(a.chunkSize)
}

func (a *arena) newBuffer(n int) []byte {
	b := offheap.Alloc(n)
	a.chunks = append(a.chunks, b)
	a.allocated.Add(int64(n))
	return b.Bytes
}

// free returns every chunk to the pool, or to the system if the pool does
// not take it. Nothing may use the arena's bytes afterwards: the caller has
// made sure no reference to them remains.
func (a *arena) free() {
	for _, b := range a.chunks {
		if a.pool == nil || !a.pool.put(b) {
			offheap.Free(b)
		}
	}
	a.chunk, a.chunks = nil, nil
}

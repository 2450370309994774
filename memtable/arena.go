package memtable

// arena hands out immutable copies of key‖value pairs carved from large
// chunks, so the garbage collector tracks one object per chunk instead of one
// per entry. It is append-only: bytes already handed out are never written
// again, which is what lets readers use them without a lock. Only the writer
// (under Memtable.wmu) calls alloc.
type arena struct {
	chunk     []byte // current chunk; len is the used prefix
	chunkSize int
	allocated int64 // bytes of chunks and large allocations, for tests and tuning
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
	if n > a.chunkSize/4 {
		// A big entry gets its own allocation: putting it in a chunk would
		// throw away the rest of the current chunk or most of a new one.
		kv := make([]byte, 0, n)
		kv = append(append(kv, key...), value...)
		a.allocated += int64(n)
		return kv
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]byte, 0, a.chunkSize)
		a.allocated += int64(a.chunkSize)
	}
	start := len(a.chunk)
	a.chunk = append(append(a.chunk, key...), value...)
	return a.chunk[start:len(a.chunk):len(a.chunk)]
}

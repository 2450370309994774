package memtable

import (
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/offheap"
)

// Pool makes memtables whose arenas recycle each other's chunks: when a
// memtable made by the pool drops its last reference, its chunks go back to
// the pool, up to one memtable's worth, and the next memtables' arenas take
// them before they map new ones.
//
// Why: a chunk fresh from the system costs the writer a page fault for each
// of its pages on first touch — a kernel entry every 4 KiB of keys and
// values, on the write path. Most take a microsecond or two; on a loaded
// machine, or a virtual one whose host backs the guest's pages lazily, one
// in a few hundred took hundreds of microseconds, and a fill of 1 KiB
// values faults every fourth write. A kept chunk's pages are resident
// already. (Pebble recycles its memtables' memory for the same reason.)
//
// What it costs in memory: nothing beyond what the memtables held. The pool
// grows only by the chunks of a released memtable, which leave the
// memtables as they enter it, and shrinks as arenas take them back; new
// chunks are mapped only when the pool is empty. So the memtables' chunks
// and the pool's together never exceed the most the memtables alone held
// at once.
//
// INVARIANT: every chunk in the pool is chunkSize bytes and belongs to no
// memtable: its last holder's last reference is gone, so nothing reads it
// (see Unref), and the next arena may overwrite it.
//
// A Pool is safe for concurrent use.
type Pool struct {
	sizeHint  int64
	chunkSize int
	max       int // chunks kept at most: one memtable's

	mu     sync.Mutex
	chunks []offheap.Buffer
	closed bool
	bytes  atomic.Int64 // len(chunks) · chunkSize
}

// NewPool returns a pool of memtables that the DB flushes at sizeHint
// bytes (as New's sizeHint; 0 picks a default).
func NewPool(sizeHint int64) *Pool {
	size := chunkSizeFor(sizeHint)
	// A full memtable's arena holds at most sizeHint bytes of keys and
	// values (ApproximateSize counts them and more) in whole chunks.
	n := int(max(sizeHint, int64(size))/int64(size)) + 1
	return &Pool{sizeHint: sizeHint, chunkSize: size, max: n}
}

// New returns an empty memtable, as New(sizeHint) does, whose arena takes
// its chunks from p first and returns them to p when it is freed.
func (p *Pool) New() *Memtable {
	m := New(p.sizeHint)
	m.arena.pool = p
	return m
}

// Bytes returns the bytes of the chunks p keeps, off the Go heap.
func (p *Pool) Bytes() int64 { return p.bytes.Load() }

// Close returns the chunks p keeps to the system; chunks given back after
// it are returned to the system at once. The memtables p made stay valid.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.chunks {
		offheap.Free(b)
	}
	p.chunks, p.closed = nil, true
	p.bytes.Store(0)
}

// get returns a kept chunk, or ok = false if p keeps none.
func (p *Pool) get() (b offheap.Buffer, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := len(p.chunks)
	if k == 0 {
		return offheap.Buffer{}, false
	}
	b = p.chunks[k-1]
	p.chunks[k-1] = offheap.Buffer{}
	p.chunks = p.chunks[:k-1]
	p.bytes.Add(-int64(p.chunkSize))
	return b, true
}

// put keeps b, a chunk no memtable uses any longer, and reports whether it
// did: not if b is not a chunk of p's size, p is full or closed.
func (p *Pool) put(b offheap.Buffer) bool {
	if len(b.Bytes) != p.chunkSize {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.chunks) >= p.max {
		return false
	}
	p.chunks = append(p.chunks, b)
	p.bytes.Add(int64(p.chunkSize))
	return true
}

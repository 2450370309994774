package memtable

import (
	"bytes"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/google/btree"
)

// btreeDegree is the tree's minimum degree (nodes hold up to 2*degree-1
// items). In BenchmarkAdd and BenchmarkGet 32 and 64 were alike and 8 and 16
// up to 2x slower; 32 keeps the memmove an insert does within a node smaller.
const btreeDegree = 32

// entryOverhead is what ApproximateSize charges per entry beyond its key and
// value bytes: the 40-byte tree item plus its share of partly filled B-tree
// nodes and child pointers.
const entryOverhead = 64

// Memtable is a sorted, append-only table of internal keys. The zero value is
// not usable; call New. See the package doc for the concurrency contract.
type Memtable struct {
	wmu   sync.Mutex // serializes Add; guards arena
	arena arena

	mu   sync.RWMutex // guards tree: write-locked only for the insert itself
	tree *btree.BTreeG[entry]

	rdMu sync.Mutex // guards rd.tombs and the building of rd.list
	rd   rangeDels

	size atomic.Int64 // ApproximateSize
	n    atomic.Int64 // Len
	refs atomic.Int32 // see Ref; the arena is freed when it drops to 0
}

// New returns an empty memtable holding one reference, its creator's.
// sizeHint is the ApproximateSize at which the DB will flush it; it only
// sizes the arena's chunks, and 0 picks a default.
func New(sizeHint int64) *Memtable {
	m := &Memtable{
		arena: arena{chunkSize: chunkSizeFor(sizeHint)},
		tree:  btree.NewG(btreeDegree, less),
	}
	m.refs.Store(1)
	return m
}

// Ref adds a reference to m: m's keys and values, and every slice of them
// that Get and iterators returned, stay valid until the matching Unref.
// Only a holder of a reference may call Ref.
func (m *Memtable) Ref() {
	for {
		n := m.refs.Load()
		if n <= 0 {
			panic("memtable: Ref of a released memtable")
		}
		if m.refs.CompareAndSwap(n, n+1) {
			return
		}
	}
}

// Unref drops a reference. Dropping the last one frees the arena: every key
// and value slice the memtable ever returned becomes invalid, and so does
// m itself.
func (m *Memtable) Unref() {
	switch n := m.refs.Add(-1); {
	case n == 0:
		m.wmu.Lock()
		m.arena.free()
		m.wmu.Unlock()
		// The tree goes too: a pointer to m that outlives its last
		// reference (a pooled iterator's, say) must not keep its items,
		// 40 bytes an entry, on the heap.
		m.mu.Lock()
		m.tree = nil
		m.mu.Unlock()
	case n < 0:
		panic("memtable: Unref of a released memtable")
	}
}

// Add inserts the version (key, seq, kind) with value. It copies key and
// value, so the caller may reuse its buffers as soon as Add returns.
//
// Precondition: the internal key (key, seq, kind) is not already in the
// table — the commit pipeline gives each write its own sequence number. Add
// panics if it is, and if seq exceeds base.SeqNumMax, kind is none of
// base.KindSet, base.KindDelete, base.KindMerge and base.KindSetTTL (whose
// value starts with its expiry), or the key is 4 GiB or longer: all are bugs in the caller,
// and storing them would corrupt the ordering or the trailer.
func (m *Memtable) Add(seq base.SeqNum, kind base.Kind, key, value []byte) {
	if seq > base.SeqNumMax {
		panic(fmt.Sprintf("memtable: seqnum %d exceeds SeqNumMax", seq))
	}
	if kind > base.KindSet && kind != base.KindMerge && kind != base.KindSetTTL {
		panic(fmt.Sprintf("memtable: invalid kind %v", kind))
	}
	if uint64(len(key)) > math.MaxUint32 {
		panic(fmt.Sprintf("memtable: key of %d bytes is too long", len(key)))
	}
	m.wmu.Lock()
	// The copy happens outside the tree lock so that readers wait only for
	// the insert, not for a memmove of a large value.
	e := makeEntry(m.arena.alloc(key, value), len(key), base.MakeTrailer(seq, kind))
	m.mu.Lock()
	old, replaced := m.tree.ReplaceOrInsert(e)
	if replaced {
		// Put back the version readers may already have returned, so the
		// table stays as it was for whoever recovers from the panic.
		m.tree.ReplaceOrInsert(old)
	}
	m.mu.Unlock()
	if replaced {
		m.wmu.Unlock()
		panic(fmt.Sprintf("memtable: duplicate internal key %v", e.internalKey()))
	}
	m.n.Add(1)
	m.size.Add(int64(len(key)+len(value)) + entryOverhead)
	m.wmu.Unlock()
}

// Get returns the newest version of userKey with a sequence number ≤
// visible. found is false if there is none. A tombstone is found too, with
// kind base.KindDelete: the caller must stop there (the key is deleted at
// visible) rather than look in older tables. value aliases the memtable's
// arena; it stays valid and unchanged while the caller holds a reference
// (see Ref), and must not be modified.
func (m *Memtable) Get(userKey []byte, visible base.SeqNum) (value []byte, kind base.Kind, seq base.SeqNum, found bool) {
	// (userKey, visible, KindMax) sorts just before every version of userKey
	// visible at visible, so the first entry at or after it is the answer if
	// it has the same user key.
	probe := searchKey(userKey, base.MakeTrailer(min(visible, base.SeqNumMax), base.KindMax))
	var e entry
	m.mu.RLock()
	m.tree.AscendGreaterOrEqual(probe, func(x entry) bool {
		e, found = x, true
		return false
	})
	m.mu.RUnlock()
	if !found || !bytes.Equal(e.userKey(), userKey) {
		return nil, 0, 0, false
	}
	return e.value(), e.trailer.Kind(), e.trailer.SeqNum(), true
}

// Len returns the number of entries (versions, tombstones included; range
// tombstones are not entries).
func (m *Memtable) Len() int { return int(m.n.Load()) }

// Empty reports whether nothing has been added: no version, no range
// tombstone.
func (m *Memtable) Empty() bool { return m.n.Load() == 0 && m.rd.count.Load() == 0 }

// ApproximateSize returns the bytes of all keys and values added plus a fixed
// per-entry overhead for the tree. It never decreases. The DB flushes the
// memtable when this reaches its configured size.
func (m *Memtable) ApproximateSize() int64 { return m.size.Load() }

// ArenaBytes returns the bytes of the memtable's arena chunks, off the Go
// heap: its keys and values, and the unused tail of its last chunk.
func (m *Memtable) ArenaBytes() int64 { return m.arena.allocated.Load() }

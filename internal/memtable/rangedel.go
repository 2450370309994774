package memtable

import (
	"bytes"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// rangeDels are the memtable's range tombstones, kept beside the tree of
// point versions: few, and asked about as a fragmented whole (every read
// of a key asks which tombstones cover it), so they are a list, fragmented
// when first read after a change and cached until the next one. The first
// read after a few additions fragments them into the cached list
// (rangedel.List.Add: a copy of the list), so that a memtable of many
// tombstones, read between every DeleteRange, is not fragmented whole each
// time (n log n per read: quadratic over the memtable's life).
//
// INVARIANT: list, once loaded, is the fragmentation of tombs[:list.n]:
// tombstones are only appended, so a cached list with n equal to the
// current count is current.
type rangeDels struct {
	tombs []rangedel.Tombstone // guarded by Memtable.rdMu; keys in the arena
	count atomic.Int64         // len(tombs), published after the append
	list  atomic.Pointer[cachedList]
}

// cachedList is a fragmentation of the first n tombstones.
type cachedList struct {
	n    int64
	list rangedel.List
}

// AddRangeDel adds the range tombstone [start, end) at seq. It copies the
// keys. Like Add, it panics on a seqnum above base.SeqNumMax, and on an
// empty range or a key of 4 GiB or more: bugs in the caller, which checks
// its arguments (the DB's DeleteRange does).
func (m *Memtable) AddRangeDel(seq base.SeqNum, start, end []byte) {
	if seq == 0 || seq > base.SeqNumMax {
		panic(fmt.Sprintf("memtable: range deletion seqnum %d out of range", seq))
	}
	if bytes.Compare(start, end) >= 0 {
		panic(fmt.Sprintf("memtable: empty range deletion [%q, %q)", start, end))
	}
	if uint64(len(start)) > math.MaxUint32 || uint64(len(end)) > math.MaxUint32 {
		panic("memtable: range deletion key too long")
	}
	m.wmu.Lock()
	kv := m.arena.alloc(start, end)
	t := rangedel.Tombstone{Start: kv[:len(start):len(start)], End: kv[len(start):], Seq: seq}
	m.rdMu.Lock()
	m.rd.tombs = append(m.rd.tombs, t)
	m.rd.count.Store(int64(len(m.rd.tombs)))
	m.rdMu.Unlock()
	m.size.Add(int64(len(start)+len(end)) + entryOverhead)
	m.wmu.Unlock()
}

// maxIncrementalRangeDels is the most tombstones added since the cached
// list that RangeDels adds to it one at a time (a copy of the list each);
// more, and fragmenting them all at once costs less.
const maxIncrementalRangeDels = 8

// RangeDels returns the memtable's range tombstones, fragmented. The
// list's keys alias the arena, valid while the caller holds a reference;
// it must not be modified. A memtable without range tombstones returns nil
// at the cost of one atomic load.
func (m *Memtable) RangeDels() rangedel.List {
	n := m.rd.count.Load()
	if n == 0 {
		return nil
	}
	if c := m.rd.list.Load(); c != nil && c.n == n {
		return c.list
	}
	m.rdMu.Lock()
	defer m.rdMu.Unlock()
	n = int64(len(m.rd.tombs))
	if c := m.rd.list.Load(); c != nil && c.n == n {
		return c.list
	}
	var list rangedel.List
	if c := m.rd.list.Load(); c != nil && n-c.n <= maxIncrementalRangeDels {
		list = c.list
		for _, t := range m.rd.tombs[c.n:n] {
			list = list.Add(t)
		}
	} else {
		list = rangedel.Build(m.rd.tombs)
	}
	c := &cachedList{n: n, list: list}
	m.rd.list.Store(c)
	return c.list
}

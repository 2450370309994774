package bloomkv

import (
	"sync"

	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

// iterAlloc is the iterator stack of a DB's Iterator in one allocation,
// taken from a pool by iterOver and put back by Close, as Pebble's
// iterAlloc is: the Iterator's state, the merge and the room of its
// children and heap, a LevelIter per level, the L0 tables' lazyTables,
// the range-skipping state (tableSkip), the range tombstones' list, the
// iterators of the mutable memtable and of up to inlineMemIters−1
// immutable ones, with the room of their buffers, and the room of the
// bounds' and keys' copies. Building a stack then allocates nothing of
// its own but the Iterator (a one-word handle, so that a closed Iterator
// stays closed and cannot reach the stack of another), a memtable
// iterator per memtable past inlineMemIters
// and, without range filters, where the L0 tables are not lazyTables, a
// table iterator per L0 table; a deeper level's table iterator is
// allocated when a move opens the table (TestNewIterAllocs).
//
// INVARIANT: an iterAlloc in the pool refers to no memtable, table, DB or
// trace — release clears what the Iterator referred to, and the merge's
// Close closed the memtable iterators, which lets go of their memtable
// and entries — and every slice in it is empty, its room kept.
type iterAlloc struct {
	state      iterState // the Iterator's own state, behind its handle
	merging    iterator.MergingIter
	skip       tableSkip
	levels     [manifest.NumLevels]iterLevel
	levelIters [manifest.NumLevels]*iterator.LevelIter // the room of Iterator.levels
	skipLevels [manifest.NumLevels]skipLevel           // the room of skip.levels
	children   []iterator.Iterator
	lazy       []lazyTable
	rangeDels  []sourceRangeDels
	mems       [inlineMemIters]memtable.Iter
	// The room of the Iterator's userLower, userUpper, key, value and
	// stopKey.
	lower, upper, key, value, stopKey []byte
}

// inlineMemIters is the number of memtable iterators an iterAlloc holds:
// the mutable memtable's and those of up to three immutable ones, more
// than Options.MaxImmutableMemtables' default of one lets wait for their
// flush. A read state of more memtables allocates an iterator for each
// past these.
const inlineMemIters = 4

// iterAllocs is the pool of iterAllocs.
var iterAllocs = sync.Pool{New: func() any { return new(iterAlloc) }}

// maxKeptBuffer is the largest room of a byte buffer a pooled iterAlloc
// keeps: a scan of a large value must not pin its copy in the pool.
const maxKeptBuffer = 4 << 10

// keptBuffer returns b emptied, to be kept for the next use, or nil if
// its room is too large to keep.
func keptBuffer(b []byte) []byte {
	if cap(b) > maxKeptBuffer {
		return nil
	}
	return b[:0]
}

// iterLevel is a level below L0 in an Iterator's stack: its tables and
// their LevelIter, which it opens them for (as the LevelIter's Opener, so
// that a level costs no closure).
type iterLevel struct {
	tables []*table
	iter   iterator.LevelIter
}

// Open returns an iterator over table i of the level.
func (l *iterLevel) Open(i int) (iterator.Iterator, error) {
	return l.tables[i].reader.NewIterator(), nil
}

// reclaim returns the buffer to keep of one a lent an Iterator, own, and
// used, the Iterator's at Close, which is own's room or a larger one, or
// nil if the Iterator let go of it (SetBounds with a nil bound), in which
// case own is the Iterator's no longer.
func reclaim(own, used []byte) []byte {
	if used != nil {
		own = used
	}
	return keptBuffer(own)
}

// memIter returns an unpositioned iterator over m, the i-th memtable of
// the stack: one of a's own for the first inlineMemIters, else a new one.
func (a *iterAlloc) memIter(i int, m *memtable.Memtable) *memtable.Iter {
	if i >= len(a.mems) {
		return m.NewIter()
	}
	m.InitIter(&a.mems[i])
	return &a.mems[i]
}

// lazyTables returns n zero lazyTables in a's room.
func (a *iterAlloc) lazyTables(n int) []lazyTable {
	if cap(a.lazy) < n {
		a.lazy = make([]lazyTable, n)
	}
	a.lazy = a.lazy[:n]
	return a.lazy
}

// release puts a, the stack of it, a's state, which Close has closed, back
// in the pool: it takes back the room of it's buffers, clears every
// reference to what it read, and zeroes it.
func (a *iterAlloc) release(it *iterState) {
	a.lower, a.upper = reclaim(a.lower, it.userLower), reclaim(a.upper, it.userUpper)
	a.key, a.value, a.stopKey = reclaim(a.key, it.key), reclaim(a.value, it.value), reclaim(a.stopKey, it.stopKey)
	// Only what the Iterator used is cleared: zeroing memory that holds
	// pointers costs write barriers while the collector runs.
	clear(a.children)
	clear(a.lazy)
	clear(a.rangeDels)
	clear(a.levels[:len(it.levels)])
	clear(a.levelIters[:len(it.levels)])
	clear(a.skipLevels[:len(it.levels)])
	a.children, a.lazy, a.rangeDels = a.children[:0], a.lazy[:0], a.rangeDels[:0]
	if it.ps != nil {
		a.skip.reset()
	}
	it.blob.release()
	a.state = iterState{}
	iterAllocs.Put(a)
}

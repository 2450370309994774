package memtable

import "github.com/bloomkv/bloomkv/internal/base"

// Batch sizes for the iterator's refills: a seek fetches a few entries
// because a point-like seek (as the merging iterator does per table) often
// reads only one or two; a scan doubles the batch on every refill so a long
// scan costs one tree descent per maxBatch entries.
const (
	minBatch = 8
	maxBatch = 256
)

type iterState uint8

const (
	unpositioned iterState = iota
	atEntry
	beforeFirst // Prev or SeekLT ran past the smallest entry
	afterLast   // Next or SeekGE ran past the largest entry
)

// Iter walks a memtable's entries in base.CompareInternal order, all
// versions of every key included. It is not safe for concurrent use by
// several goroutines, but any number of Iters may run while the memtable's
// writer adds entries; see the package doc for what they then see.
//
// A new Iter is unpositioned: call First, Last, SeekGE or SeekLT. Every
// positioning method returns what Valid would return afterwards.
type Iter struct {
	m     *Memtable
	buf   []entry // consecutive entries, ascending if forward, else descending
	pos   int     // the current entry is buf[pos] when state is atEntry
	fwd   bool
	state iterState
	batch int // size of the next refill
	// dirty is how many entries of buf's room, from the start, may hold
	// an entry, what Close zeroes: a refill overwrites the buffer from
	// the start.
	dirty int
}

// NewIter returns an unpositioned iterator over m.
func (m *Memtable) NewIter() *Iter {
	it := new(Iter)
	m.InitIter(it)
	return it
}

// InitIter makes it an unpositioned iterator over m, as NewIter returns,
// in place: an iterator stack that holds its Iters inline builds one
// without allocating, and it keeps the buffer room it had (see Close), so
// that its first seek need not grow one. it must not be in use (closed, or
// zero).
func (m *Memtable) InitIter(it *Iter) {
	*it = Iter{m: m, buf: it.buf[:0]}
}

// maxKeptEntries is the most entries of buffer room Close keeps, 2.5 KiB:
// room for the refills of a short scan, not the maxBatch of a long one.
//
// INVARIANT: the room a closed Iter keeps holds no entry — Close zeroes
// the part of it the Iter wrote (dirty) — so that a closed Iter refers to
// no key or value of its memtable's arena.
const maxKeptEntries = 8 * minBatch

// seekTrailer is the largest trailer, so (k, seekTrailer) sorts before every
// version of user key k.
var seekTrailer = base.MakeTrailer(base.SeqNumMax, base.KindMax)

// First moves to the smallest entry.
func (it *Iter) First() bool {
	it.batch = minBatch
	return it.fill(true, entry{}, false, true)
}

// Last moves to the largest entry.
func (it *Iter) Last() bool {
	it.batch = minBatch
	return it.fill(false, entry{}, false, true)
}

// SeekGE moves to the first entry whose user key is ≥ userKey, that is the
// newest version of the smallest such key: the first entry ≥ (userKey,
// SeqNumMax, KindMax). userKey is not retained.
func (it *Iter) SeekGE(userKey []byte) bool {
	it.batch = minBatch
	return it.fill(true, searchKey(userKey, seekTrailer), true, true)
}

// SeekLT moves to the last entry whose user key is < userKey, that is the
// oldest version of the largest such key. userKey is not retained.
func (it *Iter) SeekLT(userKey []byte) bool {
	it.batch = minBatch
	return it.fill(false, searchKey(userKey, seekTrailer), true, false)
}

// Next moves to the following entry. After Prev ran off the start it moves
// to the first entry; on an unpositioned or exhausted-forward iterator it
// returns false.
func (it *Iter) Next() bool {
	switch it.state {
	case beforeFirst:
		return it.First()
	case atEntry:
	default:
		return false
	}
	if it.fwd && it.pos+1 < len(it.buf) {
		it.pos++
		return true
	}
	// Re-seek just past the current entry: entries never move or disappear,
	// so this finds exactly the successor in the tree as it is now.
	if it.fwd {
		it.batch = min(2*it.batch, maxBatch)
	} else {
		it.batch = minBatch
	}
	return it.fill(true, it.buf[it.pos], true, false)
}

// Prev moves to the preceding entry. After Next ran off the end it moves to
// the last entry; on an unpositioned or exhausted-backward iterator it
// returns false.
func (it *Iter) Prev() bool {
	switch it.state {
	case afterLast:
		return it.Last()
	case atEntry:
	default:
		return false
	}
	if !it.fwd && it.pos+1 < len(it.buf) {
		it.pos++
		return true
	}
	if !it.fwd {
		it.batch = min(2*it.batch, maxBatch)
	} else {
		it.batch = minBatch
	}
	return it.fill(false, it.buf[it.pos], true, false)
}

// Valid reports whether the iterator is at an entry.
func (it *Iter) Valid() bool { return it.state == atEntry }

// Key returns the current entry's internal key. Its UserKey aliases the
// memtable's arena: it stays valid after the iterator moves or closes, as
// long as the caller holds a reference to the memtable (see Ref), and must
// not be modified. Key must only be called when Valid.
func (it *Iter) Key() base.InternalKey { return it.buf[it.pos].internalKey() }

// Value returns the current entry's value, with the same aliasing rules as
// Key. Value must only be called when Valid.
func (it *Iter) Value() []byte { return it.buf[it.pos].value() }

// Error returns nil: a memtable lives in memory and cannot fail. It lets an
// Iter stand beside table iterators, which can.
func (it *Iter) Error() error { return nil }

// Close unpositions the iterator and lets go of its memtable and of the
// entries it copied; it keeps the buffer's room, up to maxKeptEntries, for
// InitIter to reuse. A closed Iter is over no memtable: it is not valid
// and every move returns false, until InitIter. It returns nil: the error
// is there so an Iter fits the DB's internal iterator interface
// (internal/iterator), whose SSTable iterators can fail.
func (it *Iter) Close() error {
	buf := it.buf[:0]
	if cap(buf) > maxKeptEntries {
		buf = nil
	}
	// Zeroing only what the Iter wrote: zeroing memory that holds
	// pointers costs write barriers while the collector runs.
	clear(buf[:min(it.dirty, cap(buf))])
	*it = Iter{buf: buf}
	return nil
}

// fill replaces the buffer with up to it.batch consecutive entries in the
// given direction, starting at pivot (at the first or last entry if
// !hasPivot) and skipping an entry equal to pivot unless inclusive. It copies under the
// read lock and holds it for nothing else.
func (it *Iter) fill(fwd bool, pivot entry, hasPivot, inclusive bool) bool {
	if it.m == nil {
		return false // closed: over no memtable until InitIter
	}
	// The pivot may alias it.buf (Next and Prev pass the current entry);
	// it was copied into the parameter, so truncating buf is safe.
	buf, n := it.buf[:0], it.batch
	if cap(buf) < n {
		buf, it.dirty = make([]entry, 0, n), 0 // one allocation, not append's doublings
	}
	skip := hasPivot && !inclusive // only the first entry visited can equal pivot
	visit := func(e entry) bool {
		if skip {
			skip = false
			if compare(e, pivot) == 0 {
				return true
			}
		}
		buf = append(buf, e)
		return len(buf) < n
	}
	t := it.m.tree
	it.m.mu.RLock()
	switch {
	case fwd && hasPivot:
		t.AscendGreaterOrEqual(pivot, visit)
	case fwd:
		t.Ascend(visit)
	case hasPivot:
		t.DescendLessOrEqual(pivot, visit)
	default:
		t.Descend(visit)
	}
	it.m.mu.RUnlock()
	it.buf, it.pos, it.fwd = buf, 0, fwd
	it.dirty = max(it.dirty, len(buf))
	switch {
	case len(buf) > 0:
		it.state = atEntry
	case fwd:
		it.state = afterLast
	default:
		it.state = beforeFirst
	}
	return it.state == atEntry
}

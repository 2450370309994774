package iterator

import (
	"bytes"
	"cmp"

	"github.com/bloomkv/bloomkv/internal/base"
)

// MergingIter merges child Iterators (memtables, L0 tables, levels) into
// one stream in base.CompareInternal order, every version of every key
// included: it hides nothing, so that the same merge serves the DB's
// Iterator, which hides what a reader must not see, and compaction.Run,
// which decides what survives (see the package doc).
//
// The children sit in a binary heap keyed by their current entry: a
// min-heap when moving forward, a max-heap when moving backward, with
// heap[0] the current entry. A step moves one child and sifts it down:
// O(log n) comparisons for n children, and no allocation after
// NewMergingIter. Sequence numbers are unique, so two children never hold
// the same internal key; the child index breaks ties anyway so that the
// order of the stream never depends on heap history.
//
// INVARIANT: positions are ordered by (internal key, child index). Every
// child in the heap is at an entry, and its heap item holds that entry's
// key. Moving forward, every child in the heap is at its first entry at or
// after the current position and every child out of the heap has no entry
// after it; moving backward, the same with "last" and "before". So Next
// (Prev) in the same direction steps only the current child, and a
// direction switch first re-positions every other child on the near side
// of the current entry. A forward-only user (First, then Next) never pays
// for the backward direction: no switch happens. An excluded child
// (Exclude) counts as empty: it is never in the heap and never moved.
//
// A child's failure stops the merge: the iterator is exhausted from then on
// and Error returns the failure.
type MergingIter struct {
	children []Iterator
	excluded []bool // if not nil, the children left out of the merge (Exclude)
	heap     []mergingItem
	dir      direction
	err      error
}

// mergingItem is a child at an entry.
type mergingItem struct {
	key base.InternalKey // the child's current key: valid while the child stays put
	idx int              // the child's index in children
}

// NewMergingIter returns an unpositioned iterator over children. It owns
// them: Close closes them. It keeps the slice, whose elements must not
// change.
func NewMergingIter(children ...Iterator) *MergingIter {
	m := new(MergingIter)
	m.Init(children)
	return m
}

// Init makes m an unpositioned iterator over children, as NewMergingIter
// does, in place, reusing the room of its heap: a DB Iterator keeps its
// MergingIter in one pooled allocation and initializes it for each new
// Iterator. m must be new or closed.
func (m *MergingIter) Init(children []Iterator) {
	heap := m.heap[:0]
	if cap(heap) < len(children) {
		heap = make([]mergingItem, 0, len(children))
	}
	*m = MergingIter{children: children, heap: heap}
}

// Exclude leaves out of the merge, as if they were empty, the children
// excluded marks (excluded[i] for child i) until the next Exclude;
// Exclude(nil) merges every child again. A DB Iterator's prefix seek so
// passes over the L0 tables whose key ranges or filters rule the prefix
// out, without seeking them; the caller must not need their entries. An
// excluded child is not moved (it keeps its position and what it holds)
// and is still closed by Close. Exclude keeps the slice, whose elements
// must not change until the next Exclude, and unpositions the iterator
// until the next First, Last or seek.
func (m *MergingIter) Exclude(excluded []bool) {
	m.excluded = excluded
	m.heap = m.heap[:0]
}

// isExcluded reports whether child i is left out of the merge.
func (m *MergingIter) isExcluded(i int) bool { return m.excluded != nil && m.excluded[i] }

// comparePos orders the positions of two children.
func comparePos(a, b mergingItem) int {
	if c := base.CompareInternal(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// First moves to the smallest entry of all children.
func (m *MergingIter) First() bool { return m.position(forward, Iterator.First) }

// Last moves to the largest entry of all children.
func (m *MergingIter) Last() bool { return m.position(backward, Iterator.Last) }

// SeekGE moves to the first entry ≥ (userKey, SeqNumMax, KindMax).
func (m *MergingIter) SeekGE(userKey []byte) bool {
	return m.position(forward, func(c Iterator) bool { return c.SeekGE(userKey) })
}

// SeekLT moves to the last entry whose user key is < userKey.
func (m *MergingIter) SeekLT(userKey []byte) bool {
	return m.position(backward, func(c Iterator) bool { return c.SeekLT(userKey) })
}

// position moves every child with move and rebuilds the heap for dir.
func (m *MergingIter) position(dir direction, move func(Iterator) bool) bool {
	if m.err != nil {
		return false
	}
	m.dir = dir
	m.heap = m.heap[:0]
	for i, c := range m.children {
		if m.isExcluded(i) {
			continue
		}
		if !m.add(i, move(c)) {
			return false
		}
	}
	m.heapify()
	return len(m.heap) > 0
}

// Next moves to the following entry.
func (m *MergingIter) Next() bool {
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	if m.dir == backward {
		return m.switchTo(forward)
	}
	return m.step(m.children[m.heap[0].idx].Next())
}

// Prev moves to the preceding entry.
func (m *MergingIter) Prev() bool {
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	if m.dir == forward {
		return m.switchTo(backward)
	}
	return m.step(m.children[m.heap[0].idx].Prev())
}

// step restores the heap after the current child moved; ok is what its move
// returned.
func (m *MergingIter) step(ok bool) bool {
	top := &m.heap[0]
	c := m.children[top.idx]
	if ok {
		top.key = c.Key()
	} else if err := c.Error(); err != nil {
		m.fail(err)
		return false
	} else { // the child is exhausted in this direction
		n := len(m.heap) - 1
		m.heap[0] = m.heap[n]
		m.heap = m.heap[:n]
	}
	m.down(0)
	return len(m.heap) > 0
}

// switchTo reverses the direction at the current entry. Every other child
// is on the far side of it (or exhausted), so each is moved to its first
// position after the current one (seek to the user key, step over the newer
// versions) and, going backward, one step back from there; then the current
// child steps, as it would without a switch.
func (m *MergingIter) switchTo(dir direction) bool {
	cur := m.heap[0] // cur.key stays valid: its child moves last
	m.dir = dir
	m.heap = m.heap[:0]
	for i, c := range m.children {
		if i == cur.idx || m.isExcluded(i) {
			continue
		}
		ok := c.SeekGE(cur.key.UserKey)
		for ok && comparePos(mergingItem{c.Key(), i}, cur) < 0 {
			ok = c.Next()
		}
		if dir == backward {
			if ok {
				ok = c.Prev()
			} else if c.Error() == nil {
				ok = c.Last() // every entry of c is before cur
			}
		}
		if !m.add(i, ok) {
			return false
		}
	}
	c := m.children[cur.idx]
	ok := false
	if dir == forward {
		ok = c.Next()
	} else {
		ok = c.Prev()
	}
	if !m.add(cur.idx, ok) {
		return false
	}
	m.heapify()
	return len(m.heap) > 0
}

// SkipForward, in the forward direction, moves every child from index from
// on whose entry is before userKey to its first entry ≥ userKey, and
// returns what Valid would. The DB's Iterator calls it after a step past a
// version that a range tombstone of child from−1 deletes: by the tree's
// invariant every entry of the older children (the later indexes) in the
// tombstone's range is older than it, so deleted too, and seeking past
// them costs one seek a child instead of a step per entry.
//
// Only children from index from on move, and only forward: the entry the
// merge is at may change to a later one, never to one already passed.
func (m *MergingIter) SkipForward(userKey []byte, from int) bool {
	return m.skip(forward, userKey, from)
}

// SkipBackward is SkipForward in the backward direction: every child from
// index from on whose entry is at or after userKey moves to its last entry
// before userKey.
func (m *MergingIter) SkipBackward(userKey []byte, from int) bool {
	return m.skip(backward, userKey, from)
}

func (m *MergingIter) skip(dir direction, userKey []byte, from int) bool {
	if m.err != nil || len(m.heap) == 0 || m.dir != dir {
		return m.err == nil && len(m.heap) > 0
	}
	kept := m.heap[:0]
	moved := false
	for _, item := range m.heap {
		c := bytes.Compare(item.key.UserKey, userKey)
		if item.idx < from || dir == forward && c >= 0 || dir == backward && c < 0 {
			kept = append(kept, item)
			continue
		}
		child := m.children[item.idx]
		var ok bool
		if dir == forward {
			ok = child.SeekGE(userKey)
		} else {
			ok = child.SeekLT(userKey)
		}
		moved = true
		if ok {
			kept = append(kept, mergingItem{key: child.Key(), idx: item.idx})
		} else if err := child.Error(); err != nil {
			m.fail(err)
			return false
		}
	}
	m.heap = kept
	if moved {
		m.heapify()
	}
	return len(m.heap) > 0
}

// add appends child i to the heap, without restoring heap order, if its
// last move found an entry (ok). Otherwise it checks the child for an error
// and reports false if there was one.
func (m *MergingIter) add(i int, ok bool) bool {
	c := m.children[i]
	if ok {
		m.heap = append(m.heap, mergingItem{key: c.Key(), idx: i})
		return true
	}
	if err := c.Error(); err != nil {
		m.fail(err)
		return false
	}
	return true
}

// fail stops the merge with err: the heap is emptied, so every later move
// reports false.
func (m *MergingIter) fail(err error) {
	m.err = err
	m.heap = m.heap[:0]
}

// Key returns the current entry's key, valid until the iterator moves.
func (m *MergingIter) Key() base.InternalKey { return m.heap[0].key }

// Value returns the current entry's value, valid until the iterator moves.
func (m *MergingIter) Value() []byte { return m.children[m.heap[0].idx].Value() }

// Error returns the first failure of a child.
func (m *MergingIter) Error() error { return m.err }

// Close closes every child. It returns the iterator's error, or else the
// first error a child's Close returned. (A failed child returns from Close
// the failure the merge already has: reporting the first keeps it from
// being reported twice.) It keeps the heap's room, emptied of the keys it
// held, for Init.
func (m *MergingIter) Close() error {
	err := m.err
	for _, c := range m.children {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	clear(m.heap[:cap(m.heap)])
	m.children, m.heap = nil, m.heap[:0]
	return err
}

// less reports whether heap[i]'s position is before heap[j]'s: comparePos
// of the two, written out, since it is the innermost loop of every scan
// and compaction.
func (m *MergingIter) less(i, j int) bool {
	a, b := &m.heap[i], &m.heap[j]
	if c := base.CompareInternal(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}

// heapify establishes heap order over the whole heap.
func (m *MergingIter) heapify() {
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
}

// down sifts heap[i] down to its place: below the items that leave the
// heap before it in the current direction (a min-heap of positions
// forward, a max-heap backward). The direction is tested once, not per
// comparison.
func (m *MergingIter) down(i int) {
	h := m.heap
	if m.dir == backward {
		for {
			first := i
			if l := 2*i + 1; l < len(h) && m.less(first, l) {
				first = l
			}
			if r := 2*i + 2; r < len(h) && m.less(first, r) {
				first = r
			}
			if first == i {
				return
			}
			h[i], h[first] = h[first], h[i]
			i = first
		}
	}
	for {
		first := i
		if l := 2*i + 1; l < len(h) && m.less(l, first) {
			first = l
		}
		if r := 2*i + 2; r < len(h) && m.less(r, first) {
			first = r
		}
		if first == i {
			return
		}
		h[i], h[first] = h[first], h[i]
		i = first
	}
}

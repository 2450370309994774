package bloomkv

import (
	"cmp"

	"github.com/bloomkv/bloomkv/internal/base"
)

// direction is the way an iterator last moved.
type direction int8

const (
	forward direction = iota
	backward
)

// mergingIter merges child internalIterators (memtables, L0 tables, levels)
// into one stream in base.CompareInternal order, every version of every key
// included; hiding versions is the job of the Iterator above it.
//
// The children sit in a heap keyed by their current entry: a min-heap when
// moving forward, a max-heap when moving backward, with heap[0] the current
// entry. Sequence numbers are unique, so two children never hold the same
// internal key; the child index breaks ties anyway so that the order of the
// stream never depends on heap history.
//
// INVARIANT: positions are ordered by (internal key, child index). Moving
// forward, every child in the heap is at its first entry at or after the
// current position and every child out of the heap has no entry after it;
// moving backward, the same with "last" and "before". So Next (Prev) in the
// same direction steps only the current child, and a direction switch first
// re-positions every other child on the near side of the current entry.
//
// A child's failure stops the merge: the iterator is exhausted from then on
// and Error returns the failure.
type mergingIter struct {
	children []internalIterator
	heap     []mergingItem
	dir      direction
	err      error
}

// mergingItem is a child at an entry.
type mergingItem struct {
	key base.InternalKey // the child's current key: valid while the child stays put
	idx int              // the child's index in children
}

// newMergingIter returns an unpositioned iterator over children. It owns
// them: Close closes them.
func newMergingIter(children ...internalIterator) *mergingIter {
	return &mergingIter{children: children, heap: make([]mergingItem, 0, len(children))}
}

// comparePos orders the positions of two children.
func comparePos(a, b mergingItem) int {
	if c := base.CompareInternal(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// First moves to the smallest entry of all children.
func (m *mergingIter) First() bool { return m.position(forward, internalIterator.First) }

// Last moves to the largest entry of all children.
func (m *mergingIter) Last() bool { return m.position(backward, internalIterator.Last) }

// SeekGE moves to the first entry ≥ (userKey, SeqNumMax, KindMax).
func (m *mergingIter) SeekGE(userKey []byte) bool {
	return m.position(forward, func(c internalIterator) bool { return c.SeekGE(userKey) })
}

// SeekLT moves to the last entry whose user key is < userKey.
func (m *mergingIter) SeekLT(userKey []byte) bool {
	return m.position(backward, func(c internalIterator) bool { return c.SeekLT(userKey) })
}

// position moves every child with move and rebuilds the heap for dir.
func (m *mergingIter) position(dir direction, move func(internalIterator) bool) bool {
	if m.err != nil {
		return false
	}
	m.dir = dir
	m.heap = m.heap[:0]
	for i, c := range m.children {
		if !m.add(i, move(c)) {
			return false
		}
	}
	m.heapify()
	return len(m.heap) > 0
}

// Next moves to the following entry.
func (m *mergingIter) Next() bool {
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	if m.dir == backward {
		return m.switchTo(forward)
	}
	return m.step(m.children[m.heap[0].idx].Next())
}

// Prev moves to the preceding entry.
func (m *mergingIter) Prev() bool {
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
func (m *mergingIter) step(ok bool) bool {
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
func (m *mergingIter) switchTo(dir direction) bool {
	cur := m.heap[0] // cur.key stays valid: its child moves last
	m.dir = dir
	m.heap = m.heap[:0]
	for i, c := range m.children {
		if i == cur.idx {
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

// add appends child i to the heap, without restoring heap order, if its
// last move found an entry (ok). Otherwise it checks the child for an error
// and reports false if there was one.
func (m *mergingIter) add(i int, ok bool) bool {
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

func (m *mergingIter) fail(err error) {
	m.err = err
	m.heap = m.heap[:0]
}

// Key returns the current entry's key, valid until the iterator moves.
func (m *mergingIter) Key() base.InternalKey { return m.heap[0].key }

// Value returns the current entry's value, valid until the iterator moves.
func (m *mergingIter) Value() []byte { return m.children[m.heap[0].idx].Value() }

// Error returns the first failure of a child.
func (m *mergingIter) Error() error { return m.err }

// Close closes every child. It returns the iterator's error, or else the
// first error a child's Close returned.
func (m *mergingIter) Close() error {
	err := m.err
	for _, c := range m.children {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	m.children, m.heap = nil, nil
	return err
}

// before reports whether a leaves the heap before b in the current
// direction.
func (m *mergingIter) before(a, b mergingItem) bool {
	if m.dir == backward {
		return comparePos(a, b) > 0
	}
	return comparePos(a, b) < 0
}

func (m *mergingIter) heapify() {
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
}

// down sifts heap[i] down to its place.
func (m *mergingIter) down(i int) {
	h := m.heap
	for {
		first := i
		if l := 2*i + 1; l < len(h) && m.before(h[l], h[first]) {
			first = l
		}
		if r := 2*i + 2; r < len(h) && m.before(h[r], h[first]) {
			first = r
		}
		if first == i {
			return
		}
		h[i], h[first] = h[first], h[i]
		i = first
	}
}

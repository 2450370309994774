package compaction

import "github.com/bloomkv/bloomkv/internal/base"

// mergingIter merges child iterators into one stream in internal-key order.
// The children sit in a binary min-heap keyed by their current entry, the
// child's index breaking ties so the order never depends on heap history
// (valid inputs never tie: sequence numbers are unique).
//
// INVARIANT: every child in heap is at an entry, and heap[0]'s is the
// smallest; a child not in heap is exhausted or failed.
//
// A child's failure ends the merge: the iterator is exhausted from then on
// and Error returns the failure.
type mergingIter struct {
	children []Iterator
	heap     []mergingItem
	err      error
}

// mergingItem is a child at an entry.
type mergingItem struct {
	key base.InternalKey // the child's current key, valid while it stays put
	idx int              // the child's index in children
}

func newMergingIter(children []Iterator) *mergingIter {
	return &mergingIter{children: children, heap: make([]mergingItem, 0, len(children))}
}

func (m *mergingIter) less(i, j int) bool {
	a, b := m.heap[i], m.heap[j]
	if c := base.CompareInternal(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.idx < b.idx
}

// First positions every child at its first entry.
func (m *mergingIter) First() bool {
	m.heap = m.heap[:0]
	for i, c := range m.children {
		if c.First() {
			m.heap = append(m.heap, mergingItem{key: c.Key(), idx: i})
		} else if err := c.Error(); err != nil {
			m.fail(err)
			return false
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return len(m.heap) > 0
}

// Next advances the child at the current entry and restores the heap.
func (m *mergingIter) Next() bool {
	if len(m.heap) == 0 {
		return false
	}
	top := &m.heap[0]
	c := m.children[top.idx]
	if c.Next() {
		top.key = c.Key()
	} else {
		if err := c.Error(); err != nil {
			m.fail(err)
			return false
		}
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return len(m.heap) > 0
}

// down moves item i down the heap to its place.
func (m *mergingIter) down(i int) {
	n := len(m.heap)
	for {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < n && m.less(l, smallest) {
			smallest = l
		}
		if r < n && m.less(r, smallest) {
			smallest = r
		}
		if smallest == i {
			return
		}
		m.heap[i], m.heap[smallest] = m.heap[smallest], m.heap[i]
		i = smallest
	}
}

func (m *mergingIter) fail(err error) {
	m.err = err
	m.heap = m.heap[:0]
}

func (m *mergingIter) Key() base.InternalKey { return m.heap[0].key }

func (m *mergingIter) Value() []byte { return m.children[m.heap[0].idx].Value() }

func (m *mergingIter) Error() error { return m.err }

// Close closes every child and returns the merge's error, or else the
// first of theirs. (A failed child returns from Close the failure the merge
// already has: reporting the first keeps it from being reported twice.)
func (m *mergingIter) Close() error {
	err := m.err
	for _, c := range m.children {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	m.heap = nil
	return err
}

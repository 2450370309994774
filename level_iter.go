package bloomkv

import (
	"bytes"
	"sort"

	"github.com/bloomkv/bloomkv/internal/base"
)

// levelFile is one table of a level as the level iterator sees it: the user
// keys of its first and last entries (from the manifest) and how to open an
// iterator over it (through the table cache; the iterator's Close releases
// what open took).
type levelFile struct {
	smallest, largest []byte
	open              func() (internalIterator, error)
}

// levelIter walks the tables of one level L1+ as one internalIterator,
// opening at most one table at a time, and only when a move reaches it: a
// seek binary-searches the tables' key bounds, and Next (Prev) moves on to
// the following (preceding) table at the end (start) of one. A table is
// closed as soon as the iterator leaves it or runs off the level.
//
// INVARIANT: files are sorted and do not overlap: every entry of files[i]
// sorts before every entry of files[i+1], so files[i].largest ≤
// files[i+1].smallest (equal only if a key's versions are split between the
// two tables). The level is then the concatenation of its tables.
//
// A failure to open a table, or of a table's iterator, stops the iterator:
// it is exhausted from then on and Error returns the failure.
type levelIter struct {
	files []levelFile
	idx   int              // index in files of the open table
	iter  internalIterator // the open table's iterator; nil if none is open
	err   error
}

// newLevelIter returns an unpositioned iterator over files. The tables
// wholly outside [lower, upper) (nil: unbounded) are left out: an Iterator
// with those bounds never needs their entries, and this keeps a bounded scan
// from opening the next table only to find it out of range. Entries of the
// tables that straddle a bound are still returned.
func newLevelIter(files []levelFile, lower, upper []byte) *levelIter {
	lo := sort.Search(len(files), func(i int) bool {
		return lower == nil || bytes.Compare(files[i].largest, lower) >= 0
	})
	hi := sort.Search(len(files), func(i int) bool {
		return upper != nil && bytes.Compare(files[i].smallest, upper) >= 0
	})
	return &levelIter{files: files[lo:max(lo, hi)]}
}

// First moves to the level's first entry.
func (l *levelIter) First() bool { return l.forwardFrom(0, internalIterator.First) }

// Last moves to the level's last entry.
func (l *levelIter) Last() bool { return l.backwardFrom(len(l.files)-1, internalIterator.Last) }

// SeekGE moves to the first entry ≥ (userKey, SeqNumMax, KindMax). It is in
// the first table whose largest key is ≥ userKey, or else (when the metadata
// is looser than the table) at the start of a later one.
func (l *levelIter) SeekGE(userKey []byte) bool {
	i := sort.Search(len(l.files), func(i int) bool {
		return bytes.Compare(l.files[i].largest, userKey) >= 0
	})
	return l.forwardFrom(i, func(t internalIterator) bool { return t.SeekGE(userKey) })
}

// SeekLT moves to the last entry whose user key is < userKey. It is in the
// last table whose smallest key is < userKey, or else at the end of an
// earlier one.
func (l *levelIter) SeekLT(userKey []byte) bool {
	i := sort.Search(len(l.files), func(i int) bool {
		return bytes.Compare(l.files[i].smallest, userKey) >= 0
	})
	return l.backwardFrom(i-1, func(t internalIterator) bool { return t.SeekLT(userKey) })
}

// Next moves to the following entry.
func (l *levelIter) Next() bool {
	if l.err != nil || l.iter == nil {
		return false
	}
	if l.iter.Next() {
		return true
	}
	return !l.failed() && l.forwardFrom(l.idx+1, internalIterator.First)
}

// Prev moves to the preceding entry.
func (l *levelIter) Prev() bool {
	if l.err != nil || l.iter == nil {
		return false
	}
	if l.iter.Prev() {
		return true
	}
	return !l.failed() && l.backwardFrom(l.idx-1, internalIterator.Last)
}

// forwardFrom positions table i with move, and if that finds nothing, the
// following tables with First, until one has an entry.
func (l *levelIter) forwardFrom(i int, move func(internalIterator) bool) bool {
	for ; l.err == nil && i < len(l.files); i++ {
		if !l.open(i) {
			return false
		}
		if move(l.iter) {
			return true
		}
		if l.failed() {
			return false
		}
		move = internalIterator.First
	}
	l.closeTable()
	return false
}

// backwardFrom is forwardFrom going backward, with Last.
func (l *levelIter) backwardFrom(i int, move func(internalIterator) bool) bool {
	for ; l.err == nil && i >= 0; i-- {
		if !l.open(i) {
			return false
		}
		if move(l.iter) {
			return true
		}
		if l.failed() {
			return false
		}
		move = internalIterator.Last
	}
	l.closeTable()
	return false
}

// open makes table i the open table, reusing its iterator if it is open.
func (l *levelIter) open(i int) bool {
	if l.iter != nil && l.idx == i {
		return true
	}
	l.closeTable()
	if l.err != nil {
		return false
	}
	t, err := l.files[i].open()
	if err != nil {
		l.err = err
		return false
	}
	l.iter, l.idx = t, i
	return true
}

// closeTable closes the open table's iterator, if any, keeping the first
// error.
func (l *levelIter) closeTable() {
	if l.iter == nil {
		return
	}
	if err := l.iter.Close(); err != nil && l.err == nil {
		l.err = err
	}
	l.iter = nil
}

// failed reports whether the open table's iterator stopped on an error,
// recording it.
func (l *levelIter) failed() bool {
	if err := l.iter.Error(); err != nil {
		l.err = err
		return true
	}
	return false
}

// Key returns the current entry's key, valid until the iterator moves.
func (l *levelIter) Key() base.InternalKey { return l.iter.Key() }

// Value returns the current entry's value, valid until the iterator moves.
func (l *levelIter) Value() []byte { return l.iter.Value() }

// Error returns the failure that stopped the iterator, if any.
func (l *levelIter) Error() error { return l.err }

// Close closes the open table's iterator. It returns the iterator's error.
func (l *levelIter) Close() error {
	l.closeTable()
	l.files = nil
	return l.err
}

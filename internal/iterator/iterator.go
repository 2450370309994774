package iterator

import (
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// Iterator walks internal keys in base.CompareInternal order: every version
// of every key, tombstones included. Memtable and table iterators are
// Iterators; MergingIter and LevelIter are built from them and are
// Iterators themselves, so they nest. One contract serves reads, which move
// both ways, and compactions, which call only First and Next.
//
// Positioning methods report whether the iterator is at an entry; when one
// reports false, Error says whether that was the end or a failure. Callers
// — the iterators of this package, the DB's Iterator and compaction.Run —
// never call Next or Prev on an iterator that is not at an entry
// (implementations differ there: a memtable iterator steps back in from the
// end, a table iterator does not), and they re-position with First, Last or
// a seek instead. Key and Value are called only at an entry.
type Iterator interface {
	// First moves to the smallest entry.
	First() bool
	// Last moves to the largest entry.
	Last() bool
	// SeekGE moves to the first entry ≥ (userKey, SeqNumMax, KindMax): the
	// newest version of userKey, or the first entry after it. userKey is
	// not retained.
	SeekGE(userKey []byte) bool
	// SeekLT moves to the last entry whose user key is < userKey. userKey
	// is not retained.
	SeekLT(userKey []byte) bool
	// Next moves to the following entry.
	Next() bool
	// Prev moves to the preceding entry.
	Prev() bool
	// Key returns the current entry's key, valid until the iterator moves.
	Key() base.InternalKey
	// Value returns the current entry's value, valid until the iterator
	// moves.
	Value() []byte
	// Error returns the failure that stopped the iterator, if any.
	Error() error
	// Close releases the iterator's resources.
	Close() error
}

// The sources of entries, and the iterators of this package, are
// Iterators: a change to either implementation that breaks the contract's
// method set fails to compile here.
var (
	_ Iterator = (*memtable.Iter)(nil)
	_ Iterator = (*sstable.Iterator)(nil)
	_ Iterator = (*MergingIter)(nil)
	_ Iterator = (*LevelIter)(nil)
)

// direction is the way an iterator last moved.
type direction int8

const (
	forward direction = iota
	backward
)

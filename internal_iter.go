package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// internalIterator walks internal keys in base.CompareInternal order: every
// version of every key, tombstones included. Memtable and table iterators
// are internalIterators; the merging and level iterators are built from
// them and are internalIterators themselves, so they nest.
//
// Positioning methods report whether the iterator is at an entry; when one
// reports false, Error says whether that was the end or a failure. Callers
// in this package never call Next or Prev on an iterator that is not at an
// entry (implementations differ there: a memtable iterator steps back in
// from the end, a table iterator does not), and they re-position with
// First, Last or a seek instead.
type internalIterator interface {
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

var (
	_ internalIterator = (*memtable.Iter)(nil)
	_ internalIterator = (*sstable.Iterator)(nil)
	_ internalIterator = (*mergingIter)(nil)
	_ internalIterator = (*levelIter)(nil)
)

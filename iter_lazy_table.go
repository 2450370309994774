package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/sstable"
)

// lazyTable is an L0 table as a child of an Iterator's merge when a
// restriction may leave it out (tableSkip): the table's iterator is made
// when a move first positions the child, so that a table every move of the
// Iterator leaves out — an empty short scan's, most of the time — costs
// no iterator at all. The merge never moves an excluded child, and moves
// every child it includes with a positioning move before Next or Prev.
//
// INVARIANT: it is nil until the first First, Last, SeekGE or SeekLT;
// while it is nil, Next and Prev report false and Error and Close return
// nil.
type lazyTable struct {
	r  *sstable.Reader
	it *sstable.Iterator
}

var _ iterator.Iterator = (*lazyTable)(nil)

// open returns the table's iterator, made on the first call.
func (l *lazyTable) open() *sstable.Iterator {
	if l.it == nil {
		l.it = l.r.NewIterator()
	}
	return l.it
}

func (l *lazyTable) First() bool                { return l.open().First() }
func (l *lazyTable) Last() bool                 { return l.open().Last() }
func (l *lazyTable) SeekGE(userKey []byte) bool { return l.open().SeekGE(userKey) }
func (l *lazyTable) SeekLT(userKey []byte) bool { return l.open().SeekLT(userKey) }
func (l *lazyTable) Next() bool                 { return l.it != nil && l.it.Next() }
func (l *lazyTable) Prev() bool                 { return l.it != nil && l.it.Prev() }
func (l *lazyTable) Key() base.InternalKey      { return l.it.Key() }
func (l *lazyTable) Value() []byte              { return l.it.Value() }

func (l *lazyTable) Error() error {
	if l.it == nil {
		return nil
	}
	return l.it.Error()
}

// Close closes the table's iterator, if one was made.
func (l *lazyTable) Close() error {
	if l.it == nil {
		return nil
	}
	err := l.it.Close()
	l.it = nil
	return err
}

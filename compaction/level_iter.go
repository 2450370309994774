package compaction

import (
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// levelIter concatenates the tables of a sorted run (a level's tables in key
// order, which do not overlap) into one iterator, opening each table only
// when the previous one is done and closing it then. A compaction of a
// deep level may read dozens of next-level tables: this keeps one open at a
// time and one child in the merge instead of dozens.
type levelIter struct {
	files []*manifest.FileMetadata
	open  func(*manifest.FileMetadata) (Iterator, error)
	next  int      // index in files of the table to open next
	cur   Iterator // the open table, nil before the first and after the last
	err   error
}

func newLevelIter(files []*manifest.FileMetadata, open func(*manifest.FileMetadata) (Iterator, error)) *levelIter {
	return &levelIter{files: files, open: open}
}

// First opens the first table with an entry.
func (l *levelIter) First() bool {
	if l.closeCur(); l.err != nil {
		return false
	}
	l.next = 0
	return l.advance()
}

// Next moves to the next entry of the open table, or to the first entry of
// the next table with one.
func (l *levelIter) Next() bool {
	if l.cur == nil || l.err != nil {
		return false
	}
	if l.cur.Next() {
		return true
	}
	if l.err = l.cur.Error(); l.err != nil {
		return false
	}
	return l.advance()
}

// advance closes the open table and opens the following ones until one has
// an entry.
func (l *levelIter) advance() bool {
	for {
		if l.closeCur(); l.err != nil || l.next == len(l.files) {
			return false
		}
		it, err := l.open(l.files[l.next])
		l.next++
		if err != nil {
			l.err = err
			return false
		}
		l.cur = it
		if it.First() {
			return true
		}
		if l.err = it.Error(); l.err != nil {
			return false
		}
	}
}

// closeCur closes the open table, keeping the first error.
func (l *levelIter) closeCur() {
	if l.cur == nil {
		return
	}
	if err := l.cur.Close(); l.err == nil {
		l.err = err
	}
	l.cur = nil
}

func (l *levelIter) Key() base.InternalKey { return l.cur.Key() }

func (l *levelIter) Value() []byte { return l.cur.Value() }

func (l *levelIter) Error() error { return l.err }

// Close closes the open table and returns the iterator's error.
func (l *levelIter) Close() error {
	l.closeCur()
	return l.err
}

package iterator

import (
	"bytes"
	"sort"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Opener opens an iterator over the entries of table i of a level: i
// indexes the files given to NewLevelIter or Init. The LevelIter closes
// what Open returns; its Close releases whatever the opening took (a
// reference, a file handle). It is an interface, as Admitter is, so that a
// DB Iterator's level, which already has the tables at hand, opens them
// with no closure (and no allocation) per level.
type Opener interface {
	Open(i int) (Iterator, error)
}

// OpenFunc is an Opener that calls the function.
type OpenFunc func(i int) (Iterator, error)

// Open returns f(i).
func (f OpenFunc) Open(i int) (Iterator, error) { return f(i) }

// LevelIter walks the tables of one sorted run — a level L1+ of a version,
// or the input tables of such a level in a compaction — as one Iterator,
// opening at most one table at a time, and only when a move reaches it: a
// seek binary-searches the tables' key bounds, and Next (Prev) moves on to
// the following (preceding) table at the end (start) of one. A table is
// closed as soon as the iterator leaves it or runs off the level. So a
// level of any number of tables is one child of a MergingIter and costs one
// open table, whether a DB scan reads it or a compaction of a deep level
// reads dozens of its tables.
//
// Only the manifest's metadata is needed to find a table: the user keys of
// its Smallest and Largest bound it. How to open one — through the DB's
// table cache, or compaction.Env.Open — is the caller's OpenFunc.
//
// INVARIANT: files are sorted and do not overlap: every entry of files[i]
// sorts before every entry of files[i+1], so files[i].Largest.UserKey ≤
// files[i+1].Smallest.UserKey (equal only if a key's versions are split
// between the two tables), and each table's entries lie within its
// metadata's bounds. The level is then the concatenation of its tables.
// First and Next alone (a compaction's walk) rely on the order only.
//
// Restrict narrows a LevelIter, for a while, to a key range and to the
// tables an Admitter admits: the tables of a level a prefix seek or a
// bounded scan need not open.
//
// A failure to open a table, or of a table's iterator, stops the iterator:
// it is exhausted from then on and Error returns the failure.
type LevelIter struct {
	level []*manifest.FileMetadata // every table of the level, as NewLevelIter took them
	files []*manifest.FileMetadata // the tables within the bounds
	skip  int                      // files[i] is table skip+i of the level: open's argument
	open  Opener
	admit Admitter // if not nil, table i of the level is opened only if admit.Admit(i); see Restrict
	idx   int      // index in files of the open table
	iter  Iterator // the open table's iterator; nil if none is open
	err   error
}

// NewLevelIter returns an unpositioned iterator over the tables files
// describes, opening table i with open(i). The tables wholly outside
// [lower, upper) (nil: unbounded) are left out: a DB Iterator with those
// bounds never needs their entries, and this keeps a bounded scan from
// opening the next table only to find it out of range. Entries of the
// tables that straddle a bound are still returned. A compaction passes nil
// bounds. files must not change while the iterator is in use.
func NewLevelIter(files []*manifest.FileMetadata, open OpenFunc, lower, upper []byte) *LevelIter {
	l := new(LevelIter)
	l.Init(files, open, lower, upper)
	return l
}

// Init makes l an unpositioned iterator over the tables files describes,
// as NewLevelIter does, in place: a DB Iterator keeps its LevelIters in
// one pooled allocation and initializes them for each new Iterator. l must
// hold no open table: it is new or closed.
func (l *LevelIter) Init(files []*manifest.FileMetadata, open Opener, lower, upper []byte) {
	*l = LevelIter{level: files, open: open}
	l.setBounds(lower, upper)
}

// setBounds keeps, of the level's tables, those not wholly outside [lower,
// upper).
func (l *LevelIter) setBounds(lower, upper []byte) {
	lo := sort.Search(len(l.level), func(i int) bool {
		return lower == nil || bytes.Compare(l.level[i].Largest.UserKey, lower) >= 0
	})
	hi := sort.Search(len(l.level), func(i int) bool {
		return upper != nil && bytes.Compare(l.level[i].Smallest.UserKey, upper) >= 0
	})
	l.files, l.skip = l.level[lo:max(lo, hi)], lo
}

// Admitter decides which tables of a level a restricted LevelIter reads:
// Admit(i) reports whether table i of the level (open's argument) may
// hold entries the caller needs. A DB Iterator's implementation asks the
// table's filter; it is an interface, not a func, so that an
// implementation kept in a struct the caller already has costs no
// allocation per LevelIter.
type Admitter interface {
	Admit(i int) bool
}

// Restrict replaces the iterator's bounds with [lower, upper) (nil:
// unbounded), keeping the tables not wholly outside them as NewLevelIter
// does, and, if admit is not nil, makes every move pass over the tables
// admit rules out (Admit(i) false, i indexing the level's tables as open's
// argument does) without opening them; Restrict(lower, upper, nil) admits
// every table again. A DB Iterator's prefix seek restricts each level to
// the prefix's key range and to the tables whose filters may hold the
// prefix: admit is asked as a move reaches a table, so a table the seek
// never reaches costs not even a filter check, and the bounds stop the
// level at the prefix's end rather than at the next table some filter
// admits. The entries of a table passed over are missing from the level's
// stream: the caller must not need them (a prefix seek shows only the
// prefix's keys, which such a table does not hold).
//
// The iterator is unpositioned until the next First, Last or seek. The
// open table, if any, stays open while it is within the new bounds: the
// next move that reaches it asks admit of it as of any table, and reuses
// it if admitted, without opening it anew — an iterator re-bounded and
// sought again and again within one table (many short scans through one
// DB Iterator) opens it once. A move that does not reach it, or a table
// admit rules out, closes it. Like the files, admit must answer the same
// for a table until the next Restrict.
func (l *LevelIter) Restrict(lower, upper []byte, admit Admitter) {
	open := l.skip + l.idx // the open table's index in the level, if one is
	l.setBounds(lower, upper)
	l.admit = admit
	if l.iter == nil {
		return
	}
	if open < l.skip || open >= l.skip+len(l.files) {
		l.closeTable()
		return
	}
	l.idx = open - l.skip
}

// First moves to the level's first entry.
func (l *LevelIter) First() bool { return l.forwardFrom(0, Iterator.First) }

// Last moves to the level's last entry.
func (l *LevelIter) Last() bool { return l.backwardFrom(len(l.files)-1, Iterator.Last) }

// SeekGE moves to the first entry ≥ (userKey, SeqNumMax, KindMax). It is in
// the first table whose largest key is ≥ userKey, or else (when the metadata
// is looser than the table) at the start of a later one.
func (l *LevelIter) SeekGE(userKey []byte) bool {
	i := sort.Search(len(l.files), func(i int) bool {
		return bytes.Compare(l.files[i].Largest.UserKey, userKey) >= 0
	})
	return l.forwardFrom(i, func(t Iterator) bool { return t.SeekGE(userKey) })
}

// SeekLT moves to the last entry whose user key is < userKey. It is in the
// last table whose smallest key is < userKey, or else at the end of an
// earlier one.
func (l *LevelIter) SeekLT(userKey []byte) bool {
	i := sort.Search(len(l.files), func(i int) bool {
		return bytes.Compare(l.files[i].Smallest.UserKey, userKey) >= 0
	})
	return l.backwardFrom(i-1, func(t Iterator) bool { return t.SeekLT(userKey) })
}

// Next moves to the following entry.
func (l *LevelIter) Next() bool {
	if l.err != nil || l.iter == nil {
		return false
	}
	if l.iter.Next() {
		return true
	}
	return !l.failed() && l.forwardFrom(l.idx+1, Iterator.First)
}

// Prev moves to the preceding entry.
func (l *LevelIter) Prev() bool {
	if l.err != nil || l.iter == nil {
		return false
	}
	if l.iter.Prev() {
		return true
	}
	return !l.failed() && l.backwardFrom(l.idx-1, Iterator.Last)
}

// forwardFrom positions table i with move, and if that finds nothing, the
// following tables with First, until one has an entry; tables admit rules
// out are passed over.
func (l *LevelIter) forwardFrom(i int, move func(Iterator) bool) bool {
	return l.walkFrom(i, +1, move, Iterator.First)
}

// backwardFrom is forwardFrom going backward, with Last.
func (l *LevelIter) backwardFrom(i int, move func(Iterator) bool) bool {
	return l.walkFrom(i, -1, move, Iterator.Last)
}

// walkFrom positions table i with move, then the tables step by step from
// it with restart, until one has an entry.
func (l *LevelIter) walkFrom(i, step int, move, restart func(Iterator) bool) bool {
	for ; l.err == nil && i >= 0 && i < len(l.files); i += step {
		if l.admit != nil && !l.admit.Admit(l.skip+i) {
			continue
		}
		if !l.openTable(i) {
			return false
		}
		if move(l.iter) {
			return true
		}
		if l.failed() {
			return false
		}
		move = restart
	}
	l.closeTable()
	return false
}

// openTable makes files[i] the open table, reusing its iterator if it is
// open.
func (l *LevelIter) openTable(i int) bool {
	if l.iter != nil && l.idx == i {
		return true
	}
	l.closeTable()
	if l.err != nil {
		return false
	}
	t, err := l.open.Open(l.skip + i)
	if err != nil {
		l.err = err
		return false
	}
	l.iter, l.idx = t, i
	return true
}

// closeTable closes the open table's iterator, if any, keeping the first
// error.
func (l *LevelIter) closeTable() {
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
func (l *LevelIter) failed() bool {
	if err := l.iter.Error(); err != nil {
		l.err = err
		return true
	}
	return false
}

// Key returns the current entry's key, valid until the iterator moves.
func (l *LevelIter) Key() base.InternalKey { return l.iter.Key() }

// Value returns the current entry's value, valid until the iterator moves.
func (l *LevelIter) Value() []byte { return l.iter.Value() }

// Error returns the failure that stopped the iterator, if any.
func (l *LevelIter) Error() error { return l.err }

// Close closes the open table's iterator and returns the iterator's error.
// The open table is all a LevelIter holds, so after a Close with no error
// it may be positioned again, opening tables anew, and must then be closed
// again.
func (l *LevelIter) Close() error {
	l.closeTable()
	return l.err
}

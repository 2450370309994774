package bloomkv

import (
	"errors"

	"github.com/bloomkv/bloomkv/internal/base"
)

// Changing an Iterator's bounds, and cloning it. Both keep the point in
// time: SetBounds reuses the iterator stack, each level iterator choosing
// anew the tables within the bounds (iterator.LevelIter.Restrict); Clone
// builds a second stack over the same read state, on which it takes a
// reference of its own.

// SetBounds replaces the iterator's bounds, as IterOptions gave them, by
// [lower, upper): nil is no bound, and an empty, non-nil upper bound shows
// nothing. The slices are copied, so the caller may change them once
// SetBounds returns. The iterator keeps its point in time, and becomes
// unpositioned, as a new Iterator is: position it with First, Last, SeekGE,
// SeekLT or SeekPrefixGE (Next and Prev report false until then). It ends
// prefix mode.
//
// SetBounds keeps the iterator stack and its read state, and each level's
// open table while it lies within the new bounds, so that a seek into that
// table opens nothing (many short scans in one region through one
// Iterator open its table once): it allocates nothing but room for the
// copied bounds, where a new Iterator builds the stack anew, from a pool
// (see iterAlloc), and its first move opens the tables it reaches anew
// (see BenchmarkIterRebound, where a SetBounds and a seek take 9
// allocations to a NewIter and a seek's 16, most of them the tables'
// iterators and blocks). A failure that stopped the iterator is not
// cleared; on a closed Iterator SetBounds does nothing.
func (it *Iterator) SetBounds(lower, upper []byte) {
	if it.iterState == nil {
		return
	}
	it.inPrefix = false
	if it.ps != nil && it.ps.mode != skipNone {
		it.ps.mode = skipNone
		it.ps.merging.Exclude(nil) // the levels are restricted below
	}
	lowerRoom, upperRoom := it.userLower, it.userUpper
	if a := it.alloc; a != nil {
		// The room a bound let go of (nil) is the pooled stack's still.
		if lowerRoom == nil {
			lowerRoom = a.lower
		}
		if upperRoom == nil {
			upperRoom = a.upper
		}
	}
	it.userLower, it.userUpper = copyBound(lowerRoom, lower), copyBound(upperRoom, upper)
	it.lower, it.upper = it.userLower, it.userUpper
	for _, l := range it.levels {
		l.Restrict(it.lower, it.upper, nil)
	}
	it.pos, it.stopped = posNone, false
}

// copyBound returns a copy of bound b in dst's storage: nil for nil, and an
// empty non-nil slice for an empty one. The iterator owns dst: no caller
// and no level iterator holds on to it.
func copyBound(dst, b []byte) []byte {
	if b == nil {
		return nil
	}
	if dst == nil {
		dst = make([]byte, 0, len(b))
	}
	return append(dst[:0], b...)
}

// Clone returns a new Iterator over the same point in time as it — the
// same memtables and tables, the same read sequence number (a snapshot's,
// if it reads one) — with its current bounds, copied, unpositioned. The
// two are independent: each has its own position and bounds, and each must
// be closed; the clone keeps what it reads alive by itself, so either may
// be closed first, and the clone works after the snapshot it reads, if any,
// is closed, as it does. It builds its own iterator stack, as NewIter
// does, over the read state it shares with it: the way to have two
// positions in one consistent view without a Snapshot.
//
// A failure that stopped it does not carry over. Clone returns ErrClosed if
// it or the DB is closed.
func (it *Iterator) Clone() (*Iterator, error) {
	if it.iterState == nil {
		return nil, ErrClosed
	}
	o := IterOptions{LowerBound: it.userLower, UpperBound: it.userUpper}
	switch {
	case it.rs != nil:
		c, err := it.db.cloneIter(it.rs, it.seq, o, it.explain, it.batch)
		if err == nil {
			c.span = it.span // a transaction's: what the clone reads is read too
			c.now = it.now   // one view: the same expiries
		}
		return c, err
	case it.clone != nil:
		return it.clone(o)
	}
	return nil, errors.New("bloomkv: this iterator cannot be cloned")
}

// cloneIter is Clone for an Iterator of DB d over rs at seq: rs gains a
// reference, which the clone's Close drops.
func (d *DB) cloneIter(rs *readState, seq base.SeqNum, o IterOptions, explain bool, batch *batchView) (*Iterator, error) {
	if err := d.checkOpen(); err != nil {
		return nil, err
	}
	// The Iterator being cloned holds a reference, so rs is alive.
	rs.refs.Add(1)
	return d.iterOver(rs, seq, o, explain, batch), nil
}

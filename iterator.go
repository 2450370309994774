package bloomkv

import (
	"bytes"
	"iter"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// IterOptions restrict the keys an Iterator shows. The zero value shows
// every key.
type IterOptions struct {
	// LowerBound, if not nil, is the smallest key shown: keys < LowerBound
	// are not (inclusive bound).
	LowerBound []byte
	// UpperBound, if not nil, is the first key not shown: only keys <
	// UpperBound are (exclusive bound). An empty, non-nil UpperBound shows
	// nothing.
	UpperBound []byte
}

// Iterator walks the keys of a DB in ascending order as of one moment —
// its creation, or that of the snapshot it reads — seeing none of the
// writes that came later. It judges expiries (PutWithTTL) by the clock at
// its creation. At each position it shows a key and its value;
// deleted keys and overwritten values are never shown.
//
// An Iterator is unpositioned when created: call First, Last, SeekGE,
// SeekLT or SeekPrefixGE. Every moving method returns what Valid would
// return afterwards.
// Next after a backward move ran off the start moves to the first key, and
// Prev after a forward move ran off the end moves to the last key; Next and
// Prev are otherwise false when the iterator is not at a key.
//
// The usual loop is
//
//	for ok := it.First(); ok; ok = it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Close(); err != nil {
//		return err // the scan may have stopped early
//	}
//
// SeekPrefixGE puts the iterator in prefix mode, where it shows only the
// keys of one prefix (Options.Prefix) and reads only the tables whose
// filters may hold it, until the next First, Last, SeekGE or SeekLT.
// A move bounded on both sides — First or Last with both bounds, SeekGE
// with an upper bound, SeekLT with a lower one — reads only the tables
// whose range filters (Options.RangeFilterBits) may hold a key of its
// range; a later move out of that range, such as Prev after SeekGE,
// first widens it to the bounds, so no key is ever missed.
//
// A failure (for example a damaged table) stops the iterator: it is not
// valid from then on, and Error and Close return the failure. Running off
// either end is not a failure.
//
// An Iterator keeps the memtables and tables it reads from alive until
// Close: close every Iterator. It is not safe for concurrent use by several
// goroutines; different Iterators may be used concurrently.
//
// Close gives the Iterator's stack — its position and buffers, the merge,
// its level iterators, the state of its table skipping, the room of its
// bounds and keys — back to a pool, from which the next NewIter takes it,
// so that building an Iterator allocates only a handle of one word. A
// closed Iterator is closed for good: every method reports it is not
// valid (or ErrClosed), whatever Iterator now uses its stack, but the keys
// and values it showed are no longer valid, as after any move; copy what
// is to be kept before Close.
//
// Below it is an iterator.MergingIter of every memtable, L0 table and level
// (DB.newIter) — and first, for an Iterator of an indexed batch, the
// batch (batch_index.go) — which yields every version of every key,
// tombstones included: nothing below hides a version. The hiding is done here:
// versions newer than the read sequence number are skipped, and of each
// user key only the newest visible version is shown, if it is a Set that
// no visible range tombstone with a newer seqnum covers and whose
// time-to-live, if it has one, had not ended when the Iterator was made
// (ttl.go); a tombstone, or a Set so covered or expired, hides the key and
// every older version of it. The range
// tombstones are those of every memtable and table of the read, held in
// memory (a table's are pinned when it opens), so asking them reads
// nothing. Past a version a range tombstone deletes, the older sources'
// entries in the rest of its range are deleted too (older places hold older
// versions: see DB.lookup), so the merge seeks those sources past the
// range rather than step through it (MergingIter.SkipForward and
// SkipBackward): a scan or seek over a deleted range of any size costs a
// seek per source, not a step per deleted version.
type Iterator struct {
	// iterState is what the Iterator moves: for an Iterator of a DB, the
	// state in its pooled stack (iterAlloc), so that NewIter allocates
	// only this handle. Close sets it to nil, so that a closed Iterator
	// never reaches the state another Iterator now uses: every method
	// checks it first.
	*iterState
}

// iterState is the state of an open Iterator.
type iterState struct {
	inner iterator.Iterator // every version of every key; owned
	seq   base.SeqNum       // versions with a larger seqnum are invisible
	// now is the clock's reading, in Unix nanoseconds, at which the
	// Iterator judges expiries (ttl.go): its creation's.
	now int64
	// onClose, if not nil, runs at Close after inner's Close, its error
	// returned if there was none before: the hook of the tests' Iterators
	// (newIterator), which a DB's Iterator, releasing rs instead, leaves nil.
	onClose func() error
	// rangeDels are the range tombstones of every memtable and table the
	// iterator reads (the non-empty lists only), each with the index of
	// its source among merging's children, in that order: a version they
	// cover with a newer seqnum the read sees is deleted, as if a
	// tombstone were its newest version. merging, when not nil, is inner
	// as the MergingIter it is, through which a move past a deleted
	// version skips the rest of the tombstone's range in the older
	// sources (MergingIter.SkipForward).
	rangeDels []sourceRangeDels
	merging   *iterator.MergingIter
	rdHit     childRangeDel // rangeDeletion's result, kept here so as not to allocate

	// lower and upper are the bounds the moves keep to: userLower and
	// userUpper, the IterOptions' bounds, narrowed to the prefix's range
	// in prefix mode (inPrefix; see SeekPrefixGE), whose state ps holds.
	// ps is nil without Options.Prefix and range filters in the version.
	lower, upper         []byte
	userLower, userUpper []byte
	inPrefix             bool
	ps                   *tableSkip
	// In prefix mode, stopped reports that the last move ran off the
	// prefix at an entry (past the prefix or a bound), whose user key
	// stopKey holds: a move back starts from it, since under the
	// extractor's contract the prefix's keys are the run of keys next to
	// it, while the range [prefix, end of prefix) may hold keys of other
	// prefixes after them.
	stopped bool
	stopKey []byte
	// blob is the value of the current key when it is separated (see
	// iter_blob.go).
	blob iterBlob
	// merged reports that the key shown is the fold of merge operands
	// (see iter_merge.go): key and value hold it, in either direction;
	// ops are the operands being folded.
	merged bool
	ops    mergeOperands

	// INVARIANT (direction): when pos is posAt and dir is forward, inner is
	// at the entry shown: the newest visible version of Key, a Set (its
	// value inline, or in a blob file: KindSetBlob) — unless merged: then
	// key and value hold the fold, and inner is past the versions folded,
	// at an entry (innerOK) or at the end (!innerOK). When
	// dir is backward, key and value hold copies of what is shown and inner
	// is before every entry of that user key: at an entry with a smaller
	// user key (innerOK) or off the start (!innerOK). Backward traversal
	// meets a key's versions oldest first, so the newest visible one is
	// known only after passing all of them, when inner has moved on.
	pos iterPos
	dir direction
	// In the forward direction key is scratch: the user key whose
	// versions findNext is passing over.
	key, value []byte
	// innerOK reports whether inner is at an entry; kept in the backward
	// direction only.
	innerOK bool
	err     error // sticky: a failure

	// levels are the stack's level iterators, which SetBounds bounds anew;
	// clone builds an Iterator over the same sources at seq (Clone) for
	// an Iterator not of a DB (a test's stack), nil where there is none
	// (see iterator_bounds.go).
	levels []*iterator.LevelIter
	clone  func(IterOptions) (*Iterator, error)
	// db and rs are, for an Iterator of a DB (iterOver), the DB and the
	// read state it reads, whose reference Close releases and which Clone
	// shares; fields rather than closures, which would cost two
	// allocations per Iterator. explain: the clone keeps a range view.
	db      *DB
	rs      *readState
	explain bool
	// batch is the indexed batch the Iterator reads over the DB, if any:
	// the first child of the merge, whose writes every read sees.
	batch *batchView
	// span, for an Iterator of an update transaction, is the key range
	// its moves have passed over, which the transaction's Commit counts
	// as read (see readForward).
	span *readSpan
	// alloc, for an Iterator of a DB, holds its stack — inner and what
	// is below it, ps, the room of levels and rangeDels — and the room of
	// its bounds and key buffers, in one pooled allocation that Close
	// returns to the pool (see iterAlloc).
	alloc *iterAlloc
}

// direction is the way an Iterator last moved.
type direction int8

const (
	forward direction = iota
	backward
)

// iterPos is where an Iterator is.
type iterPos int8

const (
	posNone   iterPos = iota // not positioned yet
	posAt                    // at a key
	posBefore                // before the first key: a backward move ran off the start
	posAfter                 // after the last key: a forward move ran off the end
)

// First moves to the first key, the smallest ≥ the lower bound. It ends
// prefix mode.
func (it *Iterator) First() bool {
	if it.iterState == nil {
		return false
	}
	it.leavePrefix()
	it.narrowRange(it.lower, it.upper)
	it.readFrom(it.lower)
	return it.readForward(it.first())
}

// first is First within the current bounds: in prefix mode, the prefix's
// first key.
func (it *Iterator) first() bool {
	if it.err != nil {
		return false
	}
	if it.lower != nil {
		return it.findNext(it.inner.SeekGE(it.lower), false)
	}
	return it.findNext(it.inner.First(), false)
}

// Last moves to the last key, the largest < the upper bound. It ends
// prefix mode.
func (it *Iterator) Last() bool {
	if it.iterState == nil {
		return false
	}
	it.leavePrefix()
	it.narrowRange(it.lower, it.upper)
	it.readTo(it.upper)
	return it.readBackward(it.last())
}

// last is Last within the current bounds: in prefix mode, the prefix's
// last key.
func (it *Iterator) last() bool {
	if it.err != nil {
		return false
	}
	if it.upper != nil {
		return it.findPrev(it.inner.SeekLT(it.upper))
	}
	return it.findPrev(it.inner.Last())
}

// SeekGE moves to the first key ≥ key (and ≥ the lower bound). It ends
// prefix mode. key is not retained.
func (it *Iterator) SeekGE(key []byte) bool {
	if it.iterState == nil || it.err != nil {
		return false
	}
	it.leavePrefix()
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.narrowRange(key, it.upper)
	it.readFrom(key)
	return it.readForward(it.findNext(it.inner.SeekGE(key), false))
}

// SeekLT moves to the last key < key (and < the upper bound). It ends
// prefix mode. key is not retained.
func (it *Iterator) SeekLT(key []byte) bool {
	if it.iterState == nil || it.err != nil {
		return false
	}
	it.leavePrefix()
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	it.narrowRange(it.lower, key)
	it.readTo(key)
	return it.readBackward(it.findPrev(it.inner.SeekLT(key)))
}

// Next moves to the following key.
func (it *Iterator) Next() bool {
	if it.iterState == nil || it.err != nil {
		return false
	}
	return it.readForward(it.next())
}

func (it *Iterator) next() bool {
	if (it.pos == posAt || it.pos == posBefore) && it.rangeTooNarrow(forward) {
		return it.nextWidened()
	}
	switch it.pos {
	case posBefore:
		if it.inPrefix && it.stopped {
			// Back into the prefix from the entry that ended the
			// backward move: the keys after it.
			it.key = append(it.key[:0], it.stopKey...)
			seek := it.stopKey
			if it.lower != nil && bytes.Compare(seek, it.lower) < 0 {
				seek = it.lower
			}
			return it.findNext(it.inner.SeekGE(seek), true)
		}
		return it.first()
	case posAt:
	default:
		return false
	}
	if it.dir == backward || it.merged {
		// inner is before the entries of the current key, which it.key
		// holds, or, past a fold, after some of them (innerOK says
		// whether at an entry): step into them, and let findNext skip
		// them.
		if it.dir == forward {
			return it.findNext(it.innerOK, true)
		}
		if it.innerOK {
			return it.findNext(it.inner.Next(), true)
		}
		return it.findNext(it.inner.First(), true)
	}
	it.key = append(it.key[:0], it.inner.Key().UserKey...)
	return it.findNext(it.inner.Next(), true)
}

// Prev moves to the preceding key.
func (it *Iterator) Prev() bool {
	if it.iterState == nil || it.err != nil {
		return false
	}
	return it.readBackward(it.prev())
}

func (it *Iterator) prev() bool {
	if (it.pos == posAt || it.pos == posAfter) && it.rangeTooNarrow(backward) {
		return it.prevWidened()
	}
	switch it.pos {
	case posAfter:
		if it.inPrefix && it.stopped {
			// Back into the prefix from the entry that ended the forward
			// move: the keys before it.
			seek := it.stopKey
			if it.upper != nil && bytes.Compare(seek, it.upper) > 0 {
				seek = it.upper
			}
			return it.findPrev(it.inner.SeekLT(seek))
		}
		return it.last()
	case posAt:
	default:
		return false
	}
	if it.dir == backward {
		return it.findPrev(it.innerOK)
	}
	if it.merged { // forward
		// inner is past versions of the key it folded: back before them.
		return it.findPrev(it.inner.SeekLT(it.key))
	}
	// inner is at the newest visible version of the current key, so the
	// entries before it are invisible versions of that key, which findPrev
	// passes over, then smaller keys.
	return it.findPrev(it.inner.Prev())
}

// findNext moves forward from inner's position (ok: inner is at an entry)
// to the first entry that shows a key: the newest visible version of a user
// key, if it is a Set, below the upper bound; in prefix mode the first
// entry without the prefix ends the move too. With skipping, the versions of
// user key it.key are passed over: it is the key shown last.
func (it *Iterator) findNext(ok, skipping bool) bool {
	it.dir, it.merged = forward, false
	for ok {
		k := it.inner.Key()
		// Passing over it.key comes before the bound and prefix checks:
		// it is within the bounds, or, when Next comes back into the
		// prefix, the key outside it where a backward move stopped.
		if skipping && bytes.Compare(k.UserKey, it.key) <= 0 {
			ok = it.inner.Next()
			continue
		}
		if it.upper != nil && bytes.Compare(k.UserKey, it.upper) >= 0 || it.outsidePrefix(k.UserKey) {
			break
		}
		if it.hidden(k.SeqNum()) {
			ok = it.inner.Next()
			continue
		}
		rd := it.rangeDeletion(k)
		if k.Kind() == base.KindMerge && rd == nil {
			return it.foldForward()
		}
		if !it.sets(k) || rd != nil {
			if it.err != nil {
				it.pos = posNone
				return false
			}
			// A tombstone, or a version a range tombstone deletes: the key
			// is deleted; hide its older versions (a range tombstone
			// newer than this version is newer than them too).
			it.key = append(it.key[:0], k.UserKey...)
			skipping = true
			ok = it.inner.Next()
			if ok && rd != nil && it.merging != nil {
				// The older sources' entries in the rest of the range are
				// deleted too: seek past them.
				ok = it.merging.SkipForward(rd.frag.End, rd.child+1)
			}
			continue
		}
		it.pos = posAt
		return true
	}
	return it.stop(ok, posAfter)
}

// findPrev moves backward from inner's position (ok: inner is at an entry)
// to the preceding key shown — at or above the lower bound; in prefix mode
// the first entry without the prefix ends the move too — keeping the last
// visible version met of the user key being passed until the user key
// changes: that version is the newest. It leaves inner as the direction
// invariant says.
func (it *Iterator) findPrev(ok bool) bool {
	it.dir, it.merged = backward, false
	found := false // it.key and it.value hold a visible Set of the key being passed
	started := false
	hasBase := false // it.value holds a Set's value below the operands it.ops
	for ok {
		k := it.inner.Key()
		if it.lower != nil && bytes.Compare(k.UserKey, it.lower) < 0 || it.outsidePrefix(k.UserKey) {
			break
		}
		if it.hidden(k.SeqNum()) {
			ok = it.inner.Prev()
			continue
		}
		if found && bytes.Compare(k.UserKey, it.key) < 0 {
			break
		}
		if !started || !bytes.Equal(k.UserKey, it.key) {
			// The first visible version of a user key, its oldest.
			started, hasBase = true, false
			it.key = append(it.key[:0], k.UserKey...)
			it.ops.reset()
		}
		rd := it.rangeDeletion(k)
		switch {
		case rd != nil || k.Kind() == base.KindDelete:
			found, hasBase = false, false
			it.ops.reset()
		case k.Kind() == base.KindMerge:
			found = true
			it.ops.add(it.inner.Value())
		case !it.sets(k):
			// A version whose time-to-live has ended: a tombstone.
			if it.err != nil {
				it.pos = posNone
				return false
			}
			found, hasBase = false, false
			it.ops.reset()
		default:
			found, hasBase = true, true
			it.ops.reset()
			var v []byte
			v, it.blob.backward = withoutExpiry(k.Kind(), it.inner.Value())
			it.value = append(it.value[:0], v...)
		}
		ok = it.inner.Prev()
		if ok && rd != nil && it.merging != nil {
			// The older sources' entries in the range before k are
			// deleted too; newer versions of k, which a backward move
			// meets after this one, come from newer sources and stay.
			ok = it.merging.SkipBackward(rd.frag.Start, rd.child+1)
		}
	}
	it.innerOK = ok
	// On a failure the found version may not be the newest: a newer one
	// may be what failed to load.
	if found && (ok || it.inner.Error() == nil) {
		if it.ops.len() > 0 && !it.foldBackward(hasBase) {
			it.pos = posNone
			return false
		}
		it.pos = posAt
		return true
	}
	return it.stop(ok, posBefore)
}

// sourceRangeDels are the range tombstones of one source of an
// Iterator's merge: a memtable, an L0 table, or the tables of a level
// (which do not overlap, so their lists, end to end, are one).
type sourceRangeDels struct {
	list  rangedel.List
	child int         // the source's index among the merge's children
	seq   base.SeqNum // the read's seqnum for them: base.SeqNumMax for an indexed batch's
}

// childRangeDel is a range tombstone that deletes a version an Iterator
// met: its fragment and the merge child it comes from, whose older
// children the Iterator moves past the fragment.
type childRangeDel struct {
	frag  *rangedel.Fragment
	child int
}

// rangeDeletion returns a range tombstone the read sees that covers k and
// is newer than it, from the newest source that has one; nil if none
// deletes k. The newest source is the one whose older sources are the
// most, so the one a skip past the range moves the most children of.
func (it *Iterator) rangeDeletion(k base.InternalKey) *childRangeDel {
	for i := range it.rangeDels {
		s := &it.rangeDels[i]
		if f := s.list.Find(k.UserKey); f != nil && f.Visible(s.seq) > k.SeqNum() {
			it.rdHit = childRangeDel{frag: f, child: s.child}
			return &it.rdHit
		}
	}
	return nil
}

// hidden reports whether a version of seqnum s is invisible to the
// read: newer than its seqnum, and not a write of the indexed batch it
// reads, if any (see batch_index.go).
func (it *iterState) hidden(s base.SeqNum) bool {
	return s > it.seq && (it.batch == nil || s < batchSeqBit)
}

// stop ends a move that found no key: at pos if inner just ran out or went
// past a bound (ok), or on inner's error.
func (it *Iterator) stop(ok bool, pos iterPos) bool {
	it.pos = pos
	// In prefix mode, remember the entry the move stopped at (past a
	// bound, or outside the prefix): the prefix's keys lie on this side of
	// it, where a move back starts.
	if it.stopped = ok && it.inPrefix; it.stopped {
		it.stopKey = append(it.stopKey[:0], it.inner.Key().UserKey...)
	}
	if !ok {
		if err := it.inner.Error(); err != nil {
			it.err, it.pos = err, posNone
		}
	}
	return false
}

// Valid reports whether the iterator is at a key.
func (it *Iterator) Valid() bool { return it.iterState != nil && it.err == nil && it.pos == posAt }

// Key returns the current key, or nil if the iterator is not Valid: nil
// means exactly that, so the empty key is an empty, non-nil slice. The
// slice is valid only until the iterator next moves or closes, and must not
// be modified; copy it to keep it.
func (it *Iterator) Key() []byte {
	switch {
	case !it.Valid():
		return nil
	case it.dir == forward && !it.merged:
		return nonNil(it.inner.Key().UserKey)
	}
	return nonNil(it.key)
}

// Value returns the current value, or nil if the iterator is not Valid,
// with the same lifetime as Key's result; an empty value is an empty,
// non-nil slice. A value kept in a blob file is read here, when asked
// for, not by the move: a scan that only looks at keys reads no blob. If
// that read fails, Value returns nil and the iterator stops with the
// error (Valid false, Error and Close report it).
func (it *Iterator) Value() []byte {
	switch {
	case !it.Valid():
		return nil
	case it.merged:
		return nonNil(it.value)
	case it.dir == forward:
		v, blob := withoutExpiry(it.inner.Key().Kind(), it.inner.Value())
		if blob {
			return it.blobValue(v, true)
		}
		return nonNil(v)
	case it.blob.backward:
		return it.blobValue(it.value, false)
	}
	return nonNil(it.value)
}

// nonNil returns b, or an empty non-nil slice for a nil b, where nil means
// absent: an Iterator's Key and Value when it is not Valid, MultiGet's
// value of a key not found. Whether an empty key or value arrives as nil
// depends on where it came from — a memtable, a table block, or the
// buffers an Iterator's backward direction copies into, which stay nil
// when nothing is appended to them while nil — so the callers settle it
// here, for every direction and source at once.
func nonNil(b []byte) []byte {
	if b == nil {
		return emptyBytes
	}
	return b
}

// emptyBytes is the empty slice nonNil returns. It has no capacity, so
// nothing can be written through it, and every iterator can share it.
var emptyBytes = []byte{}

// Error returns the failure that stopped the iterator, ErrClosed after
// Close, or nil.
func (it *Iterator) Error() error {
	if it.iterState == nil {
		return ErrClosed
	}
	return it.err
}

// Close releases the iterator and what it kept alive: the memtables and
// tables it reads and its current blocks, which are outside the Go heap
// and are freed only by Close (an iterator never closed holds them until
// the process exits, even after the DB is closed). It returns the
// failure that stopped the iterator, if any, or an error from releasing;
// closing again returns ErrClosed. Every method of a closed Iterator
// reports it is not valid.
func (it *Iterator) Close() error {
	if it.iterState == nil {
		return ErrClosed
	}
	err := it.err
	if cerr := it.inner.Close(); err == nil {
		err = cerr
	}
	if it.onClose != nil {
		if cerr := it.onClose(); err == nil {
			err = cerr
		}
	}
	if it.rs != nil {
		it.db.releaseReadState(it.rs)
	}
	if a := it.alloc; a != nil {
		a.release(it.iterState)
	}
	it.iterState = nil
	return err
}

// All returns a sequence over the keys and values from the first key on,
// for use in a range loop:
//
//	for k, v := range it.All() {
//		use(k, v)
//	}
//	if err := it.Close(); err != nil {
//		return err // the scan may have stopped early
//	}
//
// Each range over the sequence starts again at First. The sequence ends at
// the last key or at the first failure, which it does not yield: check
// Close or Error after the loop. k and v are valid only until the loop body
// returns; copy them to keep them. After a break the iterator stays at the
// last key yielded, so Next continues from there.
func (it *Iterator) All() iter.Seq2[[]byte, []byte] {
	return func(yield func(k, v []byte) bool) {
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			if v == nil {
				return // its blob's read failed: Error says why
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// NewIter returns an iterator over the DB as of now, within opts' bounds
// (nil: all keys). It sees a consistent point in time: writes committed
// after it was created are invisible to it. Close it when done.
func (d *DB) NewIter(opts *IterOptions) (*Iterator, error) {
	return d.newIter(liveSeq, opts)
}

// Scan calls fn with each key/value pair of [lower, upper) in key order, as
// of now; nil bounds are open. The slices are valid only during the call.
// It stops at the first error, fn's or its own (a read that failed), and
// returns it, so that no error goes unreported; nil once every pair in the
// range has been seen. For more control — backward, seeks, a loop that
// breaks — use NewIter.
func (d *DB) Scan(lower, upper []byte, fn func(key, value []byte) error) error {
	it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for k, v := range it.All() {
		if err = fn(k, v); err != nil {
			break
		}
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return err
}

// newIter is the Iterator behind DB.NewIter, Snapshot.NewIter and
// DB.ExplainPrefix: it pins the current read state and builds the
// iterator stack over it at seq (liveSeq: the state's own) with iterOver.
func (d *DB) newIter(seq base.SeqNum, opts *IterOptions) (*Iterator, error) {
	var o IterOptions
	if opts != nil {
		o = *opts
	}
	rs, seq, err := d.acquireReadStateAt(seq)
	if err != nil {
		return nil, err
	}
	return d.iterOver(rs, seq, o, false, nil), nil
}

// iterOver builds the iterator stack of newIter over rs, whose reference
// the Iterator takes over, at seq, in the pooled iterAlloc the Iterator
// keeps until Close: one child per memtable and L0 table, one LevelIter per
// deeper level holding tables, and before them all, for an Iterator of an
// indexed batch, one over batch, the newest source.
//
// It keeps a view of the stack that can leave tables out (tableSkip) under
// Options.Prefix, for SeekPrefixGE, and when the version holds a table
// with a range filter, or explain asks for one, for range scans.
func (d *DB) iterOver(rs *readState, seq base.SeqNum, o IterOptions, explain bool, batch *batchView) *Iterator {
	v := rs.version
	a := iterAllocs.Get().(*iterAlloc)
	it := &Iterator{&a.state}
	it.seq, it.db, it.rs, it.explain, it.alloc, it.batch = seq, d, rs, explain, a, batch
	it.now = d.nowNanos()
	it.userLower, it.userUpper = copyBound(a.lower, o.LowerBound), copyBound(a.upper, o.UpperBound)
	it.lower, it.upper = it.userLower, it.userUpper
	it.key, it.value, it.stopKey = a.key, a.value, a.stopKey
	children, rangeDels := a.children, a.rangeDels
	addRangeDels := func(l rangedel.List) {
		if len(l) > 0 {
			rangeDels = append(rangeDels, sourceRangeDels{list: l, child: len(children), seq: seq})
		}
	}
	if batch != nil {
		if len(batch.rangeDels) > 0 {
			rangeDels = append(rangeDels, sourceRangeDels{list: batch.rangeDels, seq: base.SeqNumMax})
		}
		children = append(children, &batchIter{items: batch.items})
	}
	// A mutable memtable empty now holds nothing the read sees: whatever
	// is added later has a newer seqnum than the read's, since a write is
	// visible only once applied (see commit.go). So it is left out of the
	// merge — after a flush, reads of a DB not written to since cost it
	// nothing — but for explain, whose account lists it.
	if !rs.mem.Empty() || explain {
		addRangeDels(rs.mem.RangeDels())
		children = append(children, a.memIter(0, rs.mem))
	}
	for i, m := range rs.imm {
		addRangeDels(m.RangeDels())
		children = append(children, a.memIter(i+1, m))
	}
	memtables := len(children)
	ranges := v.rangeFiltered > 0 || explain
	// With range filters the L0 tables are lazyTables: an empty short
	// scan leaves most of them out.
	var lazy []lazyTable
	if ranges {
		lazy = a.lazyTables(len(v.tables[0]))
	}
	for i, t := range v.tables[0] {
		addRangeDels(t.reader.RangeDels())
		if lazy != nil {
			lazy[i].r = t.reader
			children = append(children, &lazy[i])
		} else {
			children = append(children, t.reader.NewIterator())
		}
	}
	if d.opts.Prefix != nil || ranges {
		it.ps = &a.skip
		it.ps.init(d, memtables, v.tables[0], ranges, a.skipLevels[:])
	}
	levelRangeDels := v.levelRangeDels()
	it.levels = a.levelIters[:0]
	for level := 1; level < len(v.tables); level++ {
		tables := v.tables[level]
		if len(tables) == 0 {
			continue
		}
		l := &a.levels[len(it.levels)]
		l.tables = tables
		l.iter.Init(v.Levels[level], l, o.LowerBound, o.UpperBound)
		addRangeDels(levelRangeDels[level])
		children = append(children, &l.iter)
		it.levels = append(it.levels, &l.iter)
		if it.ps != nil {
			it.ps.addLevel(level, tables, &l.iter)
		}
	}
	if it.ps != nil {
		it.ps.setChildren(len(children), &a.merging)
	}
	a.children, a.rangeDels = children, rangeDels
	a.merging.Init(children)
	it.inner, it.merging, it.rangeDels = &a.merging, &a.merging, rangeDels
	return it
}

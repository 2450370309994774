package bloomkv

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// Errors of transactions; test for them with errors.Is.
var (
	// ErrConflict is returned by Transaction.Commit (and DB.Update) when
	// another commit, after the transaction's snapshot, wrote a key the
	// transaction read by Get or a key in a range one of its iterators
	// passed over. The transaction wrote nothing; it may be run again.
	ErrConflict = errors.New("bloomkv: transaction conflict")
	// ErrTxnTooBig is wrapped by the error of a transaction's write, read
	// or Commit past Options.MaxTransactionSize. The write or read was
	// not done; the transaction is still open, and may be committed as
	// it is.
	ErrTxnTooBig = errors.New("bloomkv: transaction too big")
	// ErrTxnReadOnly is returned by the writes of a read-only transaction
	// (NewTransaction(false), View).
	ErrTxnReadOnly = errors.New("bloomkv: write in a read-only transaction")
)

// Transaction is a set of reads and writes with snapshot isolation,
// committed atomically, in the style of Badger's: every read sees the
// DB as of the transaction's start (its snapshot) under the
// transaction's own writes, and Commit fails with ErrConflict, writing
// nothing, if any commit after the snapshot wrote a key the transaction
// read by Get, or a key in a range one of its iterators passed over. So
// committed update transactions are serializable, in the order of their
// commits, for point reads and for scanned ranges alike. A transaction
// that only writes never conflicts. docs/transactions.md says precisely
// what conflicts.
//
// Reads go through the transaction's indexed batch: Get and NewIter see
// its writes over its snapshot, in the DB's own read path. Commit hands
// the batch to the commit pipeline like any Apply, so a committed
// transaction is one batch in the WAL: all of it survives a crash or
// none.
//
// A Transaction is not safe for concurrent use. Commit or Discard every
// Transaction: an open one keeps its snapshot's versions from being
// compacted away, and what commits write since it began recorded.
type Transaction struct {
	db     *DB
	update bool
	batch  *Batch // indexed, reading at snap
	snap   *Snapshot
	done   bool

	// The room of batch, its index, and the commit's request and reads:
	// a transaction is one allocation, not five.
	batchRoom Batch
	indexRoom batchIndex
	req       commitRequest
	reads     txnReads

	// What the transaction read, for its Commit's check.
	hashes map[uint64]struct{}
	keys   [][]byte
	spans  []*readSpan
	size   int64 // the read keys' bytes, as MaxTransactionSize counts them
}

// txnReadOverhead is what MaxTransactionSize counts for a read beyond its
// key's bytes.
const txnReadOverhead = 32

// NewTransaction begins a transaction: an update transaction, which may
// write and must be committed or discarded, or, with update false, a
// read-only one, whose writes fail with ErrTxnReadOnly, to be
// discarded. Its reads see the DB as it is now.
func (d *DB) NewTransaction(update bool) (*Transaction, error) {
	var (
		s   *Snapshot
		err error
	)
	if update {
		if d.opts.ReadOnly {
			return nil, ErrReadOnly
		}
		s, err = d.oracle.begin(d)
	} else {
		s, err = d.NewSnapshot()
	}
	if err != nil {
		return nil, err
	}
	t := &Transaction{db: d, update: update, snap: s}
	t.batchRoom.initIndexed(&t.indexRoom, s, false)
	t.batch = &t.batchRoom
	return t, nil
}

// Update runs fn in a new update transaction and commits it, durably
// (WriteOptions nil), if fn returns nil; it returns fn's error, or
// Commit's — ErrConflict if another commit wrote what fn read, in which
// case nothing was written and fn may be run again.
func (d *DB) Update(fn func(txn *Transaction) error) error {
	txn, err := d.NewTransaction(true)
	if err != nil {
		return err
	}
	defer txn.Discard()
	if err := fn(txn); err != nil {
		return err
	}
	return txn.Commit(nil)
}

// View runs fn in a new read-only transaction: every read fn makes sees
// the DB at one point in time.
func (d *DB) View(fn func(txn *Transaction) error) error {
	txn, err := d.NewTransaction(false)
	if err != nil {
		return err
	}
	defer txn.Discard()
	return fn(txn)
}

func (t *Transaction) check() error {
	if t.done {
		return ErrClosed
	}
	return nil
}

// Get returns the value of key as the transaction sees it: its own last
// write of key, or else the value in its snapshot, which an update
// transaction records as read — also where its own merge operands of key
// are folded over that value.
func (t *Transaction) Get(key []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return t.batch.indexed().getOver(t.snap, key, func() error {
		if !t.update {
			return nil
		}
		if err := t.grow(int64(len(key)) + txnReadOverhead); err != nil {
			return err
		}
		h := xxhash.Sum64(key)
		if _, ok := t.hashes[h]; !ok {
			if t.hashes == nil {
				t.hashes = make(map[uint64]struct{})
			}
			t.hashes[h] = struct{}{}
			t.keys = append(t.keys, bytes.Clone(key))
		}
		return nil
	})
}

// NewIter returns an iterator over the transaction's writes over its
// snapshot, as they are now: writes the transaction makes later are not
// shown. For an update transaction, every key range the iterator passes
// over counts as read, from the first key or bound a move starts at to
// the last it reaches: the span of all its moves, bounds included, so
// that a key written anywhere in it after the snapshot makes Commit
// fail. Close it before Commit.
func (t *Transaction) NewIter(opts *IterOptions) (*Iterator, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	it, err := t.batch.NewIter(opts)
	if err != nil || !t.update {
		return it, err
	}
	if err := t.grow(txnReadOverhead); err != nil {
		it.Close()
		return nil, err
	}
	it.span = new(readSpan)
	t.spans = append(t.spans, it.span)
	return it, nil
}

// Set writes value under key in the transaction.
func (t *Transaction) Set(key, value []byte) error {
	return t.write(key, value, (*Batch).Set)
}

// Delete deletes key in the transaction.
func (t *Transaction) Delete(key []byte) error {
	return t.write(key, nil, func(b *Batch, key, _ []byte) error { return b.Delete(key) })
}

// DeleteRange deletes every key in [start, end) in the transaction.
func (t *Transaction) DeleteRange(start, end []byte) error {
	return t.write(start, end, (*Batch).DeleteRange)
}

// write adds one write of key and value (a range's end, for
// DeleteRange) to the batch with add, within MaxTransactionSize, which it
// checks first against the most the write can grow the batch by.
func (t *Transaction) write(key, value []byte, add func(b *Batch, key, value []byte) error) error {
	if err := t.check(); err != nil {
		return err
	}
	if !t.update {
		return ErrTxnReadOnly
	}
	if err := t.fits(int64(maxEntryOverhead + len(key) + len(value))); err != nil {
		return err
	}
	return add(t.batch, key, value)
}

// fits checks that n more bytes keep the transaction within
// MaxTransactionSize.
func (t *Transaction) fits(n int64) error {
	total := int64(t.batch.Size()) + t.size + n
	if limit := t.db.opts.MaxTransactionSize; total > limit {
		return fmt.Errorf("%w: %d bytes of writes and reads, more than MaxTransactionSize (%d)", ErrTxnTooBig, total, limit)
	}
	return nil
}

// grow is fits for n more bytes of reads, which it counts.
func (t *Transaction) grow(n int64) error {
	if err := t.fits(n); err != nil {
		return err
	}
	t.size += n
	return nil
}

// Commit commits the transaction's writes atomically, as Apply does with
// opts, if no commit since its snapshot wrote what it read; else it
// returns ErrConflict and writes nothing. A transaction with no writes
// commits nothing and never conflicts. Either way the transaction is
// done: later calls return ErrClosed.
func (t *Transaction) Commit(opts *WriteOptions) error {
	if err := t.check(); err != nil {
		return err
	}
	defer t.Discard()
	if t.batch.Empty() {
		return nil
	}
	reads := &t.reads
	*reads = txnReads{seq: t.snap.seq, hashes: t.hashes, keys: t.keys}
	var spanBytes int64
	for _, s := range t.spans {
		if ks, ok := s.keySpan(); ok {
			reads.spans = append(reads.spans, ks)
			spanBytes += int64(len(ks.lo) + len(ks.hi))
		}
	}
	if err := t.grow(spanBytes); err != nil {
		return err
	}
	t.req = commitRequest{txn: reads}
	return t.db.apply(t.batch, &t.req, opts)
}

// Discard ends the transaction without committing it, releasing its
// snapshot. It may be called after Commit, and more than once.
func (t *Transaction) Discard() {
	if t.done {
		return
	}
	t.done = true
	t.snap.Close()
	if t.update {
		t.db.oracle.end(t.snap.seq)
	}
}

// readSpan is the key range an update transaction's Iterator has passed
// over: the smallest range holding every key and bound its moves started
// at or reached — [lo, hi], or [lo, ∞) with hiInf — once set. A span is
// one range, so that it costs two keys whatever the moves; an iterator
// that jumps around reads, by this count, what lies between too. The
// smallest key, the empty one, stands for "no lower bound"; loInf marks
// a span whose only point so far is "no upper bound".
type readSpan struct {
	set, loInf, hiInf bool
	lo, hi            []byte
}

// include widens s to hold key k.
func (s *readSpan) include(k []byte) {
	switch {
	case !s.set:
		s.set, s.lo, s.hi = true, append([]byte{}, k...), append([]byte{}, k...)
		return
	case s.loInf:
		s.loInf, s.lo, s.hi = false, append(s.lo[:0], k...), append(s.hi[:0], k...)
		return
	case bytes.Compare(k, s.lo) < 0:
		s.lo = append(s.lo[:0], k...)
	}
	if !s.hiInf && bytes.Compare(k, s.hi) > 0 {
		s.hi = append(s.hi[:0], k...)
	}
}

// low widens s to hold k, a key or lower bound; nil: the smallest key.
func (s *readSpan) low(k []byte) { s.include(k) }

// high widens s to hold k, a key or upper bound; nil: no end.
func (s *readSpan) high(k []byte) {
	if k != nil {
		s.include(k)
		return
	}
	if !s.set {
		s.set, s.loInf = true, true
	}
	s.hiInf = true
}

// keySpan returns s as the oracle compares it, and false if s holds no
// key (it is unset, or holds only "no end").
func (s *readSpan) keySpan() (keySpan, bool) {
	if !s.set || s.loInf {
		return keySpan{}, false
	}
	ks := keySpan{lo: s.lo, hi: s.hi, inclusive: true}
	if s.hiInf {
		ks.hi = nil
	}
	return ks, true
}

// readFrom records, for an Iterator of an update transaction, the key or
// bound a move starts at: nil is the lowest key for a forward move.
func (it *Iterator) readFrom(k []byte) {
	if it.span != nil {
		it.span.low(k)
	}
}

// readTo records the key or bound a backward move starts at: nil is no
// bound.
func (it *Iterator) readTo(k []byte) {
	if it.span != nil {
		it.span.high(k)
	}
}

// readForward records, for an Iterator of an update transaction, where a
// forward move ended: at the key it shows (ok), or past the upper bound
// (none: every key after). It returns ok.
func (it *Iterator) readForward(ok bool) bool {
	if it.span != nil {
		if ok {
			it.span.high(it.Key())
		} else {
			it.span.high(it.upper)
		}
	}
	return ok
}

// readBackward is readForward for a backward move: at the key it shows,
// or past the lower bound.
func (it *Iterator) readBackward(ok bool) bool {
	if it.span != nil {
		if ok {
			it.span.low(it.Key())
		} else {
			it.span.low(it.lower)
		}
	}
	return ok
}

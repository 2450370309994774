package bloomkv

import (
	"bytes"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/cespare/xxhash/v2"
)

// The oracle detects the conflicts of optimistic transactions, as
// Badger's does: a transaction reads at the sequence number of its
// snapshot, and its commit fails with ErrConflict if a key it read, or a
// key in a range it iterated, was written by a commit with a newer
// sequence number.
//
// The check runs in the commit pipeline's leader (DB.applyGroup), for
// each request of the group in order, before the group is given sequence
// numbers: the pipeline already puts every commit in one order, so the
// check adds no second serialization point — a transaction is checked
// against exactly the commits before it in that order, those of earlier
// groups (records) and the requests of its own group before it (the
// group's pending record). A request that conflicts is left out of the
// group: it gets no sequence number and writes nothing.
//
// What a commit wrote is recorded only while an update transaction is
// open (live), and kept only as long as one open transaction's snapshot
// is older than it: once the leader has published a group, it records
// the group's writes, and drops every record at or below the oldest
// open transaction's sequence number. With no transaction open a group
// costs two atomic loads. Records are bounded by
// Options.TxnConflictMemory: past it the oldest are dropped, and a
// transaction whose snapshot is older than the newest dropped record
// (horizon) can no longer be checked, so its commit fails with
// ErrConflict if it read anything.
//
// INVARIANT: every group published with sequence numbers above an open
// update transaction's snapshot is recorded, or the horizon covers it.
// begin registers the transaction (live, then the snapshot) under mu,
// and the leader loads live after it publishes the group's sequence
// number; Go's atomics being sequentially consistent, either the leader
// sees the transaction, or the transaction's snapshot includes the
// group. Pruning reads the open snapshots under mu, so it never misses
// one registered before it, and one registered after sees every record
// it drops.
type oracle struct {
	live atomic.Int64 // open update transactions
	// refused counts the commits check refused with ErrConflict
	// (Metrics.TxnConflicts).
	refused atomic.Uint64

	mu   sync.Mutex
	open map[base.SeqNum]int // open update transactions by snapshot seqnum; guarded by mu

	// Owned by the commit pipeline's leader.
	records []*writeRecord // in seqnum order
	bytes   int64          // records' memory, as writeRecord.size counts it
	horizon base.SeqNum    // the newest seqnum of a record dropped for memory
	limit   int64          // Options.TxnConflictMemory
}

// writeRecord is what one group of commits wrote: its point writes' keys
// and their hashes, and its range deletions.
type writeRecord struct {
	seq       base.SeqNum // the group's last seqnum
	keys      [][]byte
	hashes    []uint64
	rangeDels []keySpan // [start, end) each
	size      int64
	buf       []byte // the room of keys
}

// keySpan is a key range [lo, hi) — or with inclusive, [lo, hi]; a nil
// hi is unbounded.
type keySpan struct {
	lo, hi    []byte
	inclusive bool
}

// holds reports whether key is in s.
func (s keySpan) holds(key []byte) bool {
	if bytes.Compare(key, s.lo) < 0 {
		return false
	}
	if s.hi == nil {
		return true
	}
	c := bytes.Compare(key, s.hi)
	return c < 0 || c == 0 && s.inclusive
}

// overlaps reports whether s and the range [start, end) share a key.
func (s keySpan) overlaps(start, end []byte) bool {
	if bytes.Compare(s.lo, end) >= 0 {
		return false
	}
	if s.hi == nil {
		return true
	}
	c := bytes.Compare(s.hi, start)
	return c > 0 || c == 0 && s.inclusive
}

// recordOverhead is what a recorded key costs beyond its bytes: its slice
// header and hash.
const recordOverhead = 32

func (r *writeRecord) add(b *Batch) {
	r.keys, r.hashes = slices.Grow(r.keys, b.Len()), slices.Grow(r.hashes, b.Len())
	batchrepr.Decode(b.data, func(e batchrepr.Entry) {
		if e.Kind == base.KindRangeDelete {
			r.rangeDels = append(r.rangeDels, keySpan{lo: bytes.Clone(e.Key), hi: bytes.Clone(e.Value)})
			r.size += int64(len(e.Key)+len(e.Value)) + recordOverhead
			return
		}
		// The keys share one buffer; a key appended never moves (a
		// full buffer is replaced, not grown), so earlier keys stay put.
		if cap(r.buf)-len(r.buf) < len(e.Key) {
			r.buf = make([]byte, 0, max(len(e.Key), 2*cap(r.buf), b.Size()))
		}
		r.buf = append(r.buf, e.Key...)
		r.keys = append(r.keys, r.buf[len(r.buf)-len(e.Key):len(r.buf):len(r.buf)])
		r.hashes = append(r.hashes, xxhash.Sum64(e.Key))
		r.size += int64(len(e.Key)) + recordOverhead
	})
}

// txnReads is what a committing transaction read: its snapshot's seqnum,
// the keys it read by Get (with their hashes), and the key ranges its
// iterators passed over.
type txnReads struct {
	seq    base.SeqNum
	hashes map[uint64]struct{}
	keys   [][]byte
	spans  []keySpan
}

func (t *txnReads) empty() bool { return len(t.keys) == 0 && len(t.spans) == 0 }

// conflicts reports whether r wrote something t read.
func (r *writeRecord) conflicts(t *txnReads) bool {
	for i, h := range r.hashes {
		if _, ok := t.hashes[h]; ok {
			return true // or a collision of hashes: a conflict reported in excess
		}
		for _, s := range t.spans {
			if s.holds(r.keys[i]) {
				return true
			}
		}
	}
	for _, rd := range r.rangeDels {
		for _, k := range t.keys {
			if rd.holds(k) {
				return true
			}
		}
		for _, s := range t.spans {
			if s.overlaps(rd.lo, rd.hi) {
				return true
			}
		}
	}
	return false
}

// begin registers an update transaction and returns the snapshot it
// reads.
func (o *oracle) begin(d *DB) (*Snapshot, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.live.Add(1)
	s, err := d.NewSnapshot()
	if err != nil {
		o.live.Add(-1)
		return nil, err
	}
	if o.open == nil {
		o.open = make(map[base.SeqNum]int)
	}
	o.open[s.seq]++
	return s, nil
}

// end unregisters an update transaction that read at seq.
func (o *oracle) end(seq base.SeqNum) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open[seq]--; o.open[seq] == 0 {
		delete(o.open, seq)
	}
	o.live.Add(-1)
}

// check is the leader's conflict check of group, before the group gets
// sequence numbers: each transaction that read something a commit before
// it wrote gets ErrConflict. It returns the group's pending record, the
// writes of the requests that remain, or nil when no update transaction
// is open (and so none is in the group).
//
// A group of one request needs no pending record: nothing in it comes
// after the request.
func (o *oracle) check(group []*commitRequest) *writeRecord {
	if o.live.Load() == 0 {
		return nil
	}
	var rec *writeRecord
	if len(group) > 1 {
		rec = &writeRecord{}
	}
	for _, r := range group {
		if r.batch == nil {
			continue
		}
		if t := r.txn; t != nil && !t.empty() && o.conflicts(t, rec) {
			r.err = ErrConflict
			o.refused.Add(1)
			continue
		}
		if rec != nil {
			rec.add(r.batch)
		}
	}
	return rec
}

// conflicts reports whether a commit recorded after t's snapshot, or one
// before it in its group (pending), wrote what t read.
func (o *oracle) conflicts(t *txnReads, pending *writeRecord) bool {
	if t.seq < o.horizon {
		return true // the records it needs were dropped
	}
	i := sort.Search(len(o.records), func(i int) bool { return o.records[i].seq > t.seq })
	for _, r := range o.records[i:] {
		if r.conflicts(t) {
			return true
		}
	}
	return pending != nil && pending.conflicts(t)
}

// committed records what group wrote, published up to last: rec, the
// record check made, or, if an update transaction began since, one made
// now. Then it drops the records no open transaction needs.
//
// The group's own transactions are open until their commits return, but
// need no record of it: only a transaction open besides them does
// (live counts more than they are).
func (o *oracle) committed(group []*commitRequest, last base.SeqNum, rec *writeRecord) {
	own := 0
	for _, r := range group {
		if r.txn != nil {
			own++
		}
	}
	if o.live.Load() <= int64(own) {
		o.dropAll()
		return
	}
	if rec == nil {
		rec = &writeRecord{}
		for _, r := range group {
			if r.writes() {
				rec.add(r.batch)
			}
		}
	}
	rec.seq = last
	if len(rec.keys) > 0 || len(rec.rangeDels) > 0 {
		o.records = append(o.records, rec)
		o.bytes += rec.size
	}
	o.mu.Lock()
	oldest, any := base.SeqNumMax, len(o.open) > 0
	for s := range o.open {
		oldest = min(oldest, s)
	}
	o.mu.Unlock()
	if !any {
		o.dropAll()
		return
	}
	n := 0
	for n < len(o.records) && (o.records[n].seq <= oldest || o.bytes > o.limit) {
		if o.records[n].seq > oldest {
			o.horizon = o.records[n].seq
		}
		o.bytes -= o.records[n].size
		n++
	}
	o.records = slices.Delete(o.records, 0, n)
}

func (o *oracle) dropAll() {
	if len(o.records) > 0 {
		clear(o.records)
		o.records, o.bytes = o.records[:0], 0
	}
}

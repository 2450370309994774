package bloomkv

import (
	"sync"

	"github.com/bloomkv/bloomkv/internal/base"
)

// The commit pipeline turns concurrent writes into one ordered history.
//
// Writers queue their batches. The first writer to find no leader becomes
// the leader: it takes every queued batch as one group, fails the
// transactions' batches that conflict with a commit before them (the
// oracle, oracle.go), assigns the rest consecutive sequence numbers,
// appends them to the WAL's buffer (written, then fsynced once, if any of
// them asked for Sync), inserts them into the memtable, publishes the
// group's last sequence number, records what the group wrote if an open
// transaction needs it, and wakes the group.
// If more batches queued meanwhile, it hands leadership to the first of
// them and returns; that writer leads the next group. So under load, many
// writers share each WAL write and fsync (group commit), and no writer
// commits other writers' batches for more than one group.
//
// INVARIANT: at most one goroutine leads at a time, so the WAL writer and
// the mutable memtable have a single writer, and sequence numbers are
// assigned, logged, applied and published in one order.
//
// INVARIANT: a write is visible (its seqnum ≤ the published seqnum) only
// after it is in the memtable, and acknowledged only after its WAL write —
// and its fsync, if it asked for one — succeeded.
type commitPipeline struct {
	mu      sync.Mutex
	queue   []*commitRequest
	leading bool
}

type commitRequest struct {
	batch *Batch // nil for a flush request
	// txn, for a transaction's commit, is what it read: the leader fails
	// the request with ErrConflict, leaving it out of the group, if a
	// commit before it wrote any of it (see oracle.go).
	txn   *txnReads
	sync  bool
	flush bool // rotate the memtable after this group (DB.Flush)
	// leader is set when the request must lead (see wake). The three
	// flags share a word, so that with txn a request still fits in 64
	// bytes, the allocator's class it had without.
	leader bool
	err    error
	// wake receives when done, or when this request must lead: exactly
	// once for a request that waits, never for one that leads at once, so
	// it is empty again when commit returns and may be reused (singleWrite).
	wake chan struct{}

	// cut, if set, is run by the leader once the group holding the request
	// is applied, before the next group begins: a point in the history
	// between two groups, at which DB.Checkpoint takes its copy. The
	// request ends its group, so that no request queued after it is before
	// the cut. Its error becomes the request's.
	cut func() error
}

// maxGroupBytes bounds a group, so that one leader's WAL write and the
// latency it adds to its followers stay bounded.
const maxGroupBytes = 4 << 20

// commit makes req's batch part of the history and returns once it is
// visible (or failed). apply writes and applies one group; it runs with no
// lock held and never concurrently with itself.
func (p *commitPipeline) commit(req *commitRequest, apply func(group []*commitRequest)) error {
	if req.wake == nil {
		req.wake = make(chan struct{}, 1)
	}
	p.mu.Lock()
	p.queue = append(p.queue, req)
	if p.leading {
		p.mu.Unlock()
		<-req.wake
		if !req.leader {
			return req.err
		}
		p.mu.Lock()
	}
	p.leading = true
	group := p.takeGroup()
	p.mu.Unlock()

	apply(group)
	for _, r := range group {
		if r.cut != nil && r.err == nil {
			r.err = r.cut()
		}
	}

	p.mu.Lock()
	if len(p.queue) > 0 {
		next := p.queue[0]
		next.leader = true
		next.wake <- struct{}{}
	} else {
		p.leading = false
	}
	p.mu.Unlock()
	for _, r := range group {
		if r != req {
			r.wake <- struct{}{}
		}
	}
	return req.err
}

// takeGroup removes the next group from the queue: every queued request up
// to maxGroupBytes (and at least one), up to the first with a cut. p.mu
// must be held.
func (p *commitPipeline) takeGroup() []*commitRequest {
	n, size := 0, 0
	for n < len(p.queue) && (n == 0 || size+p.queue[n].size() <= maxGroupBytes) {
		size += p.queue[n].size()
		n++
		if p.queue[n-1].cut != nil {
			break // the cut falls right after it: see commitRequest.cut
		}
	}
	group := p.queue[:n:n]
	p.queue = append([]*commitRequest(nil), p.queue[n:]...)
	return group
}

// writes reports whether r has a batch to write: one, and no conflict.
func (r *commitRequest) writes() bool { return r.batch != nil && r.err == nil }

func (r *commitRequest) size() int {
	if r.batch == nil {
		return 0
	}
	return r.batch.Size()
}

// groupSeqNums stamps each batch of group with its first sequence number,
// starting after last, and returns the group's last sequence number.
func groupSeqNums(group []*commitRequest, last base.SeqNum) base.SeqNum {
	for _, r := range group {
		if r.writes() {
			r.batch.setSeqNum(last + 1)
			last += base.SeqNum(r.batch.Len())
		}
	}
	return last
}

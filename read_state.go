package bloomkv

import (
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

// readState is what one read looks at: the memtables and the version as
// they were when it started, referenced so that nothing it needs goes away.
type readState struct {
	mem     *memtable.Memtable
	imm     []*memtable.Memtable // newest first
	version *version
	// seq is the published sequence number when the state was taken, under
	// d.mu: every write up to it is in the memtables or the version. A read
	// of "now" must use it, not a seqnum loaded before: in between, newer
	// writes could be flushed and compacted, dropping the versions that
	// seqnum sees, since no snapshot protects them.
	seq base.SeqNum
}

// liveSeq, passed to get or newIter, reads at the state's own seq: "now".
const liveSeq = base.SeqNumMax

// testHookAcquireReadState, if set, runs at the start of acquireReadState
// (tests only).
var testHookAcquireReadState func()

// acquireReadState returns the read state now; release it with
// releaseReadState.
func (d *DB) acquireReadState() (*readState, error) {
	if testHookAcquireReadState != nil {
		testHookAcquireReadState()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	rs := &readState{mem: d.mu.mem, version: d.refVersionLocked(), seq: base.SeqNum(d.visibleSeq.Load())}
	rs.mem.Ref()
	for _, imm := range slices.Backward(d.mu.imm) {
		imm.mem.Ref()
		rs.imm = append(rs.imm, imm.mem)
	}
	return rs, nil
}

// acquireReadStateAt is acquireReadState for a read at seq, which it
// returns resolved: liveSeq becomes the state's own.
func (d *DB) acquireReadStateAt(seq base.SeqNum) (*readState, base.SeqNum, error) {
	rs, err := d.acquireReadState()
	if err == nil && seq == liveSeq {
		seq = rs.seq
	}
	return rs, seq, err
}

func (d *DB) releaseReadState(rs *readState) {
	d.mu.Lock()
	d.unrefVersionLocked(rs.version)
	d.mu.Unlock()
	rs.mem.Unref()
	for _, m := range rs.imm {
		m.Unref()
	}
}

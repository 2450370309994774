package bloomkv

import (
	"slices"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

// readState is what reads look at: the memtables and the version as they
// were when it was made, referenced so that nothing it needs goes away.
// The DB keeps the current one (d.mu.readState), replaced whenever a
// memtable is sealed or flushed or a version installed, and every read
// takes a reference on it: a Get costs one lock and one atomic add, not a
// new state with a reference on every memtable (a missing-key Get spent a
// sixth of its time building and dropping one).
type readState struct {
	mem     *memtable.Memtable
	imm     []*memtable.Memtable // newest first
	version *version
	// refs counts the DB's reference, while the state is current, and
	// every reader's. The last to drop it drops the state's references on
	// the memtables and the version.
	refs atomic.Int32
}

// liveSeq, passed to get or newIter, reads at the state's own seq: "now".
const liveSeq = base.SeqNumMax

// testHookAcquireReadState, if set, runs at the start of acquireReadState
// (tests only).
var testHookAcquireReadState func()

// acquireReadState returns the read state now, with a reference to drop
// with releaseReadState, and the published sequence number, taken under
// d.mu with the state: every write up to it is in the state's memtables or
// version. A read of "now" must use it, not a seqnum loaded before: in
// between, newer writes could be flushed and compacted, dropping the
// versions that seqnum sees, since no snapshot protects them.
func (d *DB) acquireReadState() (*readState, base.SeqNum, error) {
	if testHookAcquireReadState != nil {
		testHookAcquireReadState()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, 0, ErrClosed
	}
	rs := d.mu.readState
	rs.refs.Add(1)
	return rs, base.SeqNum(d.visibleSeq.Load()), nil
}

// acquireReadStateAt is acquireReadState for a read at seq, which it
// returns resolved: liveSeq becomes the state's published seqnum.
func (d *DB) acquireReadStateAt(seq base.SeqNum) (*readState, base.SeqNum, error) {
	rs, now, err := d.acquireReadState()
	if seq == liveSeq {
		seq = now
	}
	return rs, seq, err
}

// releaseReadState drops a reference on rs.
func (d *DB) releaseReadState(rs *readState) {
	if rs.refs.Add(-1) > 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rs.releaseLocked(d)
}

// releaseLocked drops the references of rs, which has none left. d.mu is
// held.
func (rs *readState) releaseLocked(d *DB) {
	d.unrefVersionLocked(rs.version)
	rs.mem.Unref()
	for _, m := range rs.imm {
		m.Unref()
	}
}

// updateReadStateLocked makes a new read state of the memtables and the
// version now, after a change to either, and drops the DB's reference on
// the one it replaces. d.mu is held.
//
// INVARIANT: d.mu.mem and d.mu.current are set: Open sets the memtable
// before it installs the first version, and neither is unset before Close.
func (d *DB) updateReadStateLocked() {
	rs := &readState{mem: d.mu.mem, version: d.refVersionLocked()}
	rs.refs.Store(1) // the DB's
	rs.mem.Ref()
	for _, imm := range slices.Backward(d.mu.imm) {
		imm.mem.Ref()
		rs.imm = append(rs.imm, imm.mem)
	}
	old := d.mu.readState
	d.mu.readState = rs
	if old != nil {
		d.dropReadStateLocked(old)
	}
}

// dropReadStateLocked drops a reference on rs with d.mu held.
func (d *DB) dropReadStateLocked(rs *readState) {
	if rs.refs.Add(-1) == 0 {
		rs.releaseLocked(d)
	}
}

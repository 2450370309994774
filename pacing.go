package bloomkv

import (
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Write pacing: how writes slow down when L0 compactions fall behind.
//
// Past L0SlowdownTrigger tables writes are admitted at a rate, not held by
// fixed sleeps: a token bucket whose rate is what L0 compactions have been
// draining, scaled by how far L0 is from its stop trigger,
//
//	rate(n) = drain · 2·(stop − n)/(stop − slowdown)   for slowdown ≤ n < stop
//
// so writes run at twice the drain rate at the slowdown trigger, at the
// drain rate halfway to the stop trigger — about where L0 settles under a
// sustained load — and ever slower towards it. drain is in bytes of writes
// per second of wall time: for each L0 compaction, the writes its input
// tables hold (their size times the WAL bytes per byte flushed) over the
// time from when it became due — L0 at its trigger, the previous L0
// compaction done — to its end, waits for a slot or for a conflicting
// compaction included; an exponentially weighted average over the L0
// compactions, intra-L0 ones (L0's newest tables merged into one L0 table,
// see package compaction) among them: they take as many tables off L0's
// count, less one.
//
// The bucket charges every write group its bytes, but a group waits only
// once the writes are paceQuantum or more ahead of the rate, and then
// sleeps until they are not: the delay the rate asks for is paid in
// quanta, each by one group, while the groups between go on at once.
// Paid by every group as it fell due, as bloomkv did before, the same
// delay put from microseconds to a millisecond on each of hundreds of
// thousands of writes, every one that met the scheduling noise of a busy
// machine a write in the tail, and the waits, too short to sleep (the Go
// runtime's timers sleep at least about a millisecond here), spun on a
// processor the flush and compactions were waiting for. A millisecond's
// sleep for every group while L0 is past the trigger, as LevelDB does,
// makes the millisecond the tail of every write; a quantum makes it the
// tail of one write in as many as fit the rate in a quantum. Each wait is
// at most a second (maxPaceWait).
//
// The levels below L0 do not pace writes. A backlog there (an overfull
// base level) makes L0 compactions dearer, which the drain rate follows;
// pacing writes by it as well, from where the levels hold twice their
// targets, measured a slower fill (10,000,000 random writes of 116 bytes
// at the peers runner's settings: 94 s against 78 s, with 8.2 bytes
// rewritten per byte written against 6.6), since an overfull base level is
// also cheaper to compact into the level below it.
//
// The measured effect is in the README (TestSustainedWrites' long form,
// and 10M-key fills beside Pebble) and docs/bench (the quanta: a 100M-key
// fill in a 1 GiB cap); TestPacerRate, TestPacerAdmit and TestWritePacing
// check the mechanism.

// pacer is the token bucket, and the L0 drain it follows. In d.mu.
type pacer struct {
	// drainRate is the L0 drain in bytes of writes per second, 0 until
	// the first L0 compaction.
	drainRate float64
	// dueSince is when the next L0 compaction became due: the first
	// version since the last L0 compaction with L0 at its trigger; zero
	// while L0 is below it.
	dueSince time.Time
	// next is when the bucket next has room: a write group of size bytes
	// advances it by size/rate.
	next time.Time
}

// Pacing constants.
const (
	// initialDrainRate stands in for drainRate until an L0 compaction
	// has been measured, in memtables a second: a cautious guess. L0
	// rarely passes the slowdown trigger before the first L0 compaction
	// ends.
	initialDrainRate = 4.0
	// drainWeight is the weight of each new L0 compaction in drainRate.
	drainWeight = 0.3
	// paceBurst is the credit a write may start with: writes below the
	// rate never wait (save a group whose bytes alone take longer at the
	// rate than the burst and a quantum), and a group that follows a
	// pause is not charged for it.
	paceBurst = time.Millisecond
	// paceQuantum is the least delay a write group waits for, and so
	// the most the writes may be ahead of the rate before one waits. In
	// the first 300 s of a 100M-key fill in a 1 GiB memory cgroup (the
	// peers runner's), about 4,700 groups waited, where paying the delay
	// as it fell due made some 380,000 wait, 27,000 of them for 100 µs
	// or more.
	paceQuantum = 5 * time.Millisecond
	// maxPaceWait bounds one group's wait: a huge batch at a slow rate
	// would otherwise hold its writer (and Close, which waits for it)
	// for as long as its bytes take. The bucket still charges all of it,
	// so the groups after it wait the rest.
	maxPaceWait = time.Second
)

// drained records an L0 compaction that took in tables holding writeBytes
// of writes, elapsed after it became due.
func (p *pacer) drained(writeBytes float64, elapsed time.Duration) {
	if writeBytes <= 0 || elapsed <= 0 {
		return
	}
	rate := writeBytes / elapsed.Seconds()
	if p.drainRate == 0 {
		p.drainRate = rate
	} else {
		p.drainRate += drainWeight * (rate - p.drainRate)
	}
}

// rate returns the writes' rate in bytes per second with l0 tables in L0,
// or 0 for no limit (below the slowdown trigger).
func (p *pacer) rate(l0 int, o *Options) float64 {
	if l0 < o.L0SlowdownTrigger || o.L0StopTrigger <= o.L0SlowdownTrigger {
		return 0
	}
	drain := p.drainRate
	if drain == 0 {
		drain = initialDrainRate * float64(o.MemtableSize)
	}
	span := float64(o.L0StopTrigger - o.L0SlowdownTrigger)
	return drain * 2 * float64(o.L0StopTrigger-l0) / span
}

// admit charges a write group of size bytes at now to the bucket at rate
// (> 0) bytes per second, and returns how long it must wait before it
// goes on: 0 while the writes are less than paceQuantum ahead of the rate,
// else until they are not, at most maxPaceWait.
func (p *pacer) admit(now time.Time, size int64, rate float64) time.Duration {
	if p.next.Before(now.Add(-paceBurst)) {
		p.next = now.Add(-paceBurst)
	}
	p.next = p.next.Add(time.Duration(float64(size) / rate * float64(time.Second)))
	ahead := p.next.Sub(now)
	if ahead < paceQuantum {
		return 0
	}
	return min(ahead, maxPaceWait)
}

// l0DueLocked notes that an L0 compaction is due from now, if L0 is at its
// trigger and none was due: called for every new current version. d.mu is
// held.
func (d *DB) l0DueLocked(v *manifest.Version, now time.Time) {
	if len(v.Levels[0]) >= d.opts.L0CompactionTrigger && d.mu.pacer.dueSince.IsZero() {
		d.mu.pacer.dueSince = now
	}
}

// l0CompactedLocked records an L0 compaction of inputs, begun at start and
// installed at end, in the pacer's drain. d.mu is held.
func (d *DB) l0CompactedLocked(inputs []*manifest.FileMetadata, start, end time.Time) {
	due := d.mu.pacer.dueSince
	if due.IsZero() || due.After(start) {
		due = start // due since before Open, or an L0 picked below its trigger
	}
	// The writes a byte of L0 table holds: the WAL bytes per byte
	// flushed, over the DB's life so far.
	perByte := 1.0
	if flushed := d.counters.compactions.bytesFlushed.Load(); flushed > 0 {
		perByte = float64(d.counters.walBytes.Load()) / float64(flushed)
	}
	d.mu.pacer.drained(float64(bytesOf(inputs))*perByte, end.Sub(due))
	d.mu.pacer.dueSince = time.Time{}
	d.l0DueLocked(d.mu.current.Version, end) // still at the trigger: due again
}

// paceLocked makes the write group of size bytes wait its turn under the
// pacer, with d.mu released while it waits. It reports whether the group
// waited. d.mu is held.
func (d *DB) paceLocked(size int64) bool {
	rate := d.mu.pacer.rate(len(d.mu.current.Levels[0]), &d.opts)
	if rate <= 0 {
		// No limit, and no clock read on the write path: the bucket
		// starts empty when a limit comes back.
		d.mu.pacer.next = time.Time{}
		return false
	}
	wait := d.mu.pacer.admit(time.Now(), size, rate)
	if wait <= 0 {
		return false
	}
	d.mu.Unlock()
	start := time.Now()
	time.Sleep(wait)
	d.counters.delays.Add(1)
	d.counters.delayNanos.Add(uint64(time.Since(start)))
	d.mu.Lock()
	return true
}

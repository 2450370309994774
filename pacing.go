package bloomkv

import (
	"runtime"
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
// per second: the L0 tables the recent L0 compactions took per second of
// their running (an average over them), times MemtableSize, the writes an
// L0 table holds. Each write group waits until its bytes fit the rate: a
// few microseconds for a small write, spread over every write, where a
// millisecond's sleep for every group while L0 is past the trigger (as
// LevelDB and bloomkv did) made the millisecond the tail of every write.
// Waits under a millisecond spin, yielding the processor to the flush and
// compactions (the Go runtime's timers sleep at least about a millisecond
// here); longer ones sleep.
//
// The measured effect is in the README (10M-key fillrandom beside Pebble);
// TestWritePacing checks the mechanism.

// pacer is the token bucket, in d.mu.
type pacer struct {
	// drainRate is the L0 drain, in L0 tables per second of L0
	// compaction: an exponentially weighted average over the L0
	// compactions, 0 until the first.
	drainRate float64
	// next is when the bucket next has room: a write group of size bytes
	// advances it by size/rate.
	next time.Time
}

// Pacing constants.
const (
	// initialDrainRate stands in for drainRate until an L0 compaction
	// has been measured: a cautious guess, an L0 compaction of four
	// tables in a second. L0 rarely passes the slowdown trigger before
	// the first L0 compaction ends.
	initialDrainRate = 4.0
	// drainWeight is the weight of each new L0 compaction in drainRate.
	drainWeight = 0.3
	// paceBurst is the credit a write may start with: writes below the
	// rate never wait (save a group whose bytes alone take longer at the
	// rate), and a group that follows a pause is not charged for it.
	paceBurst = time.Millisecond
	// maxSpin is the longest wait spent spinning rather than sleeping.
	maxSpin = time.Millisecond
)

// drained records an L0 compaction of inputs that took elapsed.
func (p *pacer) drained(inputs []*manifest.FileMetadata, elapsed time.Duration) {
	if len(inputs) == 0 || elapsed <= 0 {
		return
	}
	rate := float64(len(inputs)) / elapsed.Seconds()
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
		drain = initialDrainRate
	}
	span := float64(o.L0StopTrigger - o.L0SlowdownTrigger)
	return drain * float64(o.MemtableSize) * 2 * float64(o.L0StopTrigger-l0) / span
}

// admit charges a write group of size bytes at now with l0 tables in L0,
// and returns how long it must wait before it goes on.
func (p *pacer) admit(now time.Time, size int64, l0 int, o *Options) time.Duration {
	rate := p.rate(l0, o)
	if rate <= 0 {
		p.next = time.Time{}
		return 0
	}
	if p.next.Before(now.Add(-paceBurst)) {
		p.next = now.Add(-paceBurst)
	}
	p.next = p.next.Add(time.Duration(float64(size) / rate * float64(time.Second)))
	return max(p.next.Sub(now), 0)
}

// paceLocked makes the write group of size bytes wait its turn under the
// pacer, with d.mu released while it waits. It reports whether the group
// waited. d.mu is held.
func (d *DB) paceLocked(size int64) bool {
	wait := d.mu.pacer.admit(time.Now(), size, len(d.mu.current.Levels[0]), &d.opts)
	if wait <= 0 {
		return false
	}
	d.mu.Unlock()
	start := time.Now()
	deadline := start.Add(wait)
	if wait > maxSpin {
		time.Sleep(wait)
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
	d.counters.delays.Add(1)
	d.counters.delayNanos.Add(uint64(time.Since(start)))
	d.mu.Lock()
	return true
}

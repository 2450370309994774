package bloomkv

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestPacerRate checks the pacer's rate against its formula,
// drain·2·(stop − n)/(stop − slowdown).
func TestPacerRate(t *testing.T) {
	o := &Options{MemtableSize: 1 << 20, L0SlowdownTrigger: 20, L0StopTrigger: 36}
	const mib = 1 << 20
	for _, tc := range []struct {
		drain float64 // bytes per second
		l0    int
		want  float64 // bytes per second; 0: no limit
	}{
		{10 * mib, 0, 0},
		{10 * mib, 19, 0},
		{10 * mib, 20, 20 * mib},            // twice the drain at the slowdown trigger
		{10 * mib, 28, 10 * mib},            // the drain halfway
		{10 * mib, 35, 10 * mib * 2.0 / 16}, // an eighth of it a table short of the stop
		{0, 28, initialDrainRate * mib},     // before any L0 compaction: memtables a second
	} {
		p := pacer{drainRate: tc.drain}
		if got := p.rate(tc.l0, o); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("drain %v, L0 %d: rate %v, want %v", tc.drain, tc.l0, got, tc.want)
		}
	}
	// Slowdown and stop at one count: no pacing, only the stall.
	flat := &Options{MemtableSize: 1 << 20, L0SlowdownTrigger: 4, L0StopTrigger: 4}
	if got := (&pacer{drainRate: 1}).rate(4, flat); got != 0 {
		t.Errorf("slowdown = stop: rate %v, want 0", got)
	}
}

// TestPacerAdmit checks the token bucket: writes that come faster than the
// rate go on at once until they are a quantum ahead of it, then one waits
// until they are not; writes slower than it, each within the burst, never
// wait; the drain rate is the running average of the L0 compactions'.
func TestPacerAdmit(t *testing.T) {
	o := &Options{MemtableSize: 1 << 20, L0SlowdownTrigger: 20, L0StopTrigger: 36}
	p := pacer{drainRate: 1 << 20}
	rate := p.rate(28, o) // 1 MiB/s
	now := time.Unix(1000, 0)
	const size = 64 << 10
	for i := range 40 {
		// All at once: the writes are ahead of the rate by their bytes'
		// time less the burst.
		want := time.Duration(float64((i+1)*size)/rate*1e9) - paceBurst
		if want < paceQuantum {
			want = 0
		}
		want = min(want, maxPaceWait)
		if got := p.admit(now, size, rate); (got - want).Abs() > time.Microsecond {
			t.Fatalf("write %d at once: wait %v, want %v", i, got, want)
		}
	}
	// One huge group waits at most maxPaceWait; the groups after it pay
	// for the rest.
	q0 := pacer{drainRate: 1 << 20}
	if got := q0.admit(now, 10<<20, rate); got != maxPaceWait {
		t.Errorf("10 MiB at 1 MiB/s: wait %v, want the cap %v", got, maxPaceWait)
	}
	if got := q0.admit(now.Add(maxPaceWait), 1, rate); got != maxPaceWait {
		t.Errorf("the group after it: wait %v, want the cap %v (9 s still owed)", got, maxPaceWait)
	}
	// At half the rate, on an empty bucket, no write waits that fits the
	// burst.
	p = pacer{drainRate: 1 << 20}
	const small = 512 // 0.5 ms at 1 MiB/s
	interval := time.Duration(2 * small / rate * 1e9)
	for i := range 40 {
		if got := p.admit(now.Add(time.Duration(i)*interval), small, rate); got != 0 {
			t.Fatalf("write %d at half the rate: wait %v", i, got)
		}
	}
	// At twice the rate, each write taking the time it waits: every wait
	// is at least a quantum, and the writes end their bytes' time at the
	// rate, less the burst, after the first began — at most a quantum
	// sooner (still owed), or a write's spacing later.
	p = pacer{drainRate: 1 << 20}
	const n = 4000
	clock, waits := now, 0
	for range n {
		wait := p.admit(clock, small, rate)
		if wait != 0 && wait < paceQuantum {
			t.Fatalf("a wait of %v, under the quantum %v", wait, paceQuantum)
		}
		if wait != 0 {
			waits++
		}
		clock = clock.Add(wait + interval/4)
	}
	atRate := time.Duration(n*small/rate*1e9) - paceBurst
	if elapsed := clock.Sub(now); elapsed < atRate-paceQuantum || elapsed > atRate+interval/4 {
		t.Errorf("%d writes at twice the rate took %v, want %v less at most a quantum", n, elapsed, atRate)
	}
	// Half of the writes' time, less the burst, is owed: each wait pays
	// a quantum of it and less than one write's time more, and less
	// than a quantum may be owed at the end.
	w := small / rate
	owed := float64(n)*w/2 - paceBurst.Seconds()
	quantum := paceQuantum.Seconds()
	if most, least := owed/quantum, (owed-quantum)/(quantum+w); float64(waits) > most || float64(waits) < least {
		t.Errorf("%d writes at twice the rate: %d waited, want %.1f to %.1f", n, waits, least, most)
	}

	var q pacer
	q.drained(4e6, time.Second) // 4 MB/s
	q.drained(4e6, 500*time.Millisecond)
	want := 4e6 + drainWeight*(8e6-4e6)
	if math.Abs(q.drainRate-want) > 1e-3 {
		t.Errorf("drain rate %v, want %v", q.drainRate, want)
	}
	q.drained(0, time.Second) // no tables, no sample
	if math.Abs(q.drainRate-want) > 1e-3 {
		t.Errorf("an empty compaction moved the drain rate to %v", q.drainRate)
	}
}

// TestWritePacing holds compactions off while writes push L0 past its
// slowdown trigger, and checks that the DB paces the writes — for at least
// the time the pacer's rate asks of their bytes — without stalling them for
// L0 while it is below its stop trigger.
func TestWritePacing(t *testing.T) {
	var rec eventRecorder
	o := &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, L0CompactionTrigger: 1, L0SlowdownTrigger: 2, L0StopTrigger: 40,
		EventListener: rec.listener()}
	d, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.mu.Lock()
	d.mu.manualCompacting = true // the background compactions hold off
	d.mu.Unlock()
	value := make([]byte, 1000)
	put := func(i int) {
		if err := d.Put([]byte(fmt.Sprintf("k%06d", i)), value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Below the slowdown trigger: no write is delayed.
	i := 0
	for range o.L0SlowdownTrigger - 1 {
		for range 20 {
			put(i)
			i++
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if m := d.Metrics(); m.WriteDelays != 0 || m.Levels[0].Tables != o.L0SlowdownTrigger-1 {
		t.Fatalf("%d writes delayed with %d L0 tables, below the slowdown trigger", m.WriteDelays, m.Levels[0].Tables)
	}
	for ; d.Metrics().Levels[0].Tables < o.L0SlowdownTrigger; i++ {
		put(i)
	}
	// Past it, with no L0 compaction measured, the rate is
	// 2·(stop − n)/(stop − slowdown) of initialDrainRate memtables a
	// second: at most twice that.
	const paced = 200
	// The delays counted from here: the write that saw L0 reach the
	// trigger, in the loop above, may itself have been delayed.
	before := d.Metrics()
	start := time.Now()
	for range paced {
		put(i)
		i++
	}
	elapsed := time.Since(start)
	m := d.Metrics()
	l0 := m.Levels[0].Tables
	// A write may wait for a memtable's flush (the memtables full); none
	// waits for L0.
	if l0 >= o.L0StopTrigger || rec.count("stall-begin L0") != 0 {
		t.Fatalf("L0 %d tables, %d L0 stalls: the writes stalled", l0, rec.count("stall-begin L0"))
	}
	maxRate := initialDrainRate * float64(o.MemtableSize) * 2 // at the slowdown trigger
	bytes := float64(paced * (len(value) + 7))
	// The writes go on until they are a quantum ahead of the rate: the
	// last quantum may be owed still.
	atLeast := time.Duration(bytes/maxRate*1e9) - paceBurst - paceQuantum
	// The bucket spaces the writes' starts, so the time the writes take
	// themselves counts toward their spacing: the delays add up to less
	// than atLeast by that time (under -race and a loaded machine, by
	// more than the burst), and it is the elapsed time that the rate
	// bounds.
	delays, delayed := m.WriteDelays-before.WriteDelays, m.WriteDelayDuration-before.WriteDelayDuration
	if delays == 0 || delays > paced || delayed > elapsed || elapsed < atLeast {
		t.Fatalf("%d writes past the slowdown trigger: %d delayed for %v in %v; want at least %v",
			paced, delays, delayed, elapsed, atLeast)
	}
	t.Logf("%d writes: %d delayed for %v (at least %v); L0 %d tables", paced, delays, delayed, atLeast, l0)
}

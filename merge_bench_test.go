package bloomkv_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
)

var (
	counterOps  = flag.Int("counter.ops", 1_000_000, "BenchmarkCounter: increments per run")
	counterKeys = flag.Int("counter.keys", 10_000, "BenchmarkCounter: counters they are spread over")
)

// counterRun is what one run of the counter workload measured.
type counterRun struct {
	opsPerSec   float64
	settle      time.Duration
	tableBytes  uint64 // the tables' bytes once settled
	mergesFolds uint64 // operands folded, by reads and compactions
}

// runCounter adds 1 to a counter, ops times, each counter of keys drawn
// at random (a fixed seed: both ways draw the same sequence), as merges
// (Int64AddMerger) or as read-modify-writes (Get, add, Put), NoSync; then
// settles the tree — a flush and a compaction of everything, which folds
// the operands — and checks every counter against the number of times it
// was drawn.
func runCounter(tb testing.TB, dir string, merge bool, ops, keys int) counterRun {
	db, err := bloomkv.Open(dir, &bloomkv.Options{Merger: bloomkv.Int64AddMerger()})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "counter%06d", i) }
	rng := rand.New(rand.NewPCG(39, 4))
	want := make([]int64, keys)
	one := bloomkv.EncodeInt64(1)
	start := time.Now()
	for range ops {
		i := rng.IntN(keys)
		want[i]++
		k := key(i)
		if merge {
			err = db.Merge(k, one, bloomkv.NoSync)
		} else {
			var n int64
			v, gerr := db.Get(k)
			switch {
			case gerr == nil:
				n, gerr = bloomkv.DecodeInt64(v)
			case gerr == bloomkv.ErrNotFound:
				gerr = nil
			}
			if gerr != nil {
				tb.Fatal(gerr)
			}
			err = db.Put(k, bloomkv.EncodeInt64(n+1), bloomkv.NoSync)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	run := counterRun{opsPerSec: float64(ops) / time.Since(start).Seconds()}
	start = time.Now()
	if err := db.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := db.Compact(nil, []byte{0xff}); err != nil {
		tb.Fatal(err)
	}
	run.settle = time.Since(start)
	m := db.Metrics()
	for _, l := range m.Levels {
		run.tableBytes += l.Bytes
	}
	run.mergesFolds = m.MergesFoldedByReads + m.MergesFoldedByCompactions
	for i, w := range want {
		v, err := db.Get(key(i))
		if w == 0 && err == bloomkv.ErrNotFound {
			continue
		}
		if n, derr := bloomkv.DecodeInt64(v); err != nil || derr != nil || n != w {
			tb.Fatalf("counter %d: %d (%v, %v), want %d", i, n, err, derr, w)
		}
	}
	return run
}

// BenchmarkCounter is the counter workload of docs/merge.md: 1M
// increments over 10k counters (-counter.ops, -counter.keys) as merges
// and as read-modify-writes, one whole workload per iteration, reporting
// the increments' rate (ops/s), the settle's time and the tables' bytes
// once settled. Run both in one command, alternating:
//
//	go test -run '^$' -bench BenchmarkCounter -benchtime 1x -count 3
func BenchmarkCounter(b *testing.B) {
	for _, mode := range []string{"merge", "get+put"} {
		b.Run(mode, func(b *testing.B) {
			var sum counterRun
			for range b.N {
				r := runCounter(b, b.TempDir(), mode == "merge", *counterOps, *counterKeys)
				sum.opsPerSec += r.opsPerSec
				sum.settle += r.settle
				sum.tableBytes += r.tableBytes
			}
			n := float64(b.N)
			b.ReportMetric(sum.opsPerSec/n, "ops/s")
			b.ReportMetric(float64(sum.settle.Milliseconds())/n, "settle-ms")
			b.ReportMetric(float64(sum.tableBytes)/n, "table-bytes")
		})
	}
}

// TestCounterWorkload runs BenchmarkCounter's workload small, both ways:
// each checks its counters (runCounter), and the merges' operands are
// folded, leaving tables no larger than the read-modify-writes'.
func TestCounterWorkload(t *testing.T) {
	m := runCounter(t, t.TempDir(), true, 20_000, 500)
	p := runCounter(t, t.TempDir(), false, 20_000, 500)
	if m.mergesFolds == 0 {
		t.Error("no operand folded")
	}
	if m.tableBytes > p.tableBytes {
		t.Errorf("settled, the merges' tables hold %d bytes, the Puts' %d", m.tableBytes, p.tableBytes)
	}
}

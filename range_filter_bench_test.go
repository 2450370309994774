package bloomkv

import (
	"fmt"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/vfs"
)

// rangeBenchDB is a database of BenchmarkRangeScan: keys in runs of 128
// consecutive numbers with gaps of 128 between (the range workloads'
// layout), run g in table g mod 8 of eight L0 tables, so that every table
// spans the key space; or, compacted, the same keys in the levels below.
func rangeBenchDB(b *testing.B, bits float64, compacted bool) *DB {
	b.Helper()
	opts := &Options{FS: vfs.NewMem(), BlockCacheSize: 1 << 20, MemtableSize: 64 << 20,
		L0CompactionTrigger: 100, L0SlowdownTrigger: 100, L0StopTrigger: 100}
	if bits > 0 {
		opts.RangeFilterBits = []float64{bits}
	}
	d, err := Open("db", opts)
	if err != nil {
		b.Fatal(err)
	}
	const runs, tables = 1600, 8
	value := make([]byte, 100)
	for t := range tables {
		for g := t; g < runs; g += tables {
			for i := range 128 {
				if err := d.Put(rangeBenchKey(2*g*128+i), value, NoSync); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	if compacted {
		if err := d.Compact(nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

func rangeBenchKey(x int) []byte { return fmt.Appendf(nil, "%016d", x) }

// BenchmarkRangeScan scans ranges of width 2 to 128 key numbers with both
// bounds, empty (in a gap: no key, inside every table's key range) or not
// (inside a run: width keys, all in one table), on a database with range
// filters of 16 bits per key (on) and one without (off), in an L0 of
// eight tables and compacted. Each scan is a new Iterator (iter=fresh), as
// DB.Scan makes, or one Iterator per database re-bounded with SetBounds
// for every scan (iter=reuse), as a program running many short scans
// would.
//
// The two databases take turns within one benchmark, rangeChunk scans
// each, the first turn alternating from one benchmark to the next, so
// that neither runs at a quieter moment of a shared machine or in a
// warmer cache: an op is one scan, of either database. It reports per
// database (on- and off-) the wall and CPU time of its scans, ns/scan
// and cpu-ns/scan (the process's CPU time, which other work on the
// machine inflates less than the wall time), the data blocks read
// (blocks/scan, from the block cache or the file) and those from the
// file (misses/scan), the tables the range filters ruled out
// (on-skipped/scan), and off/on, the ratio of their CPU times: how many
// times faster the scans are with range filters.
func BenchmarkRangeScan(b *testing.B) {
	first := 0 // the database of the first turn: 0 on, 1 off
	for _, shape := range []string{"l0x8", "compacted"} {
		b.Run("shape="+shape, func(b *testing.B) {
			on := rangeBenchDB(b, 16, shape == "compacted")
			defer on.Close()
			off := rangeBenchDB(b, 0, shape == "compacted")
			defer off.Close()
			for _, empty := range []bool{true, false} {
				for _, width := range []int{2, 8, 32, 128} {
					kind := "nonempty"
					if empty {
						kind = "empty"
					}
					for _, reuse := range []bool{false, true} {
						iter := "fresh"
						if reuse {
							iter = "reuse"
						}
						b.Run(fmt.Sprintf("scan=%s-%d/iter=%s", kind, width, iter), func(b *testing.B) {
							first = 1 - first
							benchRangeScans(b, [2]*DB{on, off}, first, width, empty, reuse)
						})
					}
				}
			}
		})
	}
}

// rangeChunk is the number of scans of one database's turn in
// BenchmarkRangeScan: enough that reading the clocks costs little, few
// enough that the turns interleave finely.
const rangeChunk = 64

// rangeSide is what benchRangeScans keeps of one database: its Iterator
// when reused, its next range, its metrics before the scans, and the
// scans' time and count.
type rangeSide struct {
	d         *DB
	it        *Iterator // the reused Iterator, or nil
	g         int       // the run of the next range
	before    Metrics
	wall, cpu time.Duration
	scans     int
	lo, hi    []byte // the bounds of the range of run g
	name      string
}

// benchRangeScans scans ranges of width numbers, empty or not, of
// rangeBenchDB's layout on the databases dbs, with range filters and
// without, in turns of rangeChunk scans, dbs[first] first, checking each
// scan's count: each with an Iterator of its own, or, reuse, all of a
// database's with one, re-bounded by SetBounds.
func benchRangeScans(b *testing.B, dbs [2]*DB, first, width int, empty, reuse bool) {
	want := width
	if empty {
		want = 0
	}
	// The bounds of every run's range, made before the scans so that the
	// harness formats no key while they are timed.
	const ranges = 1599
	var bounds [ranges][2][]byte
	for g := range ranges {
		start := 2*g*128 + (g*13)%(128-width+1)
		if empty {
			start += 128
		}
		bounds[g] = [2][]byte{rangeBenchKey(start), rangeBenchKey(start + width)}
	}
	var sides [2]rangeSide
	for i, d := range dbs {
		s := &sides[i]
		s.d, s.name = d, [2]string{"on", "off"}[i]
		if reuse {
			var err error
			if s.it, err = d.NewIter(nil); err != nil {
				b.Fatal(err)
			}
			defer s.it.Close()
		}
		s.before = d.Metrics()
	}
	turn, scans := first, 0
	wall, cpu := time.Now(), cpuTime(b)
	endTurn := func() {
		s := &sides[turn]
		w, c := time.Now(), cpuTime(b)
		s.wall, s.cpu = s.wall+w.Sub(wall), s.cpu+c-cpu
		s.scans += scans
		wall, cpu, turn, scans = w, c, 1-turn, 0
	}
	for b.Loop() {
		s := &sides[turn]
		s.g = (s.g + 7) % ranges
		s.lo, s.hi = bounds[s.g][0], bounds[s.g][1]
		it := s.it
		if reuse {
			it.SetBounds(s.lo, s.hi)
		} else {
			var err error
			if it, err = s.d.NewIter(&IterOptions{LowerBound: s.lo, UpperBound: s.hi}); err != nil {
				b.Fatal(err)
			}
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		err := it.Error()
		if !reuse {
			err = it.Close()
		}
		if err != nil || n != want {
			b.Fatalf("rf=%s [%s, %s): %d keys (%v), want %d", s.name, s.lo, s.hi, n, err, want)
		}
		if scans++; scans == rangeChunk {
			endTurn()
		}
	}
	endTurn()
	for i := range sides {
		s := &sides[i]
		if s.scans == 0 {
			continue // b.N below one turn: nothing to report of this side
		}
		after := s.d.Metrics()
		var skipped uint64
		for l := range after.Levels {
			skipped += after.Levels[l].RangeFilterNegatives - s.before.Levels[l].RangeFilterNegatives
		}
		bc, bc0 := after.BlockCache, s.before.BlockCache
		per := func(x float64) float64 { return x / float64(s.scans) }
		b.ReportMetric(per(float64(s.wall.Nanoseconds())), s.name+"-ns/scan")
		b.ReportMetric(per(float64(s.cpu.Nanoseconds())), s.name+"-cpu-ns/scan")
		b.ReportMetric(per(float64(bc.Hits+bc.Misses-bc0.Hits-bc0.Misses)), s.name+"-blocks/scan")
		b.ReportMetric(per(float64(bc.Misses-bc0.Misses)), s.name+"-misses/scan")
		if i == 0 {
			b.ReportMetric(per(float64(skipped)), "on-skipped/scan")
		}
	}
	if sides[0].scans > 0 && sides[1].scans > 0 && sides[0].cpu > 0 {
		on := float64(sides[0].cpu) / float64(sides[0].scans)
		b.ReportMetric(float64(sides[1].cpu)/float64(sides[1].scans)/on, "off/on")
	}
}

// cpuTime is the process's CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	u, err := procstat.ReadUsage()
	if err != nil {
		b.Fatal(err)
	}
	return u.CPU()
}

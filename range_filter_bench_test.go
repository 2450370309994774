package bloomkv

import (
	"fmt"
	"testing"

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
// eight tables and compacted; blocks/op counts the data blocks read, from
// the block cache or the file (misses/op those from the file), and
// skipped/op the tables the range filters
// ruled out. Each scan is a new Iterator (iter=fresh), as DB.Scan makes,
// or one Iterator re-bounded with SetBounds for every scan (iter=reuse),
// as a program running many short scans would. Compare on and off with
// benchstat -col /rf.
func BenchmarkRangeScan(b *testing.B) {
	for _, shape := range []string{"l0x8", "compacted"} {
		b.Run("shape="+shape, func(b *testing.B) {
			dbs := map[string]*DB{}
			for _, mode := range []string{"on", "off"} {
				bits := 16.0
				if mode == "off" {
					bits = 0
				}
				d := rangeBenchDB(b, bits, shape == "compacted")
				defer d.Close()
				dbs[mode] = d
			}
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
						for _, mode := range []string{"on", "off"} {
							b.Run(fmt.Sprintf("scan=%s-%d/iter=%s/rf=%s", kind, width, iter, mode), func(b *testing.B) {
								benchRangeScans(b, dbs[mode], width, empty, reuse)
							})
						}
					}
				}
			}
		})
	}
}

// benchRangeScans scans ranges of width numbers, empty or not, of
// rangeBenchDB's layout, checking each scan's count: each with an
// Iterator of its own, or, reuse, all with one, re-bounded by SetBounds.
func benchRangeScans(b *testing.B, d *DB, width int, empty, reuse bool) {
	var reused *Iterator
	if reuse {
		var err error
		if reused, err = d.NewIter(nil); err != nil {
			b.Fatal(err)
		}
		defer reused.Close()
	}
	before := d.Metrics()
	cpuBefore, cpuErr := procstat.ReadUsage()
	lo, hi := make([]byte, 0, 16), make([]byte, 0, 16)
	want := width
	if empty {
		want = 0
	}
	g := 0
	for b.Loop() {
		g = (g + 7) % 1599
		start := 2*g*128 + (g*13)%(128-width+1)
		if empty {
			start += 128
		}
		lo, hi = fmt.Appendf(lo[:0], "%016d", start), fmt.Appendf(hi[:0], "%016d", start+width)
		it := reused
		if reuse {
			it.SetBounds(lo, hi)
		} else {
			var err error
			if it, err = d.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi}); err != nil {
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
			b.Fatalf("[%s, %s): %d keys (%v), want %d", lo, hi, n, err, want)
		}
	}
	if cpuAfter, err := procstat.ReadUsage(); err == nil && cpuErr == nil {
		// The process's CPU time, which a machine shared with other work
		// inflates less than the wall time ns/op measures.
		b.ReportMetric(float64((cpuAfter.CPU()-cpuBefore.CPU()).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	after := d.Metrics()
	var skipped uint64
	for i := range after.Levels {
		skipped += after.Levels[i].RangeFilterNegatives - before.Levels[i].RangeFilterNegatives
	}
	blocks := after.BlockCache.Hits + after.BlockCache.Misses - before.BlockCache.Hits - before.BlockCache.Misses
	b.ReportMetric(float64(blocks)/float64(b.N), "blocks/op")
	b.ReportMetric(float64(after.BlockCache.Misses-before.BlockCache.Misses)/float64(b.N), "misses/op")
	b.ReportMetric(float64(skipped)/float64(b.N), "skipped/op")
}

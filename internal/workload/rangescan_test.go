package workload

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bloomkv/bloomkv"
)

// TestRangeKeys checks the range layout against its definition: runs of
// RangeRun consecutive numbers and gaps of as many, a scan in a run
// holding width keys and one in a gap none (the oracle: the set of
// present numbers).
func TestRangeKeys(t *testing.T) {
	k, err := NewKeys(1000, 16, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	var prev []byte
	for i := range k.N {
		key := k.RangeKey(nil, i)
		if prev != nil && string(key) <= string(prev) {
			t.Fatalf("key %d %q does not sort after %q", i, key, prev)
		}
		if want := fmt.Sprintf("%016d", i+RangeRun*(i/RangeRun)); string(key) != want {
			t.Fatalf("key %d is %q, want %q", i, key, want)
		}
		present[string(key)], prev = true, key
	}
	for _, width := range RangeWidths {
		for _, empty := range []bool{false, true} {
			for g := range k.N/RangeRun - 1 {
				for _, off := range []int{0, RangeRun - width} {
					lo, hi := k.RangeBounds(nil, nil, g, off, width, empty)
					n := 0
					for key := range present {
						if string(lo) <= key && key < string(hi) {
							n++
						}
					}
					want := width
					if empty {
						want = 0
					}
					if n != want {
						t.Fatalf("width %d, empty %v, run %d, offset %d: [%s, %s) holds %d keys, want %d", width, empty, g, off, lo, hi, n, want)
					}
				}
			}
		}
	}
	if _, err := (&Keys{N: 255, KeySize: 16}).rangeLayout(); err == nil {
		t.Error("255 keys: no error, want one (two full runs needed)")
	}
}

// TestBloomkvRangeScans runs the range workloads on bloomkv with and
// without range filters, with an iterator per scan and (RangeReuse) one
// per thread re-bounded for each, on two threads; the workload checks
// every scan's count. With
// range filters an empty scan skips nearly every table in its key range;
// without, none is skipped (and none is asked).
func TestBloomkvRangeScans(t *testing.T) {
	k, _ := NewKeys(8000, 16, 20, 1)
	cfg := &Config{Keys: k, Reads: 256, Threads: 2}
	for _, bits := range []float64{16, 0} {
		opts := &bloomkv.Options{MemtableSize: 64 << 10, BaseLevelSize: 64 << 10, TargetFileSize: 32 << 10}
		if bits > 0 {
			opts.RangeFilterBits = []float64{bits}
		}
		s, err := OpenBloomkv(filepath.Join(t.TempDir(), "db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cfg.Run(s, FillRange, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 * len(RangeScans()) {
			w := RangeScans()[i/2]
			cfg.RangeReuse = i%2 == 1
			before := s.DB.Metrics()
			r, err := cfg.Run(s, w, nil)
			if err != nil {
				t.Fatalf("range filters %v, reuse %v: %v", bits, cfg.RangeReuse, err)
			}
			after := s.DB.Metrics()
			var checks, negatives uint64
			for i := range after.Levels {
				checks += after.Levels[i].RangeFilterChecks - before.Levels[i].RangeFilterChecks
				negatives += after.Levels[i].RangeFilterNegatives - before.Levels[i].RangeFilterNegatives
			}
			width, empty, _ := w.rangeScan()
			// A range scan asks the range filters, or skips them while
			// recent checks rarely ruled a range out (Options.RangeFilterBits).
			asked, unasked := after.RangeScans-before.RangeScans, after.RangeScansUnfiltered-before.RangeScansUnfiltered
			switch {
			case r.Ops != cfg.Ops(w):
				t.Errorf("%s: %d ops, want %d", w, r.Ops, cfg.Ops(w))
			case bits == 0 && checks != 0:
				t.Errorf("%s without range filters: %d range-filter checks", w, checks)
			case bits > 0 && asked+unasked < uint64(r.Ops):
				t.Errorf("%s: %d range scans that asked range filters and %d that did not, over %d scans", w, asked, unasked, r.Ops)
			case bits > 0 && empty && (checks < asked || asked < uint64(r.Ops)/2 || negatives < checks*98/100):
				// Empty scans after the last workload's, which found keys,
				// find the filters unasked until the move that keeps
				// watch sees them say no; then they ask again.
				t.Errorf("%s: %d of %d range-filter checks negative over %d scans, %d of which asked; want a check a move that asked, half the scans asking, 98%% negative", w, negatives, checks, r.Ops, asked)
			case bits > 0 && !empty && negatives > checks-asked:
				// A move that asked found a yes at least in the table that
				// holds its keys.
				t.Errorf("%s: %d of %d checks negative over %d scans of %d keys that asked; each scan's keys are in some table", w, negatives, checks, asked, width)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if ws, err := Parse("fillrange,rangescan2,rangeempty128"); err != nil || len(ws) != 3 || !ws[1].IsRangeScan() || !FillRange.IsFill() {
		t.Errorf("Parse = %v, %v", ws, err)
	}
	if _, err := Parse("rangescan3"); err == nil {
		t.Error("rangescan3: no error, want an unknown workload")
	}
}

package benchstore

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// TestBloomkvFillOverwrite runs filloverwrite on bloomkv with a small
// memtable, so that a key's writes land in different tables and
// compactions merge them, and reads every key back: each must be its last
// write's value.
func TestBloomkvFillOverwrite(t *testing.T) {
	const n = 5000
	k, _ := workload.NewKeys(n, 16, 100, 1)
	cfg := &workload.Config{Keys: k, Reads: 3 * n, WritesPerKey: 4}
	opts := &bloomkv.Options{MemtableSize: 64 << 10, BaseLevelSize: 64 << 10, TargetFileSize: 32 << 10}
	s, err := Open(filepath.Join(t.TempDir(), "db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := cfg.Run(s, workload.FillOverwrite, nil); err != nil {
		t.Fatal(err)
	}
	m := s.DB.Metrics()
	if m.Flushes < 10 {
		t.Errorf("%d flushes: want the writes spread over many tables", m.Flushes)
	}
	if _, err := cfg.Run(s, workload.ReadRandom, nil); err != nil {
		t.Fatalf("before the settle: %v", err)
	}
	if err := s.Settle(); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Run(s, workload.ReadRandom, nil); err != nil {
		t.Fatalf("after the settle: %v", err)
	}
	// Every key, directly.
	for i := range n {
		v, err := s.DB.Get(k.Present(nil, i))
		if err != nil || !bytes.Equal(v, k.Value(i)) {
			t.Fatalf("key %d: %q, %v; want its last write", i, v, err)
		}
	}
}

// TestBloomkvPrefixSeeks runs the prefix workloads on bloomkv with prefix
// filters: a seek of a missing prefix skips nearly every table in its key
// range, where without prefix filters it seeks every one.
func TestBloomkvPrefixSeeks(t *testing.T) {
	k, _ := workload.NewKeys(4000, 16, 20, 1)
	cfg := &workload.Config{Keys: k, Reads: 400}
	for _, withPrefix := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "db")
		opts := &bloomkv.Options{MemtableSize: 64 << 10, BaseLevelSize: 32 << 10, TargetFileSize: 16 << 10, L0CompactionTrigger: 1}
		if withPrefix {
			opts.Prefix = PrefixExtractor()
		}
		s := openFilled(t, dir, opts, cfg, workload.FillPrefix)
		if !withPrefix {
			// The tables hold no prefixes; seeks need an extractor.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			opts.Prefix = PrefixExtractor()
			var err error
			if s, err = Open(dir, opts); err != nil {
				t.Fatal(err)
			}
		}
		// Per workload: the prefix seeks, and the tables they considered
		// and sought.
		var seeks, probes, sought [2]uint64
		for j, w := range []workload.Workload{workload.SeekPrefix, workload.SeekPrefixMissing} {
			before := s.DB.Metrics()
			if _, err := cfg.Run(s, w, nil); err != nil {
				t.Fatalf("prefix filters %v: %v", withPrefix, err)
			}
			after := s.DB.Metrics()
			seeks[j] = after.PrefixSeeks - before.PrefixSeeks
			for i := range after.Levels {
				probes[j] += after.Levels[i].PrefixProbes - before.Levels[i].PrefixProbes
				sought[j] += after.Levels[i].PrefixSought - before.Levels[i].PrefixSought
			}
		}
		t.Logf("prefix filters %v: seeks %v, tables considered %v, sought %v", withPrefix, seeks, probes, sought)
		if seeks != [2]uint64{400, 400} {
			t.Errorf("prefix filters %v: %v prefix seeks, want 400 of each", withPrefix, seeks)
		}
		// A present prefix's seek seeks the tables that hold it, at least
		// one. A missing one's: none but the filters' false positives
		// with prefix filters (at 10 bits per key about 1%), every table
		// in range without.
		switch {
		case sought[0] < 400 || probes[1] < 400:
			t.Errorf("prefix filters %v: %d tables sought for 400 present prefixes, %d considered for 400 missing ones; want at least one each",
				withPrefix, sought[0], probes[1])
		case withPrefix && sought[1] > probes[1]/20:
			t.Errorf("with prefix filters: %d of %d tables sought for missing prefixes", sought[1], probes[1])
		case !withPrefix && sought[1] != probes[1]:
			t.Errorf("without prefix filters: %d of %d tables sought for missing prefixes, want all", sought[1], probes[1])
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBloomkvRangeScans runs the range workloads on bloomkv with and
// without range filters, with an iterator per scan and (RangeReuse) one
// per thread re-bounded for each, on two threads; the workload checks
// every scan's count. With
// range filters an empty scan skips nearly every table in its key range;
// without, none is skipped (and none is asked).
func TestBloomkvRangeScans(t *testing.T) {
	k, _ := workload.NewKeys(8000, 16, 20, 1)
	cfg := &workload.Config{Keys: k, Reads: 256, Threads: 2}
	for _, bits := range []float64{16, 0} {
		opts := &bloomkv.Options{MemtableSize: 64 << 10, BaseLevelSize: 64 << 10, TargetFileSize: 32 << 10}
		if bits > 0 {
			opts.RangeFilterBits = []float64{bits}
		}
		s := openFilled(t, filepath.Join(t.TempDir(), "db"), opts, cfg, workload.FillRange)
		for i := range 2 * len(workload.RangeScans()) {
			w := workload.RangeScans()[i/2]
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
			width, empty, _ := w.RangeScan()
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
}

// openFilled opens the store in dir with opts, runs the fill w on it and
// settles it.
func openFilled(t *testing.T, dir string, opts *bloomkv.Options, cfg *workload.Config, w workload.Workload) *Bloomkv {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Run(s, w, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBloomkvScanKeys runs scan and scankeys over values in blob files:
// each scans the same entries, but scankeys reads no blob and scan one a
// value.
func TestBloomkvScanKeys(t *testing.T) {
	const n = 500
	k, _ := workload.NewKeys(n, 16, 200, 1)
	cfg := &workload.Config{Keys: k, Reads: 4 * n, ScanLength: n}
	opts := &bloomkv.Options{ValueSeparation: bloomkv.ValueSeparation{MinSize: 100}}
	s, err := Open(filepath.Join(t.TempDir(), "db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := cfg.Run(s, workload.FillRandom, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(); err != nil {
		t.Fatal(err)
	}
	start := k.Present(nil, 0)
	for _, tc := range []struct {
		scan  func([]byte, int) (int, error)
		name  string
		reads uint64
	}{{s.ScanKeys, "ScanKeys", 0}, {s.Scan, "Scan", n}} {
		before := s.DB.Metrics().Blobs.Reads
		got, err := tc.scan(start, n+1)
		if err != nil || got != n {
			t.Fatalf("%s from the first key: %d entries, %v; want %d", tc.name, got, err, n)
		}
		if reads := s.DB.Metrics().Blobs.Reads - before; reads != tc.reads {
			t.Errorf("%s read %d blobs, want %d", tc.name, reads, tc.reads)
		}
	}
	if _, err := cfg.Run(s, workload.ScanKeys, nil); err != nil {
		t.Fatal(err)
	}
}

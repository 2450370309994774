package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// rangeTestKey is key j of the range tests' key space: fixed-width
// decimal, as the bench's keys.
func rangeTestKey(j int) []byte { return fmt.Appendf(nil, "key%06d", j) }

// openRangeTables opens a DB on a MemFS with range filters of bits bits
// per key in every level and writes tables L0 tables: key j (of
// 0..keys-1), key(j), goes to table owner(j) only, one flush per table, and
// compaction is held off.
func openRangeTables(t *testing.T, tables, keys int, bits float64, owner func(j int) int, key func(j int) []byte) *DB {
	t.Helper()
	opts := &Options{
		FS:                  vfs.NewMem(),
		RangeFilterBits:     []float64{bits},
		L0CompactionTrigger: 1000, L0SlowdownTrigger: 1000, L0StopTrigger: 1000,
	}
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for i := range tables {
		for j := range keys {
			if owner(j) == i {
				if err := d.Put(key(j), []byte("v"), NoSync); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestRangeFilterSkipsAgainstOracle checks each table's fate in bounded
// scans against the oracle of which keys it holds, for ranges of several
// widths: a table that holds a key of [lo, hi) is sought, always (no
// false negatives); one that holds none may be skipped, and nearly all are
// where the filter's bound says so. Keys are dense runs of random lengths,
// each run in a random table, so that every table spans the whole key
// space: with keys 1 apart the filters are exact; with keys 1,000 apart at
// 8 bits per key they hash, and answer an empty range of w values falsely
// with probability at most w/2^6. The counts of Metrics and of
// ExplainRange agree with the traces'.
func TestRangeFilterSkipsAgainstOracle(t *testing.T) {
	const tables, keys = 8, 4000
	type width struct {
		w          int
		minSkipped float64 // of the tables in range without a key in it
	}
	tests := []struct {
		name   string
		bits   float64
		stride int
		widths []width
	}{
		{"dense keys, exact filters", 16, 1, []width{{1, 0.99}, {2, 0.99}, {8, 0.99}, {32, 0.99}, {128, 0.99}}},
		// 1 − 3× the bound, or less where few tables are empty.
		{"sparse keys, hashed filters", 8, 1000, []width{{1, 0.95}, {2, 0.9}, {8, 0.6}, {32, 0.3}}},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, uint64(ti)))
			owners := make([]int, keys)
			for j := 0; j < keys; {
				run, owner := 1+rng.IntN(60), rng.IntN(tables)
				for ; run > 0 && j < keys; run-- {
					owners[j] = owner
					j++
				}
			}
			key := func(v int) []byte { return fmt.Appendf(nil, "key%08d", v) }
			d := openRangeTables(t, tables, keys, tc.bits, func(j int) int { return owners[j] }, func(j int) []byte { return key(j * tc.stride) })
			for _, w := range tc.widths {
				t.Run(fmt.Sprintf("width %d", w.w), func(t *testing.T) {
					before := d.Metrics()
					var empty, skipped, checks, ranges int
					for range 300 {
						v := rng.IntN(keys * tc.stride)
						lo, hi := key(v), key(v+w.w)
						tr, err := d.ExplainRange(lo, hi)
						if err != nil {
							t.Fatal(err)
						}
						ranges++
						// Keys j with v ≤ j·stride < v+w, and their tables.
						inRange := map[int]bool{}
						found := 0
						for j := (v + tc.stride - 1) / tc.stride; j < keys && j*tc.stride < v+w.w; j++ {
							inRange[owners[j]] = true
							found++
						}
						if tr.Keys != found {
							t.Fatalf("[%s, %s): %d keys, want %d", lo, hi, tr.Keys, found)
						}
						for _, s := range tr.Steps {
							if s.Kind != TableStep || !s.InRange {
								continue
							}
							i := tableIndexOf(t, d, s.FileNum)
							if inRange[i] && !s.Sought {
								t.Fatalf("[%s, %s): table %d holds a key of the range but was skipped (%v)", lo, hi, i, s.Filter)
							}
							if s.Filter != NoFilter {
								checks++
							}
							if !inRange[i] {
								empty++
								if !s.Sought {
									skipped++
								}
							}
						}
					}
					if frac := float64(skipped) / float64(max(empty, 1)); empty == 0 || frac < w.minSkipped {
						t.Errorf("skipped %d of %d tables without a key in the range (%.3f), want ≥ %.2f", skipped, empty, frac, w.minSkipped)
					}
					after := d.Metrics()
					l0, l0b := after.Levels[0], before.Levels[0]
					if got := int(l0.RangeFilterChecks - l0b.RangeFilterChecks); got != checks {
						t.Errorf("Metrics: %d range-filter checks, the traces %d", got, checks)
					}
					if got := int(l0.RangeFilterNegatives - l0b.RangeFilterNegatives); got != skipped {
						t.Errorf("Metrics: %d range-filter negatives, the traces %d", got, skipped)
					}
					if got := int(after.RangeScans - before.RangeScans); got != ranges {
						t.Errorf("Metrics: %d range scans, want %d", got, ranges)
					}
				})
			}
		})
	}
}

// tableIndexOf returns the flush order of L0 table fileNum in d: tables
// are numbered in the order they were flushed.
func tableIndexOf(t *testing.T, d *DB, fileNum uint64) int {
	t.Helper()
	rs, _, err := d.acquireReadState()
	if err != nil {
		t.Fatal(err)
	}
	defer d.releaseReadState(rs)
	l0 := rs.version.tables[0]
	for i, tb := range l0 {
		if tb.meta.FileNum == fileNum {
			return len(l0) - 1 - i // newest first
		}
	}
	t.Fatalf("no L0 table %d", fileNum)
	return -1
}

// TestRangeFilterIteratorMoves checks every move of bounded iterators —
// First, Last, SeekGE with an upper bound, SeekLT with a lower bound,
// Next and Prev across a seek's start, SetBounds and Clone — against the
// model, over tables with range filters that skip most tables, with point
// and range tombstones in newer tables over keys of older ones, and at a
// snapshot taken before them; then again after a compaction and a reopen.
func TestRangeFilterIteratorMoves(t *testing.T) {
	// Three seeds under -race (6 without), which the model and metamorphic
	// suites' randomized range filters add to.
	for _, seed := range testSeeds(6, sizeFor(2, 3), testing.Short() || race.Enabled) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 32))
			fs := vfs.NewMem()
			opts := &Options{
				FS:                  fs,
				RangeFilterBits:     []float64{[]float64{3, 8, 24}[rng.IntN(3)], 16},
				L0CompactionTrigger: 1000, L0SlowdownTrigger: 1000, L0StopTrigger: 1000,
				BlockSize: 256,
			}
			d, err := Open("db", opts)
			if err != nil {
				t.Fatal(err)
			}
			ks := &keySpace{}
			for j := range 600 {
				ks.keys = append(ks.keys, rangeTestKey(3*j))
			}
			m := kvModel{}
			write := func(ops []kvOp) {
				if err := applyOps(d, ops, NoSync); err != nil {
					t.Fatal(err)
				}
				m.apply(ops)
			}
			for range 6 {
				for range 150 {
					k := string(ks.pick(rng))
					write([]kvOp{{key: k, value: k + "/" + fmt.Sprint(rng.IntN(100))}})
				}
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := d.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			snapModel := m.clone()
			for range 3 {
				for range 40 {
					p := rng.IntN(len(ks.keys))
					switch k := string(ks.keys[p]); rng.IntN(3) {
					case 0:
						write([]kvOp{{key: k, del: true}})
					case 1:
						end := string(rangeTestKey(3*p + 1 + rng.IntN(60)))
						write([]kvOp{{key: k, rangeDel: true, end: end}})
					default:
						write([]kvOp{{key: k, value: "new " + k}})
					}
				}
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			check := func(stage string) {
				t.Helper()
				for round := range 40 {
					var r dbReader = d
					model := m
					if round%4 == 3 {
						r, model = snap, snapModel
					}
					if err := checkBoundedIter(rng, r, model, ks); err != nil {
						t.Fatalf("%s, round %d: %v", stage, round, err)
					}
				}
			}
			check("L0 tables")
			if got := d.Metrics().Levels[0].RangeFilterNegatives; got == 0 {
				t.Fatal("no table skipped: the test does not test the range filters")
			}
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			check("compacted")
			snap.Close()
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if d, err = Open("db", opts); err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if snap, err = d.NewSnapshot(); err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			snapModel = m
			check("reopened")
		})
	}
}

// checkBoundedIter opens an iterator on r with both bounds most of the
// time, checks its moves against m, then rebounds it (SetBounds) and
// checks again, and checks a clone of it.
func checkBoundedIter(rng *rand.Rand, r dbReader, m kvModel, ks *keySpace) error {
	bounds := func() *IterOptions {
		o := &IterOptions{LowerBound: ks.probe(rng), UpperBound: ks.probe(rng)}
		if bytes.Compare(o.LowerBound, o.UpperBound) > 0 {
			o.LowerBound, o.UpperBound = o.UpperBound, o.LowerBound
		}
		switch rng.IntN(8) {
		case 0:
			o.LowerBound = nil
		case 1:
			o.UpperBound = nil
		case 2:
			// A short range: a key and a few after it.
			k := ks.pick(rng)
			o.LowerBound, o.UpperBound = k, append(bytes.Clone(k[:len(k)-1]), k[len(k)-1]+byte(1+rng.IntN(9)))
		}
		return o
	}
	o := bounds()
	it, err := r.NewIter(o)
	if err != nil {
		return err
	}
	defer it.Close()
	if err := checkIterMoves(rng, it, o, m, ks, 40, true); err != nil {
		return err
	}
	o = bounds()
	it.SetBounds(o.LowerBound, o.UpperBound)
	if err := checkIterMoves(rng, it, o, m, ks, 40, rng.IntN(2) == 0); err != nil {
		return fmt.Errorf("after SetBounds: %w", err)
	}
	c, err := it.Clone()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := checkIterMoves(rng, c, o, m, ks, 40, false); err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	return nil
}

// TestExplainRange checks the range form of Explain on a small tree: the
// trace names each table, says which its range filter skipped and which
// it sought, and renders as the doc shows; missing bounds are argument
// errors.
func TestExplainRange(t *testing.T) {
	d := openRangeTables(t, 2, 100, 16, func(j int) int { return j % 2 }, rangeTestKey)
	// Keys 10 and 11: one in each table. Key 10 alone: only table 0.
	tr, err := d.ExplainRange(rangeTestKey(10), rangeTestKey(11))
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.Totals(); tr.Keys != 1 || n.TablesSought != 1 || n.FilterNegatives != 1 || n.MemtablesSearched != 1 {
		t.Fatalf("trace %+v, totals %+v; want 1 key, 1 table sought, 1 skipped, 1 memtable", tr, n)
	}
	s := tr.String()
	for _, want := range []string{`range scan ["key000010", "key000011")`, "range filter", "absent", "skipped", "maybe", "sought",
		"summary: 1 table skipped by its range filter, 1 table sought, 1 key found"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
	for _, bounds := range [][2][]byte{{nil, []byte("a")}, {[]byte("a"), nil}} {
		var ae *ArgumentError
		if _, err := d.ExplainRange(bounds[0], bounds[1]); !errors.As(err, &ae) {
			t.Errorf("ExplainRange(%q, %q): %v, want an *ArgumentError", bounds[0], bounds[1], err)
		}
	}
}

// TestRangeFilterOptions checks RangeFilterBits' validation: each entry 0
// or in [3, 40], at most one per level, errors naming the entry.
func TestRangeFilterOptions(t *testing.T) {
	tests := []struct {
		bits []float64
		arg  string // "" for valid
	}{
		{nil, ""},
		{[]float64{16}, ""},
		{[]float64{0, 0, 8, 16}, ""},
		{[]float64{2}, "opts.RangeFilterBits[0]"},
		{[]float64{16, 41}, "opts.RangeFilterBits[1]"},
		{[]float64{-1}, "opts.RangeFilterBits[0]"},
		{make([]float64, 8), "opts.RangeFilterBits"},
	}
	for _, tt := range tests {
		_, err := (&Options{RangeFilterBits: tt.bits}).withDefaults()
		var ae *ArgumentError
		switch {
		case tt.arg == "" && err != nil:
			t.Errorf("%v: %v", tt.bits, err)
		case tt.arg != "" && (!errors.As(err, &ae) || ae.Arg != tt.arg):
			t.Errorf("%v: %v, want an *ArgumentError for %s", tt.bits, err, tt.arg)
		}
	}
}

// TestRangeFiltersStopWhenUnpaid checks that bounded scans stop asking
// range filters while the filters keep saying "maybe" — scans that find
// keys in a tree of one table — and ask again once the scans turn to
// empty ranges, with the keys written as the oracle of every answer.
//
// The bounds follow from the moving average (noteRangeCheck): its share
// of "maybe" passes 7/8 after k checks with (31/32)^k < 1/8, some 66;
// after that one move in rangeSampleEvery asks, so at least
// (1000 − 67)·15/16 ≈ 874 of 1000 non-empty scans ask nothing. From a
// share near 1, five negatives, (31/32)^5 < 7/8, bring it under 7/8: at
// most 5·16 = 80 empty scans go unfiltered before every one asks again.
func TestRangeFiltersStopWhenUnpaid(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), RangeFilterBits: []float64{16}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const n, scans = 4000, 1000
	key := func(x int) []byte { return fmt.Appendf(nil, "%016d", x) }
	for i := range n {
		if err := d.Put(key(2*i), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	count := func(lo, hi int) int {
		found := 0
		if err := d.Scan(key(lo), key(hi), func(k, _ []byte) error { found++; return nil }); err != nil {
			t.Fatal(err)
		}
		return found
	}

	before := d.Metrics()
	for range scans {
		x := 2 * rng.IntN(n-1)
		if got := count(x, x+4); got != 2 { // keys x and x+2
			t.Fatalf("[%d, %d): %d keys, want 2", x, x+4, got)
		}
	}
	mid := d.Metrics()
	asked, unfiltered := mid.RangeScans-before.RangeScans, mid.RangeScansUnfiltered-before.RangeScansUnfiltered
	if asked+unfiltered != scans {
		t.Fatalf("non-empty scans: %d asked the filters and %d did not, want %d in all", asked, unfiltered, scans)
	}
	if unfiltered < 850 {
		t.Errorf("non-empty scans: %d of %d asked no filter, want ≥ 850", unfiltered, scans)
	}

	for range scans {
		x := 2*rng.IntN(n-1) + 1 // an odd number: absent
		if got := count(x, x+1); got != 0 {
			t.Fatalf("[%d, %d): %d keys, want 0", x, x+1, got)
		}
	}
	after := d.Metrics()
	var negatives uint64
	for l := range after.Levels {
		negatives += after.Levels[l].RangeFilterNegatives - mid.Levels[l].RangeFilterNegatives
	}
	if unfiltered := after.RangeScansUnfiltered - mid.RangeScansUnfiltered; unfiltered > 80 {
		t.Errorf("empty scans: %d asked no filter, want ≤ 80", unfiltered)
	}
	if negatives < scans-80-10 {
		t.Errorf("empty scans: %d tables ruled out, want ≥ %d", negatives, scans-80-10)
	}
}

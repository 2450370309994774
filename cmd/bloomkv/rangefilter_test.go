package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// buildRangeDB writes, in a new directory, two L0 tables with range
// filters: keys key000..key098 even in one, odd in the other, then
// key200..key209 in the second too.
func buildRangeDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := bloomkv.Open(dir, &bloomkv.Options{RangeFilterBits: []float64{16}, L0CompactionTrigger: 8})
	if err != nil {
		t.Fatal(err)
	}
	for table := range 2 {
		for i := table; i < 100; i += 2 {
			if err := db.Put(fmt.Appendf(nil, "key%03d", i), []byte("v"), bloomkv.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if table == 1 {
			for i := 200; i < 210; i++ {
				if err := db.Put(fmt.Appendf(nil, "key%03d", i), []byte("v"), bloomkv.NoSync); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExplainRange runs explain -range: a range of one even key is sought
// in one table and skipped by the other's range filter; a range between
// the keys is out of the first table's key range, and skipped by the
// second's range filter; a range of the second table's run only
// reaches that table.
func TestExplainRange(t *testing.T) {
	dir := buildRangeDB(t)
	for _, tc := range []struct {
		lo, hi string
		want   []string
	}{
		{"key010", "key011", []string{`range scan ["key010", "key011")`, "absent", "maybe", "summary: 1 table skipped by its range filter, 1 table sought, 1 key found"}},
		{"key100", "key199", []string{"summary: 1 table out of range, 1 table skipped by its range filter, no table sought, no key in the range"}},
		{"key200", "key205", []string{"summary: 1 table out of range, 1 table sought, 5 keys found"}},
	} {
		out := runOK(t, "explain", "-db", dir, "-range", tc.lo, tc.hi)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("explain -range %s %s lacks %q:\n%s", tc.lo, tc.hi, w, out)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"explain", "-db", dir, "-range", "key010"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "want LO HI") {
		t.Errorf("explain -range with one operand: exit %d, %q; want 2 and a usage error", code, stderr.String())
	}
}

// TestInspectRangeFilter inspects a table with a range filter: its block
// in the block list, its properties line and its own section.
func TestInspectRangeFilter(t *testing.T) {
	dir := buildRangeDB(t)
	out := runOK(t, "inspect", filepath.Join(dir, newest(t, dir, ".sst")))
	for _, w := range []string{"range filter  ", "range filter: grafite,", "\nrange filter:\n  family     grafite\n", "bits/key", "exact", "FPR bound"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect lacks %q:\n%s", w, out)
		}
	}
}

// TestBenchRangeCompare runs a small -range-compare: the fill's pairs,
// every range workload on both databases, whose compacted trees overlap a
// scan with as many tables, with a fresh and a reused iterator, the empty
// scans' tables all skipped with range filters; and refuses bad range
// flags.
func TestBenchRangeCompare(t *testing.T) {
	out := runOK(t, "bench", "-range-compare", "-n", "4000", "-reads", "200", "-memtable-size", "64KiB",
		"-base-level-size", "128KiB", "-target-file-size", "64KiB", "-out", t.TempDir())
	pairs := fmt.Sprintf("fill and settle in %d pairs filled in turn", rangeFillPairs+1)
	for _, w := range []string{"fillrange", pairs, "rangescan2", "rangescan128", "rangeempty2", "rangeempty128", "rangescan.csv"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	empty := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		row := len(f) > 8 && (strings.HasPrefix(f[0], "rangescan") || strings.HasPrefix(f[0], "rangeempty"))
		if row && f[4] != f[5] {
			t.Errorf("%s, %s iterator: %s tables in range with range filters, %s without; want the same tree:\n%s", f[0], f[1], f[4], f[5], out)
		}
		if len(f) > 8 && strings.HasPrefix(f[0], "rangeempty") {
			empty[f[1]]++
			// The first empty workload after the non-empty ones may
			// find the DB not asking its range filters, which kept
			// saying "maybe" (see Metrics.RangeScansUnfiltered): five
			// negatives of its one move in 16 that still asks bring
			// them back, so at most 80 of its scans read a block.
			scans, err1 := strconv.Atoi(f[2])
			blocks, err2 := strconv.ParseFloat(f[8], 64)
			if err1 != nil || err2 != nil || f[7] != "100.0%" || blocks > 80/float64(scans) {
				t.Errorf("%s, %s iterator: skipped %s, blocks/scan %s over %s scans; want 100.0%% and at most 80 blocks in all:\n%s", f[0], f[1], f[7], f[8], f[2], out)
			}
		}
	}
	if n := len(workload.RangeWidths); empty["fresh"] != n || empty["reuse"] != n || len(empty) != 2 {
		t.Errorf("rangeempty rows by iterator %v, want %d fresh and %d reuse:\n%s", empty, n, n, out)
	}
	for _, args := range [][]string{
		{"bench", "-range-filter-bits", "2"},
		{"bench", "-range-filter-bits", "41"},
		{"bench", "-range-compare", "-sweep"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d (%s), want 2", args, code, stderr.String())
		}
	}
}

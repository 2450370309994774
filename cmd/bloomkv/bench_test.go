package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/sstable"
)

// tinyBench are flags for a bench run of a few thousand keys in a tree with
// several levels.
var tinyBench = []string{"-n", "4000", "-reads", "2000", "-memtable-size", "64KiB",
	"-base-level-size", "32KiB", "-target-file-size", "16KiB", "-cache-size", "16KiB"}

func runBenchCmd(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"bench"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("bloomkv bench %q: exit %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

// benchRow returns the fields of the table row of workload w.
func benchRow(t *testing.T, out, w string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == w {
			return f
		}
	}
	t.Fatalf("no row for %s in:\n%s", w, out)
	return nil
}

func TestBenchTable(t *testing.T) {
	out := runBenchCmd(t, tinyBench...)
	header := benchRow(t, out, "workload")
	wantHeader := "workload ops ops/s p50 p99 p99.9 max tables/Get filter neg/Get false pos/Get blocks file/Get blocks cache/Get bytes/Get"
	if got := strings.Join(header, " "); got != wantHeader {
		t.Errorf("header %q, want %q", got, wantHeader)
	}
	for _, w := range []string{"fillrandom", "readrandom", "readmissing", "readmixed", "scan"} {
		row := benchRow(t, out, w)
		if len(row) != 13 {
			t.Errorf("%s row has %d fields: %q", w, len(row), row)
		}
	}
	if !strings.Contains(out, "filter memory:") || !strings.Contains(out, "index memory:") || !strings.Contains(out, "predicted FPR") {
		t.Errorf("no filter or index memory or per-level FPR in:\n%s", out)
	}
	levels := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && len(f[0]) == 2 && f[0][0] == 'L' {
			levels++
		}
	}
	if levels < 2 {
		t.Errorf("%d levels in the tree, want at least 2:\n%s", levels, out)
	}
	if neg := field(t, benchRow(t, out, "readmissing"), 8); neg <= 0 {
		t.Errorf("readmissing: filter negatives per Get %v, want > 0:\n%s", neg, out)
	}
	if tables := field(t, benchRow(t, out, "readmissing"), 7); tables < 1 {
		t.Errorf("readmissing: tables per Get %v, want ≥ 1:\n%s", tables, out)
	}

	off := runBenchCmd(t, append(tinyBench, "-bits-per-key", "0", "-workloads", "fillrandom,readmissing")...)
	row := benchRow(t, off, "readmissing")
	if neg := field(t, row, 8); neg != 0 {
		t.Errorf("without filters: filter negatives per Get %v, want 0:\n%s", neg, off)
	}
	if blocks := field(t, row, 10) + field(t, row, 11); blocks < 1 {
		t.Errorf("without filters: %v blocks per missing-key Get, want ≥ 1:\n%s", blocks, off)
	}
}

func field(t *testing.T, row []string, i int) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(row[i], 64)
	if err != nil {
		t.Fatalf("field %d of %q: %v", i, row, err)
	}
	return x
}

// runBenchOut runs a tiny bench of workloads with -out and returns the
// report it wrote in bench.json, and the directory.
func runBenchOut(t *testing.T, workloads string) (benchReport, string) {
	t.Helper()
	dir := t.TempDir()
	runBenchCmd(t, append(tinyBench, "-workloads", workloads, "-out", dir)...)
	var rep benchReport
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, dir
}

func TestBenchOut(t *testing.T) {
	rep, dir := runBenchOut(t, "fillrandom,readmissing")
	if len(rep.Workloads) != 2 || rep.Workloads[1].FilterNegativesPerGet <= 0 || rep.FilterMemory == 0 {
		t.Errorf("bench.json: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.csv")); err != nil {
		t.Error(err)
	}
}

// tinySweep are the sweep flags of TestBenchSweep: small databases, two
// budgets and one of every other policy, and the filter measurements at
// two table sizes.
var tinySweep = []string{"-sweep", "-sweep-n", "2000", "-sweep-reads", "500", "-sweep-bits", "0,4,10",
	"-sweep-fuse", "8", "-sweep-sizes", "100,1000", "-sweep-probes", "200000"}

func TestBenchSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("a dozen databases")
	}
	dir := t.TempDir()
	out := runBenchCmd(t, append(append(tinyBench, tinySweep...), "-out", dir)...)
	var rep sweepReport
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}

	// The databases: the budgets under uniform and optimal, then best,
	// the fuse width, and the progressive offsets the budgets ask for.
	var got []string
	for _, r := range rep.Rows {
		got = append(got, fmt.Sprintf("%s %g", r.Policy, r.Param))
	}
	want := []string{"none 0", "uniform 4", "optimal 4", "uniform 10", "optimal 10", "best 4", "best 10", "fuse 8"}
	if len(got) < len(want)+1 || strings.Join(got[:len(want)], ",") != strings.Join(want, ",") {
		t.Fatalf("sweep databases %q, want %q then the progressive ones:\n%s", got, want, out)
	}
	for _, r := range rep.Rows[len(want):] {
		if r.Policy != policyProgressive {
			t.Errorf("database %s %g after the progressive ones", r.Policy, r.Param)
		}
	}
	none, ten := rep.Rows[0], rep.Rows[3]
	if none.Allocation != "none" || ten.BitsPerKey != 10 || ten.Allocation != bloomkv.UniformAllocation.String() {
		t.Fatalf("rows out of order: %+v, %+v", none, ten)
	}
	if none.FilterMemory != 0 || none.MissingBlocks < 1 || ten.MissingBlocks >= none.MissingBlocks/4 {
		t.Errorf("blocks per missing Get: %v without filters, %v at 10 bits", none.MissingBlocks, ten.MissingBlocks)
	}
	for _, r := range rep.Rows {
		if r.Filters == "" || !strings.HasPrefix(r.Filters, "L") {
			t.Errorf("%s %g: no per-level filters: %q", r.Policy, r.Param, r.Filters)
		}
		if r.Policy != policyNone && (r.FilterMemory == 0 && r.Policy != policyBest || r.FillOpsPerSec <= 0 || r.FillSettledPerSec <= 0) {
			t.Errorf("%s %g: memory %d, fill %v/s, settled %v/s", r.Policy, r.Param, r.FilterMemory, r.FillOpsPerSec, r.FillSettledPerSec)
		}
	}
	// The floors: perfect filters' reads at most those of Bloom, fuse and
	// Ribbon filters at the tree's table sizes, which bound the model's reads of
	// the row's own filters (a table without one counted at rate 1).
	for _, r := range rep.Rows {
		if !(r.FloorBlocks > 0 && r.FloorBlocks <= r.FuseFloorBlocks) {
			t.Errorf("%s %g: floor %v, fuse floor %v: want 0 < floor ≤ fuse floor", r.Policy, r.Param, r.FloorBlocks, r.FuseFloorBlocks)
		}
		if r.Policy != policyNone && r.FuseFloorBlocks > r.ModelBlocks*(1+1e-9) {
			t.Errorf("%s %g (%s): fuse floor %v above the model's %v", r.Policy, r.Param, r.Filters, r.FuseFloorBlocks, r.ModelBlocks)
		}
	}
	if tg := rep.Targets; tg != nil && !math.IsNaN(float64(tg.ProgressiveModel)) {
		if !(tg.Floor > 0 && tg.Floor <= tg.FuseFloor && tg.FuseFloor <= tg.ProgressiveModel*(1+1e-9)) {
			t.Errorf("targets: floor %v, fuse floor %v, progressive's model %v", tg.Floor, tg.FuseFloor, tg.ProgressiveModel)
		}
		if !strings.Contains(out, "floor of perfect filters") {
			t.Errorf("no floor in:\n%s", out)
		}
	}
	if tg := rep.Targets; tg == nil || tg.Memory != ten.FilterMemory || tg.Uniform != ten.MissingBlocks || math.IsNaN(float64(tg.BestFillVsBloom)) {
		t.Errorf("targets %+v, want them at the memory of uniform 10 bits/key", tg)
	}
	if !strings.Contains(out, "at the memory of Uniform Bloom at 10 bits/key") {
		t.Errorf("no targets in:\n%s", out)
	}
	// The fill pairs: the sweep's own uniform and best databases at 10
	// bits per key first, then fillPairsRun more, and their median ratio.
	if tg := rep.Targets; tg != nil {
		var ratios []float64
		for i, p := range tg.FillPairs {
			if !(p[0] > 0 && p[1] > 0) {
				t.Errorf("fill pair %d: %v keys/s", i, p)
			}
			ratios = append(ratios, p[1]/p[0])
		}
		slices.Sort(ratios)
		if len(ratios) != 1+fillPairsRun || tg.FillPairs[0] != [2]float64{tg.BloomFillSettled, tg.BestFillSettled} {
			t.Fatalf("fill pairs %v, want the sweep's own (%v, %v) and %d more", tg.FillPairs, tg.BloomFillSettled, tg.BestFillSettled, fillPairsRun)
		}
		n := len(ratios) // even: the mean of the middle two
		if median := (ratios[n/2-1] + ratios[n/2]) / 2; math.Abs(float64(tg.BestFillPairsVsBloom)-median) > 1e-12 {
			t.Errorf("fill pairs' median %v, want %v (of %v)", tg.BestFillPairsVsBloom, median, ratios)
		}
		if !strings.Contains(out, "pairs filled in turn") {
			t.Errorf("no fill pairs in:\n%s", out)
		}
	}

	// The prefix workloads: with prefix filters a missing prefix's seek
	// skips nearly every table in its range, without it seeks every one.
	if len(rep.Prefix) != 2 || !rep.Prefix[0].PrefixFilters || rep.Prefix[1].PrefixFilters {
		t.Fatalf("prefix rows %+v", rep.Prefix)
	}
	with, without := rep.Prefix[0], rep.Prefix[1]
	if with.Seeks != 500 || with.TablesPerSeek < 1 || with.SoughtPerSeek > with.TablesPerSeek/10 || with.BlocksPerSeek > 0.1 {
		t.Errorf("with prefix filters: %+v", with)
	}
	if without.TablesPerSeek < 1 || without.SoughtPerSeek != without.TablesPerSeek || without.BlocksPerSeek < 1 {
		t.Errorf("without prefix filters: %+v", without)
	}

	// The filter measurements: every family at every size, within the
	// binomial interval of its expected rate; fuse's and ribbon's exactly
	// 2^-w.
	if len(rep.Families) != 2*len(sweepFamilies) {
		t.Fatalf("%d family rows, want %d", len(rep.Families), 2*len(sweepFamilies))
	}
	for _, r := range rep.Families {
		checkBinomial(t, r)
		switch {
		case r.Filter == "fuse:8" && r.Keys == 1000 && (r.Built != "fuse" || r.ExpectedFPR != 1.0/256):
			t.Errorf("fuse:8 at 1000 keys: built %s, expected %v; want fuse, 1/256", r.Built, r.ExpectedFPR)
		case r.Filter == "fuse:16" && r.Keys == 1000 && (r.Built != "fuse" || r.ExpectedFPR != 1.0/65536):
			t.Errorf("fuse:16 at 1000 keys: built %s, expected %v; want fuse, 1/65536", r.Built, r.ExpectedFPR)
		case r.Filter == "fuse:8" && r.Keys == 100 && r.Built != "bloom":
			t.Errorf("fuse:8 at 100 keys: built %s; want the Bloom stand-in, smaller there", r.Built)
		case r.Filter == "ribbon:8" && (r.Built != "ribbon" || r.ExpectedFPR != 1.0/256):
			t.Errorf("ribbon:8 at %d keys: built %s, expected %v; want ribbon, 1/256", r.Keys, r.Built, r.ExpectedFPR)
		case r.Filter == "ribbon:16" && r.Keys == 1000 && (r.Built != "ribbon" || r.ExpectedFPR != 1.0/65536):
			t.Errorf("ribbon:16 at 1000 keys: built %s, expected %v; want ribbon, 1/65536", r.Built, r.ExpectedFPR)
		case r.Filter == "bloom:10" && r.Tables != 1000 && r.Keys == 100:
			t.Errorf("bloom:10 at 100 keys: %d tables, want 1000", r.Tables)
		}
		if r.BitsPerKey != r.PlannedBits {
			t.Errorf("%s at %d keys: %.3f bits/key spent, %.3f planned", r.Filter, r.Keys, r.BitsPerKey, r.PlannedBits)
		}
	}
	if len(rep.Costs) != 2*len(sweepFamilies) || rep.Costs[0].BuildVsBaseline != 1 || rep.Costs[0].LookupVsBase != 1 || rep.Costs[1].BuildNsPerKey <= 0 {
		t.Errorf("costs %+v", rep.Costs)
	}
	for _, name := range []string{"sweep.csv", "families.csv", "costs.csv", "prefix.csv"} {
		if _, err := os.ReadFile(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, chart := range []string{"fpr", "reads", "latency", "fpr-size", "bits-size"} {
		checkChart(t, filepath.Join(dir, chart))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "reads.svg")); !bytes.Contains(b, []byte("Best allocation")) || !bytes.Contains(b, []byte("Progressive")) {
		t.Error("reads.svg lacks the best and progressive curves")
	}
}

// checkChart checks that base.png is a PNG and base.svg an SVG drawing
// lines (paths).
func checkChart(t *testing.T, base string) {
	t.Helper()
	png, err := os.ReadFile(base + ".png")
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s.png is not a PNG (%v)", base, err)
	}
	svg, err := os.ReadFile(base + ".svg")
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("<path")) {
		t.Errorf("%s.svg is not a chart (%v): %.200s", base, err, svg)
	}
}

// checkBinomial checks a family row's false positives against its
// expected rate with the normal approximation of the binomial, at 4.5
// standard deviations and a count of 3 (for rates so small that a few
// false positives are expected), independently of binomialInterval.
func checkBinomial(t *testing.T, r familyRow) {
	t.Helper()
	m, p := float64(r.Probes), r.ExpectedFPR
	tol := 4.5*math.Sqrt(m*p*(1-p)) + 3
	if d := math.Abs(float64(r.FalsePos) - m*p); d > tol || !r.Within {
		t.Errorf("%s at %d keys: %d false positives in %d probes, expected %.1f ± %.1f (within %v: [%v, %v])",
			r.Filter, r.Keys, r.FalsePos, r.Probes, m*p, tol, r.Within, r.IntervalLow, r.IntervalHigh)
	}
}

// TestFamilyRates measures the filter families directly, at sizes where
// each builds its own filter and where fuse falls back to Bloom, and
// checks every rate against its expectation with the binomial: fixed
// seeds, so the outcome is always the same.
func TestFamilyRates(t *testing.T) {
	rows, err := measureFamilies([]sstable.FilterSpec{sstable.Bloom(10), sstable.Fuse(8), sstable.Fuse(12)}, []int{100, 2000}, 100_000, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		checkBinomial(t, r)
		if r.Probes != 100_000 {
			t.Errorf("%s at %d keys: %d probes, want 100,000", r.Filter, r.Keys, r.Probes)
		}
	}
}

func TestBinomialInterval(t *testing.T) {
	for _, tc := range []struct {
		m      int64
		p, a   float64
		lo, hi int64
	}{
		{1000, 0.5, 0.05, 469, 531},         // the exact 2.5% and 97.5% quantiles
		{200_000, 1.0 / 65536, 1e-4, 0, 12}, // mean 3: the lower tail is empty
		{10, 0, 0.01, 0, 0},
		{10, 1, 0.01, 10, 10},
	} {
		if lo, hi := binomialInterval(tc.m, tc.p, tc.a); lo != tc.lo || hi != tc.hi {
			t.Errorf("binomialInterval(%d, %g, %g) = [%d, %d], want [%d, %d]", tc.m, tc.p, tc.a, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestExpectedFPR checks the Bloom rate over the exact load of a table's
// blocks against bloom's Poisson formula: the same for many blocks, lower
// for few.
func TestExpectedFPR(t *testing.T) {
	build := func(n int) *bloom.Blocked {
		hashes := make([]uint64, n)
		for i := range hashes {
			hashes[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		f, err := bloom.BuildBlocked(hashes, 10)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	small, large := build(100), build(200_000)
	if e, f := expectedFPR(small), small.ExpectedFalsePositiveRate(); !(e < f*0.95) || math.Abs(e-0.00796) > 0.00002 {
		t.Errorf("100 keys in 2 blocks: exact %v, Poisson %v; want about 0.796%%, below Poisson", e, f)
	}
	if e, f := expectedFPR(large), large.ExpectedFalsePositiveRate(); math.Abs(e-f)/f > 0.002 {
		t.Errorf("200,000 keys: exact %v, Poisson %v; want equal within 0.2%%", e, f)
	}
	fuse8, err := fuse.Build([]uint64{1, 2, 3, 4, 5}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if e := expectedFPR(fuse8); e != 1.0/256 {
		t.Errorf("fuse 8-bit: %v, want 1/256", e)
	}
}

// TestBenchFilterFlags runs the bench with each kind of filter flag and
// checks the report names the filter of each level.
func TestBenchFilterFlags(t *testing.T) {
	// Tables of about 2,000 keys or more, the last of a level too: big
	// enough for fuse filters.
	big := []string{"-n", "6000", "-reads", "1000", "-memtable-size", "256KiB", "-base-level-size", "256KiB",
		"-target-file-size", "300KiB", "-cache-size", "16KiB", "-workloads", "fillrandom,readmissing"}
	for _, tc := range []struct {
		args     []string
		settings string // in the settings line
		level    string // a level's filter column
	}{
		{[]string{"-filter", "fuse:8"}, "filters fuse:8 from L0", "fuse 8-bit"},
		{[]string{"-filter", "bloom:12"}, "filters bloom:12 from L0", "bloom"},
		{[]string{"-levels", "fuse:16,fuse:12"}, "filters fuse:16,fuse:12 from L0", "fuse 12-bit"},
		{[]string{"-allocation", "best"}, "10 bits/key best", ""},
		// Dynamic sizing puts the data in L6, where Pebble's widths are 4.
		{[]string{"-allocation", "progressive"}, "10 bits/key progressive", "fuse 4-bit"},
		{[]string{"-allocation", "progressive", "-level-sizing", "static"}, "×10 per level, static", "fuse 16-bit"},
		{nil, "snappy (L0 and the base level none)", ""},
		{[]string{"-top-compression", "snappy"}, "10 bits/key uniform, snappy, block cache", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := runBenchCmd(t, append(big, tc.args...)...)
			if !strings.Contains(out, tc.settings) {
				t.Errorf("no %q in the settings:\n%s", tc.settings, out)
			}
			header := benchRow(t, out, "level")
			if strings.Join(header[:5], " ") != "level tables size filter bits/key" {
				t.Errorf("level header %q", header)
			}
			if tc.level != "" && !strings.Contains(out, "  "+tc.level+"  ") {
				t.Errorf("no level with %q filters:\n%s", tc.level, out)
			}
		})
	}
}

// TestBenchPrefixWorkloads runs the prefix workloads in the bench: a seek
// of a missing prefix skips the tables its prefix filter rules out.
func TestBenchPrefixWorkloads(t *testing.T) {
	out := runBenchCmd(t, append(tinyBench, "-workloads", "fillprefix,seekprefix,seekprefixmissing")...)
	if !strings.Contains(out, "with prefixes (workload.prefix-to-slash)") {
		t.Errorf("no prefix extractor in the settings:\n%s", out)
	}
	present, missing := benchRow(t, out, "seekprefix"), benchRow(t, out, "seekprefixmissing")
	if tables, skipped := field(t, missing, 7), field(t, missing, 8); tables < 1 || skipped < 0.9*tables {
		t.Errorf("seekprefixmissing: %v tables per seek, %v skipped; want nearly all skipped:\n%s", tables, skipped, out)
	}
	if fp := field(t, missing, 9); fp > 0.1 {
		t.Errorf("seekprefixmissing: %v tables sought in vain per seek:\n%s", fp, out)
	}
	if blocks := field(t, present, 10) + field(t, present, 11); blocks < 1 {
		t.Errorf("seekprefix: %v blocks per seek, want at least one:\n%s", blocks, out)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-workloads", "readrandom"},
		{"-workloads", "nope"},
		{"-policy", "nope"}, // the former name of -allocation
		{"-allocation", "nope"},
		{"-filter", "bloom"},
		{"-filter", "xor:8"},
		{"-filter", "fuse:17"},
		{"-filter", "fuse:7.5"},
		{"-filter", "bloom:0.5"},
		{"-filter", "fuse:8,fuse:8"}, // one filter; -levels takes a list
		{"-filter", "fuse:8", "-levels", "fuse:8"},
		{"-filter", "fuse:8", "-bits-per-key", "12"},
		{"-levels", "fuse:8", "-allocation", "best"},
		{"-levels", "fuse:16,fuse:16,fuse:16,fuse:12,fuse:10,fuse:8,fuse:4,fuse:4"}, // more than the levels
		{"-filter", "none", "-workloads", "fillprefix,seekprefix"},
		{"-sweep", "-filter", "fuse:8"},
		{"-sweep", "-sweep-policies", "uniform,nope"},
		{"-sweep", "-sweep-bits", "0.5"},
		{"-sweep", "-sweep-fuse", "17"},
		{"-sweep", "-sweep-sizes", "0"},
		{"-sweep", "-sweep-probes", "0"},
		{"-prefix-keys", "0"},
		{"-bits-per-key", "0.5"},
		{"-cache-size", "3 parsecs"},
		{"-miss-ratio", "2"},
		{"-compression", "lz4"},
		{"-top-compression", "lz4"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"bench"}, args...), &stdout, &stderr); code != exitUsage {
			t.Errorf("bench %q: exit %d, want %d (%s)", args, code, exitUsage, stderr.String())
		}
	}
	var s sizeFlag
	if err := s.Set("1.5MiB"); err != nil || s != 3<<19 {
		t.Errorf("sizeFlag 1.5MiB = %d, %v", s, err)
	}
}

// treeState is everything about the tree under root that a write could
// change: each path's type, mode, size, modification time and contents.
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			s += " " + string(b)
		}
		state[path] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// TestBenchRefusesUsedDir gives bench a -dir that already holds something:
// a database, an unrelated file, an empty subdirectory (the sweep's own
// subdirectories are named 0, 1, …), or a file instead of a directory.
// bench must not open an existing database there and write its keys into
// it: it must refuse with a usage error naming -dir, before it writes
// anything, and leave the path byte for byte as it was. A new or an empty
// directory is accepted.
func TestBenchRefusesUsedDir(t *testing.T) {
	for _, tc := range []struct {
		name     string
		make     func(t *testing.T, dir string) string // returns the -dir to give
		mentions string
	}{
		{"database", func(t *testing.T, dir string) string {
			db, err := bloomkv.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Put([]byte("mine"), []byte("precious"), bloomkv.Sync); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "a database's files"},
		{"unrelated file", func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("keep me"), 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "notes.txt"},
		{"empty subdirectory", func(t *testing.T, dir string) string {
			if err := os.Mkdir(filepath.Join(dir, "0"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "such as 0"},
		{"a file", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "file")
			if err := os.WriteFile(path, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := tc.make(t, root)
			before := treeState(t, root)
			for _, extra := range [][]string{nil, {"-sweep", "-sweep-n", "2000", "-sweep-reads", "500"}} {
				var stdout, stderr bytes.Buffer
				args := append(append([]string{"bench"}, tinyBench...), extra...)
				code := run(append(args, "-dir", dir), &stdout, &stderr)
				if code != exitUsage || !strings.Contains(stderr.String(), "-dir") || !strings.Contains(stderr.String(), tc.mentions) {
					t.Fatalf("bench %q: exit %d, stderr %q; want exit %d naming -dir and mentioning %q",
						extra, code, stderr.String(), exitUsage, tc.mentions)
				}
				if after := treeState(t, root); !maps.Equal(before, after) {
					t.Fatalf("bench %q changed %s:\nbefore %q\nafter  %q", extra, root, before, after)
				}
			}
		})
	}
	for _, name := range []string{"empty", "new"} {
		t.Run("accepts "+name, func(t *testing.T) {
			dir := t.TempDir()
			if name == "new" {
				dir = filepath.Join(dir, "db")
			}
			runBenchCmd(t, append(tinyBench, "-n", "500", "-reads", "100", "-workloads", "fillrandom,readrandom", "-dir", dir)...)
			if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
				t.Fatalf("no database in the -dir given: %v", err)
			}
		})
	}
}

// TestFillInTurn checks the order of fillInTurn's fills — side 1 first in
// the first pair, then alternating — that each rate lands on its side, and
// that an error stops the fills.
func TestFillInTurn(t *testing.T) {
	var order [][2]int
	rates, err := fillInTurn(3, func(p, i int) (float64, error) {
		order = append(order, [2]int{p, i})
		return float64(10*p + i), nil
	})
	want := [][2]int{{0, 1}, {0, 0}, {1, 0}, {1, 1}, {2, 1}, {2, 0}}
	if err != nil || !slices.Equal(order, want) {
		t.Fatalf("fills in the order %v (%v), want %v", order, err, want)
	}
	if !slices.Equal(rates, [][2]float64{{0, 1}, {10, 11}, {20, 21}}) {
		t.Fatalf("rates %v, want each pair's two sides in place", rates)
	}
	calls := 0
	boom := errors.New("boom")
	if _, err := fillInTurn(3, func(p, i int) (float64, error) {
		calls++
		return 0, boom
	}); !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("after an error: %v, %d fills; want boom after one", err, calls)
	}
}

// TestBenchLevelBitsAddUp checks that the levels' bits per key, weighted
// by their entries, add up to the bits the run's filters take in memory
// (Metrics.FilterMemory, the oracle) within 1%: each level's figure is its
// filters' bits over its keys, not a mean over its tables, which a level's
// small tables (their filters' fixed parts spread over few keys) pull up.
func TestBenchLevelBitsAddUp(t *testing.T) {
	rep, _ := runBenchOut(t, "fillrandom")
	var bits float64
	var entries uint64
	for _, l := range rep.Levels {
		bits += l.BitsPerKey * float64(l.Entries)
		entries += l.Entries
	}
	if entries != uint64(rep.Settings.Keys) {
		t.Fatalf("the levels hold %d entries, the run wrote %d keys", entries, rep.Settings.Keys)
	}
	want := 8 * float64(rep.FilterMemory)
	if math.Abs(bits-want) > 0.01*want {
		t.Errorf("levels' bits per key × entries add up to %.0f bits, the filters take %.0f (%+.2f%%); levels %+v",
			bits, want, 100*(bits-want)/want, rep.Levels)
	}
}

// TestBenchSizeErrors checks that a size the DB refuses is reported as the
// flag that set it, in the flag's units, with one "bloomkv" prefix.
func TestBenchSizeErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-memtable-size", "8GiB"}, "bloomkv bench: -memtable-size 8.00 GiB: outside [64 KiB, 1 GiB]\n"},
		{[]string{"-target-file-size", "1B"}, "bloomkv bench: -target-file-size 1 B: must be at least 1024\n"},
		{[]string{"-key-size", "100000"}, "bloomkv bench: -key-size 100000: more than a key may hold (MaxKeySize, 65,536 bytes (64.0 KiB))\n"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"bench", "-n", "10", "-reads", "1", "-workloads", "fillrandom", "-dir", filepath.Join(t.TempDir(), "db")}, tc.args...)
		if code := run(args, &stdout, &stderr); code != exitUsage || stderr.String() != tc.want {
			t.Errorf("%q: exit %d, stderr %q; want exit %d, %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
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
	wantHeader := "workload ops ops/s p50 p99 tables/Get filter neg/Get false pos/Get blocks file/Get blocks cache/Get bytes/Get"
	if got := strings.Join(header, " "); got != wantHeader {
		t.Errorf("header %q, want %q", got, wantHeader)
	}
	for _, w := range []string{"fillrandom", "readrandom", "readmissing", "readmixed", "scan"} {
		row := benchRow(t, out, w)
		if len(row) != 11 {
			t.Errorf("%s row has %d fields: %q", w, len(row), row)
		}
	}
	if !strings.Contains(out, "filter memory:") || !strings.Contains(out, "predicted FPR") {
		t.Errorf("no filter memory or per-level FPR in:\n%s", out)
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
	if neg := field(t, benchRow(t, out, "readmissing"), 6); neg <= 0 {
		t.Errorf("readmissing: filter negatives per Get %v, want > 0:\n%s", neg, out)
	}
	if tables := field(t, benchRow(t, out, "readmissing"), 5); tables < 1 {
		t.Errorf("readmissing: tables per Get %v, want ≥ 1:\n%s", tables, out)
	}

	off := runBenchCmd(t, append(tinyBench, "-bits-per-key", "0", "-workloads", "fillrandom,readmissing")...)
	row := benchRow(t, off, "readmissing")
	if neg := field(t, row, 6); neg != 0 {
		t.Errorf("without filters: filter negatives per Get %v, want 0:\n%s", neg, off)
	}
	if blocks := field(t, row, 8) + field(t, row, 9); blocks < 1 {
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

func TestBenchOut(t *testing.T) {
	dir := t.TempDir()
	runBenchCmd(t, append(tinyBench, "-workloads", "fillrandom,readmissing", "-out", dir)...)
	var rep benchReport
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Workloads) != 2 || rep.Workloads[1].FilterNegativesPerGet <= 0 || rep.FilterMemory == 0 {
		t.Errorf("bench.json: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.csv")); err != nil {
		t.Error(err)
	}
}

func TestBenchSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("17 databases")
	}
	dir := t.TempDir()
	out := runBenchCmd(t, append(tinyBench, "-sweep", "-sweep-n", "2000", "-sweep-reads", "500", "-out", dir)...)
	var rep sweepReport
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 17 {
		t.Fatalf("%d sweep rows, want 17:\n%s", len(rep.Rows), out)
	}
	none, ten := rep.Rows[0], rep.Rows[9] // 0 bits; 10 bits Uniform
	if none.Policy != "none" || ten.BitsPerKey != 10 || ten.Policy != bloomkv.Uniform.String() {
		t.Fatalf("rows out of order: %+v, %+v", none, ten)
	}
	if none.FilterMemory != 0 || none.MissingBlocks < 1 || ten.MissingBlocks >= none.MissingBlocks/4 {
		t.Errorf("blocks per missing Get: %v without filters, %v at 10 bits", none.MissingBlocks, ten.MissingBlocks)
	}
	for _, name := range []string{"sweep.csv", "fpr.svg", "reads.svg", "latency.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".svg") && (!bytes.HasPrefix(b, []byte("<svg")) || !bytes.Contains(b, []byte("<polyline"))) {
			t.Errorf("%s is not a chart: %.200s", name, b)
		}
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-workloads", "readrandom"},
		{"-workloads", "nope"},
		{"-policy", "best"},
		{"-bits-per-key", "0.5"},
		{"-cache-size", "3 parsecs"},
		{"-miss-ratio", "2"},
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

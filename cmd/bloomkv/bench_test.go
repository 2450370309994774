package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
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
	none, ten := rep.Rows[0], rep.Rows[9] // 0 bits; 10 bits uniform
	if none.Allocation != "none" || ten.BitsPerKey != 10 || ten.Allocation != bloomkv.UniformAllocation.String() {
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
		{"-policy", "best"}, // the former name of -allocation
		{"-allocation", "best"},
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
// bench used to open an existing database there and write its keys into
// it; it must refuse with a usage error naming -dir, before it writes
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

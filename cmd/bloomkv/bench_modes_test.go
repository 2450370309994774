package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
)

// osTable returns the rows of the bench's table of operating-system
// counts, by workload: each row's fields after the workload's name.
func osTable(t *testing.T, out string) map[string][]string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\n  workload  CPU s")
	if !ok {
		// the header is right-aligned: find it by its columns
		i := strings.Index(out, "CPU s")
		if i < 0 {
			t.Fatalf("no table of OS counts in:\n%s", out)
		}
		rest = out[i:]
		rest = rest[strings.IndexByte(rest, '\n')+1:]
	} else {
		rest = rest[strings.IndexByte(rest, '\n')+1:]
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(rest, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "peak") || strings.HasSuffix(f[0], ":") {
			break
		}
		rows[f[0]] = f[1:]
	}
	return rows
}

// TestBenchCold runs the bench with -cold on a database in the package's
// directory (on the checkout's disk: a tmpfs keeps its pages whatever is
// dropped) and checks the device columns against the file-system ones:
// every read workload read from the device; the bytes read from the device
// are at most what the read calls returned plus a page per call (bloomkv
// reads its tables without read-ahead, so the device reads only the pages
// a call touches); a workload that read device bytes completed at least
// one device read; the missing-key Gets, which the filters answer, read
// less from the device than the present-key ones; and a MultiGet reads no
// more per key than a Get. It needs Linux and root, as -cold does.
func TestBenchCold(t *testing.T) {
	dir, err := os.MkdirTemp(".", "cold-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// 20,000 keys (about 2.3 MB), so that 5,000 present-key Gets read
	// most of the tables' pages and the missing-key ones few.
	out := runBenchCmd(t, append(tinyBench, "-n", "20000", "-reads", "5000", "-workloads", "fillrandom,readrandom,readmissing,multiget", "-cold", "-dir", filepath.Join(dir, "db"))...)
	rows := osTable(t, out)
	const pageKiB = 4
	perOp := map[string]float64{}
	for _, w := range []string{"readrandom", "readmissing", "multiget"} {
		row := rows[w]
		// CPU s, stall, write amp, space amp, reads/op, read KiB/op,
		// device KiB/op, device reads/op
		if len(row) != 8 {
			t.Fatalf("%s: OS row %q, want 8 fields:\n%s", w, row, out)
		}
		reads, readKiB, devKiB, devReads := field(t, row, 4), field(t, row, 5), field(t, row, 6), field(t, row, 7)
		if devKiB > readKiB+pageKiB*reads+0.01 {
			t.Errorf("%s: %.2f KiB/op from the device, more than the %.2f KiB/op the %.2f read calls/op returned plus a page each", w, devKiB, readKiB, reads)
		}
		if devKiB > 0 && devReads <= 0 {
			t.Errorf("%s: %.2f KiB/op from the device in %.3f device reads/op", w, devKiB, devReads)
		}
		perOp[w] = devKiB
	}
	if perOp["readrandom"] <= 0 || perOp["readmissing"] >= perOp["readrandom"] {
		t.Errorf("device KiB per Get: readrandom %.3f, readmissing %.3f; want readrandom > readmissing, > 0:\n%s", perOp["readrandom"], perOp["readmissing"], out)
	}
	// A batch reads each block once, however many of its 64 keys it holds:
	// per key, no more from the device than a Get (10% for the noise of
	// which pages two workloads' random keys touch).
	if perKey := perOp["multiget"] / 64; perKey <= 0 || perKey > 1.1*perOp["readrandom"] {
		t.Errorf("device KiB per key: multiget %.3f, readrandom %.3f; want multiget > 0 and at most readrandom's:\n%s", perKey, perOp["readrandom"], out)
	}
	if !strings.Contains(out, "device reads/op: reads the database's block device completed") {
		t.Errorf("the report does not say what device reads/op counts:\n%s", out)
	}
}

// TestBenchYCSBThreads runs the YCSB load and workloads A–F on two threads
// and checks that each workload reports its operations, A–F their mix by
// kind, and the reads among them their read amplification per Get.
func TestBenchYCSBThreads(t *testing.T) {
	out := runBenchCmd(t, append(tinyBench, "-threads", "2", "-ycsb", "fieldcount=2,fieldlength=50",
		"-workloads", "ycsb-load,ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-e,ycsb-f")...)
	for _, w := range []string{"ycsb-load", "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"} {
		row := benchRow(t, out, w)
		if ops := row[1]; (w == "ycsb-load" && ops != "4,000") || (w != "ycsb-load" && ops != "2,000") {
			t.Errorf("%s: %s ops", w, ops)
		}
		if w == "ycsb-c" && field(t, row, 7) < 1 {
			t.Errorf("ycsb-c: %v tables per Get, want ≥ 1 (every read probes a table)", field(t, row, 7))
		}
	}
	for _, want := range []string{"ycsb-a: read ", ", update ", "ycsb-d: read ", ", insert ", "ycsb-e: insert ", ", scan ", "ycsb-f: read ", ", readmodifywrite "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the mix lines:\n%s", want, out)
		}
	}
	if code := run(append([]string{"bench"}, append(tinyBench, "-threads", "2", "-workloads", "filloverwrite")...), io.Discard, io.Discard); code == 0 {
		t.Error("filloverwrite on two threads: exit 0")
	}
}

// TestBenchSizes runs the workloads at two sizes and checks the scale
// table (a row per size for each read workload), scale.json and the
// charts.
func TestBenchSizes(t *testing.T) {
	dir := t.TempDir()
	out := runBenchCmd(t, append(tinyBench, "-sizes", "2000,4K", "-workloads", "fillrandom,readmissing", "-out", dir)...)
	_, scale, ok := strings.Cut(out, "scale: ")
	if !ok {
		t.Fatalf("no scale table in:\n%s", out)
	}
	for _, w := range []string{"readmissing"} {
		var keys []string
		for _, line := range strings.Split(scale, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[0] == w {
				keys = append(keys, f[1])
			}
		}
		if strings.Join(keys, " ") != "2,000 4,000" {
			t.Errorf("%s: scale rows at %q, want 2,000 and 4,000:\n%s", w, keys, scale)
		}
		for _, m := range []string{"ops", "p99", "blocks"} {
			checkChart(t, filepath.Join(dir, "scale-"+w+"-"+m))
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "scale.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reps []benchReport
	if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 2 || reps[0].Settings.Keys != 2000 || reps[1].Settings.Keys != 4000 {
		t.Errorf("scale.json: %d reports (%v)", len(reps), err)
	}
	for _, rep := range reps {
		if o := rep.Workloads[0].OS; o == nil || o.SpaceAmp <= 0 || o.CPUSeconds <= 0 {
			t.Errorf("%d keys: fillrandom's OS counts %+v, want a space amplification and CPU time", rep.Settings.Keys, o)
		}
		if o := rep.Reopen; o == nil || o.Tables == 0 || o.ManifestBytes <= 0 {
			t.Errorf("%d keys: reopen %+v, want its tables and manifest", rep.Settings.Keys, o)
		}
	}
	_, growth, ok := strings.Cut(scale, "growth: ")
	rows := 0
	for _, line := range strings.Split(growth, "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "2,000" || f[0] == "4,000") {
			rows++
		}
	}
	if !ok || rows != 2 {
		t.Errorf("growth table: %d rows, want one at 2,000 and at 4,000 keys:\n%s", rows, scale)
	}
}

// TestMeasureReopen checks the reopen's figures against what the test
// wrote: writes left in the memtable are WAL bytes to replay, at least
// their keys and values, and no table; once flushed, the WAL bytes are
// gone and the tables are those the DB listed before it closed.
func TestMeasureReopen(t *testing.T) {
	dir := t.TempDir()
	opts := &bloomkv.Options{MemtableSize: 1 << 20}
	db, err := bloomkv.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	const n, valueSize = 1000, 100
	value := make([]byte, valueSize)
	for i := range n {
		if err := db.Put(fmt.Appendf(nil, "key%06d", i), value, bloomkv.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := measureReopen(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	written := int64(n * (len("key000000") + valueSize))
	if r.WALBytes < written || r.WALBytes > 2*written || r.Tables != 0 || r.ManifestBytes <= 0 || r.OpenSeconds <= 0 {
		t.Errorf("unflushed: %+v, want WAL bytes in [%d, %d], no table, a manifest and a time", r, written, 2*written)
	}

	if db, err = bloomkv.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, l := range db.Metrics().Levels {
		tables += l.Tables
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err = measureReopen(dir, opts); err != nil {
		t.Fatal(err)
	}
	if tables == 0 || r.Tables != tables || r.WALBytes >= written {
		t.Errorf("flushed: %+v, want %d tables and under %d WAL bytes", r, tables, written)
	}
}

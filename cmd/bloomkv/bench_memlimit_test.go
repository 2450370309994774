package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/race"
)

// TestMain lets this test binary act as the child that `bench -memlimit`
// runs in its memory cgroup: the parent re-executes os.Executable() —
// here, the test binary — with memcgEnv set and bench's arguments.
func TestMain(m *testing.M) {
	if os.Getenv(memcgEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestBenchMemLimit runs the bench under -memlimit with tables larger
// than the cap leaves for the page cache and checks that every workload,
// the fill too, reports its device columns; that the present-key Gets
// read from the device, the cached pages no longer holding the tables;
// that the missing-key Gets, which the filters answer, read less; and
// that the cgroup's peak, the page cache counted, stayed within the cap.
// Without the race detector: about 27 MiB of tables in 36 MiB, of which
// the process holds some 20. With it, whose shadow memory more than
// triples the child's resident memory (66 MiB at its peak here): about 60
// MiB of tables in 96 MiB, which leaves the page cache some 30, from a
// quarter of the keys with values of 800 bytes (still in the tables: below
// the value separation's 1 KiB), so that the race detector, which slows
// the bench tenfold, checks a quarter of the operations. It needs
// Linux, root and a memory cgroup (CI runs as root) and fails without
// them.
func TestBenchMemLimit(t *testing.T) {
	dir, err := os.MkdirTemp(".", "memlimit-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	limit, keys, valueSize := 36<<20, "300000", "100"
	if race.Enabled {
		limit, keys, valueSize = 96<<20, "125000", "800"
	}
	capped := humanize.Bytes(uint64(limit)) // as the report prints it: "36.0 MiB"
	out := runBenchCmd(t, "-n", keys, "-value-size", valueSize, "-reads", "20000", "-workloads", "fillrandom,readrandom,readmissing",
		"-memlimit", fmt.Sprintf("%dMiB", limit>>20), "-dir", filepath.Join(dir, "db"))
	rows := osTable(t, out)
	perOp := map[string]float64{}
	for _, w := range []string{"fillrandom", "readrandom", "readmissing"} {
		row := rows[w]
		if len(row) != 8 {
			t.Fatalf("%s: OS row %q, want 8 fields (the device's among them):\n%s", w, row, out)
		}
		perOp[w] = field(t, row, 6)
	}
	t.Logf("device KiB per operation: %v", perOp)
	if perOp["readrandom"] <= 0 || perOp["readmissing"] >= perOp["readrandom"] {
		t.Errorf("device KiB per Get: readrandom %.3f, readmissing %.3f; want readrandom > readmissing, > 0:\n%s", perOp["readrandom"], perOp["readmissing"], out)
	}
	if !strings.Contains(out, "in a memory cgroup of "+capped) || !strings.Contains(out, "in its memory cgroup of "+capped+" (-memlimit)") {
		t.Errorf("the report does not say the run was capped:\n%s", out)
	}
	m := regexp.MustCompile(`memory cgroup \(-memlimit\): limit ` + regexp.QuoteMeta(capped) + `, peak (\S+ \S+) `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line of the cgroup's peak in:\n%s", out)
	}
	var peak sizeFlag
	if err := peak.Set(m[1]); err != nil || peak == 0 || int64(peak) > int64(limit) {
		t.Errorf("cgroup peak %q (%d, %v): want within (0, %d]", m[1], int64(peak), err, limit)
	}
}

// TestBenchMemLimitKilled runs the bench in a memory cgroup too small for
// its memtable: the OOM killer kills the child, and the bench fails with
// an error that says the cap killed it, not a bare "signal: killed". It
// needs Linux, root and a memory cgroup, and fails without them.
func TestBenchMemLimitKilled(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "-n", "20000", "-reads", "1000", "-workloads", "fillrandom", "-memlimit", "6MiB", "-dir", filepath.Join(t.TempDir(), "db")}, &stdout, &stderr)
	if want := "killed by the memory cap: the OOM killer of its memory cgroup of 6291456 bytes (6 MiB) killed it"; code == 0 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want a failure saying %q", code, stderr.String(), want)
	}
}

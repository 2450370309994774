package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// TestMain lets this test binary act as the command's child process: the
// parent re-executes os.Executable() — here, the test binary — with childEnv
// set and the child's flags.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestChildProcesses runs every engine in a child process on a tiny data
// set and checks that each reports every workload's operations and a peak
// RSS above 0, and that the table shows it.
func TestChildProcesses(t *testing.T) {
	o := &options{n: 2000, reads: 500, keySize: workload.DefaultKeySize, valueSize: workload.DefaultValueSize,
		scanLength: 20, missRatio: 0.5, seed: workload.DefaultSeed, dir: t.TempDir(),
		workloads: "fillrandom,readrandom,readmissing,readmixed,scan"}
	ws, err := workload.Parse(o.workloads)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := workload.NewKeys(o.n, o.keySize, o.valueSize, o.seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &workload.Config{Keys: keys, Reads: o.reads, MissRatio: o.missRatio, ScanLength: o.scanLength}
	runs, err := runEngines(o, peers.Engines, cfg, ws, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(peers.Engines) {
		t.Fatalf("%d runs for %d engines", len(runs), len(peers.Engines))
	}
	for _, r := range runs {
		if r.MaxRSS <= 0 {
			t.Errorf("%s: peak RSS %d", r.Name, r.MaxRSS)
		}
		for j, res := range r.Results {
			if res.Workload != ws[j] || res.Ops != cfg.Ops(ws[j]) || res.opsPerSec() <= 0 {
				t.Errorf("%s: %s: %+v", r.Name, ws[j], res)
			}
		}
		t.Logf("%s: peak RSS %.1f MiB", r.Name, mib(r.MaxRSS))
	}
	var out bytes.Buffer
	printTables(&out, runs, ws)
	if !strings.Contains(out.String(), "peak RSS") {
		t.Errorf("no peak RSS in the output:\n%s", out.String())
	}
}

// TestRunInProcess runs the whole command in this process with
// -in-process, and a child's -engine mode, on a tiny data set.
func TestRunInProcess(t *testing.T) {
	var out, errs bytes.Buffer
	args := []string{"-n", "1000", "-reads", "200", "-engines", "bloomkv,pebble", "-workloads", "fillrandom,readrandom", "-in-process", "-dir", t.TempDir()}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "fillrandom") || strings.Contains(out.String(), "peak RSS") {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	args = []string{"-engine", "bloomkv", "-n", "1000", "-reads", "200", "-workloads", "fillrandom", "-dir", t.TempDir()}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("child exit %d: %s", code, errs.String())
	}
	if !strings.HasPrefix(out.String(), `[{"workload":"fillrandom","ops":1000,`) {
		t.Errorf("child output: %s", out.String())
	}
}

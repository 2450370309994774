// Command peers runs bloomkv's db_bench-style workloads (package
// github.com/bloomkv/bloomkv/internal/workload, the same keys, values and seeds as
// `bloomkv bench`) against bloomkv, pebble, goleveldb and badger, one
// engine after the other on a fresh database each, and prints each engine's
// ops/s per workload and its ratio to bloomkv's (above 1: faster than
// bloomkv), each engine's peak resident set size, then p50/p99 latencies.
//
// Each engine runs in a child process of its own — this binary re-executed
// with the hidden flag -engine NAME and the same settings, which prints its
// results as JSON on stdout — so that the parent can read the child's peak
// RSS (getrusage's ru_maxrss, from os.ProcessState.SysUsage) after it
// exits: one engine's memory is then never counted against another's. The
// peak includes what every engine's child holds alike: the Go runtime, the
// workload's values (1 MiB) and fillrandom's order (8 bytes per key).
// -in-process runs every engine in this process instead, as before, and
// reports no RSS.
//
// Usage, from the bench module's directory:
//
//	go run ./cmd/peers [-n 1000000] [-reads 200000] [-engines bloomkv,pebble,goleveldb,badger]
//	                   [-workloads fillrandom,readrandom,readmissing,readmixed,scan] [-in-process]
//
// Every engine gets 10 bits/key filters on every level, the same block
// cache (8 MiB), snappy, the same memtable (4 MiB), L1 size (16 MiB, ×10)
// and table size (2 MiB), the WAL on and no fsync per write; the settings
// that could not be made equal are listed in package peers' documentation
// and at the end of the output.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/workload"
)

const notEqual = `Settings that could not be made equal (see go doc ./peers):
  - badger's filter is sized by false-positive rate (0.01, about 9.6 bits/key), the others by 10 bits/key;
    goleveldb's and badger's filters are classic Bloom filters, bloomkv's and pebble's cache-line-blocked.
  - pebble's Get never consults L6 filters (only iterators with UseL6Filters do), and most of its
    data is in L6: its missing-key Gets read blocks there.
  - after a fill, bloomkv and pebble flush and wait for compactions; goleveldb and badger cannot flush
    without closing, so their reads start with part of the fill in the memtable.
  - pebble and badger size levels dynamically; badger's tables grow ×2 per level; pebble's and
    goleveldb's filters live in the block cache, bloomkv's and badger's beside it.
  - background compactions: bloomkv 1, pebble 1, goleveldb 1, badger 4; badger Puts and Gets are
    one transaction each.`

// childEnv is set in every child's environment, so that a test binary
// re-executed as a child (see main_test.go) knows to act as one.
const childEnv = "BLOOMKV_PEERS_CHILD"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// result is one workload's outcome, as a child reports it to the parent.
type result struct {
	Workload  workload.Workload `json:"workload"`
	Ops       int               `json:"ops"`
	ElapsedNS int64             `json:"elapsed_ns"`
	Missing   int               `json:"missing"`
	P50NS     int64             `json:"p50_ns"`
	P99NS     int64             `json:"p99_ns"`
}

func (r *result) opsPerSec() float64 {
	if r.ElapsedNS <= 0 {
		return 0
	}
	return float64(r.Ops) / (float64(r.ElapsedNS) / 1e9)
}

func fromWorkload(rs []*workload.Result) []result {
	out := make([]result, len(rs))
	for i, r := range rs {
		out[i] = result{Workload: r.Workload, Ops: r.Ops, ElapsedNS: int64(r.Elapsed), Missing: r.Missing,
			P50NS: int64(r.Latency.Percentile(0.5)), P99NS: int64(r.Latency.Percentile(0.99))}
	}
	return out
}

// engineRun is one engine's results and, when it ran in a child, the
// child's peak RSS in bytes (0: not measured).
type engineRun struct {
	Name    string
	Results []result
	MaxRSS  int64
}

// options are the command's flags.
type options struct {
	n, reads, keySize, valueSize, scanLength int
	engines, workloads, dir, engine          string
	seed                                     uint64
	missRatio                                float64
	inProcess                                bool
}

// childArgs are the flags that make a child run engine name with o's
// settings.
func (o *options) childArgs(name string) []string {
	return []string{"-engine", name, "-n", strconv.Itoa(o.n), "-reads", strconv.Itoa(o.reads),
		"-workloads", o.workloads, "-seed", strconv.FormatUint(o.seed, 10),
		"-key-size", strconv.Itoa(o.keySize), "-value-size", strconv.Itoa(o.valueSize),
		"-miss-ratio", strconv.FormatFloat(o.missRatio, 'g', -1, 64),
		"-scan-length", strconv.Itoa(o.scanLength), "-dir", o.dir}
}

// run is the command: main with its arguments and output streams. It
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.n, "n", 1_000_000, "keys the fills write")
	fs.IntVar(&o.reads, "reads", 200_000, "Gets per read workload (scan: reads/scan-length scans)")
	fs.StringVar(&o.engines, "engines", "bloomkv,pebble,goleveldb,badger", "engines to run, bloomkv first for the ratios")
	fs.StringVar(&o.workloads, "workloads", "fillrandom,readrandom,readmissing,readmixed,scan", "workloads, in order")
	fs.Uint64Var(&o.seed, "seed", workload.DefaultSeed, "seed of values and workloads")
	fs.IntVar(&o.keySize, "key-size", workload.DefaultKeySize, "key size in bytes")
	fs.IntVar(&o.valueSize, "value-size", workload.DefaultValueSize, "value size in bytes")
	fs.Float64Var(&o.missRatio, "miss-ratio", 0.5, "readmixed's share of missing keys")
	fs.IntVar(&o.scanLength, "scan-length", 100, "entries per scan")
	fs.StringVar(&o.dir, "dir", "", "directory for the databases (default: a temporary one, removed after)")
	fs.BoolVar(&o.inProcess, "in-process", false, "run every engine in this process (no peak RSS per engine)")
	// Hidden: set by the parent for its children, not meant for people.
	fs.StringVar(&o.engine, "engine", "", "")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: peers [flags]")
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "engine" {
				fmt.Fprintf(stderr, "  -%s\t%s (default %q)\n", f.Name, f.Usage, f.DefValue)
			}
		})
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "peers:", err)
		return code
	}
	ws, err := workload.Parse(o.workloads)
	if err != nil {
		return fail(2, err)
	}
	names := []string{o.engine}
	if o.engine == "" {
		names = strings.Split(o.engines, ",")
	}
	var es []peers.Engine
	for _, name := range names {
		e, err := peers.Lookup(strings.TrimSpace(name))
		if err != nil {
			return fail(2, err)
		}
		es = append(es, e)
	}
	keys, err := workload.NewKeys(o.n, o.keySize, o.valueSize, o.seed)
	if err != nil {
		return fail(2, err)
	}
	cfg := &workload.Config{Keys: keys, Reads: o.reads, MissRatio: o.missRatio, ScanLength: o.scanLength}
	s := peers.DefaultSettings

	if o.engine != "" { // a child: one engine, results as JSON on stdout
		if o.dir == "" {
			return fail(2, fmt.Errorf("-engine needs -dir"))
		}
		rs, err := peers.Run(es[0], o.dir, s, cfg, ws, nil)
		if err != nil {
			return fail(1, err)
		}
		if err := json.NewEncoder(stdout).Encode(fromWorkload(rs)); err != nil {
			return fail(1, err)
		}
		return 0
	}

	if o.dir == "" {
		tmp, err := os.MkdirTemp("", "bloomkv-peers-")
		if err != nil {
			return fail(1, err)
		}
		defer os.RemoveAll(tmp)
		o.dir = tmp
	}
	fmt.Fprintf(stdout, "peers: %d keys of %d B, values of %d B, seed %d; %d bits/key filters, block cache %d MiB, snappy, memtable %d MiB, L1 %d MiB ×10, tables %d MiB, WAL on without fsync\n\n",
		o.n, o.keySize, o.valueSize, o.seed, s.BitsPerKey, s.CacheSize>>20, s.MemtableSize>>20, s.BaseLevelSize>>20, s.TargetFileSize>>20)

	runs, err := runEngines(&o, es, cfg, ws, stderr)
	if err != nil {
		return fail(1, err)
	}
	printTables(stdout, runs, ws)
	return 0
}

// runEngines runs each engine, in a child process unless o.inProcess.
func runEngines(o *options, es []peers.Engine, cfg *workload.Config, ws []workload.Workload, stderr io.Writer) ([]engineRun, error) {
	var runs []engineRun
	for _, e := range es {
		start := time.Now()
		fmt.Fprintf(stderr, "%s …\n", e.Name)
		r := engineRun{Name: e.Name}
		if o.inProcess {
			rs, err := peers.Run(e, o.dir, peers.DefaultSettings, cfg, ws, nil)
			if err != nil {
				return nil, err
			}
			r.Results = fromWorkload(rs)
		} else {
			var err error
			if r.Results, r.MaxRSS, err = runChild(o, e.Name, stderr); err != nil {
				return nil, err
			}
		}
		if len(r.Results) != len(ws) {
			return nil, fmt.Errorf("%s: %d results for %d workloads", e.Name, len(r.Results), len(ws))
		}
		runs = append(runs, r)
		fmt.Fprintf(stderr, "%s done in %s\n", e.Name, time.Since(start).Round(time.Millisecond))
	}
	return runs, nil
}

// runChild runs engine name in a child process (this executable with
// -engine) and returns its results and its peak RSS in bytes.
func runChild(o *options, name string, stderr io.Writer) ([]result, int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(exe, o.childArgs(name)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s: child: %w", name, err)
	}
	var rs []result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		return nil, 0, fmt.Errorf("%s: child's results: %w", name, err)
	}
	return rs, maxRSS(cmd.ProcessState), nil
}

func printTables(stdout io.Writer, runs []engineRun, ws []workload.Workload) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s ops/s\t", r.Name)
	}
	fmt.Fprintln(tw)
	for j, w := range ws {
		fmt.Fprintf(tw, "%s\t", w)
		base := runs[0].Results[j].opsPerSec()
		for i, r := range runs {
			ops := r.Results[j].opsPerSec()
			if i == 0 {
				fmt.Fprintf(tw, "%.0f\t", ops)
			} else {
				fmt.Fprintf(tw, "%.0f (%.2f×)\t", ops, ops/base)
			}
		}
		fmt.Fprintln(tw)
	}
	if runs[0].MaxRSS > 0 {
		fmt.Fprint(tw, "peak RSS\t")
		for i, r := range runs {
			if i == 0 {
				fmt.Fprintf(tw, "%.1f MiB\t", mib(r.MaxRSS))
			} else {
				fmt.Fprintf(tw, "%.1f MiB (%.2f×)\t", mib(r.MaxRSS), float64(r.MaxRSS)/float64(runs[0].MaxRSS))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if runs[0].MaxRSS > 0 {
		fmt.Fprintf(stdout, "\n(×: ops/s and peak RSS as a ratio to %s's; above 1 is faster, or more memory.\n", runs[0].Name)
		fmt.Fprintln(stdout, " Peak RSS: each engine's child process over all its workloads, from getrusage.)")
	} else {
		fmt.Fprintf(stdout, "\n(×: ops/s as a ratio to %s's; above 1 is faster)\n", runs[0].Name)
	}
	fmt.Fprint(stdout, "\np50 / p99 latency\n")
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t", r.Name)
	}
	fmt.Fprintln(tw)
	for j, w := range ws {
		fmt.Fprintf(tw, "%s\t", w)
		for _, r := range runs {
			fmt.Fprintf(tw, "%s / %s\t", dur(time.Duration(r.Results[j].P50NS)), dur(time.Duration(r.Results[j].P99NS)))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, notEqual)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func dur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	}
	return fmt.Sprintf("%.2fms", float64(d)/1e6)
}

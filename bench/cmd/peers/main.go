// Command peers runs bloomkv's db_bench-style workloads (package
// github.com/bloomkv/bloomkv/internal/workload, the same keys, values and seeds as
// `bloomkv bench`) against bloomkv, pebble, goleveldb and badger, one
// engine after the other on a fresh database each, and prints, for every
// engine side by side:
//
//   - each workload's ops/s and its ratio to bloomkv's (above 1: faster
//     than bloomkv), and the engine's peak resident set size;
//   - each workload's p50, p99, p99.9 and max latency (max exact, the
//     percentiles within about 3%: workload.Histogram);
//   - for each fill, L0 as sampled every -sample-interval while it ran:
//     the most tables (and, for pebble, sublevels) seen against the L0 size
//     at which the engine stops writes, and the number of samples;
//   - after each read workload, for an engine that reports its filters
//     (bloomkv): their bits per key, the false-positive reads per
//     absent-key Get it expects of them and of uniform Bloom filters of
//     the same bits in every run, and the false positives it counted per
//     Get of the workload;
//   - for each fill, the tree after its settle: table bytes per level and
//     each level's share of the total, the deepest non-empty level's share,
//     the fill's write amplification (bytes written to tables by flushes
//     and compactions per WAL byte, from the previous fill's settle, or the
//     open, to this one's: bloomkv and pebble; goleveldb does not count its
//     WAL's bytes, badger neither those nor its tables') and, with
//     -space-amp, space amplification (see below).
//
// Each engine runs in a child process of its own, given the hidden flag
// -engine NAME and the same settings, which prints its results as JSON on
// stdout, so that the parent can read the child's peak RSS (getrusage's
// ru_maxrss, from os.ProcessState.SysUsage) after it exits: one engine's
// memory is then never counted against another's. The child's binary is
// this command built for its engine alone, with tags peers_single and
// peers_ENGINE (package peers' Build tags): it links in that engine's
// adapter and neither the others' nor the charts, so that its mapped pages
// (RssFile) hold no other engine's code. (The workloads' package imports
// bloomkv, but the linker keeps little of it beyond its initialization in
// the other engines' binaries.) The parent builds them all before any
// engine runs, with the go command on PATH, from the current directory
// (which must be in the bench module), into a temporary directory it
// removes at the end. -shared-binary runs every child from this executable
// instead, every engine linked in. The peak also includes what every
// engine's child holds alike: the Go runtime and the runner's own code,
// the workload's values (1 MiB) and filloverwrite's order (4 bytes per
// write, and 1 per key; fillrandom computes its order and holds none). The
// note under the peak RSS and peers.json say which binaries the children
// ran, and each one's size. -in-process runs every engine in this process
// instead, and reports no RSS.
//
// -space-amp, after the last workload, compacts each engine's whole key
// range (bloomkv's DB.Compact(nil, nil), pebble's DB.Compact from the first
// key to the last) and reports the last fill's table bytes after its
// settle over the table bytes after that compaction: the workloads after
// the last fill write nothing, so both trees hold the same live data. It
// can take longer than the fill. goleveldb and badger report "–": they
// cannot settle, so the tree after their fill lacks what their memtables
// still hold. Badger, whose overwritten values stay in its value log
// until the application asks, is then asked (RunValueLogGC at its
// suggested discard ratio, 0.5, until it finds no file to rewrite), and
// the amplification table is followed by its space amplification on disk
// after that.
//
// Then, per workload and engine, the amplification and cost columns: CPU
// seconds (the child's user and system time over the workload), read
// calls and bytes per operation (/proc/self/io syscr and rchar), tables
// and blocks per operation where the engine counts them, the share of the
// time writes stalled, and for each fill its write amplification (bytes
// written to storage, write_bytes, per user byte) and space amplification
// (the engine's directory's bytes on disk per live user byte).
//
// -cold (Linux, root) drops the page cache before each read workload and
// prints the bytes each operation read from the device (read_bytes, the
// child's own) and the reads the device completed per operation (its
// stat: every process's) beside the read calls; an engine that maps its
// tables (badger) is closed before each drop and opened again after it.
// -memlimit SIZE (Linux, root; cgroup v2, or v1 where that is what the
// machine has: package memcg) runs each engine's child in a memory cgroup
// of SIZE of its own, made before the child starts and removed after it
// exits, so that the engine's page cache counts against the cap with its
// own memory, as on a machine of that much memory; it prints, for every
// workload (the fills too), the device bytes and reads per operation as
// -cold does, and each child's cgroup peak. A child the cgroup's OOM
// killer ends has no results but a line saying so, with its cgroup's peak,
// and the other engines run as usual. -bloomkv-memory-limit SIZE gives
// bloomkv Options.MemoryLimit SIZE, from which it sizes its block cache
// and memtables instead of the settings every engine gets; -bloomkv-mmap
// WHICH gives it Options.MmapTables: all, none or handles (its default).
// -threads N runs each workload on N goroutines. The YCSB workloads
// (ycsb-load, ycsb-a … ycsb-f; -ycsb overrides their properties) run like
// the others. -sizes runs everything at each number of keys in turn and
// ends with a table of each read workload's ops/s, p99 and read calls per
// operation against n. -out DIR writes peers.json — every result, with the
// machine, the command and the date — after each engine, and the charts
// (PNG and SVG: ops/s per workload, device bytes per operation with -cold,
// and with several sizes each read workload's ops/s, p99 and reads per
// operation against n); -chart DIR draws them again from DIR/peers.json.
//
// Usage, from the bench module's directory:
//
//	go run ./cmd/peers [-n 1000000] [-reads 200000] [-engines bloomkv,pebble,goleveldb,badger]
//	                   [-workloads fillrandom,readrandom,readmissing,readmixed,scan] [-in-process | -shared-binary]
//	                   [-writes-per-key 3] [-sample-interval 100ms] [-space-amp] [-cold] [-memlimit SIZE]
//	                   [-bloomkv-memory-limit SIZE] [-bloomkv-mmap WHICH]
//	                   [-threads 1] [-ycsb props] [-sizes 1M,10M,30M] [-out DIR] [-chart DIR]
//	                   [-cpuprofile FILE]
//
// -cpuprofile FILE writes a CPU profile of each engine's run, all its
// workloads and their settles, background work included, to
// FILE.ENGINE.N.pprof (N the number of keys): read it with go tool pprof.
//
// -writes-per-key is filloverwrite's writes of each key (workload.Config's
// WritesPerKey): -n 1000000 -workloads filloverwrite,readrandom writes
// 3,000,000 times, then reads the last values back.
//
// Every engine gets 10 bits/key filters on every level, the same block
// cache (8 MiB), snappy (bloomkv, by its default, below its base level
// only), the same memtable (4 MiB), base level size
// (16 MiB, ×10 per level) and table size (2 MiB), the WAL on and no fsync
// per write; the settings that could not be made equal are listed in
// package peers' documentation and at the end of the output.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/memcg"
	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/progress"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// notEqual returns the settings that could not be made equal, for the end
// of the output: the short form of package peers' documentation.
func notEqual() string {
	return fmt.Sprintf(`Settings that could not be made equal (see go doc ./peers):
  - badger's filter is sized by false-positive rate (0.01, about 9.6 bits/key), the others by 10 bits/key;
    goleveldb's and badger's filters are classic Bloom filters, bloomkv's and pebble's cache-line-blocked.
  - pebble's Get never consults L6 filters (only iterators with UseL6Filters do), and its level
    sizing aims to keep most of its data in L6: its missing-key Gets read blocks there.
  - after a fill, bloomkv and pebble flush and wait for compactions; goleveldb and badger cannot flush
    without closing, so their reads start with part of the fill in the memtable, and their tree after
    a fill (marked *) is read unsettled.
  - bloomkv, pebble and badger size levels dynamically from the bottom (bloomkv's base level size is
    every level's floor, pebble's the most its base level targets), goleveldb statically from L1;
    badger's tables grow ×2 per level; pebble's and goleveldb's filters live in the block cache,
    bloomkv's and badger's beside it.
  - pebble reserves its memtables out of its block cache: its cache gets 8 MiB plus two memtables.
  - bloomkv writes L0 and its base level uncompressed, its default (Options.TopLevelCompression),
    snappy below; the others compress every level.
  - writes stop at an L0 of: bloomkv 36 tables, pebble 12 sublevels, goleveldb 12 tables, badger 15
    tables (it stalls flushes, so writes stop once its memtables are full).
  - background compactions: bloomkv up to GOMAXPROCS, at most 4 (%d here), one until L0 holds 12 tables,
    pebble 1, goleveldb 1, badger 4; badger Puts and Gets are one transaction each.`, min(runtime.GOMAXPROCS(0), 4))
}

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
	P999NS    int64             `json:"p999_ns"`
	MaxNS     int64             `json:"max_ns"`
	// Fills on engines that are peers.Shapers (see peers.Outcome).
	L0        *peers.L0Samples         `json:"l0,omitempty"`
	Tree      *peers.Tree              `json:"tree,omitempty"`
	Compacted *peers.Tree              `json:"compacted,omitempty"`
	CompactNS int64                    `json:"compact_ns,omitempty"`
	WriteAmp  float64                  `json:"write_amp,omitempty"` // -1: not counted; 0: not a fill on a Shaper
	Threads   int                      `json:"threads"`
	Kinds     [workload.NumOpKinds]int `json:"kinds,omitempty"` // YCSB: operations by kind (workload.OpNames)
	// Cold: a read workload run after the page cache was dropped (-cold).
	Cold bool `json:"cold,omitempty"`
	// Reopened: the engine was closed before the drop and opened again
	// after it (peers.TableMapper: its tables are memory-mapped).
	Reopened bool `json:"reopened,omitempty"`
	// OpenIO: the part of IO the reopen read.
	OpenIO *procstat.Counters `json:"open_io,omitempty"`
	// IO is what the workload read at the file system and from the device
	// (see peers.Outcome.IO); CPUNS the process's CPU time over it;
	// Engine the engine's own counters (−1: not counted); DiskBytes and
	// LiveBytes a fill's bytes on disk and user bytes.
	IO        procstat.Counters `json:"io"`
	CPUNS     int64             `json:"cpu_ns"`
	Engine    peers.Counters    `json:"engine"`
	DiskBytes int64             `json:"disk_bytes,omitempty"`
	LiveBytes int64             `json:"live_bytes,omitempty"`
	// DiskBytesCollected and ValueLogRewrites: the last fill's bytes on
	// disk after a value-log collection, and the files it rewrote
	// (peers.Outcome; -space-amp, badger).
	DiskBytesCollected int64 `json:"disk_bytes_collected,omitempty"`
	ValueLogRewrites   int   `json:"value_log_rewrites,omitempty"`
	// Memory is the most resident memory sampled during the workload
	// (peers.Outcome.Memory); nil if not sampled.
	Memory *peers.MemoryPeak `json:"memory,omitempty"`
	// Filters is the engine's filters after a read workload
	// (peers.Outcome.Filters); nil if it reports none.
	Filters *peers.Filters `json:"filters,omitempty"`
}

// perOp returns x per operation of r, NaN without operations or when x
// is negative (not counted).
func (r *result) perOp(x int64) float64 {
	if r.Ops <= 0 || x < 0 {
		return math.NaN()
	}
	return float64(x) / float64(r.Ops)
}

// writeAmp is a fill's bytes written to the device (the process's
// write_bytes over the fill and its settle) per user byte written; NaN
// for a read, and where nothing was counted (a database on a tmpfs, whose
// writes reach no device).
func (r *result) writeAmp(written int64) float64 {
	if written <= 0 || r.IO.WriteBytes <= 0 {
		return math.NaN()
	}
	return float64(r.IO.WriteBytes) / float64(written)
}

// stallShare is the share of the workload's wall time the engine held
// writes back; NaN where not counted.
func (r *result) stallShare() float64 {
	if r.Engine.Stall < 0 || r.ElapsedNS <= 0 {
		return math.NaN()
	}
	return float64(r.Engine.Stall) / float64(r.ElapsedNS)
}

func (r *result) opsPerSec() float64 {
	if r.ElapsedNS <= 0 {
		return 0
	}
	return float64(r.Ops) / (float64(r.ElapsedNS) / 1e9)
}

// spaceAmp is peers.Outcome.SpaceAmp of r's trees.
func (r *result) spaceAmp() (float64, bool) {
	return (&peers.Outcome{Tree: r.Tree, Compacted: r.Compacted}).SpaceAmp()
}

func fromOutcomes(outs []*peers.Outcome) []result {
	out := make([]result, len(outs))
	for i, o := range outs {
		h := &o.Latency
		var openIO *procstat.Counters
		if o.Reopened {
			openIO = &o.OpenIO
		}
		out[i] = result{Workload: o.Workload, Ops: o.Ops, ElapsedNS: int64(o.Elapsed), Missing: o.Missing,
			P50NS: int64(h.Percentile(0.5)), P99NS: int64(h.Percentile(0.99)),
			P999NS: int64(h.Percentile(0.999)), MaxNS: int64(h.Max()),
			L0: o.L0, Tree: o.Tree, Compacted: o.Compacted, CompactNS: int64(o.CompactTime), WriteAmp: o.WriteAmp,
			Threads: o.Threads, Kinds: o.Kinds, Cold: o.Cold, Reopened: o.Reopened, OpenIO: openIO, IO: o.IO, CPUNS: int64(o.CPU), Engine: o.Engine,
			DiskBytes: o.DiskBytes, LiveBytes: o.LiveBytes, DiskBytesCollected: o.DiskBytesCollected,
			ValueLogRewrites: o.ValueLogRewrites, Memory: o.Memory, Filters: o.Filters}
	}
	return out
}

// engineRun is one engine's results and, when it ran in a child, the
// child's peak RSS in bytes (0: not measured) and the binary it ran (nil:
// none, or a peers.json written before it was recorded).
type engineRun struct {
	Name    string
	Results []result
	MaxRSS  int64
	Binary  *binary `json:",omitempty"`
	// Memcg is what the child's memory cgroup counted (-memlimit); nil
	// without one.
	Memcg *cgroupRun `json:",omitempty"`
	// Killed is why the child was killed before it finished, by the
	// OOM killer of its memory cgroup (-memlimit): an engine that cannot
	// run under the cap is a result, not a failure of the run. Such a
	// run has no Results.
	Killed string `json:",omitempty"`
}

// options are the command's flags.
type options struct {
	n, reads, keySize, valueSize, scanLength, writesPerKey, threads int
	valueThreshold                                                  int
	engines, workloads, dir, engine, ycsb, sizes, out, chart        string
	cpuProfile                                                      string
	seed                                                            uint64
	missRatio                                                       float64
	inProcess, sharedBinary, spaceAmp, cold                         bool
	memLimit                                                        int64  // -memlimit, bytes; 0: none
	bloomkvMemoryLimit                                              int64  // -bloomkv-memory-limit, bytes; 0: none
	bloomkvMmap                                                     string // -bloomkv-mmap
	sampleInterval                                                  time.Duration
}

// settings returns the engines' settings: the defaults, with o's value
// threshold.
func (o *options) settings() peers.Settings {
	s := peers.DefaultSettings
	s.ValueThreshold = o.valueThreshold
	s.BloomkvMemoryLimit = o.bloomkvMemoryLimit
	s.BloomkvMmapTables = o.bloomkvMmap
	return s
}

// config returns the workloads' configuration of o's flags.
func (o *options) config(keys *workload.Keys) *workload.Config {
	return &workload.Config{Keys: keys, Reads: o.reads, MissRatio: o.missRatio, ScanLength: o.scanLength, WritesPerKey: o.writesPerKey,
		Threads: o.threads, YCSB: o.ycsb}
}

// measure returns what o's flags measure besides the workloads.
func (o *options) measure(engine string, cfg *workload.Config) *peers.Measure {
	m := &peers.Measure{SampleInterval: o.sampleInterval, SpaceAmp: o.spaceAmp, Cold: o.cold}
	if progress.Enabled {
		var bar *progress.Bar
		m.Progress = func(w workload.Workload) func(int) {
			bar.Done() // the previous workload's
			bar = progress.New(fmt.Sprintf("%s %s", engine, w), cfg.Ops(w))
			return bar.Func()
		}
	}
	return m
}

// childArgs are the flags that make a child run engine name with o's
// settings.
func (o *options) childArgs(name string) []string {
	return []string{"-engine", name, "-n", strconv.Itoa(o.n), "-reads", strconv.Itoa(o.reads),
		"-workloads", o.workloads, "-seed", strconv.FormatUint(o.seed, 10),
		"-key-size", strconv.Itoa(o.keySize), "-value-size", strconv.Itoa(o.valueSize), "-value-threshold", strconv.Itoa(o.valueThreshold),
		"-miss-ratio", strconv.FormatFloat(o.missRatio, 'g', -1, 64),
		"-scan-length", strconv.Itoa(o.scanLength), "-dir", o.dir,
		"-writes-per-key", strconv.Itoa(o.writesPerKey), "-sample-interval", o.sampleInterval.String(),
		"-space-amp=" + strconv.FormatBool(o.spaceAmp), "-cold=" + strconv.FormatBool(o.cold),
		"-threads", strconv.Itoa(max(o.threads, 1)), "-ycsb", o.ycsb, "-cpuprofile", o.cpuProfile,
		"-bloomkv-memory-limit", strconv.FormatInt(o.bloomkvMemoryLimit, 10), "-bloomkv-mmap", o.bloomkvMmap}
}

// profile runs engine's workloads through f, under a CPU profile written
// to o.cpuProfile.ENGINE.N.pprof when -cpuprofile is set.
func (o *options) profile(engine string, f func() error) (err error) {
	if o.cpuProfile == "" {
		return f()
	}
	name := fmt.Sprintf("%s.%s.%d.pprof", o.cpuProfile, engine, o.n)
	file, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer func() {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("-cpuprofile: %w", cerr)
		}
	}()
	if err := pprof.StartCPUProfile(file); err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer pprof.StopCPUProfile()
	return f()
}

// run is the command: main with its arguments and output streams. It
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	var o options
	if err := o.flagSet(stderr).Parse(args); err != nil {
		return 2
	}
	if err := o.run(args, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is an error in the flags: the runner exits with status 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// run runs the runner with parsed flags: the charts redrawn (-chart), or
// the flags checked (check), then one engine's workloads as a child
// (-engine: runChild), or the children prepared (prepare) and every
// engine run at each size (runSizes).
func (o *options) run(args []string, stdout, stderr io.Writer) error {
	if errNoCharts != nil && o.out+o.chart != "" {
		name := "-out"
		if o.chart != "" {
			name = "-chart"
		}
		return usageError{fmt.Errorf("%s: %w", name, errNoCharts)}
	}
	if o.chart != "" {
		return o.redraw(stdout)
	}
	ws, es, sizes, err := o.check()
	if err != nil {
		return err
	}
	s := o.settings()
	if o.engine != "" { // a child: one engine, results as JSON on stdout
		return o.runChild(es[0], s, ws, stdout)
	}
	bins, cleanup, err := o.prepare(es, stderr)
	defer cleanup()
	if err != nil {
		return err
	}
	return o.runSizes(args, es, bins, s, ws, sizes, stdout, stderr)
}

// flagSet returns the runner's flags, bound to o, with their usage on
// stderr.
func (o *options) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.n, "n", 1_000_000, "keys the fills write")
	fs.IntVar(&o.reads, "reads", 200_000, "Gets per read workload (scan: reads/scan-length scans)")
	fs.StringVar(&o.engines, "engines", "bloomkv,pebble,goleveldb,badger", "engines to run, bloomkv first for the ratios")
	fs.StringVar(&o.workloads, "workloads", "fillrandom,readrandom,readmissing,readmixed,scan", "workloads, in order")
	fs.Uint64Var(&o.seed, "seed", workload.DefaultSeed, "seed of values and workloads")
	fs.IntVar(&o.keySize, "key-size", workload.DefaultKeySize, "key size in bytes")
	fs.IntVar(&o.valueSize, "value-size", workload.DefaultValueSize, "value size in bytes")
	fs.IntVar(&o.valueThreshold, "value-threshold", 0, "size from which values go to bloomkv's blob files and badger's value log (0: bloomkv's default, 1 KiB, and badger's log from 4 KiB; pebble keeps values in its tables)")
	fs.Float64Var(&o.missRatio, "miss-ratio", 0.5, "readmixed's share of missing keys")
	fs.IntVar(&o.scanLength, "scan-length", 100, "entries per scan")
	fs.StringVar(&o.dir, "dir", "", "directory for the databases (default: a temporary one, removed after)")
	fs.BoolVar(&o.inProcess, "in-process", false, "run every engine in this process (no peak RSS per engine)")
	fs.BoolVar(&o.sharedBinary, "shared-binary", false, "run each engine's child from this executable, every engine linked in, instead of a binary built with the engine alone")
	fs.IntVar(&o.writesPerKey, "writes-per-key", workload.DefaultWritesPerKey, fmt.Sprintf("filloverwrite's writes of each key, in [1, %d] (0: the default)", workload.MaxWritesPerKey))
	fs.DurationVar(&o.sampleInterval, "sample-interval", peers.DefaultSampleInterval, "how often L0 is sampled during a fill (0: once, at its end)")
	fs.BoolVar(&o.spaceAmp, "space-amp", false, "after the last workload, compact the whole key range to measure the last fill's space amplification, and have badger collect its value log (slow)")
	fs.BoolVar(&o.cold, "cold", false, "drop the page cache before each read workload (Linux, root), so that its reads come from the device")
	fs.Func("memlimit", "run each engine's child in a memory cgroup of this `SIZE` (e.g. 512MiB; Linux, root, cgroup v2 or v1), which counts its page cache against it, and report each workload's device bytes and reads per operation", func(v string) (err error) {
		o.memLimit, err = humanize.ParseBytes(v)
		return err
	})
	fs.Func("bloomkv-memory-limit", "bloomkv's Options.MemoryLimit, `SIZE` (e.g. 128MiB): it divides it among its memtables, tables' filters and indexes and block cache, and plans its filters within it (0: none, the 8 MiB cache and 4 MiB memtables every engine gets)", func(v string) (err error) {
		o.bloomkvMemoryLimit, err = humanize.ParseBytes(v)
		return err
	})
	fs.Func("bloomkv-mmap", "bloomkv's Options.MmapTables, the tables it reads through mappings of their files, not a pread per block: `WHICH` is all, none or handles, the tables whose values are mostly in blob files (default handles)", func(v string) error {
		switch v {
		case "all", "none", "handles", "": // "": bloomkv's default, handles
			o.bloomkvMmap = v
			return nil
		}
		return fmt.Errorf("%q is not all, none or handles", v)
	})
	fs.IntVar(&o.threads, "threads", 1, "goroutines running each workload's operations at once (filloverwrite: 1)")
	fs.StringVar(&o.ycsb, "ycsb", "", "YCSB properties overriding every ycsb-* workload's, name=value,… (e.g. requestdistribution=uniform,fieldcount=1); recordcount defaults to -n, operationcount to -reads")
	fs.StringVar(&o.sizes, "sizes", "", "run the workloads at each of these key counts (e.g. 1M,10M,30M; instead of -n) and chart ops/s, p99 and reads per op against n")
	fs.StringVar(&o.out, "out", "", "directory to write peers.json (every result, with the machine, command and date) and the charts into")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of each engine's run to `FILE`.ENGINE.N.pprof")
	fs.StringVar(&o.chart, "chart", "", "draw the charts again from `DIR`/peers.json, written by -out, print its tables, and run nothing")
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
	return fs
}

// redraw draws the charts again from the report that -out wrote into
// o.chart, and prints its tables.
func (o *options) redraw(stdout io.Writer) error {
	rep, err := readReport(o.chart)
	if err != nil {
		return err
	}
	if err := rep.writeCharts(o.chart); err != nil {
		return err
	}
	rep.print(stdout)
	fmt.Fprintf(stdout, "\ncharts drawn again from %s\n", filepath.Join(o.chart, reportFile))
	return nil
}

// check checks the flags and parses the workloads, engines and sizes:
// a usageError names the first flag out of range. Where a run would fail
// only after its first fill or engine (-cold without the right to drop
// the page cache, -memlimit without cgroups), the parent fails now.
func (o *options) check() ([]workload.Workload, []peers.Engine, []int, error) {
	ws, err := workload.Parse(o.workloads)
	if err != nil {
		return nil, nil, nil, usageError{err}
	}
	names := []string{o.engine}
	if o.engine == "" {
		names = strings.Split(o.engines, ",")
	}
	var es []peers.Engine
	for _, name := range names {
		e, err := peers.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, nil, nil, usageError{err}
		}
		es = append(es, e)
	}
	switch {
	case o.writesPerKey == 0: // as workload.Config takes it
		o.writesPerKey = workload.DefaultWritesPerKey
	case o.writesPerKey < 1 || o.writesPerKey > workload.MaxWritesPerKey:
		return nil, nil, nil, usageError{fmt.Errorf("-writes-per-key %d is outside [1, %d]", o.writesPerKey, workload.MaxWritesPerKey)}
	}
	if o.threads < 1 {
		return nil, nil, nil, usageError{fmt.Errorf("-threads %d: want at least 1", o.threads)}
	}
	if o.sharedBinary && o.inProcess {
		return nil, nil, nil, usageError{fmt.Errorf("-shared-binary with -in-process: -in-process runs no child")}
	}
	if err := workload.ParseYCSBProperties(o.ycsb); err != nil {
		return nil, nil, nil, usageError{fmt.Errorf("-ycsb: %w", err)}
	}
	if !ws[0].IsFill() {
		return nil, nil, nil, usageError{fmt.Errorf("-workloads must begin with a fill (such as fillrandom or ycsb-load): each engine starts empty")}
	}
	sizes := []int{o.n}
	if o.sizes != "" {
		if sizes, err = workload.ParseCounts(o.sizes); err != nil {
			return nil, nil, nil, usageError{fmt.Errorf("-sizes: %w", err)}
		}
	}
	if o.cold && o.engine == "" {
		// Fail now, not after the first fill.
		release, err := procstat.DropPageCache()
		if err != nil {
			return nil, nil, nil, usageError{fmt.Errorf("-cold: %w", err)}
		}
		release()
		if _, err := procstat.ReadProcIO(); err != nil {
			return nil, nil, nil, usageError{fmt.Errorf("-cold: %w", err)}
		}
	}
	if o.memLimit > 0 && o.engine == "" {
		if o.inProcess {
			return nil, nil, nil, usageError{fmt.Errorf("-memlimit runs each engine's child in a memory cgroup: not with -in-process")}
		}
		// Fail now, not after the first engine.
		g, err := memcg.New(o.memLimit)
		if err == nil {
			err = g.Remove()
		}
		if err != nil {
			return nil, nil, nil, usageError{fmt.Errorf("-memlimit: %w", err)}
		}
	}
	return ws, es, sizes, nil
}

// runChild runs the workloads on engine e as a child of the runner, in
// o.dir, and writes its results to stdout as JSON.
func (o *options) runChild(e peers.Engine, s peers.Settings, ws []workload.Workload, stdout io.Writer) error {
	if o.dir == "" {
		return usageError{fmt.Errorf("-engine needs -dir")}
	}
	keys, err := workload.NewKeys(o.n, o.keySize, o.valueSize, o.seed)
	if err != nil {
		return usageError{err}
	}
	cfg := o.config(keys)
	var rs []*peers.Outcome
	err = o.profile(e.Name, func() (err error) {
		rs, err = o.measure(e.Name, cfg).Run(e, o.dir, s, cfg, ws)
		return err
	})
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(fromOutcomes(rs))
}

// prepare builds the engines' children, unless -in-process (nil: run in
// this process), and makes the directories: a temporary one for the
// databases unless -dir, and -out. cleanup removes the temporary ones; it
// is to be called even on an error.
func (o *options) prepare(es []peers.Engine, stderr io.Writer) (bins map[string]*binary, cleanup func(), err error) {
	var temps []string
	cleanup = func() {
		for _, dir := range temps {
			os.RemoveAll(dir)
		}
	}
	switch {
	case o.inProcess:
	case o.sharedBinary:
		bins, err = sharedBinary(es)
	default:
		var dir string
		if dir, err = os.MkdirTemp("", "bloomkv-peers-bin-"); err != nil {
			return nil, cleanup, err
		}
		temps = append(temps, dir)
		bins, err = buildChildren(es, dir, stderr)
	}
	if err != nil {
		return nil, cleanup, err
	}
	if o.dir == "" {
		tmp, err := os.MkdirTemp("", "bloomkv-peers-")
		if err != nil {
			return nil, cleanup, err
		}
		temps = append(temps, tmp)
		o.dir = tmp
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return nil, cleanup, err
		}
	}
	return bins, cleanup, nil
}

// runSizes runs the workloads on every engine at each of sizes, printing
// each size's tables as it ends (and with -out writing the report after
// each engine), then the scaling across sizes and, with -out, the charts.
func (o *options) runSizes(args []string, es []peers.Engine, bins map[string]*binary, s peers.Settings, ws []workload.Workload, sizes []int, stdout, stderr io.Writer) error {
	rep := newReport(o, args, ws)
	for _, n := range sizes {
		o.n = n
		keys, err := workload.NewKeys(o.n, o.keySize, o.valueSize, o.seed)
		if err != nil {
			return usageError{err}
		}
		cfg := o.config(keys)
		o.printHeader(stdout, s, n, ws)
		// With -out, the report is written after each engine, so that a
		// long run stopped early keeps what it finished.
		var done func([]engineRun) error
		if o.out != "" {
			done = func(runs []engineRun) error {
				partial := *rep
				partial.add(n, cfg, runs)
				return partial.write(o.out)
			}
		}
		runs, err := runEngines(o, es, bins, cfg, ws, stderr, done)
		if err != nil {
			return err
		}
		rep.add(n, cfg, runs)
		rep.Sizes[len(rep.Sizes)-1].printTables(stdout, ws)
		fmt.Fprintln(stdout)
	}
	if len(sizes) > 1 {
		printScale(stdout, rep, ws)
	}
	fmt.Fprintln(stdout, notEqual())
	if o.out != "" {
		if err := rep.writeCharts(o.out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s and the charts into %s\n", reportFile, o.out)
	}
	return nil
}

// printHeader prints the settings of a run at n keys, on one line.
func (o *options) printHeader(stdout io.Writer, s peers.Settings, n int, ws []workload.Workload) {
	fmt.Fprintf(stdout, "peers: %s keys of %d B, values of %d B, seed %d; %d bits/key filters, block cache %d MiB, snappy (bloomkv: below its base level), memtable %d MiB, base level %d MiB ×10, tables %d MiB, WAL on without fsync; %d thread(s)",
		fmtCount(n), o.keySize, o.valueSize, o.seed, s.BitsPerKey, s.CacheSize>>20, s.MemtableSize>>20, s.BaseLevelSize>>20, s.TargetFileSize>>20, o.threads)
	for _, w := range ws {
		if w == workload.FillOverwrite {
			fmt.Fprintf(stdout, "; filloverwrite writes each key %d times", o.writesPerKey)
			break
		}
	}
	if o.ycsb != "" {
		fmt.Fprintf(stdout, "; YCSB properties %s", o.ycsb)
	}
	if o.cold {
		fmt.Fprint(stdout, "; page cache dropped before each read workload")
	}
	if o.memLimit > 0 {
		fmt.Fprintf(stdout, "; each engine in a memory cgroup of %s that counts its page cache", size(o.memLimit))
	}
	if o.bloomkvMemoryLimit > 0 {
		fmt.Fprintf(stdout, "; bloomkv with Options.MemoryLimit %s, its cache and memtables sized from it", size(o.bloomkvMemoryLimit))
	}
	fmt.Fprint(stdout, "\n\n")
}

// runEngines runs each engine: in a child process running bins[e.Name],
// or, with bins nil (-in-process), in this process. If done is not nil it
// is called with the runs so far after each engine.
func runEngines(o *options, es []peers.Engine, bins map[string]*binary, cfg *workload.Config, ws []workload.Workload, stderr io.Writer, done func([]engineRun) error) ([]engineRun, error) {
	var runs []engineRun
	for _, e := range es {
		start := time.Now()
		fmt.Fprintf(stderr, "%s at %s keys …\n", e.Name, fmtCount(o.n))
		r := engineRun{Name: e.Name, Binary: bins[e.Name]}
		if bins == nil {
			var rs []*peers.Outcome
			err := o.profile(e.Name, func() (err error) {
				rs, err = o.measure(e.Name, cfg).Run(e, o.dir, o.settings(), cfg, ws)
				return err
			})
			if err != nil {
				return nil, err
			}
			r.Results = fromOutcomes(rs)
		} else {
			var err error
			if r.Results, r.MaxRSS, r.Memcg, err = runChild(o, e.Name, r.Binary, stderr); err != nil {
				var killed *killedError
				if !errors.As(err, &killed) {
					return nil, err
				}
				r.Killed = killed.Error()
				fmt.Fprintf(stderr, "%s: %v\n", e.Name, err)
			}
		}
		if r.Killed == "" && len(r.Results) != len(ws) {
			return nil, fmt.Errorf("%s: %d results for %d workloads", e.Name, len(r.Results), len(ws))
		}
		runs = append(runs, r)
		took := time.Since(start).Round(time.Millisecond)
		if r.Killed != "" {
			fmt.Fprintf(stderr, "%s killed after %s\n", e.Name, took)
		} else {
			fmt.Fprintf(stderr, "%s done in %s\n", e.Name, took)
		}
		if done != nil {
			if err := done(runs); err != nil {
				return nil, err
			}
		}
	}
	return runs, nil
}

// runChild runs engine name in a child process running bin with -engine,
// with -memlimit in a memory cgroup of its own, and returns its results,
// its peak RSS in bytes and what its cgroup counted (nil without one).
func runChild(o *options, name string, bin *binary, stderr io.Writer) ([]result, int64, *cgroupRun, error) {
	cmd := exec.Command(bin.Path, o.childArgs(name)...)
	var g *memcg.Group
	if o.memLimit > 0 {
		var err error
		if g, err = memcg.New(o.memLimit); err != nil {
			return nil, 0, nil, fmt.Errorf("%s: -memlimit: %w", name, err)
		}
		cmd = g.Command(bin.Path, o.childArgs(name)...)
	}
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	err := cmd.Run()
	var cg *cgroupRun
	killed := false
	if g != nil {
		s, serr := g.Stats()
		if rerr := g.Remove(); rerr != nil {
			return nil, 0, nil, fmt.Errorf("%s: -memlimit: %w", name, rerr)
		}
		if err != nil {
			killed, err = g.Killed(err, s)
		} else if serr != nil {
			err = serr
		}
		cg = &cgroupRun{Limit: o.memLimit, Peak: s.Peak}
	}
	switch {
	case killed:
		return nil, procstat.ExitedMaxRSS(cmd.ProcessState), cg, &killedError{err}
	case err != nil:
		return nil, 0, nil, fmt.Errorf("%s: child: %w", name, err)
	}
	var rs []result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		return nil, 0, nil, fmt.Errorf("%s: child's results: %w", name, err)
	}
	return rs, procstat.ExitedMaxRSS(cmd.ProcessState), cg, nil
}

// killedError is runChild's error for a child its memory cgroup's OOM
// killer killed.
type killedError struct{ err error }

func (e *killedError) Error() string { return e.err.Error() }
func (e *killedError) Unwrap() error { return e.err }

// cgroupRun is what the memory cgroup of an engine's child counted
// (-memlimit).
type cgroupRun struct {
	Limit int64 `json:"limit"` // bytes
	// Peak is the most the child held at once, its page cache included
	// (memcg.Stats.Peak; -1: not counted).
	Peak int64 `json:"peak"`
}

// printTables prints the runs' tables: ops/s and peak RSS, latencies, L0
// during the fills and the tree after each fill, then the settings that
// could not be made equal.
// written is each fill's user bytes written (sizeRun.Written).
func printTables(stdout io.Writer, runs []engineRun, ws []workload.Workload, written []int64) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, runs, " ops/s")
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
		fmt.Fprintf(stdout, " Peak RSS: each engine's child process over all its workloads, from getrusage.%s)\n", binariesNote(runs))
	} else {
		fmt.Fprintf(stdout, "\n(×: ops/s as a ratio to %s's; above 1 is faster)\n", runs[0].Name)
	}

	fmt.Fprint(stdout, "\np50 / p99 / p99.9 / max latency\n")
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, runs, "")
	for j, w := range ws {
		fmt.Fprintf(tw, "%s\t", w)
		for _, r := range runs {
			res := &r.Results[j]
			fmt.Fprintf(tw, "%s / %s / %s / %s\t", dur(res.P50NS), dur(res.P99NS), dur(res.P999NS), dur(res.MaxNS))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	printAmp(stdout, runs, ws, written)
	printKinds(stdout, runs, ws)
	printDevice(stdout, runs, ws)
	printMemory(stdout, runs, ws)
	printL0(stdout, runs, ws)
	printFilters(stdout, runs, ws)
	for j, w := range ws {
		if w.IsFill() {
			printTree(stdout, runs, j, w)
		}
	}
}

// printKinds prints, for each YCSB workload but the load, its operations
// by kind, as the first engine ran them (each engine's thread draws the
// same kinds but for the interleaving of threads).
func printKinds(stdout io.Writer, runs []engineRun, ws []workload.Workload) {
	first := true
	for j, w := range ws {
		if !w.IsYCSB() || w == workload.YCSBLoad {
			continue
		}
		if first {
			fmt.Fprintf(stdout, "\nYCSB operations by kind (%s's run)\n", runs[0].Name)
			first = false
		}
		res := &runs[0].Results[j]
		var parts []string
		for k, n := range res.Kinds {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", workload.OpNames[k], n, 100*float64(n)/float64(res.Ops)))
			}
		}
		fmt.Fprintf(stdout, "%s: %s\n", w, strings.Join(parts, ", "))
	}
}

// printDevice prints the bytes and reads each operation took from the
// device: of each read workload measured cold, and with -memlimit of
// every workload, and each engine's cgroup peak; nothing if no workload
// was measured either way.
func printDevice(stdout io.Writer, runs []engineRun, ws []workload.Workload) {
	cold, capped := false, runs[0].Memcg
	for _, r := range runs {
		for _, res := range r.Results {
			cold = cold || res.Cold
		}
	}
	var how []string
	if cold {
		how = append(how, "the page cache dropped before each read workload")
	}
	if capped != nil {
		how = append(how, fmt.Sprintf("each engine in a memory cgroup of %s that counts its page cache", size(capped.Limit)))
	}
	if len(how) == 0 {
		return
	}
	printColdTable(stdout, "device bytes read per operation, "+strings.Join(how, ", ")+" (/proc/self/io read_bytes)",
		runs, ws, capped != nil, func(res *result) string { return fmt.Sprintf("%.0f B", res.perOp(res.IO.DeviceBytes)) })
	printColdTable(stdout, "reads per operation: device (reads the device completed, every process's) / file system (read calls)",
		runs, ws, capped != nil, func(res *result) string {
			return fmt.Sprintf("%s / %s", num(res.perOp(res.IO.DeviceReads), 3), num(res.perOp(res.IO.FileReads), 3))
		})
	if capped != nil {
		var peaks []string
		for _, r := range runs {
			if r.Memcg != nil && r.Memcg.Peak >= 0 {
				peaks = append(peaks, fmt.Sprintf("%s %s", r.Name, size(r.Memcg.Peak)))
			}
		}
		fmt.Fprintf(stdout, "(memory cgroup peaks, the process and its page cache: %s)\n", strings.Join(peaks, ", "))
	}
	for _, r := range runs {
		reopened, opens := false, ""
		for j, res := range r.Results {
			reopened = reopened || res.Reopened
			if res.Reopened && res.OpenIO != nil { // nil in a peers.json written before OpenIO was kept
				opens += fmt.Sprintf(", %s %.1f MiB", ws[j], mib(res.OpenIO.DeviceBytes))
			}
		}
		if reopened {
			fmt.Fprintf(stdout, "(%s: tables memory-mapped, so closed before each drop and opened again after it — the kernel\n"+
				" drops no page a process maps; the open's device reads are counted with the workload's, its time is not.", r.Name)
			if opens != "" {
				fmt.Fprintf(stdout, "\n The opens read: %s.", opens[2:])
			}
			fmt.Fprintln(stdout, ")")
		}
	}
}

// printL0 prints the table of L0 during each fill, if any engine sampled it.
func printL0(stdout io.Writer, runs []engineRun, ws []workload.Workload) {
	var fills []int
	var interval time.Duration
	for j, w := range ws {
		for _, r := range runs {
			if l := r.Results[j].L0; l != nil && w.IsFill() {
				if len(fills) == 0 || fills[len(fills)-1] != j {
					fills = append(fills, j)
				}
				interval = l.Interval
			}
		}
	}
	if len(fills) == 0 {
		return
	}
	every := "every " + interval.String() + " and"
	if interval <= 0 {
		every = "only"
	}
	fmt.Fprintf(stdout, "\nL0 during each fill, sampled %s at its end: the most tables seen, and the L0 at which writes stop\n", every)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, runs, "")
	for _, j := range fills {
		fmt.Fprintf(tw, "%s\t", ws[j])
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t", l0Cell(r.Results[j].L0))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// printFilters prints, for the engines that report their filters
// (peers.FilterReporter), their cost and their expected and measured
// false-positive reads after each read workload.
func printFilters(stdout io.Writer, runs []engineRun, ws []workload.Workload) {
	header := false
	for _, r := range runs {
		for j, w := range ws {
			res := &r.Results[j]
			f := res.Filters
			if f == nil {
				continue
			}
			if !header {
				fmt.Fprintf(stdout, "\nfilters after each read workload: bits per key; expected false-positive reads per absent-key Get, the engine's\n"+
					"and uniform Bloom filters' of the same bits in every run; measured: false positives per Get of the workload\n")
				fmt.Fprintf(stdout, "%10s  %12s  %8s  %8s  %8s  %8s  %8s\n", "engine", "workload", "bits/key", "expected", "uniform", "ratio", "measured")
				header = true
			}
			ratio := math.NaN()
			if f.Uniform > 0 {
				ratio = f.Expected / f.Uniform
			}
			fmt.Fprintf(stdout, "%10s  %12s  %8.2f  %8.4f  %8.4f  %7.2f×  %8s\n", r.Name, w, f.BitsPerKey, f.Expected, f.Uniform, ratio, num(res.perOp(res.Engine.FalsePositives), 4))
		}
	}
}

// l0Cell is "max 14 (stop 36) over 350 samples", in tables, or where the
// engine stops writes by L0 sublevels "max 9 sublevels, 20 tables (stop
// 12 sublevels) over 350 samples"; "–" without samples.
func l0Cell(l *peers.L0Samples) string {
	switch {
	case l == nil:
		return "–"
	case l.Stop.Sublevels:
		return fmt.Sprintf("max %d sublevels, %d tables (stop %d sublevels) over %d samples", l.MaxSublevels, l.MaxTables, l.Stop.N, l.Samples)
	}
	return fmt.Sprintf("max %d (stop %d) over %d samples", l.MaxTables, l.Stop.N, l.Samples)
}

// printTree prints the table of each engine's tree after fill j (w).
func printTree(stdout io.Writer, runs []engineRun, j int, w workload.Workload) {
	levels, unsettled := 0, false
	for _, r := range runs {
		if t := r.Results[j].Tree; t != nil {
			levels = max(levels, len(t.Levels))
			unsettled = unsettled || !t.Settled
		}
	}
	if levels == 0 {
		return
	}
	fmt.Fprintf(stdout, "\ntree after %s and its settle: table bytes per level (share of the total)\n", w)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "engine\t")
	for l := range levels {
		fmt.Fprintf(tw, "L%d\t", l)
	}
	fmt.Fprintln(tw, "total\tlast level\twrite amp\tspace amp\t")
	for _, r := range runs {
		res := &r.Results[j]
		t := res.Tree
		name := r.Name
		if t != nil && !t.Settled {
			name += "*"
		}
		fmt.Fprintf(tw, "%s\t", name)
		if t == nil {
			fmt.Fprint(tw, strings.Repeat("–\t", levels+4))
			fmt.Fprintln(tw)
			continue
		}
		for l := range levels {
			switch {
			case l >= len(t.Levels) || t.Levels[l].Bytes == 0:
				// Levels past t's: goleveldb's tree has not grown them.
				fmt.Fprint(tw, "0\t")
			default:
				fmt.Fprintf(tw, "%s %.0f%%\t", size(t.Levels[l].Bytes), 100*t.Share(l))
			}
		}
		fmt.Fprintf(tw, "%s\t", size(t.Bytes()))
		if last := t.Last(); last >= 0 {
			fmt.Fprintf(tw, "L%d %.1f%%\t", last, 100*t.Share(last))
		} else {
			fmt.Fprint(tw, "–\t")
		}
		if res.WriteAmp > 0 {
			fmt.Fprintf(tw, "%.2f\t", res.WriteAmp)
		} else {
			fmt.Fprint(tw, "–\t")
		}
		if amp, ok := res.spaceAmp(); ok {
			fmt.Fprintf(tw, "%.2f\t", amp)
		} else {
			fmt.Fprint(tw, "–\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "(write amp: bytes written to tables by flushes and compactions per WAL byte, from the previous fill's settle, or the open, to this one's)")
	if unsettled {
		fmt.Fprintln(stdout, "(*: not settled: read right after the fill, with its memtables unflushed and compactions maybe running)")
	}
	var compacted []string
	for _, r := range runs {
		if res := &r.Results[j]; res.Compacted != nil {
			compacted = append(compacted, fmt.Sprintf("%s %s in %s",
				r.Name, size(res.Compacted.Bytes()), time.Duration(res.CompactNS).Round(time.Millisecond)))
		}
	}
	if len(compacted) > 0 {
		fmt.Fprintf(stdout, "(space amp: the total over the table bytes after a compaction of the whole key range: %s)\n", strings.Join(compacted, ", "))
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// size formats a byte count in B, KiB, MiB or GiB.
func size(b int64) string {
	switch {
	case b < 1<<10:
		return fmt.Sprintf("%d B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// dur formats a latency in nanoseconds: µs below a millisecond, ms below a
// second, s above.
func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// writeHeader writes a table's header row: "workload", then each engine's
// name followed by suffix.
func writeHeader(tw io.Writer, runs []engineRun, suffix string) {
	fmt.Fprint(tw, "workload\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s%s\t", r.Name, suffix)
	}
	fmt.Fprintln(tw)
}

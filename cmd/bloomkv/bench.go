package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/cmd/bloomkv/benchstore"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/progress"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/bloomkv/bloomkv/rangefilter"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// The bench command: db_bench-style workloads (package workload) against a
// fresh database, with the read amplification each read workload caused,
// taken from the DB's Metrics before and after it.
//
//	bloomkv bench [-n keys] [-reads n] [-workloads list] [-bits-per-key c]
//	              [-allocation uniform|optimal|best|progressive]
//	              [-filter family:param | -levels list] [-sweep] [-out DIR]
//	              [-cold] [-memlimit SIZE] [-threads N] [-ycsb props] [-sizes list] [-chart DIR] …
//
// -memlimit SIZE runs the workloads in a child process (this executable,
// given the same arguments and memcgEnv) inside a memory cgroup of SIZE
// (package memcg), which the parent makes before and removes after, so
// that the page cache counts against the cap; the report then has every
// workload's device columns, and ends with the cgroup's peak.
//
// The defaults are sized so that the run takes well under a minute on two
// cores and the tree has several levels, with a block cache much smaller
// than the data so that block reads show: 2,000,000 keys (about 232 MB of
// keys and values, ~175 MB in snappy-compressed tables), a 1 MiB memtable,
// L1 of 2 MiB (×10 per level: L1, L2 and L3 in use), tables of 1 MiB and a
// 1 MiB block cache; 200,000 Gets per read workload. The sweep uses 300,000
// keys and 100,000 Gets of each kind per database.

const benchUsage = `On a fresh database (in a temporary directory unless -dir) it prints each
workload's ops/s and latency, each read workload's cost per Get (tables
considered, filter negatives: block reads avoided, data blocks from the
file and the cache, bytes read) and, per level, its filters' family, bits
per key (the level's filter bits over its keys) and measured
false-positive rate beside the predicted one. Defaults: 2,000,000 keys of
16 bytes, values of 100, 200,000 Gets per read workload, Bloom filters of
10 bits per key in every level: about 20 s on two cores.

Workloads (-workloads, in order, on one database): fillseq, fillrandom,
filloverwrite, readrandom (present keys), readmissing (absent keys inside
the key range: only filters reject them), readmixed, scan, scankeys (scan
reading keys only), multiget; the
prefix workloads fillprefix, seekprefix, seekprefixmissing; the range
workloads fillrange, rangescan2…128, rangeempty2…128; YCSB's ycsb-load and
ycsb-a … ycsb-f. Filter families: Bloom, binary fuse and Ribbon.
`

// benchFlagGroups are bench's flags by what they are for, as -h lists
// them; every flag is in one group (TestBenchFlagGroups).
var benchFlagGroups = []flagGroup{
	{"What to run", []string{"workloads", "n", "reads", "threads", "sizes", "seed", "dir"}},
	{"The workloads' shape", []string{"key-size", "value-size", "miss-ratio", "scan-length", "writes-per-key", "prefix-keys", "ycsb"}},
	{"Filters (-filter or -levels instead of -bits-per-key and -allocation)", []string{"bits-per-key", "allocation", "policy", "filter", "levels", "range-filter-bits"}},
	{"The tree", []string{"memtable-size", "base-level-size", "target-file-size", "level-sizing", "cache-size", "memory-limit", "index-partition-size", "compression", "top-compression", "max-compactions", "value-separation"}},
	{"Measuring", []string{"cold", "memlimit"}},
	{"The filter sweep (-sweep: a database per filter setting, then each family by table size)", []string{"sweep", "sweep-n", "sweep-reads", "sweep-bits", "sweep-policies", "sweep-fuse", "sweep-offsets", "sweep-sizes", "sweep-probes"}},
	{"Range filters side by side", []string{"range-compare"}},
	{"Output", []string{"out", "chart"}},
}

// benchFlags are the bench command's settings.
type benchFlags struct {
	n, reads, keySize, valueSize, scanLength, sweepN, sweepReads int
	seed                                                         uint64
	missRatio, bitsPerKey                                        float64
	workloads, allocation, compression, topCompression, dir, out string
	filter, levels                                               string
	sweepBits, sweepPolicies, sweepFuse, sweepOffsets            string
	sweepSizes                                                   string
	sweepProbes, prefixKeys, maxCompactions, writesPerKey        int
	valueSeparation, indexPartitionSize                          int
	levelSizing                                                  string
	cacheSize, memtableSize, baseLevelSize, targetFileSize       sizeFlag
	memLimit, memoryLimit                                        sizeFlag
	sweep, cold                                                  bool
	threads                                                      int
	ycsb, sizes, chart                                           string
	sizeList                                                     []int // -sizes parsed
	rangeFilterBits                                              float64
	rangeCompare                                                 bool
}

// newBenchFlagSet returns bench's flag set, its flags setting f.
func newBenchFlagSet(f *benchFlags) *flag.FlagSet {
	fs := newFlagSet("bench", "[flags]")
	f.cacheSize, f.memtableSize, f.baseLevelSize, f.targetFileSize = 1<<20, 1<<20, 2<<20, 1<<20
	fs.IntVar(&f.n, "n", 2_000_000, "number of keys the fills write")
	fs.IntVar(&f.reads, "reads", 200_000, "Gets per read workload (scan: reads/scan-length scans)")
	fs.StringVar(&f.workloads, "workloads", "fillrandom,readrandom,readmissing,readmixed,scan", "comma-separated workloads, run in order")
	fs.IntVar(&f.keySize, "key-size", workload.DefaultKeySize, "key size in bytes")
	fs.IntVar(&f.valueSize, "value-size", workload.DefaultValueSize, "value size in bytes")
	fs.IntVar(&f.valueSeparation, "value-separation", 0, "size from which values go to blob files (Options.ValueSeparation.MinSize); 0: the default, 1 KiB; -1: none")
	fs.Uint64Var(&f.seed, "seed", workload.DefaultSeed, "seed of the values and of every workload's random choices")
	fs.Float64Var(&f.missRatio, "miss-ratio", 0.5, "readmixed: share of Gets of missing keys, in [0, 1]")
	fs.IntVar(&f.scanLength, "scan-length", 100, "scan: entries read per scan")
	fs.Float64Var(&f.bitsPerKey, "bits-per-key", 10, "filter memory per key (0: no filters)")
	fs.StringVar(&f.allocation, "allocation", "uniform", "filter allocation over the levels: uniform, optimal (Monkey), best (family — none, Bloom, fuse or Ribbon — and parameter per level) or progressive (Pebble's fuse widths)")
	fs.StringVar(&f.filter, "filter", "", "every level's filter, `family:param`: bloom:BITS_PER_KEY, fuse:FINGERPRINT_BITS, ribbon:RESULT_BITS or none (instead of -bits-per-key and -allocation)")
	fs.StringVar(&f.levels, "levels", "", "each level's filter from L0, the last for every level below, e.g. fuse:16,fuse:16,fuse:12,fuse:8 (Options.LevelFilters)")
	fs.IntVar(&f.writesPerKey, "writes-per-key", workload.DefaultWritesPerKey, "filloverwrite: writes of each key")
	fs.IntVar(&f.prefixKeys, "prefix-keys", workload.DefaultPrefixKeys, "prefix workloads: keys per prefix")
	// -policy was the flag's name before the option was renamed
	// FilterAllocation (a filter policy is the filter algorithm elsewhere);
	// scripts that pass it keep working.
	fs.StringVar(&f.allocation, "policy", "uniform", "the former name of -allocation")
	fs.StringVar(&f.compression, "compression", "snappy", "block compression below the base level: none, snappy or zstd")
	fs.StringVar(&f.topCompression, "top-compression", "none", "block compression of L0 and the base level (Options.TopLevelCompression): none, snappy or zstd")
	fs.Var(&f.cacheSize, "cache-size", "block cache capacity (e.g. 1MiB; 0: none)")
	fs.Var(&f.memtableSize, "memtable-size", "memtable size")
	fs.Var(&f.memoryLimit, "memory-limit", "the DB's memory limit (Options.MemoryLimit), which it divides among memtables, tables' filters and indexes and the block cache, and plans the filters within (0: none; then -cache-size and -memtable-size, which it sizes itself unless given)")
	fs.IntVar(&f.indexPartitionSize, "index-partition-size", 0, "partition each table's index larger than this many bytes, pinning only a top level and reading partitions through the block cache (Options.IndexPartitionSize; 0: the DB's default, 4096 under -memory-limit and none without; -1: none)")
	fs.Var(&f.baseLevelSize, "base-level-size", "target size of the base level, where L0 compacts to (each deeper level ×10)")
	fs.StringVar(&f.levelSizing, "level-sizing", "dynamic", "level targets: dynamic (from the largest level's size) or static (from the base level's size, L1)")
	fs.IntVar(&f.maxCompactions, "max-compactions", 0, "compactions run at once (0: the DB's default, GOMAXPROCS up to 4)")
	fs.Var(&f.targetFileSize, "target-file-size", "size at which compaction cuts a table")
	fs.StringVar(&f.dir, "dir", "", "database directory, new or empty: one that holds anything is refused (default: a temporary one, removed after)")
	fs.BoolVar(&f.sweep, "sweep", false, "run the filter sweep (budgets × policies, prefix seeks, families by table size) instead of the workloads")
	fs.IntVar(&f.sweepN, "sweep-n", 300_000, "sweep: keys per database")
	fs.IntVar(&f.sweepReads, "sweep-reads", 100_000, "sweep: Gets of present and of missing keys per database")
	fs.StringVar(&f.sweepBits, "sweep-bits", "0,2,4,6,8,10,12,16,20", "sweep: the bits-per-key budgets of the uniform, optimal and best databases (0: no filter)")
	fs.StringVar(&f.sweepPolicies, "sweep-policies", "uniform,optimal,fuse,progressive,best,prefix",
		"sweep: the databases to run: uniform (Bloom), optimal (Monkey Bloom), fuse (the same fuse filter on every level), progressive (Pebble's, emulated), best, prefix (the prefix workloads); none: only the filter measurements")
	fs.StringVar(&f.sweepFuse, "sweep-fuse", "6,8,12,16", "sweep: the fingerprint widths of the fuse databases")
	fs.StringVar(&f.sweepOffsets, "sweep-offsets", "auto", "sweep: the offsets of Pebble's widths of the progressive databases; auto: those that spend at most each -sweep-bits budget")
	fs.StringVar(&f.sweepSizes, "sweep-sizes", "100,1000,10000,100000,1000000", "sweep: the table sizes, in keys, of the filter measurements (none: skip them)")
	fs.IntVar(&f.sweepProbes, "sweep-probes", 2_000_000, "sweep: absent keys asked of each filter at each table size")
	fs.StringVar(&f.out, "out", "", "directory to write CSV, JSON and charts (PNG and SVG: with -sweep, or -sizes) into")
	fs.StringVar(&f.chart, "chart", "", "draw the charts again from the sweep.json and scale.json that -out wrote into `DIR`, and run nothing")
	fs.BoolVar(&f.cold, "cold", false, "drop the page cache before each read workload (Linux, root: sync and /proc/sys/vm/drop_caches), so that its reads come from the device, and report its device reads per operation")
	fs.Var(&f.memLimit, "memlimit", "run in a memory cgroup of this size (e.g. 512MiB; Linux, root, cgroup v2 or v1), which counts the process's page cache against it, and report every workload's device reads and bytes per operation (0: no cgroup)")
	fs.IntVar(&f.threads, "threads", 1, "goroutines running each workload's operations at once (filloverwrite: 1)")
	fs.StringVar(&f.ycsb, "ycsb", "", "YCSB properties overriding every ycsb-* workload's, name=value,… (e.g. requestdistribution=uniform,fieldcount=1); recordcount defaults to -n, operationcount to -reads")
	fs.StringVar(&f.sizes, "sizes", "", "run the workloads at each of these key counts (e.g. 1M,10M,30M; instead of -n), each on a fresh database, and tabulate (with -out, chart) ops/s, p99 and blocks read per Get against n, and what grows with the tree: the Open after Close, the manifest, the memory pinned per key, the tables a Get consults")
	fs.Float64Var(&f.rangeFilterBits, "range-filter-bits", 0, "range filters of this many bits per key in every level (Options.RangeFilterBits; 0: none; -range-compare: 16)")
	fs.BoolVar(&f.rangeCompare, "range-compare", false, "run instead the range workloads on two databases, with range filters (-range-filter-bits) and without, side by side")
	fs.Usage = func() {
		writeSynopsis(fs.Output(), "bench", "[flags]")
		fmt.Fprint(fs.Output(), benchUsage)
		printFlagGroups(fs, benchFlagGroups)
	}
	return fs
}

// runBench runs bench: the flags checked and parsed (check), a run under a
// memory cgroup handed to a child, else the directory, the workloads'
// configuration (config) and the databases' options (baseOptions), then
// the range comparison, the sweep or the workloads (workloadOptions).
func runBench(args []string, stdout io.Writer) (err error) {
	var f benchFlags
	defer func() { err = f.optionError(err) }()
	fs := newBenchFlagSet(&f)
	if err := parse(fs, args); err != nil {
		return err
	}
	if f.chart != "" {
		return redrawCharts(stdout, f.chart)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	c, err := f.check(set)
	if err != nil {
		return err
	}
	if f.memLimit > 0 && os.Getenv(memcgEnv) == "" {
		// The flags are checked: the run itself is the child's.
		if f.dir != "" {
			if _, _, err := benchDir(f.dir); err != nil {
				return err
			}
		}
		return runCapped(args, stdout, int64(f.memLimit))
	}
	// Before anything is written: a -dir that holds anything is refused.
	dir, cleanup, err := benchDir(f.dir)
	if err != nil {
		return err
	}
	defer cleanup()
	cfg, err := f.config()
	if err != nil {
		return err
	}
	base, err := f.baseOptions(set, c)
	if err != nil {
		return err
	}
	if f.rangeCompare {
		opts := base
		opts.BitsPerKey, opts.DisableFilters, opts.FilterAllocation = f.bitsPerKey, f.bitsPerKey == 0, c.allocation
		return runRangeCompare(stdout, &f, dir, opts, cfg)
	}
	if f.sweep {
		plan, err := f.sweepPlan()
		if err != nil {
			return usageError{err}
		}
		cfg.Reads = f.sweepReads
		return runSweep(stdout, &f, plan, dir, base, cfg)
	}
	opts, err := f.workloadOptions(base, c)
	if err != nil {
		return err
	}
	return runWorkloads(stdout, &f, dir, &opts, cfg, c.ws)
}

// benchChoices are the values bench's flags parse to: the workloads, the
// filter allocation, the filters of -filter or -levels (nil for none) and
// the compressions.
type benchChoices struct {
	ws                          []workload.Workload
	allocation                  bloomkv.FilterAllocation
	levelFilters                []bloomkv.FilterSpec
	compression, topCompression bloomkv.Compression
}

// check checks bench's flags, set those given on the command line, and
// parses their values: a usage error names the first flag out of range.
// It writes nothing.
func (f *benchFlags) check(set map[string]bool) (benchChoices, error) {
	ws, err := workload.Parse(f.workloads)
	if err != nil {
		return benchChoices{}, usageError{err}
	}
	switch {
	case f.n < 1 || f.sweepN < 1:
		return benchChoices{}, usageError{errors.New("-n and -sweep-n must be at least 1")}
	case f.reads < 1 || f.sweepReads < 1:
		return benchChoices{}, usageError{errors.New("-reads and -sweep-reads must be at least 1")}
	case f.keySize > bloomkv.MaxKeySize:
		return benchChoices{}, usageError{fmt.Errorf("-key-size %d: more than a key may hold (MaxKeySize, %s)", f.keySize, sizeOf(bloomkv.MaxKeySize))}
	case f.valueSize > bloomkv.MaxValueSize:
		return benchChoices{}, usageError{fmt.Errorf("-value-size %d: more than a value may hold (MaxValueSize, %s)", f.valueSize, sizeOf(bloomkv.MaxValueSize))}
	case f.scanLength < 1:
		return benchChoices{}, usageError{errors.New("-scan-length must be at least 1")}
	case f.writesPerKey < 1 || f.writesPerKey > workload.MaxWritesPerKey:
		return benchChoices{}, usageError{fmt.Errorf("-writes-per-key %d is outside [1, %d]", f.writesPerKey, workload.MaxWritesPerKey)}
	case !(f.missRatio >= 0 && f.missRatio <= 1):
		return benchChoices{}, usageError{fmt.Errorf("-miss-ratio %v is outside [0, 1]", f.missRatio)}
	case f.bitsPerKey != 0 && bloom.CheckBitsPerKey(f.bitsPerKey) != nil:
		// Before the keys are generated: Open would refuse it too, as an
		// *ArgumentError, but only after.
		return benchChoices{}, usageError{fmt.Errorf("-bits-per-key %v is outside [1, %d] (0 for no filters)", f.bitsPerKey, bloom.MaxBitsPerKey)}
	}
	if !f.sweep && !f.rangeCompare && !ws[0].IsFill() {
		return benchChoices{}, usageError{errors.New("-workloads must begin with a fill (fillseq, fillrandom, filloverwrite, fillprefix or ycsb-load): the database starts empty")}
	}
	if f.rangeFilterBits != 0 && rangefilter.CheckBitsPerKey(f.rangeFilterBits) != nil {
		return benchChoices{}, usageError{fmt.Errorf("-range-filter-bits %v is outside [%d, %d] (0 for none)", f.rangeFilterBits, rangefilter.MinBitsPerKey, rangefilter.MaxBitsPerKey)}
	}
	if f.rangeCompare && f.sweep {
		return benchChoices{}, usageError{errors.New("-range-compare and -sweep are two runs: give one")}
	}
	if f.threads < 1 {
		return benchChoices{}, usageError{fmt.Errorf("-threads %d: want at least 1", f.threads)}
	}
	if err := workload.ParseYCSBProperties(f.ycsb); err != nil {
		return benchChoices{}, usageError{fmt.Errorf("-ycsb: %w", err)}
	}
	if f.sizes != "" {
		if f.sweep {
			return benchChoices{}, usageError{errors.New("-sizes runs the workloads at each size; the sweep has its own -sweep-n")}
		}
		if f.sizeList, err = workload.ParseCounts(f.sizes); err != nil {
			return benchChoices{}, usageError{fmt.Errorf("-sizes: %w", err)}
		}
	}
	if f.cold && f.sweep {
		return benchChoices{}, usageError{errors.New("-cold measures the workloads' runs, not the sweep")}
	}
	allocation, err := parseAllocation(f.allocation)
	if err != nil {
		return benchChoices{}, usageError{err}
	}
	levelFilters, err := f.levelFilters(set)
	if err != nil {
		return benchChoices{}, usageError{err}
	}
	if f.sweep && levelFilters != nil {
		return benchChoices{}, usageError{errors.New("-filter and -levels choose one database's filters; the sweep chooses its own")}
	}
	if f.prefixKeys < 1 {
		return benchChoices{}, usageError{errors.New("-prefix-keys must be at least 1")}
	}
	compression, err := parseCompression("-compression", f.compression)
	if err != nil {
		return benchChoices{}, usageError{err}
	}
	topCompression, err := parseCompression("-top-compression", f.topCompression)
	if err != nil {
		return benchChoices{}, usageError{err}
	}
	return benchChoices{ws, allocation, levelFilters, compression, topCompression}, nil
}

// config makes the workloads' configuration: the keys (of -sweep-n under
// -sweep) and the -out directory, created.
func (f *benchFlags) config() (*workload.Config, error) {
	n := f.n
	if f.sweep {
		n = f.sweepN
	}
	keys, err := workload.NewKeys(n, f.keySize, f.valueSize, f.seed)
	if err != nil {
		return nil, usageError{err}
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return nil, err
		}
	}
	cfg := &workload.Config{Keys: keys, Reads: f.reads, MissRatio: f.missRatio, ScanLength: f.scanLength, PrefixKeys: f.prefixKeys, WritesPerKey: f.writesPerKey,
		Threads: f.threads, YCSB: f.ycsb}
	return cfg, nil
}

// baseOptions returns the options every database of the run starts from:
// the level sizing, compactions, memory, compression and value separation
// of the flags (set: those given), without the filters.
func (f *benchFlags) baseOptions(set map[string]bool, c benchChoices) (bloomkv.Options, error) {
	var sizing bloomkv.LevelSizing
	switch f.levelSizing {
	case "dynamic":
		sizing = bloomkv.DynamicLevelSizing
	case "static":
		sizing = bloomkv.StaticLevelSizing
	default:
		return bloomkv.Options{}, usageError{fmt.Errorf("-level-sizing %q: want dynamic or static", f.levelSizing)}
	}
	if f.maxCompactions < 0 {
		return bloomkv.Options{}, usageError{fmt.Errorf("-max-compactions %d: want 0 (the default) or more", f.maxCompactions)}
	}
	base := bloomkv.Options{
		LevelSizing:              sizing,
		MaxConcurrentCompactions: f.maxCompactions,
		MemtableSize:             int64(f.memtableSize),
		BlockCacheSize:           int64(f.cacheSize),
		Compression:              c.compression,
		TopLevelCompression:      c.topCompression,
		BaseLevelSize:            uint64(f.baseLevelSize),
		TargetFileSize:           uint64(f.targetFileSize),
		ValueSeparation:          bloomkv.ValueSeparation{MinSize: f.valueSeparation},
		IndexPartitionSize:       f.indexPartitionSize,
	}
	if f.cacheSize == 0 {
		base.BlockCacheSize = -1
	}
	if f.memoryLimit > 0 {
		base.MemoryLimit = int64(f.memoryLimit)
		if !set["cache-size"] {
			base.BlockCacheSize = 0
		}
		if !set["memtable-size"] {
			base.MemtableSize = 0
		}
	}
	return base, nil
}

// workloadOptions returns base with the filters of the flags — the bits
// per key and allocation, or -filter or -levels' filters — the range
// filters, and the prefix extractor if a workload needs one.
func (f *benchFlags) workloadOptions(base bloomkv.Options, c benchChoices) (bloomkv.Options, error) {
	opts := base
	opts.BitsPerKey, opts.DisableFilters, opts.FilterAllocation = f.bitsPerKey, f.bitsPerKey == 0, c.allocation
	if c.levelFilters != nil {
		opts.BitsPerKey, opts.DisableFilters, opts.LevelFilters = 0, allFiltersOff(c.levelFilters), c.levelFilters
	}
	if f.rangeFilterBits > 0 {
		opts.RangeFilterBits = []float64{f.rangeFilterBits}
	}
	for _, w := range c.ws {
		if w == workload.FillPrefix || w.IsPrefixSeek() {
			if opts.DisableFilters {
				return bloomkv.Options{}, usageError{errors.New("the prefix workloads need filters, which hold the prefixes: not -bits-per-key 0 or -filter none")}
			}
			opts.Prefix = benchstore.PrefixExtractor()
			break
		}
	}
	return opts, nil
}

// levelFilters returns the LevelFilters of -filter or -levels, nil if
// neither is given; set holds the flags given.
func (f *benchFlags) levelFilters(set map[string]bool) ([]bloomkv.FilterSpec, error) {
	list, name := f.levels, "-levels"
	switch {
	case set["filter"] && set["levels"]:
		return nil, errors.New("-filter and -levels both choose the filters: give one")
	case set["filter"]:
		list, name = f.filter, "-filter"
	case !set["levels"]:
		return nil, nil
	}
	for _, other := range []string{"bits-per-key", "allocation", "policy"} {
		if set[other] {
			return nil, fmt.Errorf("%s fixes each level's filter; -%s would be unused", name, other)
		}
	}
	var specs []bloomkv.FilterSpec
	for _, item := range strings.Split(list, ",") {
		spec, err := parseFilterSpec(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		specs = append(specs, spec)
	}
	if name == "-filter" && len(specs) != 1 {
		return nil, fmt.Errorf("-filter %q: one filter for every level (-levels takes one per level)", list)
	}
	if len(specs) > manifest.NumLevels {
		return nil, fmt.Errorf("-levels: %d filters, more than the %d levels", len(specs), manifest.NumLevels)
	}
	return specs, nil
}

// allFiltersOff reports whether specs are all none: the DB then runs
// without filters (DisableFilters), as -bits-per-key 0 does.
func allFiltersOff(specs []bloomkv.FilterSpec) bool {
	for _, s := range specs {
		if s.Family != sstable.NoFilter {
			return false
		}
	}
	return true
}

// parseFilterSpec parses a filter as the bench's flags give it,
// "family:param" — bloom:10 (bits per key), fuse:8 (fingerprint bits),
// ribbon:8 (result bits) — or "none".
func parseFilterSpec(s string) (bloomkv.FilterSpec, error) {
	if s == "none" {
		return bloomkv.FilterSpec{}, nil
	}
	name, param, ok := strings.Cut(s, ":")
	if !ok {
		return bloomkv.FilterSpec{}, fmt.Errorf("filter %q: want family:param, e.g. bloom:10, fuse:8 or ribbon:8, or none", s)
	}
	family, err := sstable.ParseFilterFamily(name)
	if err != nil || family == sstable.NoFilter {
		return bloomkv.FilterSpec{}, fmt.Errorf("filter %q: unknown family %q (want bloom, fuse or ribbon)", s, name)
	}
	bits, err := strconv.ParseFloat(param, 64)
	if err != nil {
		return bloomkv.FilterSpec{}, fmt.Errorf("filter %q: parameter %q is not a number", s, param)
	}
	spec := bloomkv.FilterSpec{Family: family, Bits: bits}
	if err := spec.Check(); err != nil {
		return bloomkv.FilterSpec{}, fmt.Errorf("filter %q: %w", s, err)
	}
	return spec, nil
}

// benchDir returns dir, or a new temporary directory and its removal.
//
// A dir given must not exist or be an empty directory: bench fills a fresh
// database with its keys, so in an existing database it would write those
// keys among the data, and the sweep creates and removes subdirectories
// 0, 1, … of dir, which could be anything's. benchDir only reads dir, so a
// refused dir is left exactly as it was.
func benchDir(dir string) (string, func(), error) {
	if dir != "" {
		info, err := os.Stat(dir)
		switch {
		case errors.Is(err, iofs.ErrNotExist):
			return dir, func() {}, nil
		case err != nil:
			return "", nil, fmt.Errorf("-dir: %w", err)
		case !info.IsDir():
			return "", nil, usageError{fmt.Errorf("-dir %s is not a directory: bench creates a fresh database there", dir)}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", nil, fmt.Errorf("-dir: %w", err)
		}
		if len(entries) > 0 {
			held := "files, such as " + entries[0].Name()
			for _, e := range entries {
				if _, _, ok := manifest.ParseFilename(e.Name()); ok {
					held = "a database's files, such as " + e.Name()
					break
				}
			}
			return "", nil, usageError{fmt.Errorf("-dir %s is not empty: it holds %s; bench fills a fresh database and must not write into existing data: give a new or empty directory", dir, held)}
		}
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "bloomkv-bench-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

func parseAllocation(s string) (bloomkv.FilterAllocation, error) {
	switch strings.ToLower(s) {
	case "uniform":
		return bloomkv.UniformAllocation, nil
	case "optimal", "monkey":
		return bloomkv.OptimalAllocation, nil
	case "best":
		return bloomkv.BestAllocation, nil
	case "progressive", "pebble":
		return bloomkv.ProgressiveAllocation, nil
	}
	return 0, fmt.Errorf("-allocation %q: want uniform, optimal, best or progressive", s)
}

// parseCompression parses the value s of the compression flag name.
func parseCompression(name, s string) (bloomkv.Compression, error) {
	switch strings.ToLower(s) {
	case "none":
		return bloomkv.NoCompression, nil
	case "snappy":
		return bloomkv.SnappyCompression, nil
	case "zstd":
		return bloomkv.ZstdCompression, nil
	}
	return 0, fmt.Errorf("%s %q: want none, snappy or zstd", name, s)
}

// phase is one workload's result and the lookup counters it moved.
type phase struct {
	res        *workload.Result
	gets       uint64
	levels     [manifest.NumLevels]bloomkv.LevelMetrics // deltas of the lookup counters
	settleTime time.Duration                            // fills: flush and compaction after the fill

	prefixSeeks            uint64 // Metrics.PrefixSeeks' delta
	cacheHits, cacheMisses uint64 // the block cache's

	// With an osMeasure (runPhaseOS): the I/O, CPU time and write stalls
	// over the phase (a fill's settle included); cold if the page cache
	// was dropped before it; after a fill, the database's bytes on disk
	// and the fill's live and written user bytes.
	measured                           bool
	cold, capped                       bool
	io                                 procstat.Counters
	cpu, stall                         time.Duration
	diskBytes, liveBytes, writtenBytes int64
}

// settledOpsPerSec is a fill's rate with its settle counted: its
// operations over the fill's time and the flush and compactions after it,
// so that work a fill leaves behind counts against it.
func (p *phase) settledOpsPerSec() float64 {
	d := p.res.Elapsed + p.settleTime
	if d <= 0 {
		return 0
	}
	return float64(p.res.Ops) / d.Seconds()
}

// fillInTurn fills pairs pairs of databases, side 0 and side 1 of each in
// turn, side 1 first in the first pair — the caller's own pair, filled
// before, ran side 0 first — and alternating after, so that neither side
// always fills at the warmer or the quieter moment; fill fills side i of
// pair p and returns its rate. It returns each pair's two rates.
func fillInTurn(pairs int, fill func(p, i int) (float64, error)) ([][2]float64, error) {
	var rates [][2]float64
	for p := range pairs {
		var r [2]float64
		for k := range 2 {
			i := k
			if p%2 == 0 {
				i = 1 - k
			}
			var err error
			if r[i], err = fill(p, i); err != nil {
				return nil, err
			}
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// medianOf returns the median of xs, which it sorts: of the pairs'
// ratios fillInTurn's callers judge a fill by.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	return (xs[(n-1)/2] + xs[n/2]) / 2
}

// sum returns the phase's lookup counters over all levels.
func (p *phase) sum() bloomkv.LevelMetrics {
	var s bloomkv.LevelMetrics
	for _, l := range p.levels {
		s = s.Plus(l)
	}
	return s
}

func (p *phase) perGet(x uint64) float64 {
	if p.gets == 0 {
		return 0
	}
	return float64(x) / float64(p.gets)
}

// delta returns the lookup counters of a minus b.
func delta(a, b bloomkv.LevelMetrics) bloomkv.LevelMetrics {
	return bloomkv.LevelMetrics{
		TableProbes:     a.TableProbes - b.TableProbes,
		FilterChecks:    a.FilterChecks - b.FilterChecks,
		FilterNegatives: a.FilterNegatives - b.FilterNegatives,
		FilterPositives: a.FilterPositives - b.FilterPositives,
		TruePositives:   a.TruePositives - b.TruePositives,
		BlocksFromFile:  a.BlocksFromFile - b.BlocksFromFile,
		BlocksFromCache: a.BlocksFromCache - b.BlocksFromCache,
		BytesRead:       a.BytesRead - b.BytesRead,

		PrefixProbes:          a.PrefixProbes - b.PrefixProbes,
		PrefixFilterNegatives: a.PrefixFilterNegatives - b.PrefixFilterNegatives,
		PrefixSought:          a.PrefixSought - b.PrefixSought,

		RangeFilterChecks:    a.RangeFilterChecks - b.RangeFilterChecks,
		RangeFilterNegatives: a.RangeFilterNegatives - b.RangeFilterNegatives,
	}
}

// runPhase runs w on s and measures the metrics it moved; a fill is
// followed by a Settle.
func runPhase(s *benchstore.Bloomkv, cfg *workload.Config, w workload.Workload, label string) (*phase, error) {
	return runPhaseOS(s, cfg, w, label, nil)
}

// osMeasure is what the workloads' runs measure of the operating system:
// the I/O at the file system and the device, CPU time, disk usage, and
// with cold the page cache dropped before each read workload.
type osMeasure struct {
	cold bool
	// memLimit is the size of the memory cgroup the process runs in
	// (-memlimit), 0 if none: then every workload's device reads are
	// reported, as cold ones are.
	memLimit int64
	dir      string           // the database's
	dev      *procstat.Device // dir's block device; nil if none (device reads not counted)
}

// runPhaseOS is runPhase that, with m, also measures what m says: the
// phase's I/O counters, CPU time and write stalls, and after a fill's
// settle the database's bytes on disk.
func runPhaseOS(s *benchstore.Bloomkv, cfg *workload.Config, w workload.Workload, label string, m *osMeasure) (*phase, error) {
	var osBefore procstat.Counters
	var cpuBefore time.Duration
	cold := m != nil && m.cold && !w.IsFill()
	if m != nil {
		if cold {
			// Held: no other process's drop until the phase is measured.
			release, err := procstat.DropPageCache()
			if err != nil {
				return nil, fmt.Errorf("-cold: %w", err)
			}
			defer release()
		}
		var err error
		if osBefore, err = procstat.Read(m.dev); err != nil {
			return nil, err
		}
		u, err := procstat.ReadUsage()
		if err != nil {
			return nil, err
		}
		cpuBefore = u.CPU()
	}
	before := s.DB.Metrics()
	pr := progress.New(label, cfg.Ops(w))
	res, err := cfg.Run(s, w, pr.Func())
	pr.Done()
	if err != nil {
		return nil, err
	}
	after := s.DB.Metrics()
	p := &phase{res: res, gets: after.Gets - before.Gets, prefixSeeks: after.PrefixSeeks - before.PrefixSeeks,
		cacheHits: after.BlockCache.Hits - before.BlockCache.Hits, cacheMisses: after.BlockCache.Misses - before.BlockCache.Misses}
	for i := range p.levels {
		p.levels[i] = delta(after.Levels[i], before.Levels[i])
	}
	if w.IsFill() {
		t := time.Now()
		pr := progress.New(label+": flush and compactions", 0)
		err := s.Settle()
		pr.Done()
		if err != nil {
			return nil, err
		}
		p.settleTime = time.Since(t)
	}
	if m == nil {
		return p, nil
	}
	osAfter, err := procstat.Read(m.dev)
	if err != nil {
		return nil, err
	}
	u, err := procstat.ReadUsage()
	if err != nil {
		return nil, err
	}
	p.measured, p.cold, p.capped = true, cold, m.memLimit > 0
	p.io, p.cpu = osAfter.Minus(osBefore), u.CPU()-cpuBefore
	p.stall = s.DB.Metrics().WriteStallDuration - before.WriteStallDuration
	if w.IsFill() {
		p.liveBytes, p.writtenBytes = cfg.LiveBytes(w), cfg.WrittenBytes(w)
		if p.diskBytes, err = procstat.DiskBytes(m.dir); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// runWorkloads runs the workloads on a fresh database in dir, prints the
// report and, with -out, writes it; with -sizes, at each size in a
// subdirectory of dir, then the scale table and charts.
func runWorkloads(stdout io.Writer, f *benchFlags, dir string, opts *bloomkv.Options, cfg *workload.Config, ws []workload.Workload) error {
	m := &osMeasure{cold: f.cold, dir: dir, memLimit: int64(f.memLimit)}
	if _, err := procstat.ReadProcIO(); err != nil {
		switch {
		case f.cold:
			return fmt.Errorf("-cold: %w", err)
		case f.memLimit > 0:
			return fmt.Errorf("-memlimit: %w", err)
		}
		m = nil // no I/O counters on this system: the OS columns are left out
	}
	if f.cold {
		// Fail now, not after the first fill.
		release, err := procstat.DropPageCache()
		if err != nil {
			return fmt.Errorf("-cold: %w", err)
		}
		release()
	}
	if len(f.sizeList) == 0 {
		rep, err := runSize(dir, opts, cfg, ws, m)
		if err != nil {
			return err
		}
		rep.print(stdout)
		if f.out != "" {
			if err := rep.write(f.out); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "\nwrote %s and %s\n", filepath.Join(f.out, "bench.csv"), filepath.Join(f.out, "bench.json"))
		}
		return nil
	}
	var reps []*benchReport
	for _, n := range f.sizeList {
		keys, err := workload.NewKeys(n, f.keySize, f.valueSize, f.seed)
		if err != nil {
			return usageError{err}
		}
		c := *cfg
		c.Keys = keys
		sub := filepath.Join(dir, strconv.Itoa(n))
		rep, err := runSize(sub, opts, &c, ws, m)
		if err != nil {
			return err
		}
		if err := os.RemoveAll(sub); err != nil {
			return err
		}
		rep.print(stdout)
		fmt.Fprintln(stdout)
		reps = append(reps, rep)
	}
	printBenchScale(stdout, reps)
	if f.out != "" {
		if err := writeJSON(filepath.Join(f.out, "scale.json"), reps); err != nil {
			return err
		}
		if err := scaleCharts(reps, f.out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote scale.json and the scale charts into %s\n", f.out)
	}
	return nil
}

// runSize runs the workloads on a fresh database in dir and returns their
// report.
func runSize(dir string, opts *bloomkv.Options, cfg *workload.Config, ws []workload.Workload, m *osMeasure) (*benchReport, error) {
	if m != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		mm := *m
		mm.dir, mm.dev = dir, nil
		if dev, err := procstat.DeviceOf(dir); err == nil {
			mm.dev = dev
		}
		m = &mm
	}
	s, err := benchstore.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	var phases []*phase
	for _, w := range ws {
		p, err := runPhaseOS(s, cfg, w, string(w), m)
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
	}
	metrics := s.DB.Metrics()
	info, _, err := treeInfo(dir, opts, cfg.Keys.N)
	if err != nil {
		return nil, err
	}
	rep := newBenchReport(opts, cfg, phases, metrics, info)
	if m != nil {
		rep.Settings.MemLimit = m.memLimit
	}
	if u, err := procstat.ReadUsage(); err == nil {
		rep.PeakRSS = u.MaxRSS
	}
	err = s.Close()
	s = nil
	if err != nil {
		return nil, err
	}
	if rep.Reopen, err = measureReopen(dir, opts); err != nil {
		return nil, err
	}
	return rep, nil
}

// reopenRow is what opening the closed database again read and took: the
// manifest it replays (its bytes and edits), the WALs whose writes no
// table holds yet, the tables the manifest lists, and how long Open took
// — what grows with the tree at a restart.
type reopenRow struct {
	OpenSeconds   float64 `json:"open_seconds"`
	ManifestBytes int64   `json:"manifest_bytes"`
	ManifestEdits int     `json:"manifest_edits"`
	WALBytes      int64   `json:"wal_bytes"`
	Tables        int     `json:"tables"`
}

// measureReopen reads what the closed database in dir holds (its manifest
// and WALs), then opens it again, timing the Open, and closes it.
func measureReopen(dir string, opts *bloomkv.Options) (*reopenRow, error) {
	rec, err := manifest.Recover(vfs.Default, dir)
	if err != nil {
		return nil, err
	}
	r := &reopenRow{ManifestEdits: rec.Edits}
	if v := rec.Version; v != nil {
		for level := range v.Levels {
			r.Tables += v.NumFiles(level)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		t, num, ok := manifest.ParseFilename(e.Name())
		if !ok || (t != manifest.FileTypeWAL && (t != manifest.FileTypeManifest || num != rec.ManifestFileNum)) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		if t == manifest.FileTypeWAL {
			r.WALBytes += fi.Size()
		} else {
			r.ManifestBytes = fi.Size()
		}
	}
	start := time.Now()
	s, err := benchstore.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("reopening: %w", err)
	}
	r.OpenSeconds = time.Since(start).Seconds()
	return r, s.Close()
}

// levelInfo is what the manifest says of one level's filters.
type levelInfo struct {
	filters     string  // levelFilters' summary without the bits: "bloom", "fuse 8-bit", "2 fuse 8-bit + 1 bloom"
	expectedFPR float64 // of its tables' filters, weighted by their sizes (tables without one left out); 1 without filters
}

// treeInfo reads the manifest of the database in dir — it may be open: the
// manifest is only read — and returns each level's filters and the tree's
// shape for the filter allocation (Sizes in bytes).
func treeInfo(dir string, opts *bloomkv.Options, keys int) ([manifest.NumLevels]levelInfo, compaction.Shape, error) {
	var info [manifest.NumLevels]levelInfo
	var shape compaction.Shape
	rec, err := manifest.Recover(vfs.Default, dir)
	if err != nil {
		return info, shape, err
	}
	v := rec.Version
	if v == nil {
		v = &manifest.Version{}
	}
	var total float64
	for level, files := range v.Levels {
		info[level].expectedFPR = 1
		if len(files) == 0 {
			continue
		}
		info[level].filters, _ = levelKinds(files)
		// The level's rate weighs each table by its bytes; a table with no
		// filter reads a block for every lookup in its range (rate 1).
		var rate, size float64
		for _, m := range files {
			rate += float64(m.Size) * tableSpec(m).ExpectedFalsePositiveRate()
			size += float64(m.Size)
		}
		if size > 0 {
			info[level].expectedFPR = rate / size
		}
		shape.Sizes[level] = float64(v.LevelSize(level))
		total += shape.Sizes[level]
	}
	shape.L0Tables = v.NumFiles(0)
	shape.TableSize = float64(opts.TargetFileSize)
	if keys > 0 {
		shape.EntrySize = total / float64(keys)
	}
	return info, shape, nil
}

// tableSpec is the filter spec of a table from its manifest record.
func tableSpec(m *manifest.FileMetadata) sstable.FilterSpec {
	family, param := m.Filter()
	return sstable.FilterSpec{Family: sstable.FilterFamily(family), Bits: param}
}

// predictedFPR is the expected false-positive rate of a blocked filter at
// bitsPerKey, 1 for no filter.
func predictedFPR(bitsPerKey float64) float64 {
	if bitsPerKey <= 0 {
		return 1
	}
	return bloom.BlockedFalsePositiveRate(bitsPerKey, bloom.BlockedProbes(bitsPerKey))
}

func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fmtRate(r float64) string {
	switch {
	case r >= 0.1:
		return fmt.Sprintf("%.1f%%", 100*r)
	case r >= 0.001:
		return fmt.Sprintf("%.2f%%", 100*r)
	}
	return fmt.Sprintf("%.4f%%", 100*r)
}

// optionError turns the DB's refusal of an option that a size flag set
// into an error about the flag, with its value in the units it is written
// in ("-memtable-size 8.00 GiB: outside [64 KiB, 1 GiB]"), where the DB
// names its option and gives the value in bytes.
func (f *benchFlags) optionError(err error) error {
	var ae *bloomkv.ArgumentError
	if !errors.As(err, &ae) {
		return err
	}
	flags := map[string]struct {
		name  string
		value *sizeFlag
	}{
		"opts.MemtableSize":   {"memtable-size", &f.memtableSize},
		"opts.BaseLevelSize":  {"base-level-size", &f.baseLevelSize},
		"opts.TargetFileSize": {"target-file-size", &f.targetFileSize},
		"opts.BlockCacheSize": {"cache-size", &f.cacheSize},
		"opts.MemoryLimit":    {"memory-limit", &f.memoryLimit},
	}
	fl, ok := flags[ae.Arg]
	if !ok {
		return err
	}
	reason := strings.TrimPrefix(ae.Reason, strconv.FormatInt(int64(*fl.value), 10))
	reason = strings.TrimPrefix(strings.TrimPrefix(reason, ": "), " is ")
	return usageError{fmt.Errorf("-%s %s: %s", fl.name, fl.value, reason)}
}

// sizeFlag is a byte size given as a number with an optional unit: B, KiB,
// MiB, GiB (or K, M, G, powers of 1024 too).
type sizeFlag int64

func (s *sizeFlag) String() string { return humanize.Bytes(uint64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// tw returns an aligned-table writer on w.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

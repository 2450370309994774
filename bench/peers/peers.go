// Package peers runs bloomkv's workloads (package
// github.com/bloomkv/bloomkv/internal/workload: the same keys, values, seeds and
// operations as `bloomkv bench`) against bloomkv and three peer stores in
// one process, each configured as alike as their options allow:
//
//   - bloomkv (github.com/bloomkv/bloomkv)
//   - pebble (github.com/cockroachdb/pebble/v2)
//   - goleveldb (github.com/syndtr/goleveldb)
//   - badger (github.com/dgraph-io/badger/v4)
//
// # Build tags
//
// Each engine's adapter is a file of its own (adapters_ENGINE.go), which a
// build links in unless it has tag peers_single without tag peers_ENGINE:
// a build without tags has every engine, one with tags peers_single and
// peers_pebble has pebble only (Engines then holds pebble alone, and
// Lookup refuses the others). Command peers builds each engine's child
// process with tags peers_single and peers_ENGINE, so that the child's
// binary, whose mapped pages its peak RSS counts, holds that engine's code
// and not the others'. Every build imports bloomkv's packages, whatever
// its tags (package internal/workload, which runs the workloads, imports
// bloomkv), but the linker drops the code nothing reaches: without
// bloomkv's adapter a binary keeps little of them beyond their
// initialization.
//
// # Settings made equal
//
// Every engine gets: Bloom filters of 10 bits per key on every level
// (Settings.BitsPerKey), the same block cache capacity, snappy compression
// of 4 KiB data blocks (but see Compression below), the same memtable
// size, the same base level size (Settings.BaseLevelSize; how each engine
// uses it: see Levels below) with
// levels growing ×10, the same target table size, the write-ahead log on
// and no fsync per write for the fills, one Put per write (no batching),
// and a settle after each fill where the engine has a way to flush (see
// below).
//
// # What is measured
//
// Each workload's Result: its throughput and the latency of each
// operation (workload.Histogram: p50, p99, p99.9 within about 3%, and the
// exact max). For the engines that are Shapers — all four — Run also
// samples L0 every Measure.SampleInterval while each fill runs (the most
// L0 tables seen, and pebble's L0 sublevels, against the L0 at which the
// engine stops writes), and reads the tree after the fill's settle: table
// bytes per level, and the bytes written to the WAL and to tables, whose
// ratio over a fill is its write amplification (bloomkv and pebble count
// both; goleveldb does not count its WAL's bytes, badger neither those nor
// its tables'). With Measure.SpaceAmp it compacts
// the whole key range after the last workload (bloomkv and pebble, the
// FullCompacters) and reports the last fill's table bytes over the
// compacted tree's: space amplification.
//
// Around every workload (and a fill's settle) Run also reads what the
// operating system and the engine counted (Outcome.IO, CPU, Engine): the
// read calls made and the bytes they returned, the bytes read from and
// written to the device (package internal/procstat: /proc/self/io, and the
// device's own read count), the process's CPU time, and the engine's own
// counts of tables and blocks read and of write stall time (Counters,
// where it keeps them); after a fill, the engine's directory's bytes on
// disk against the user bytes the fill wrote (Outcome.SpaceAmpDisk). With
// Measure.Cold it drops the page cache before each read workload, so that
// its reads come from the device; badger, which maps its tables into
// memory, is closed before each drop and opened again after it, since the
// kernel drops no page a process maps (TableMapper).
//
// # Settings that could not be made equal
//
//   - Compression. bloomkv writes L0 and its base level uncompressed, as
//     its Options.TopLevelCompression does by default, and snappy below
//     them; pebble, goleveldb and badger compress every level with snappy,
//     their defaults. pebble's per-level options name fixed levels, so it
//     has no setting for "its base level", which moves as the tree grows.
//   - Filters. pebble and goleveldb take bits per key (10); bloomkv too,
//     with a cache-line-blocked filter (all probes in one 512-bit block,
//     about 0.95% false positives at 10 bits) where pebble's filter is also
//     cache-line-blocked and goleveldb's is a classic Bloom filter (about
//     0.8%). badger takes a false-positive rate, not bits per key: it gets
//     0.01, which its classic filter reaches at about 9.6 bits per key.
//     pebble's L0 tables get the filter too (its default is none in L0).
//   - pebble's Get never consults the filters of L6 tables (it reads them
//     only for iterators with UseL6Filters, which Get cannot pass), and
//     pebble's dynamic level sizing aims to keep most data in L6: its Gets
//     of missing keys read an index and a data block of L6 where the
//     others' filters answer. This is pebble's design choice, not a
//     setting.
//   - Flush and compaction after a fill. bloomkv flushes its memtable and
//     waits for compactions to finish (workload.Settler); pebble flushes and
//     waits until no compaction is in progress; goleveldb and badger have
//     no public call that flushes the memtable without closing, so they
//     start the reads with up to a memtable of the fill still in memory and
//     their compactions possibly still running — and their tree after a
//     fill is read so (Tree.Settled is false), which is also why they get
//     no space amplification: that tree lacks what the memtable holds.
//   - Levels. bloomkv (Options.LevelSizing's default, DynamicLevelSizing)
//     and pebble size their levels dynamically from the bottom: L0
//     compacts into the shallowest level the data needs, not always L1, and
//     the targets aim at about 90% of the table bytes in the largest level
//     (less while overwritten versions wait in the levels above it: space
//     amplification). bloomkv's BaseLevelSize is the floor of every
//     level's target; pebble's LBaseMaxBytes is the most its base level may
//     target. badger's levels are also sized
//     dynamically (BaseLevelSize). goleveldb's are static: L1 targets
//     CompactionTotalSize, each deeper level ×10. Table sizes: pebble's
//     TargetFileSizes are set equal on all levels (its default doubles them
//     per level); badger's BaseTableSize grows with TableSizeMultiplier (2)
//     per level.
//   - L0's stop. Each engine keeps its default L0 at which writes stop:
//     bloomkv 36 tables (L0StopTrigger, 9·L0CompactionTrigger); pebble 12
//     sublevels (L0StopWritesThreshold counts L0's read amplification, not
//     its tables); goleveldb 12 tables (WriteL0PauseTrigger); badger 15
//     tables (NumLevelZeroTablesStall, at which it stalls memtable flushes,
//     so that writes stop once its memtables are full).
//   - Concurrency. Each engine keeps its default number of background
//     compactions — bloomkv up to GOMAXPROCS at Open, at most 4
//     (Options.MaxConcurrentCompactions; with two or more, one is kept for
//     L0), of which one runs until L0 holds 12 tables, a second from
//     there and a third from 20 (Options.L0CompactionConcurrency); pebble
//     1 (CompactionConcurrencyRange's default, [1, 1]);
//     goleveldb 1; badger 4 compactors (NumCompactors) — and of memtables
//     held at once, the mutable one included (bloomkv 2, with
//     MaxImmutableMemtables 1; pebble 2, with MemTableStopWritesThreshold
//     2; goleveldb 2; badger 5, NumMemtables).
//   - Where memory lives. bloomkv's memtable arenas, block cache and
//     tables' filters and indexes are mapped outside the Go heap, and
//     pebble allocates its memtables and cache (which holds its filters and
//     indexes) manually, C malloc in a cgo build; goleveldb's and badger's
//     are on the Go heap, where the garbage collector lets a live byte cost
//     about two. Peak RSS counts all of it.
//   - Transactions. badger has no plain Put/Get: each Put is an Update
//     transaction (one commit through its write channel) and each Get a
//     View transaction; values stay in the LSM tree (ValueThreshold 4 KiB),
//     not in its value log.
//   - The block cache. pebble reserves its memtables' memory out of its
//     cache's capacity (the mutable memtable, and a flushed one it keeps for
//     reuse), so its cache is given CacheSize plus two memtables: what is
//     left for blocks is then CacheSize, as the others have, but while a
//     flush runs, when it holds a third memtable and its blocks get one
//     memtable less.
//   - Memory for filters and indexes. bloomkv, pebble and goleveldb load a
//     table's filter into memory when they open it (pebble and goleveldb
//     through the block cache, so the filters compete with data blocks for
//     the same capacity); badger keeps filters and indexes in memory
//     (IndexCacheSize 0).
//   - Get's value. Each adapter copies the value out (pebble's is only
//     valid until its closer, badger's only inside the transaction).
package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// Settings are what every engine is given.
type Settings struct {
	BitsPerKey     int   // filter bits per key on every level
	CacheSize      int64 // block cache capacity, bytes
	MemtableSize   int64 // bytes
	BaseLevelSize  int64 // L1's target size, bytes; ×10 per level
	TargetFileSize int64 // table size at which compactions cut, bytes
	BlockSize      int   // data block size, bytes
	// ValueThreshold is the size from which values are stored apart from
	// the LSM tree: in bloomkv's blob files (Options.ValueSeparation.
	// MinSize) and badger's value log (ValueThreshold). 0: bloomkv's
	// default (1 KiB), and badger's log from 4 KiB, so that smaller values
	// stay in its tree. pebble keeps every value in its tables: its value
	// separation (experimental in v2) needs a format newer than the one
	// it opens here.
	ValueThreshold int
	// BloomkvMemoryLimit is bloomkv's Options.MemoryLimit, 0 for none;
	// bloomkv then sizes its block cache and memtables from it, and not
	// from CacheSize and MemtableSize, which the other engines keep.
	BloomkvMemoryLimit int64
	// BloomkvMmapTables is bloomkv's Options.MmapTables: "all" maps every
	// table, "none" none, and "handles" or "" (its default) the tables
	// whose values are mostly in blob files.
	BloomkvMmapTables string
}

// DefaultSettings are bloomkv's defaults: 10 bits per key, an 8 MiB block
// cache, 4 MiB memtables, L1 of 16 MiB, 2 MiB tables, 4 KiB blocks.
var DefaultSettings = Settings{BitsPerKey: 10, CacheSize: 8 << 20, MemtableSize: 4 << 20,
	BaseLevelSize: 16 << 20, TargetFileSize: 2 << 20, BlockSize: 4 << 10}

// Engine is one store and how to open it.
type Engine struct {
	Name string
	Open func(dir string, s Settings) (workload.Store, error)
}

// engineNames are the engines this package adapts, bloomkv first: the
// order of Engines, whichever of them a build links in.
var engineNames = []string{"bloomkv", "pebble", "goleveldb", "badger"}

// Engines are the engines linked into this build (see Build tags in the
// package documentation), in engineNames' order.
var Engines []Engine

// register adds e to Engines in its place in engineNames: each engine's
// file registers it from init, and files' inits run in no order the
// package can rely on.
func register(e Engine) {
	rank := func(name string) int { return slices.Index(engineNames, name) }
	if rank(e.Name) < 0 {
		panic(fmt.Sprintf("peers: register of %q, not in engineNames", e.Name))
	}
	i := 0
	for i < len(Engines) && rank(Engines[i].Name) < rank(e.Name) {
		i++
	}
	Engines = slices.Insert(Engines, i, e)
}

// Lookup returns the engine called name, or an error naming why it has
// none: name is no engine this package adapts, or one this build does not
// link in.
func Lookup(name string) (Engine, error) {
	for _, e := range Engines {
		if e.Name == name {
			return e, nil
		}
	}
	if !slices.Contains(engineNames, name) {
		return Engine{}, fmt.Errorf("unknown engine %q (have %s)", name, strings.Join(engineNames, ", "))
	}
	linked := "none"
	if len(Engines) > 0 {
		var names []string
		for _, e := range Engines {
			names = append(names, e.Name)
		}
		linked = strings.Join(names, ", ")
	}
	return Engine{}, fmt.Errorf("engine %q is not linked into this binary, which has %s: it was built with tag peers_single, and without peers_%s", name, linked, name)
}

// TableMapper is an engine store that may map its tables into memory
// (Measure.Cold closes and reopens it around each drop of the page cache).
type TableMapper interface {
	// MapsTables reports whether the store reads its tables through
	// memory maps.
	MapsTables() bool
}

// DefaultSampleInterval is how often Run samples a Shaper's L0 while a
// fill runs. L0 grows only by flushes, and at a few hundred thousand Puts
// of about 120 bytes a second a 4 MiB memtable fills about every tenth of
// a second: L0 is seen between most flushes, for one metrics read each.
const DefaultSampleInterval = 100 * time.Millisecond

// Outcome is one workload's result and, after a fill on an engine that is
// a Shaper, its L0 and tree.
type Outcome struct {
	*workload.Result
	// L0 is L0 as sampled while the fill ran; nil for reads and for
	// engines that are not Shapers.
	L0 *L0Samples
	// Tree is the tree after the fill's settle (right after the fill for
	// an engine that cannot settle: see Tree.Settled); nil like L0.
	Tree *Tree
	// Compacted is the tree after a compaction of the whole key range at
	// the end of the run (Measure.SpaceAmp), on the last fill's outcome
	// only — the workloads after it only read, so the live data is the
	// same as under Tree — and only for FullCompacters.
	Compacted *Tree
	// CompactTime is how long that compaction took.
	CompactTime time.Duration
	// WriteAmp is the fill's write amplification (Tree.WriteAmp) from the
	// previous fill's Tree, or the open, to its own: what the fill and its
	// settle wrote. -1 where the engine does not count it.
	WriteAmp float64
	// Memory is the most resident memory sampled during the workload and
	// a fill's settle (every Measure.SampleInterval, and at its end), with
	// the engine's account of it where the store is a MemoryReporter; nil
	// where the system has no /proc/self/status (not Linux).
	Memory *MemoryPeak
	// Filters is what the store's filters cost and are expected to save,
	// after a read workload, where the store is a FilterReporter; nil
	// otherwise.
	Filters *Filters
	// Cold is set when the page cache was dropped before the workload
	// (Measure.Cold, read workloads).
	Cold bool
	// Reopened is set when the engine was closed before the drop and
	// opened again after it, as Run does for a TableMapper. IO and CPU
	// then include the open's (what it read ahead, its Gets may find
	// resident); the workload's time does not.
	Reopened bool
	// OpenIO is the part of IO the reopen read.
	OpenIO procstat.Counters
	// IO is what the workload read, at the file system and from the
	// device (procstat.Counters: the process's, but for DeviceReads, the
	// device's); DeviceReads is −1 when the database's directory is on no
	// block device.
	IO procstat.Counters
	// CPU is the process's CPU time (user and system, every thread's, the
	// engine's background work included) over the workload, and for a fill
	// its settle.
	CPU time.Duration
	// Engine is the change of the engine's own Counters over the workload
	// (and a fill's settle); all −1 for an engine that is not a Counter.
	Engine Counters
	// DiskBytes is, after a fill's settle, the bytes the engine's
	// directory takes on disk (procstat.DiskBytes: tables, logs, value
	// log); LiveBytes the user bytes, keys and values, the fill wrote
	// (workload.Config.LiveBytes). Their ratio is SpaceAmpDisk. 0 for
	// reads.
	DiskBytes, LiveBytes int64
	// DiskBytesCollected is DiskBytes after the application asked for the
	// value log to be rewritten (a ValueLogCollector, Measure.SpaceAmp; on
	// the last fill's outcome only), and ValueLogRewrites how many files it
	// rewrote; 0 for every other engine and workload.
	DiskBytesCollected int64
	ValueLogRewrites   int
}

// SpaceAmpDisk returns the space amplification of the fill measured on
// disk: DiskBytes over LiveBytes. ok is false for a read workload.
func (o *Outcome) SpaceAmpDisk() (amp float64, ok bool) {
	if o.LiveBytes <= 0 || o.DiskBytes <= 0 {
		return 0, false
	}
	return float64(o.DiskBytes) / float64(o.LiveBytes), true
}

// SpaceAmp returns the space amplification of the tree the fill left:
// Tree's table bytes over Compacted's. ok is false without both.
func (o *Outcome) SpaceAmp() (amp float64, ok bool) {
	if o.Tree == nil || o.Compacted == nil || o.Compacted.Bytes() == 0 {
		return 0, false
	}
	return float64(o.Tree.Bytes()) / float64(o.Compacted.Bytes()), true
}

// Measure is what Run measures besides each workload's result.
type Measure struct {
	// SampleInterval is how often L0 is sampled while a fill runs; 0 or
	// less: once, at the fill's end.
	SampleInterval time.Duration
	// SpaceAmp, if set, compacts the whole key range after the last
	// workload, on the engines that are FullCompacters, to measure the
	// space amplification of the tree the last fill left, and asks the
	// ValueLogCollectors to rewrite their value logs, to measure their
	// space on disk after it. It can take longer than the fill.
	SpaceAmp bool
	// Cold drops the page cache (procstat.DropPageCache) before each read
	// workload, so that its reads come from the device (Outcome.IO). It
	// needs Linux and root. An engine that maps its tables into memory (a
	// TableMapper) is closed before the drop and opened again after it:
	// the kernel drops only pages no process maps, so an open engine's
	// mapped tables would stay resident and its reads would not be cold.
	Cold bool
	// Progress, if not nil, is called before each workload and returns
	// the progress function passed to it.
	Progress func(w workload.Workload) func(int)
}

// Run runs the workloads as Measure.Run does, sampling L0 every
// DefaultSampleInterval and without the full compaction.
func Run(e Engine, dir string, s Settings, cfg *workload.Config, ws []workload.Workload, progress func(w workload.Workload) func(int)) ([]*Outcome, error) {
	m := Measure{SampleInterval: DefaultSampleInterval, Progress: progress}
	return m.Run(e, dir, s, cfg, ws)
}

// Run opens engine e in a new directory under dir, runs the workloads in
// order, settling after each fill where the engine can, and closes and
// removes the database. On an engine that is a Shaper it samples L0 during
// each fill and reads the tree after the fill's settle; with m.SpaceAmp it
// then compacts the whole key range after the last workload.
func (m *Measure) Run(e Engine, dir string, s Settings, cfg *workload.Config, ws []workload.Workload) ([]*Outcome, error) {
	path := filepath.Join(dir, e.Name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(path)
	st, err := e.Open(path, s)
	if err != nil {
		return nil, fmt.Errorf("%s: open: %w", e.Name, err)
	}
	r := &measureRun{m: m, e: e, s: s, path: path, st: st, held: func() {}}
	r.bind()
	r.dev, _ = procstat.DeviceOf(path) // nil on no block device: DeviceReads −1
	_, noResident := procstat.ReadResident()
	defer func() { r.held() }()
	var outs []*Outcome
	var lastFill *Outcome
	for _, w := range ws {
		o, err := r.runWorkload(cfg, w, noResident == nil)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
		if w.IsFill() {
			lastFill = o
		}
	}
	if fc, ok := r.st.(FullCompacter); ok && m.SpaceAmp && lastFill != nil && lastFill.Tree != nil {
		if err := r.compactAll(fc, lastFill); err != nil {
			return nil, err
		}
	}
	if vc, ok := r.st.(ValueLogCollector); ok && m.SpaceAmp && lastFill != nil {
		if err := r.collectValueLog(vc, lastFill); err != nil {
			return nil, err
		}
	}
	if err := r.st.Close(); err != nil {
		return nil, fmt.Errorf("%s: close: %w", e.Name, err)
	}
	return outs, nil
}

// measureRun is one Measure.Run: the engine's store, opened again where a
// cold workload closed it, with what the workloads need of it.
type measureRun struct {
	m    *Measure
	e    Engine
	s    Settings
	path string // the database's directory
	st   workload.Store
	// The store as a Shaper, Settler and Counter, nil if it is not one
	// (bind).
	shaper  Shaper
	settler workload.Settler
	counter Counter
	dev     *procstat.Device // the directory's block device, nil if none
	// lastTree is the last fill's tree, for the next one's write
	// amplification.
	lastTree *Tree
	// held releases the page-cache lock a cold workload holds from its
	// drop until it is measured (procstat.DropPageCache), so that no other
	// process drops the cache under it; released before the next drop.
	held func()
}

// bind finds what the store is besides a Store.
func (r *measureRun) bind() {
	r.shaper, _ = r.st.(Shaper)
	r.settler, _ = r.st.(workload.Settler)
	r.counter, _ = r.st.(Counter)
}

// counters returns the engine's counters, all −1 if it counts nothing.
func (r *measureRun) counters() (Counters, error) {
	if r.counter == nil {
		return Counters{Tables: -1, Blocks: -1, Stall: -1, FalsePositives: -1}, nil
	}
	return r.counter.Counters()
}

// fail closes the store and returns err, naming the engine.
func (r *measureRun) fail(err error) error {
	r.st.Close()
	return fmt.Errorf("%s: %w", r.e.Name, err)
}

// reopening is what a cold workload's reopen of the store measured: the
// counters before it, and its reads.
type reopening struct {
	before snapshot
	io     procstat.Counters
}

// runWorkload runs w on the store and measures it: its result, the device
// and CPU use and the engine's counters over it, and the peak memory
// while it runs (if memory is set: the platform reads a process's resident
// set); for a fill also L0 while it runs, the settle after it, its live
// and disk bytes, and the tree it left with its write amplification.
func (r *measureRun) runWorkload(cfg *workload.Config, w workload.Workload, memory bool) (*Outcome, error) {
	r.held()
	r.held = func() {}
	var pr func(int)
	if r.m.Progress != nil {
		pr = r.m.Progress(w)
	}
	var sampler *l0Sampler
	if r.shaper != nil && w.IsFill() {
		sampler = sampleL0(r.shaper, r.m.SampleInterval)
	}
	cold := r.m.Cold && !w.IsFill()
	var reopen *reopening
	if cold {
		var err error
		if reopen, err = r.coldStart(w); err != nil {
			return nil, err
		}
	}
	before, err := measureNow(r.dev, r.counters, cold)
	if err != nil {
		return nil, r.fail(err)
	}
	o := &Outcome{Cold: cold, Reopened: reopen != nil}
	if reopen != nil {
		before.io, before.cpu = reopen.before.io, reopen.before.cpu
		o.OpenIO = reopen.io
	}
	var mem *memorySampler
	if memory {
		mem = sampleMemory(r.st, r.m.SampleInterval)
	}
	o.Result, err = cfg.Run(r.st, w, pr)
	if sampler != nil {
		l0, serr := sampler.finish()
		if err == nil && serr != nil {
			err = fmt.Errorf("%s: sampling L0: %w", w, serr)
		}
		o.L0 = &l0
	}
	if err != nil {
		return nil, r.fail(err)
	}
	if w.IsFill() && r.settler != nil {
		if mem != nil {
			mem.settling()
		}
		if err := r.settler.Settle(); err != nil {
			return nil, r.fail(fmt.Errorf("settle after %s: %w", w, err))
		}
	}
	if mem != nil {
		peak, err := mem.finish()
		if err != nil {
			return nil, r.fail(fmt.Errorf("%s: sampling memory: %w", w, err))
		}
		o.Memory = &peak
	}
	after, err := measureNow(r.dev, r.counters, cold)
	if err != nil {
		return nil, r.fail(err)
	}
	o.IO, o.CPU, o.Engine = after.io.Minus(before.io), after.cpu-before.cpu, after.engine.minus(before.engine)
	if fr, ok := r.st.(FilterReporter); ok && !w.IsFill() {
		f, err := fr.Filters()
		if err != nil {
			return nil, r.fail(fmt.Errorf("filters after %s: %w", w, err))
		}
		o.Filters = &f
	}
	if w.IsFill() {
		if err := r.fillShape(cfg, w, o); err != nil {
			return nil, r.fail(err)
		}
	}
	return o, nil
}

// coldStart readies the store for a cold workload w: closed first if it
// maps its tables (mapped pages stay resident through the drop), the page
// cache dropped and held (r.held releases it), and the store opened again
// after the drop, the open's reads being the workload's (a mapping engine
// may read ahead at open what its Gets then find resident). It returns
// what the reopen measured, nil if the store stayed open.
func (r *measureRun) coldStart(w workload.Workload) (*reopening, error) {
	reopened := false
	if mapper, ok := r.st.(TableMapper); ok && mapper.MapsTables() {
		if err := r.st.Close(); err != nil {
			return nil, fmt.Errorf("%s: close before %s: %w", r.e.Name, w, err)
		}
		reopened = true
	}
	release, err := procstat.DropPageCache()
	if err != nil {
		if reopened {
			return nil, err
		}
		return nil, r.fail(err)
	}
	r.held = release
	if !reopened {
		return nil, nil
	}
	none := func() (Counters, error) { return Counters{}, nil }
	preOpen, err := measureNow(r.dev, none, true)
	if err != nil {
		return nil, err
	}
	if r.st, err = r.e.Open(r.path, r.s); err != nil {
		return nil, fmt.Errorf("%s: open again before %s: %w", r.e.Name, w, err)
	}
	r.bind()
	opened, err := measureNow(r.dev, none, true)
	if err != nil {
		return nil, r.fail(err)
	}
	return &reopening{before: preOpen, io: opened.io.Minus(preOpen.io)}, nil
}

// fillShape records in o what fill w left: its live and disk bytes and,
// on a Shaper, the tree, with the write amplification since the last
// fill's.
func (r *measureRun) fillShape(cfg *workload.Config, w workload.Workload, o *Outcome) error {
	o.LiveBytes = cfg.LiveBytes(w)
	var err error
	if o.DiskBytes, err = procstat.DiskBytes(r.path); err != nil {
		return fmt.Errorf("disk usage after %s: %w", w, err)
	}
	if r.shaper == nil {
		return nil
	}
	t, err := r.shaper.Tree()
	if err != nil {
		return fmt.Errorf("tree after %s: %w", w, err)
	}
	t.Settled = r.settler != nil
	o.Tree = &t
	o.WriteAmp = -1
	if amp, ok := t.WriteAmp(r.lastTree); ok {
		o.WriteAmp = amp
	}
	r.lastTree = &t
	return nil
}

// compactAll compacts the whole key range of the store, fc, settles it,
// and records in the last fill's outcome the time it took and the tree it
// left.
func (r *measureRun) compactAll(fc FullCompacter, lastFill *Outcome) error {
	start := time.Now()
	if err := fc.CompactAll(); err != nil {
		return r.fail(fmt.Errorf("full compaction: %w", err))
	}
	if r.settler != nil {
		if err := r.settler.Settle(); err != nil {
			return r.fail(fmt.Errorf("settle after the full compaction: %w", err))
		}
	}
	lastFill.CompactTime = time.Since(start)
	t, err := r.shaper.Tree()
	if err != nil {
		return r.fail(fmt.Errorf("tree after the full compaction: %w", err))
	}
	t.Settled = r.settler != nil
	lastFill.Compacted = &t
	return nil
}

// collectValueLog asks vc to rewrite its value log and records in lastFill
// the directory's bytes after it.
func (r *measureRun) collectValueLog(vc ValueLogCollector, lastFill *Outcome) error {
	n, err := vc.CollectValueLog()
	if err != nil {
		return r.fail(fmt.Errorf("value-log collection: %w", err))
	}
	lastFill.ValueLogRewrites = n
	if lastFill.DiskBytesCollected, err = procstat.DiskBytes(r.path); err != nil {
		return r.fail(fmt.Errorf("disk usage after the value-log collection: %w", err))
	}
	return nil
}

// snapshot is the counters Run reads before and after each workload.
type snapshot struct {
	io     procstat.Counters
	cpu    time.Duration
	engine Counters
}

// measureNow reads the counters. Where the system has no I/O counters
// (not Linux) they stay zero, DeviceReads −1, unless cold needs them;
// CPU time likewise where it has no getrusage.
func measureNow(dev *procstat.Device, engine func() (Counters, error), cold bool) (snapshot, error) {
	var s snapshot
	var err error
	if s.io, err = procstat.Read(dev); err != nil {
		if cold {
			return s, err
		}
		s.io = procstat.Counters{DeviceReads: -1}
	}
	if u, err := procstat.ReadUsage(); err == nil {
		s.cpu = u.CPU()
	}
	s.engine, err = engine()
	return s, err
}

package bloomkv

import (
	"fmt"
	"log/slog"
	"runtime"
	"slices"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/rangefilter"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// Limits on what one write may carry. They keep every record, block and
// memtable entry within sizes the formats and the memory budget handle.
const (
	// MaxKeySize is the largest key, in bytes.
	MaxKeySize = 64 << 10
	// MaxValueSize is the largest value, in bytes.
	MaxValueSize = 64 << 20
	// MaxBatchSize is the largest encoded batch, in bytes.
	MaxBatchSize = 256 << 20
)

// Compression chooses how table data blocks are compressed. It is the
// tables' own option type, so the DB hands it to every table writer as it
// is, with no second enum to keep in step; the byte a block is stored with
// is the format's, translated by package sstable. The zero value,
// DefaultCompression, is snappy for a DB.
type Compression = sstable.Compression

// The compressions.
const (
	DefaultCompression = sstable.DefaultCompression
	NoCompression      = sstable.NoCompression
	SnappyCompression  = sstable.SnappyCompression
	ZstdCompression    = sstable.ZstdCompression
)

// Options configure a DB. The zero value, like a nil *Options, gives the
// defaults documented on each field.
type Options struct {
	// FS is the file system; default the operating system's. Tests use
	// vfs.NewMem to simulate crashes.
	FS vfs.FS

	// ErrorIfNotExists makes Open fail, with an error wrapping
	// fs.ErrNotExist, when the directory holds no DB, instead of creating
	// one.
	ErrorIfNotExists bool
	// ErrorIfExists makes Open fail, with an error wrapping fs.ErrExist,
	// when the directory holds a DB already.
	ErrorIfExists bool
	// ReadOnly opens an existing DB without writing anything to its
	// directory: the WALs are replayed into memory only, nothing is
	// flushed or compacted, no file is created, changed or deleted. It
	// takes a shared lock, so any number of read-only opens coexist, while
	// a read-write Open fails with ErrLocked (and a read-only one while a
	// read-write DB is open). Writes, Flush, Compact and Resume return
	// ErrReadOnly. It implies ErrorIfNotExists.
	ReadOnly bool

	// Logger receives the DB's log lines: background errors, write stalls,
	// flushes and compactions (see EventListener for the levels). Default:
	// none.
	Logger *slog.Logger
	// EventListener receives the DB's background events. Default: none.
	EventListener *EventListener

	// MemtableSize is the memtable's size in bytes; a full memtable becomes
	// immutable and is flushed to an L0 table. Default 4 MiB.
	MemtableSize int64

	// MaxImmutableMemtables is how many full memtables may wait for their
	// flush before writes wait too. Default 1: the mutable memtable fills
	// while the previous one is flushed, so at most two memtables' worth
	// of memory is held. A second one measured no faster fill with one
	// flush thread, for a third memtable's memory.
	MaxImmutableMemtables int

	// MaxTransactionSize bounds what one transaction holds: its writes'
	// encoded bytes plus the keys it read (each Get's key, and an
	// iterator's span, both ends), each read counted with 32 bytes more.
	// A Set, Delete or read that would pass it, and a Commit, fail with
	// an error wrapping ErrTxnTooBig. Default and most MaxBatchSize.
	MaxTransactionSize int64
	// TxnConflictMemory bounds the memory of the record of what commits
	// wrote that open transactions' commits are checked against (see
	// docs/transactions.md). Past it the oldest records are dropped, and
	// a transaction that read something and whose snapshot is older than
	// a dropped record fails its Commit with ErrConflict. Default 64 MiB.
	TxnConflictMemory int64

	// Clock is the time by which writes with a time-to-live (PutWithTTL,
	// Batch.SetWithTTL) get their expiry at commit and reads and
	// compactions judge it (see docs/ttl.md). Default the system's wall
	// clock; tests give one they advance by hand, so that what expires
	// when is exact.
	Clock Clock

	// BlockSize is the target size of a table's data block. Default 4 KiB.
	BlockSize int

	// Compression compresses the data blocks of the tables below the base
	// level, the bulk of the data (and of the base level when it is the
	// last, as it is while the tree is small). Default snappy.
	Compression Compression
	// TopLevelCompression compresses the data blocks of the tables of L0
	// (flushes) and of the base level while a level is below it. Default
	// NoCompression: these levels hold a few percent of the data and are
	// rewritten soon, so compressing them costs CPU for little space — in
	// a 10,000,000-key random fill the fill ran about 10% faster and used
	// 9% less CPU than with snappy there, for a settled tree about 0.3%
	// larger (its base level, 15 MiB of 910, uncompressed). Set it to
	// Compression to compress every level. A table
	// keeps its compression when it moves down a level unchanged only if
	// that level's is the same; otherwise it is rewritten.
	TopLevelCompression Compression

	// DisableBlockAlign writes tables whose data blocks ignore page
	// boundaries, as before format version 3. By default each data block
	// is cut to fit a 4 KiB page with its 5-byte trailer, and one that
	// would cross a page boundary starts at the next (sstable's
	// WriterOptions.BlockAlign), so that a Get whose block is not in the
	// page cache reads one page from the device instead of usually two,
	// for a little padding on disk (measured at 10M keys of 100-byte
	// values, snappy, at the default BlockSize: 1.3% more table bytes,
	// and 2.1× → 0.99× the mean block in device bytes per cold Get).
	// With a BlockSize below a page several blocks share a page, and one
	// is padded only by up to a quarter of itself; above a page, blocks
	// are not cut to pages.
	DisableBlockAlign bool

	// DisablePagedFilters writes no paged filters. By default, under a
	// MemoryLimit, a table whose filter the budget planned with fewer bits
	// than BitsPerKey asks for (a large tree's) also gets a paged filter:
	// a Bloom filter of BitsPerKey bits per key kept in the table's file
	// and read a 4 KiB page at a time, through the block cache, for the
	// keys its filter cannot rule out (sstable's Paged filters), so that
	// most of the absent keys the budget's filter passes cost a page the
	// cache or the page cache holds — shared by the keys hashed to it —
	// and not a data block from the device. It costs the table's file
	// BitsPerKey/8 bytes a key. Without a MemoryLimit no table gets one.
	DisablePagedFilters bool

	// BitsPerKey is the filter memory, in bits per key on average over the
	// tree, that FilterAllocation spreads over the levels: under the
	// default UniformAllocation each table's Bloom filter, about 1% false
	// positives at the default of 10. See DisableFilters for none.
	BitsPerKey float64

	// DisableFilters writes tables without filters, so that every lookup
	// reads a block of every table whose key range holds the key — the
	// baseline the filters are measured against.
	DisableFilters bool

	// BlockCacheSize is the capacity of the block cache in bytes. Default
	// 8 MiB; a negative value disables the cache. The cache's blocks live
	// outside the Go heap, so this is what they cost in memory; each
	// block is charged its buffer's size class (within 1/16 above its
	// length). A block that a Get or MultiGet reads from its file is
	// cached while the cache has room for it; once the cache is full,
	// only at its second miss within about a cache's worth of misses
	// (CacheMetrics.Rejected counts the others): a Get of a key drawn
	// from data many times the cache's size reads a block no later Get is
	// likely to find, and copying it in, evicting another, took a fifth
	// of such a Get's time. An Iterator caches every block it reads; a
	// compaction's reads are not cached.
	BlockCacheSize int64

	// MemoryLimit, if above 0, is the memory in bytes the DB may hold,
	// which it divides (see memoryShares; Metrics.MemoryBudget shows each
	// part against its share):
	//
	//   - the memtables a fixed quarter: MemtableSize, unless set, is a
	//     quarter over the MaxImmutableMemtables+1 memtables held at once
	//     (less the arena's last partial chunk), in [64 KiB, 1 GiB]; one
	//     set must leave at least half the limit;
	//   - the compactions' buffers a reserve of MaxConcurrentCompactions
	//     times compactionMemory;
	//   - what tables pin — filters, indexes (partitioned by default: see
	//     IndexPartitionSize), range filters — half of the
	//     rest, a planned share: the filters are planned within what the
	//     indexes and range filters leave of it (compaction.
	//     FiltersWithinBudget), and once the tree has more keys than that
	//     holds at BitsPerKey, the allocation lowers the bits per key
	//     where a bit is worth least — the deepest level first, as
	//     Monkey's solution does under a memory constraint — instead of
	//     growing past the share (the default, UniformAllocation, then
	//     plans as BestAllocation: see FilterAllocation); while the
	//     filters of tables written for a smaller tree pass it, the
	//     tables written next are planned for the shape the tree has and
	//     with that much less;
	//   - the block cache what the others leave: the limit less the
	//     memtables' share, the compactions' reserve, what the tables pin
	//     now and what the Go runtime's memory has grown by since Open,
	//     shrinking as the tree grows (its freed pages given back).
	//
	// The Go heap's growth is measured (runtime/metrics), not estimated:
	// the DB's objects on the heap — the tables' metadata and range
	// tombstones, the table cache's handles, the memtables' B-trees, a
	// compaction's filter keys — cost what the collector lets the heap
	// grow to around them, about twice what is live at GOGC=100. It
	// counts whatever the application allocates meanwhile too, which the
	// DB cannot tell apart: in a process whose own heap grows, give the
	// limit room for it. What the Go runtime held at Open is left out;
	// Metrics.Memory shows every part. 0 keeps the separate settings;
	// MemoryLimit sets BlockCacheSize itself, so the two are not given
	// together, and it plans the filters, so not with LevelFilters.
	MemoryLimit int64

	// IndexPartitionSize partitions the index of a table whose index is
	// larger than it (sstable's WriterOptions.IndexPartitionSize): the
	// index is cut into partitions of about this many bytes, and only a
	// top level over them — about one key and 20 bytes per partition — is
	// pinned while the table is open; a lookup reads the partition it
	// needs through the block cache, as it reads a data block. So what
	// the indexes pin stays a small fraction of what they take — of a
	// 64 MiB table of 16-byte keys, 1/85 at 4 KiB — and a tree whose
	// indexes outgrow the memory its tables may pin still opens within
	// MemoryLimit. Default: 4 KiB (RocksDB's metadata block size) under
	// MemoryLimit, no partitions without it, where the indexes are pinned
	// whole: a present-key Get in a cached table took 1.10× the CPU time
	// with a partition to look up (docs/memory-limit.md). A negative value
	// writes no partitions, under MemoryLimit too. At most 1 MiB. Tables
	// written with other settings, or none, read as they were written.
	IndexPartitionSize int

	// FilterAllocation chooses each level's filter within the memory of
	// BitsPerKey: UniformAllocation, the same Bloom filter in every table;
	// OptimalAllocation (Monkey), Bloom filters with a false-positive rate
	// proportional to each level's size, which at equal memory cuts the
	// wasted reads of a lookup for an absent key from about one per level
	// to about one in total times the largest level's rate; and the
	// allocations that also choose the filter family per level (see
	// FilterAllocation's constants). Default UniformAllocation, which under
	// MemoryLimit, once the tree has more keys than the filters' share
	// holds at BitsPerKey, plans as BestAllocation within the share: Ribbon
	// filters in the largest levels, which buy a Bloom filter's rate for
	// about 0.7 of its memory, and in L0, whose tables are built from a
	// memtable's keys at once, Bloom filters of the memory planned.
	FilterAllocation FilterAllocation

	// LevelFilters, if not empty, fixes the filter of each level instead
	// of FilterAllocation: LevelFilters[i] for level i, and the last entry
	// for every level below. BitsPerKey is then unused. E.g.
	// []FilterSpec{Fuse(16), Fuse(16), Fuse(12), Fuse(8)}. At most seven
	// entries (L0–L6), each valid (FilterSpec.Check); the zero FilterSpec
	// builds a level without filters (refused with Prefix, which needs
	// them). DisableFilters wins over it: no table gets a filter, and the
	// resolved options drop LevelFilters, so that a baseline run needs
	// only DisableFilters set.
	LevelFilters []FilterSpec

	// Prefix, if not nil, makes every table's filter answer for key
	// prefixes as well as whole keys (Pebble's Comparer.Split, RocksDB's
	// prefix_extractor), so that Iterator.SeekPrefixGE skips every table
	// whose filter rules the prefix out. Tables written under another
	// extractor (another Name), or none, are read by such seeks. It needs
	// filters: with DisableFilters it is refused.
	Prefix *PrefixExtractor

	// Merger, if not nil, is the merge operator DB.Merge and Batch.Merge
	// need (see Merger; Int64AddMerger and AppendMerger are two). The
	// first Open with a Merger records its Name in the manifest, and
	// from then on Open refuses another name, or none.
	Merger *Merger

	// RangeFilterBits, if not empty, gives the tables of each level a
	// range filter (package rangefilter: Grafite over an order-preserving
	// mapping of the keys) of RangeFilterBits[i] bits per key at level i,
	// the last entry for every level below; 0 builds a level without. An
	// iterator with both bounds then leaves out every table whose range
	// filter rules its range out, without reading the table (see
	// Iterator), and so does a SeekGE with an upper bound: an empty scan
	// of ℓ keys reads a table falsely with probability at most
	// ℓ/2^(B−2) at B bits per key. Each entry is 0 or in
	// [rangefilter.MinBitsPerKey, rangefilter.MaxBitsPerKey] (3 to 40);
	// at most seven entries (L0–L6). Default: none. Range filters pay only
	// where scans are bounded and short, and cost memory (2 to 4 bits
	// per key for dense keys, which they hold exactly, up to the setting
	// for sparse ones) and build time at every flush and compaction, so
	// they are off until asked for. Asking them costs a short scan about a
	// tenth of its time, so while fewer than one recent check in eight
	// rules its range out — scans that find keys, in a tree of one level
	// — range scans stop asking, save one in sixteen that keeps watch
	// (Metrics.RangeScansUnfiltered); docs/bench/README.md ("Range filters
	// in the store") has what 16 bits per key bought and cost. A table
	// keeps the range filter it was written with, so a DB reopened with
	// other settings still reads its old tables' filters, and so does a
	// table a compaction moves to the next level without rewriting it (a
	// trivial move): it keeps its range filter, or its lack of one,
	// whatever that level's setting, until a compaction rewrites it.
	RangeFilterBits []float64

	// MaxManifestFileSize is the size in bytes at which the manifest, the
	// log of every flush and compaction, is rotated: after an edit that
	// takes it to this size, and once its edits outweigh its opening
	// snapshot of the tree (so that a rotation never makes it larger), the
	// DB writes a new manifest holding the snapshot and deletes the old one
	// (manifest_rotation.go). Default 16 MiB, below Pebble's 128 MiB: Open
	// replays the whole manifest (about 0.4 s per 32 MiB measured here),
	// while a rotation costs only the snapshot, some 70 bytes a table, and
	// four fsyncs. At least 1 KiB.
	MaxManifestFileSize int64

	// The shape of the tree. The defaults are sized for an embedded store
	// with the default 4 MiB memtable: L0 compacts at about 16 MiB (4
	// flushes), the base level holds at least as much as L0 at its trigger
	// (so an L0 compaction rewrites about as much of it as it brings in),
	// and each deeper level is 10 times larger. With dynamic sizing the
	// bottom level is sized by the data and the levels above it follow
	// (a 1 GiB tree: L4 16 MiB, L5 100 MiB, L6 1 GiB); with static sizing
	// L1–L6 target 16 MiB, 160 MiB, 1.6 GiB, 16 GiB, 160 GiB, 1.6 TiB.

	// L0CompactionTrigger is the number of L0 tables at which L0 is
	// compacted into L1. Default 4.
	L0CompactionTrigger int
	// L0SlowdownTrigger is the number of L0 tables from which writes are
	// paced, at a rate that falls from twice what L0 compactions drain to
	// a small fraction of it at L0StopTrigger (see pacing.go) — the
	// writes go on at once until they are 5 ms ahead of the rate, and
	// then one waits until they are not — and L0 compactions go before
	// all others. Default 5·L0CompactionTrigger (20); at least
	// L0CompactionTrigger.
	L0SlowdownTrigger int
	// L0StopTrigger is the number of L0 tables at which writes stop until
	// compaction brings L0 below it: every L0 table whose range holds a
	// key is probed by every read of it, so L0 must stay bounded. Default
	// 9·L0CompactionTrigger (36); at least L0SlowdownTrigger.
	//
	// Why RocksDB's thresholds (20 and 36 at a trigger of 4) rather than
	// LevelDB's (8 and 12): a probe of a table whose filter rules the key
	// out reads nothing, so with filters an L0 table costs a missing-key
	// Get one filter check and a present-key Get about one percent of a
	// block read, and writes need not wait as early. Measured on a
	// 1,000,000-key fillrandom (bench/peers settings, 2 cores, with the
	// fixed millisecond's slowdown of the time): LevelDB's
	// thresholds stalled writes 166 times for 338 ms, 690k ops/s; these 10
	// times for 80–115 ms, 790k–840k ops/s.
	L0StopTrigger int
	// BaseLevelSize is the target size of the base level, the level L0
	// compacts into: under StaticLevelSizing L1, and level n targets
	// BaseLevelSize·LevelMultiplier^(n−1); under DynamicLevelSizing the
	// floor of every level's target (see LevelSizing). Default 16 MiB; at
	// least 1 KiB (small values are for tests that want deep trees from
	// little data).
	BaseLevelSize uint64
	// LevelMultiplier is the size ratio T between adjacent levels. Larger
	// T means fewer levels (fewer probes per read) but more rewriting per
	// byte written. Default 10; in [2, 1000].
	LevelMultiplier int
	// TargetFileSize is the size at which compaction cuts an output table,
	// at the next change of user key. Default 2 MiB; at least 1 KiB.
	TargetFileSize uint64
	// LevelSizing chooses how the levels' target sizes follow the data.
	// Default DynamicLevelSizing.
	LevelSizing LevelSizing
	// MaxConcurrentCompactions bounds the compactions that run at once,
	// each on a goroutine of its own. With two or more slots open (see
	// L0CompactionConcurrency), compactions below L0 take at most all but
	// one, so that an L0 compaction never waits for a slot behind them:
	// only for compactions of the base level,
	// which hold tables it needs, or which take its slot while the base
	// level comes before L0 in the compactions' order and L0 is below
	// L0SlowdownTrigger.
	// Default GOMAXPROCS at Open, at most 4; at least 1.
	MaxConcurrentCompactions int
	// L0CompactionConcurrency says how many of those slots are open: one
	// while L0 holds fewer than L0CompactionTrigger +
	// L0CompactionConcurrency tables, and one more for each
	// L0CompactionConcurrency tables beyond, as in Pebble. Compactions
	// share the cores with the writes: while L0 is low one compaction
	// keeps up, and each more takes CPU from the writers. Default
	// 2·L0CompactionTrigger (8: a second compaction from 12 L0 tables, a
	// third from 20, the slowdown trigger); at least 1. In a
	// 10,000,000-key random fill on 2 cores it wrote 4–8% faster than
	// with every slot always open, L0 reaching 21 tables rather than 17.
	L0CompactionConcurrency int

	// MaxOpenFiles bounds the file descriptors the DB holds. All but ten of
	// them (left for the WAL, the manifest and the tables being written)
	// are for the table cache: the tables beyond that many have their
	// files closed, least recently read first, and reopened when read,
	// while their filters and indexes stay in memory. It is capped at half
	// the process's RLIMIT_NOFILE as the DB finds it, so that a DB of
	// thousands of tables opens under a low ulimit. Default 1000, as in
	// LevelDB and Pebble; at least 16. Blob files (ValueSeparation) share
	// the table cache's descriptors with the tables.
	MaxOpenFiles int

	// MmapTables says which tables' data blocks are read through a
	// mapping of the open table file (mmap(2), read-only) instead of a
	// pread(2) per block: a block in the page cache is copied from memory
	// with no system call. In BenchmarkGetAtScale (1,000,000 keys, the
	// peers runner's options: an 8 MiB block cache, so most present-key
	// Gets read a block), a present key's Get took 0.46× the CPU (6.2
	// against 13.3 µs) with every table mapped, a missing key's 0.78×. A
	// device error or a file truncated beneath the mapping is an error of
	// the read (vfs.ErrMappedFault), never a crash. The pages the reads
	// touch count in the process's resident memory (RSS) while mapped, as
	// the page cache they are, and not in MemoryLimit, which counts what
	// the DB allocates; the kernel reclaims them as it does the page
	// cache. On Unix systems with the OS file system (vfs.Default);
	// elsewhere, and where a file cannot be mapped, the tables are read
	// with ReadAt. Blob files are always read with ReadAt: a value is
	// read where a Get lands, once, and a first touch of a mapped page
	// costs about a pread, so a mapping would hold the whole value store
	// in RSS for little.
	//
	// The default, MapHandleTables, maps the tables whose values are
	// mostly in blob files (ValueSeparation): those referencing more
	// bytes of values in blob files than they hold themselves. Such a
	// table is a few percent of the data it indexes, so its mapped pages
	// cost little memory, while every Get of a separated value reads a
	// block of it before its value. Under MemoryLimit the default maps
	// none (MapNoTables): mapped pages would add to the RSS a user holds
	// the limit against. MapAllTables maps every table: at 10,000,000 keys
	// of 100 B values (the peers runner, one run each) readrandom went
	// from 81,726 to 99,968 Gets a second and the peak RSS from 53 to
	// 963 MiB.
	MmapTables TableMapping

	// ValueSeparation moves large values out of the tables into blob files
	// (see ValueSeparation).
	ValueSeparation ValueSeparation

	// compaction is the options above, resolved, as the compaction package
	// takes them; withDefaults sets it.
	compaction compaction.Options
	// memory is MemoryLimit divided; withDefaults sets it.
	memory memoryShares
	// pagedFiltersWithoutLimit gives tables paged filters as a
	// MemoryLimit does, without one: for the randomized tests, whose
	// trees never outgrow a limit's filter share but whose allocations
	// and LevelFilters plan filters weaker than BitsPerKey.
	pagedFiltersWithoutLimit bool
}

// ValueSeparation configures blob files (Options.ValueSeparation). A value
// of at least MinSize bytes is written, when its memtable is flushed, to a
// blob file (NNNNNN.blob), and the table keeps a handle to it in its
// place: compactions rewrite keys and handles only, so a value is written
// once by the flush and again only when its blob file's dead share brings
// its live values to be relocated. Filters and indexes, and the order of a
// lookup, are unchanged: a lookup for an absent key reads no blob.
type ValueSeparation struct {
	// MinSize is the size from which a value is separated. Default (0):
	// 1 KiB (DefaultValueSeparationMinSize); -1 (ValueSeparationOff), or
	// any negative size, turns separation off. Blob files written before
	// stay readable either way.
	//
	// Separation trades reads for writes. In bloomkv bench's random fills
	// of 256 B to 1 KiB values it wrote 0.38–0.53× the bytes of values
	// kept in the tables. A Get of a present key reads its table's block
	// (from the block cache where it is cached) and then its value, a
	// second read. A scan reads each value from its blob file, and a DB
	// filled in random order spreads adjacent keys' values over every
	// flush's blob file: a 100-entry scan reads about once per file, 4–8
	// times inline's time, while a full scan, which reads every file in
	// one pass with read-ahead, takes about inline's. The default is the
	// largest of the sizes measured (256, 512 and 1,024 B): at each the
	// bytes written fell to about half or less, and a Get and a short
	// scan cost about the same, so the largest spends that cost where a
	// write saves the most bytes. A lookup for an absent key reads no
	// blob: readmissing is unchanged. Values below MinSize take none of
	// this: at 100-byte values every workload was within the runs' noise
	// of separation off. A blob file stores each value compressed with
	// Compression where that saves at least an eighth of it, as a table's
	// blocks are; its handle, the tables' references and the blob metrics
	// count the stored bytes.
	MinSize int
	// DeadShare is the share of a blob file's value bytes no table
	// references any more (values overwritten or deleted, their handles
	// dropped by compactions) at which its live values are relocated to a
	// new blob file by compactions, the DB picking one of its own for a
	// table that holds handles into it when no other is due. Once no
	// table references the file, it is deleted as soon as no reader,
	// iterator or checkpoint in progress needs it. It is in (0, 1];
	// default (0) 0.2, Pebble's and RocksDB's range; 1 relocates nothing
	// (a file goes once all its values are dead). The picker's rewrites
	// take tables below L0 (L0's are compacted soon), so a blob file no
	// L0 table references holds at most 1/(1−DeadShare) of its live
	// values, 1.25 at 0.2, once the compactions are done; in a test of
	// two overwrites of every key and deletes of a quarter, the blob
	// files held 1.02× their live values.
	DeadShare float64
}

// TableMapping says which tables a DB reads through mappings of their
// files (Options.MmapTables).
type TableMapping uint8

const (
	// MapHandleTables, the default, maps the tables whose values are mostly
	// in blob files, and none under MemoryLimit.
	MapHandleTables TableMapping = iota
	// MapAllTables maps every table.
	MapAllTables
	// MapNoTables maps none.
	MapNoTables
)

// String returns the mapping's name, as its constant spells it.
func (m TableMapping) String() string {
	switch m {
	case MapHandleTables:
		return "MapHandleTables"
	case MapAllTables:
		return "MapAllTables"
	case MapNoTables:
		return "MapNoTables"
	}
	return fmt.Sprintf("TableMapping(%d)", uint8(m))
}

// ValueSeparationOff is the MinSize that turns value separation off.
const ValueSeparationOff = -1

// DefaultValueSeparationMinSize is the MinSize a zero ValueSeparation.MinSize
// means: values of 1 KiB and more go to blob files.
const DefaultValueSeparationMinSize = 1 << 10

// FilterAllocation chooses how filter memory is spread over the levels
// (Options.FilterAllocation): how many bits each level's filters get, and,
// for the allocations that say so, which family (the filter algorithm,
// which LevelDB and Pebble call the filter policy) each level builds.
type FilterAllocation = compaction.FilterAllocation

// LevelSizing chooses how the levels' target sizes are set
// (Options.LevelSizing).
type LevelSizing = compaction.LevelSizing

// The level sizings.
const (
	// DynamicLevelSizing, the default, sets the targets from the largest
	// level's actual size (RocksDB's level_compaction_dynamic_level_bytes,
	// Pebble's dynamic base level): each level above it targets 1/T of the
	// level below, never less than BaseLevelSize, and L0 compacts into the
	// base level, the shallowest the data needs, skipping the empty levels
	// above it — L6 while the tree is small. The largest level then holds
	// about (T−1)/T of the data (90% at T = 10) however much there is, so
	// that space amplification stays near 1/(T−1), and Monkey's and the
	// best allocation plan for the level sizes the tree really has.
	DynamicLevelSizing = compaction.DynamicLevelSizing
	// StaticLevelSizing sets them from the top, as LevelDB does: L1
	// targets BaseLevelSize, each deeper level T times more, and L0
	// compacts into L1. The bottom level holds whatever the levels above
	// do not: about half of the data when it is just past a level's
	// target.
	StaticLevelSizing = compaction.StaticLevelSizing
)

// FilterSpec is a table filter: its family and the family's parameter
// (Options.LevelFilters).
type FilterSpec = sstable.FilterSpec

// FilterFamily is a filter's algorithm: Bloom, binary fuse or Standard
// Ribbon.
type FilterFamily = sstable.FilterFamily

// The filter families.
const (
	BloomFamily  = sstable.BloomFamily
	FuseFamily   = sstable.FuseFamily
	RibbonFamily = sstable.RibbonFamily
)

// Bloom returns the spec of a cache-line-blocked Bloom filter of bitsPerKey
// bits per key, in [1, 64]: about 1% false positives at 10.
func Bloom(bitsPerKey float64) FilterSpec { return sstable.Bloom(bitsPerKey) }

// Fuse returns the spec of a binary fuse filter with fingerprints of bits
// bits, in [1, 16]: a false-positive rate of 2^-bits at about 1.125·bits
// bits per key in large tables (fuse8: 0.39% at 9 bits per key).
func Fuse(bits int) FilterSpec { return sstable.Fuse(bits) }

// Ribbon returns the spec of a Standard Ribbon filter with results of bits
// bits, in [1, 32]: a false-positive rate of 2^-bits at 1.03·bits to
// 1.05·bits bits per key in tables of 10^4 to 10^6 keys (ribbon8: 0.39% at
// 8.4 bits per key).
func Ribbon(bits int) FilterSpec { return sstable.Ribbon(bits) }

// PrefixExtractor says what a key's prefix is (Options.Prefix).
type PrefixExtractor = sstable.PrefixExtractor

// The filter allocations.
const (
	// UniformAllocation gives every table BitsPerKey.
	UniformAllocation = compaction.UniformAllocation
	// OptimalAllocation gives each level a false-positive rate
	// proportional to its size (Monkey), within the same memory.
	OptimalAllocation = compaction.OptimalAllocation
	// BestAllocation chooses each level's family and parameter (none,
	// Bloom, fuse or ribbon) to minimize the expected false-positive reads of an
	// absent-key lookup, Σ over the runs of their false-positive rates,
	// within BitsPerKey's memory, from each family's real rate and its
	// cost in tables of the level's size: Monkey generalized to a choice
	// of family, solved over the lower convex hull of each level's
	// candidates, where one level may mix two adjacent candidates (a
	// fraction of its tables with the richer filter) to spend the budget
	// exactly.
	BestAllocation = compaction.BestAllocation
	// ProgressiveAllocation is Pebble's progressive policy, for
	// comparison: fuse filters of 16/16/16/12/10/8/4 fingerprint bits in
	// L0–L6, a rate of 2^-bits per level, ignoring BitsPerKey's budget.
	ProgressiveAllocation = compaction.ProgressiveAllocation
)

// Defaults and limits of the options withDefaults resolves. Those of
// MaxManifestFileSize and MaxOpenFiles are with the code they size
// (manifest_rotation.go, table_cache.go).
const (
	defaultMemtableSize          = 4 << 20
	defaultMaxImmutableMemtables = 1
	defaultBlockSize             = 4 << 10
	defaultBitsPerKey            = 10
	defaultBlockCacheSize        = 8 << 20
	defaultIndexPartitionSize    = 4 << 10 // under MemoryLimit
	defaultL0CompactionTrigger   = 4
	defaultBaseLevelSize         = 16 << 20
	defaultLevelMultiplier       = 10
	defaultTargetFileSize        = 2 << 20
	defaultBlobDeadShare         = 0.2
	defaultTxnConflictMemory     = 64 << 20

	// maxDefaultConcurrentCompactions caps the default of
	// MaxConcurrentCompactions: past four, more compactions at once mostly
	// compete for the device and the memtable flush.
	maxDefaultConcurrentCompactions = 4

	// minLevelSize bounds BaseLevelSize and TargetFileSize from below.
	minLevelSize       = 1 << 10
	maxLevelMultiplier = 1000
)

// withDefaults returns a copy of o (which may be nil) with every unset
// field at its default, or an *ArgumentError naming the first field out of
// range. It is the one place the DB's options are defaulted and checked,
// each rule once: the layers below take what it resolves (the compaction
// field, the table writers' options in it) and check nothing on the DB's
// behalf. The bits-per-key range is the filter's own rule
// (bloom.CheckBitsPerKey), asked here. It resolves the options a group at
// a time, in the order of the list below, each group a method
// (envDefaults, memtableDefaults, …); the first error stops it.
func (o *Options) withDefaults() (Options, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	memtableSet, cacheSet := opts.MemtableSize != 0, opts.BlockCacheSize != 0
	for _, group := range []func() error{
		opts.envDefaults,
		opts.memtableDefaults,
		opts.tableDefaults,
		opts.fileDefaults,
		opts.l0Defaults,
		opts.txnDefaults,
		opts.levelDefaults,
		opts.compactionDefaults,
		opts.filterDefaults,
		func() error { return checkMerger(&opts) },
		opts.valueSeparationDefaults,
		func() error { return opts.divideMemory(memtableSet, cacheSet) },
	} {
		if err := group(); err != nil {
			return opts, err
		}
	}
	opts.compaction = opts.compactionOptions()
	return opts, nil
}

// envDefaults defaults the environment: the file system (vfs.Default) and
// the clock (the system's).
func (opts *Options) envDefaults() error {
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	return nil
}

// memtableDefaults defaults and checks the memtables: their size and how
// many immutable ones may wait for a flush.
func (opts *Options) memtableDefaults() error {
	switch {
	case opts.MemtableSize == 0:
		opts.MemtableSize = defaultMemtableSize
	case opts.MemtableSize < 64<<10 || opts.MemtableSize > 1<<30:
		return argError("opts.MemtableSize", "%d is outside [64 KiB, 1 GiB]", opts.MemtableSize)
	}
	switch {
	case opts.MaxImmutableMemtables == 0:
		opts.MaxImmutableMemtables = defaultMaxImmutableMemtables
	case opts.MaxImmutableMemtables < 0:
		return argError("opts.MaxImmutableMemtables", "%d is negative", opts.MaxImmutableMemtables)
	}
	return nil
}

// tableDefaults defaults and checks what the tables are written with and
// read through: the block size, the compressions, the filters' bits per
// key, the block cache and the index partitions.
func (opts *Options) tableDefaults() error {
	switch {
	case opts.BlockSize == 0:
		opts.BlockSize = defaultBlockSize
	case opts.BlockSize < 256 || opts.BlockSize > 1<<20:
		return argError("opts.BlockSize", "%d is outside [256, 1 MiB]", opts.BlockSize)
	}
	if opts.Compression == DefaultCompression {
		opts.Compression = SnappyCompression
	}
	if opts.Compression > ZstdCompression {
		return argError("opts.Compression", "unknown compression %d", uint8(opts.Compression))
	}
	if opts.TopLevelCompression == DefaultCompression {
		opts.TopLevelCompression = NoCompression
	}
	if opts.TopLevelCompression > ZstdCompression {
		return argError("opts.TopLevelCompression", "unknown compression %d", uint8(opts.TopLevelCompression))
	}
	switch {
	case opts.DisableFilters:
		opts.BitsPerKey = 0
	case opts.BitsPerKey == 0:
		opts.BitsPerKey = defaultBitsPerKey
	case bloom.CheckBitsPerKey(opts.BitsPerKey) != nil:
		return argError("opts.BitsPerKey", "%v is outside [1, %d] (use DisableFilters for none)", opts.BitsPerKey, bloom.MaxBitsPerKey)
	}
	if opts.BlockCacheSize == 0 {
		opts.BlockCacheSize = defaultBlockCacheSize
	}
	switch {
	case opts.IndexPartitionSize > 1<<20:
		return argError("opts.IndexPartitionSize", "%d is above 1 MiB", opts.IndexPartitionSize)
	case opts.IndexPartitionSize == 0 && opts.MemoryLimit > 0:
		opts.IndexPartitionSize = defaultIndexPartitionSize
	}
	return nil
}

// fileDefaults defaults and checks the limits on the DB's files — the
// manifest's size and the files open at once — and which tables it maps.
func (opts *Options) fileDefaults() error {
	switch {
	case opts.MaxManifestFileSize == 0:
		opts.MaxManifestFileSize = defaultMaxManifestFileSize
	case opts.MaxManifestFileSize < minMaxManifestFileSize:
		return argError("opts.MaxManifestFileSize", "%d is below %d", opts.MaxManifestFileSize, minMaxManifestFileSize)
	}
	switch {
	case opts.MaxOpenFiles == 0:
		opts.MaxOpenFiles = defaultMaxOpenFiles
	case opts.MaxOpenFiles < minMaxOpenFiles:
		return argError("opts.MaxOpenFiles", "%d is below %d: the DB keeps up to %d files open besides its tables'",
			opts.MaxOpenFiles, minMaxOpenFiles, numNonTableCacheFiles)
	}
	switch {
	case opts.MmapTables > MapNoTables:
		return argError("opts.MmapTables", "unknown table mapping %d", opts.MmapTables)
	case opts.MmapTables == MapHandleTables && opts.MemoryLimit > 0:
		opts.MmapTables = MapNoTables
	}
	return nil
}

// l0Defaults defaults and checks L0's triggers, each at least the one
// before it. A trigger that is not positive takes its default, like a zero
// one.
func (opts *Options) l0Defaults() error {
	if opts.L0CompactionTrigger <= 0 {
		opts.L0CompactionTrigger = defaultL0CompactionTrigger
	}
	if opts.L0SlowdownTrigger <= 0 {
		opts.L0SlowdownTrigger = 5 * opts.L0CompactionTrigger
	}
	if opts.L0StopTrigger <= 0 {
		opts.L0StopTrigger = 9 * opts.L0CompactionTrigger
	}
	switch {
	case opts.L0SlowdownTrigger < opts.L0CompactionTrigger:
		return argError("opts.L0SlowdownTrigger", "%d: must be at least L0CompactionTrigger (%d)",
			opts.L0SlowdownTrigger, opts.L0CompactionTrigger)
	case opts.L0StopTrigger < opts.L0SlowdownTrigger:
		return argError("opts.L0StopTrigger", "%d: must be at least L0SlowdownTrigger (%d)",
			opts.L0StopTrigger, opts.L0SlowdownTrigger)
	}
	return nil
}

// txnDefaults defaults and checks the transactions' limits: a transaction's
// size and the memory of the conflict records.
func (opts *Options) txnDefaults() error {
	switch {
	case opts.MaxTransactionSize == 0:
		opts.MaxTransactionSize = MaxBatchSize
	case opts.MaxTransactionSize < 0 || opts.MaxTransactionSize > MaxBatchSize:
		return argError("opts.MaxTransactionSize", "%d is outside [1, MaxBatchSize (%d)]", opts.MaxTransactionSize, MaxBatchSize)
	}
	switch {
	case opts.TxnConflictMemory == 0:
		opts.TxnConflictMemory = defaultTxnConflictMemory
	case opts.TxnConflictMemory < 0:
		return argError("opts.TxnConflictMemory", "%d is negative", opts.TxnConflictMemory)
	}
	return nil
}

// levelDefaults defaults and checks the levels' sizes: the base level's,
// the multiplier between levels (one that is not positive takes its
// default, like a zero one), the tables' target size and the sizing.
func (opts *Options) levelDefaults() error {
	switch {
	case opts.BaseLevelSize == 0:
		opts.BaseLevelSize = defaultBaseLevelSize
	case opts.BaseLevelSize < minLevelSize:
		return argError("opts.BaseLevelSize", "%d: must be at least %d", opts.BaseLevelSize, minLevelSize)
	}
	switch {
	case opts.LevelMultiplier <= 0:
		opts.LevelMultiplier = defaultLevelMultiplier
	case opts.LevelMultiplier < 2 || opts.LevelMultiplier > maxLevelMultiplier:
		return argError("opts.LevelMultiplier", "%d: must be in [2, %d]", opts.LevelMultiplier, maxLevelMultiplier)
	}
	switch {
	case opts.TargetFileSize == 0:
		opts.TargetFileSize = defaultTargetFileSize
	case opts.TargetFileSize < minLevelSize:
		return argError("opts.TargetFileSize", "%d: must be at least %d", opts.TargetFileSize, minLevelSize)
	}
	if opts.LevelSizing > StaticLevelSizing {
		return argError("opts.LevelSizing", "%d: unknown level sizing", uint8(opts.LevelSizing))
	}
	return nil
}

// compactionDefaults defaults and checks how many compactions run at once,
// of all and of L0's.
func (opts *Options) compactionDefaults() error {
	switch {
	case opts.MaxConcurrentCompactions == 0:
		opts.MaxConcurrentCompactions = min(runtime.GOMAXPROCS(0), maxDefaultConcurrentCompactions)
	case opts.MaxConcurrentCompactions < 0:
		return argError("opts.MaxConcurrentCompactions", "%d is negative", opts.MaxConcurrentCompactions)
	}
	switch {
	case opts.L0CompactionConcurrency == 0:
		opts.L0CompactionConcurrency = 2 * opts.L0CompactionTrigger
	case opts.L0CompactionConcurrency < 0:
		return argError("opts.L0CompactionConcurrency", "%d is negative", opts.L0CompactionConcurrency)
	}
	return nil
}

// filterDefaults defaults and checks the filters beyond BitsPerKey: the
// allocation, each level's filter and range filter, and the prefix
// extractor, the last three copied so that the DB's are its own.
func (opts *Options) filterDefaults() error {
	if opts.FilterAllocation > ProgressiveAllocation {
		return argError("opts.FilterAllocation", "%d: unknown allocation", uint8(opts.FilterAllocation))
	}
	if len(opts.LevelFilters) > manifest.NumLevels {
		return argError("opts.LevelFilters", "%d entries: at most one per level, %d", len(opts.LevelFilters), manifest.NumLevels)
	}
	for i, spec := range opts.LevelFilters {
		if err := spec.Check(); err != nil {
			return argError(fmt.Sprintf("opts.LevelFilters[%d]", i), "%v", err)
		}
		if spec.Family == sstable.NoFilter && opts.Prefix != nil && !opts.DisableFilters {
			return argError(fmt.Sprintf("opts.LevelFilters[%d]", i), "no filter, but opts.Prefix needs one in every table")
		}
	}
	if len(opts.RangeFilterBits) > manifest.NumLevels {
		return argError("opts.RangeFilterBits", "%d entries: at most one per level, %d", len(opts.RangeFilterBits), manifest.NumLevels)
	}
	for i, bits := range opts.RangeFilterBits {
		if bits != 0 && rangefilter.CheckBitsPerKey(bits) != nil {
			return argError(fmt.Sprintf("opts.RangeFilterBits[%d]", i), "%v is outside [%d, %d] (0 for none)", bits, rangefilter.MinBitsPerKey, rangefilter.MaxBitsPerKey)
		}
	}
	opts.RangeFilterBits = slices.Clone(opts.RangeFilterBits)
	if opts.DisableFilters {
		opts.LevelFilters = nil // DisableFilters wins: see LevelFilters
	}
	opts.LevelFilters = slices.Clone(opts.LevelFilters) // the DB's own, like Prefix
	// Prefixes live in the tables' filters, and a prefix seek trusts a
	// table's filter by the extractor's Name: both must exist.
	switch p := opts.Prefix; {
	case p == nil:
	case p.Name == "":
		return argError("opts.Prefix", "the extractor has no Name (tables record it, and prefix seeks trust only theirs)")
	case p.Split == nil:
		return argError("opts.Prefix", "the extractor %q has no Split", p.Name)
	case opts.DisableFilters:
		return argError("opts.Prefix", "set with DisableFilters: there is no filter to hold the prefixes")
	default:
		c := *p // the DB's own: a later change to the caller's changes nothing
		opts.Prefix = &c
	}
	return nil
}

// valueSeparationDefaults defaults and checks the value separation: the
// size from which values go to blob files, and the dead share at which a
// blob file is rewritten.
func (opts *Options) valueSeparationDefaults() error {
	switch vs := &opts.ValueSeparation; {
	case vs.MinSize == 0:
		vs.MinSize = DefaultValueSeparationMinSize
	case vs.MinSize < 0:
		vs.MinSize = ValueSeparationOff
	}
	switch vs := &opts.ValueSeparation; {
	case vs.DeadShare == 0:
		vs.DeadShare = defaultBlobDeadShare
	case !(vs.DeadShare > 0 && vs.DeadShare <= 1):
		return argError("opts.ValueSeparation.DeadShare", "%v is outside (0, 1]", vs.DeadShare)
	}
	return nil
}

// compactionOptions returns the resolved options the compaction package
// takes, from options withDefaults has resolved: it copies, and decides
// nothing.
func (o *Options) compactionOptions() compaction.Options {
	return compaction.Options{
		L0CompactionTrigger: o.L0CompactionTrigger,
		L0SlowdownTrigger:   o.L0SlowdownTrigger,
		BaseLevelSize:       o.BaseLevelSize,
		LevelMultiplier:     o.LevelMultiplier,
		TargetFileSize:      o.TargetFileSize,
		LevelSizing:         o.LevelSizing,
		// MaxConcurrentCompactions bounds the picker's slots.
		MaxConcurrentCompactions: o.MaxConcurrentCompactions,
		L0CompactionConcurrency:  o.L0CompactionConcurrency,
		BitsPerKey:               o.BitsPerKey, // 0 under DisableFilters
		FilterAllocation:         o.FilterAllocation,
		LevelFilters:             levelFilters(o.LevelFilters),
		// The table writers' Filter is per level: see
		// compaction.FilterForLevel.
		TableOptions: sstable.WriterOptions{BlockSize: o.BlockSize, Compression: o.Compression, Prefix: o.Prefix, BlockAlign: !o.DisableBlockAlign,
			IndexPartitionSize: max(o.IndexPartitionSize, 0)},
		TopLevelCompression: o.TopLevelCompression,
		RangeFilterBits:     perLevel(o.RangeFilterBits),
		BlobDeadShare:       o.ValueSeparation.DeadShare,
		Merger:              internalMerger(o.Merger),
	}
}

// internalMerger returns m as package compaction takes it, nil for none.
func internalMerger(m *Merger) *base.Merger {
	if m == nil {
		return nil
	}
	return &base.Merger{Name: m.Name, Merge: m.Merge}
}

// perLevel spreads a per-level setting over every level: specs[i] for
// level i, the last entry for the levels below; zeros for none.
func perLevel[T any](specs []T) [manifest.NumLevels]T {
	var all [manifest.NumLevels]T
	for level := range all {
		if len(specs) > 0 {
			all[level] = specs[min(level, len(specs)-1)]
		}
	}
	return all
}

// levelFilters returns Options.LevelFilters as the compaction package
// takes them, one entry per level (the last given for the levels below
// it), in memory of their own; nil for none.
func levelFilters(specs []FilterSpec) *[manifest.NumLevels]FilterSpec {
	if len(specs) == 0 {
		return nil
	}
	all := perLevel(specs)
	return &all
}

// WriteOptions configure one write. A nil *WriteOptions means Sync: true.
type WriteOptions struct {
	// Sync makes the write durable before it returns: the WAL is written
	// and fsynced, together with every earlier write, synced or not.
	//
	// Without it the write is only in the WAL's block buffer in this
	// process's memory when the call returns: it reaches the operating
	// system when the buffer's 32 KiB block fills, or when a later Sync
	// write, a memtable rotation (a full memtable, DB.Flush) or Close writes
	// the buffer. Until then a crash of the process loses it; after, only a
	// crash of the machine before the next fsync does. Either way recovery
	// keeps the history a prefix: a lost write loses every write after it,
	// never one in the middle.
	Sync bool
}

// Sync and NoSync are the two write options, ready to pass.
var (
	Sync   = &WriteOptions{Sync: true}
	NoSync = &WriteOptions{Sync: false}
)

func (o *WriteOptions) sync() bool { return o == nil || o.Sync }

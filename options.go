package bloomkv

import (
	"errors"
	"log/slog"
	"math"

	"github.com/bloomkv/bloomkv/compaction"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/vfs"
	"github.com/bloomkv/bloomkv/sstable"
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

// Compression chooses how table data blocks are compressed. The zero value
// is the default, snappy.
type Compression uint8

// The compressions.
const (
	DefaultCompression Compression = iota
	NoCompression
	SnappyCompression
	ZstdCompression
)

func (c Compression) String() string { return c.table().String() }

func (c Compression) table() sstable.Compression {
	switch c {
	case NoCompression:
		return sstable.NoCompression
	case ZstdCompression:
		return sstable.ZstdCompression
	}
	return sstable.SnappyCompression
}

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

	// BlockSize is the target size of a table's data block. Default 4 KiB.
	BlockSize int

	// Compression compresses table data blocks. Default snappy.
	Compression Compression

	// BitsPerKey sizes each table's Bloom filter: about 1% false positives
	// at the default of 10. See DisableFilters for none.
	BitsPerKey float64

	// DisableFilters writes tables without filters, so that every lookup
	// reads a block of every table whose key range holds the key — the
	// baseline the filters are measured against.
	DisableFilters bool

	// BlockCacheSize is the capacity of the block cache in bytes. Default
	// 8 MiB; a negative value disables the cache. The cache's blocks live
	// outside the Go heap, so this is what they cost in memory; each
	// block is charged its buffer's size class (within 1/16 above its
	// length).
	BlockCacheSize int64

	// FilterPolicy spreads the filter memory (BitsPerKey on average) over
	// the levels: Uniform, the same bits per key in every table, or Optimal
	// (Monkey), a false-positive rate proportional to each level's size,
	// which at equal memory cuts the wasted reads of a lookup for an
	// absent key from about one per level to about one in total times the
	// largest level's rate. Default Uniform.
	FilterPolicy FilterPolicy

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

	// L0CompactionTrigger is the number of L0 tables at which L0 is
	// compacted into L1. Default 4.
	L0CompactionTrigger int
	// L0SlowdownTrigger is the number of L0 tables at which each write
	// group waits a millisecond, to let compaction catch up. Default 20.
	L0SlowdownTrigger int
	// L0StopTrigger is the number of L0 tables at which writes stop until
	// compaction brings L0 below it. Default 36: RocksDB's thresholds
	// rather than LevelDB's (8 and 12), because filters make an L0 table
	// cheap for a read to skip (see compaction.Options).
	L0StopTrigger int
	// BaseLevelSize is the target size of L1; level n targets
	// BaseLevelSize·LevelMultiplier^(n−1). Default 16 MiB.
	BaseLevelSize uint64
	// LevelMultiplier is the size ratio T between adjacent levels. Default 10.
	LevelMultiplier int
	// TargetFileSize is the size at which compaction cuts an output table.
	// Default 2 MiB.
	TargetFileSize uint64

	// MaxOpenFiles bounds the file descriptors the DB holds. All but ten of
	// them (left for the WAL, the manifest and the tables being written)
	// are for the table cache: the tables beyond that many have their
	// files closed, least recently read first, and reopened when read,
	// while their filters and indexes stay in memory. It is capped at half
	// the process's RLIMIT_NOFILE as the DB finds it, so that a DB of
	// thousands of tables opens under a low ulimit. Default 1000, as in
	// LevelDB and Pebble; at least 16.
	MaxOpenFiles int

	// compaction is the options above, resolved, as the compaction package
	// takes them.
	compaction compaction.Options
}

// FilterPolicy chooses how filter memory is spread over the levels.
type FilterPolicy = compaction.FilterPolicy

// The filter policies.
const (
	Uniform = compaction.Uniform
	Optimal = compaction.Optimal
)

// withDefaults returns a copy of o (which may be nil) with every unset
// field at its default, or an *ArgumentError for a field out of range.
func (o *Options) withDefaults() (Options, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	switch {
	case opts.MemtableSize == 0:
		opts.MemtableSize = 4 << 20
	case opts.MemtableSize < 64<<10 || opts.MemtableSize > 1<<30:
		return opts, argError("opts.MemtableSize", "%d is outside [64 KiB, 1 GiB]", opts.MemtableSize)
	}
	switch {
	case opts.MaxImmutableMemtables == 0:
		opts.MaxImmutableMemtables = 1
	case opts.MaxImmutableMemtables < 0:
		return opts, argError("opts.MaxImmutableMemtables", "%d is negative", opts.MaxImmutableMemtables)
	}
	switch {
	case opts.BlockSize == 0:
		opts.BlockSize = 4 << 10
	case opts.BlockSize < 256 || opts.BlockSize > 1<<20:
		return opts, argError("opts.BlockSize", "%d is outside [256, 1 MiB]", opts.BlockSize)
	}
	if opts.Compression == DefaultCompression {
		opts.Compression = SnappyCompression
	}
	if opts.Compression > ZstdCompression {
		return opts, argError("opts.Compression", "unknown compression %d", opts.Compression)
	}
	switch {
	case opts.DisableFilters:
		opts.BitsPerKey = 0
	case opts.BitsPerKey == 0:
		opts.BitsPerKey = 10
	case math.IsNaN(opts.BitsPerKey) || opts.BitsPerKey < 1 || opts.BitsPerKey > bloom.MaxBitsPerKey:
		return opts, argError("opts.BitsPerKey", "%v is outside [1, %d] (use DisableFilters for none)", opts.BitsPerKey, bloom.MaxBitsPerKey)
	}
	if opts.BlockCacheSize == 0 {
		opts.BlockCacheSize = 8 << 20
	}
	switch {
	case opts.MaxManifestFileSize == 0:
		opts.MaxManifestFileSize = defaultMaxManifestFileSize
	case opts.MaxManifestFileSize < minMaxManifestFileSize:
		return opts, argError("opts.MaxManifestFileSize", "%d is below %d", opts.MaxManifestFileSize, minMaxManifestFileSize)
	}
	switch {
	case opts.MaxOpenFiles == 0:
		opts.MaxOpenFiles = defaultMaxOpenFiles
	case opts.MaxOpenFiles < minMaxOpenFiles:
		return opts, argError("opts.MaxOpenFiles", "%d is below %d: the DB keeps up to %d files open besides its tables'",
			opts.MaxOpenFiles, minMaxOpenFiles, numNonTableCacheFiles)
	}
	co, err := (&compaction.Options{
		L0CompactionTrigger: opts.L0CompactionTrigger,
		L0SlowdownTrigger:   opts.L0SlowdownTrigger,
		L0StopTrigger:       opts.L0StopTrigger,
		BaseLevelSize:       opts.BaseLevelSize,
		LevelMultiplier:     opts.LevelMultiplier,
		TargetFileSize:      opts.TargetFileSize,
		BitsPerKey:          opts.BitsPerKey,
		DisableFilters:      opts.DisableFilters,
		FilterPolicy:        opts.FilterPolicy,
		TableOptions:        sstable.WriterOptions{BlockSize: opts.BlockSize, Compression: opts.Compression.table()},
	}).WithDefaults()
	if err != nil {
		var oe *compaction.OptionError
		if errors.As(err, &oe) {
			return opts, argError("opts."+oe.Field, "%v: %s", oe.Value, oe.Reason)
		}
		return opts, err
	}
	opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = co.L0CompactionTrigger, co.L0SlowdownTrigger, co.L0StopTrigger
	opts.BaseLevelSize, opts.LevelMultiplier, opts.TargetFileSize = co.BaseLevelSize, co.LevelMultiplier, co.TargetFileSize
	opts.compaction = co
	return opts, nil
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

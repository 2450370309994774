package bloomkv

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestOptionsDefaults checks what withDefaults resolves unset options to,
// and that the compaction package is handed the same values.
func TestOptionsDefaults(t *testing.T) {
	var nilOpts *Options
	for _, o := range []*Options{nilOpts, {}} {
		got, err := o.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if got.MemtableSize != 4<<20 || got.MaxImmutableMemtables != 1 || got.BlockSize != 4<<10 ||
			got.Compression != SnappyCompression || got.BlockCacheSize != 8<<20 {
			t.Errorf("defaults: memtable %d, immutable %d, block %d, %v, cache %d",
				got.MemtableSize, got.MaxImmutableMemtables, got.BlockSize, got.Compression, got.BlockCacheSize)
		}
		if got.L0CompactionTrigger != 4 || got.L0SlowdownTrigger != 20 || got.L0StopTrigger != 36 ||
			got.BaseLevelSize != 16<<20 || got.LevelMultiplier != 10 || got.TargetFileSize != 2<<20 ||
			got.BitsPerKey != 10 || got.FilterAllocation != UniformAllocation {
			t.Errorf("defaults %+v", got)
		}
		if got.LevelSizing != DynamicLevelSizing || got.MaxConcurrentCompactions != min(runtime.GOMAXPROCS(0), 4) {
			t.Errorf("defaults: %v level sizing, %d concurrent compactions", got.LevelSizing, got.MaxConcurrentCompactions)
		}
		want := compaction.Options{
			L0CompactionTrigger: 4, L0SlowdownTrigger: 20, BaseLevelSize: 16 << 20, LevelMultiplier: 10, TargetFileSize: 2 << 20,
			LevelSizing: DynamicLevelSizing, MaxConcurrentCompactions: min(runtime.GOMAXPROCS(0), 4), L0CompactionConcurrency: 8,
			BitsPerKey: 10, FilterAllocation: UniformAllocation,
			TableOptions:        sstable.WriterOptions{BlockSize: 4 << 10, Compression: SnappyCompression, BlockAlign: true},
			TopLevelCompression: NoCompression,
			BlobDeadShare:       0.2,
		}
		if got.ValueSeparation != (ValueSeparation{MinSize: DefaultValueSeparationMinSize, DeadShare: 0.2}) {
			t.Errorf("defaults: value separation %+v", got.ValueSeparation)
		}
		if got.MmapTables != MapHandleTables {
			t.Errorf("defaults: MmapTables %v, want MapHandleTables", got.MmapTables)
		}
		if got.compaction != want {
			t.Errorf("compaction options %+v, want %+v", got.compaction, want)
		}
		if l3 := got.compaction.LevelTargetSize(3); l3 != 1600<<20 {
			t.Errorf("default L3 target %d, want 1600 MiB", l3)
		}
	}
	// Under a memory limit the default maps no table; a choice stays.
	for _, c := range []struct{ given, want TableMapping }{
		{MapHandleTables, MapNoTables}, {MapAllTables, MapAllTables}, {MapNoTables, MapNoTables},
	} {
		got, err := (&Options{MemoryLimit: 64 << 20, MmapTables: c.given}).withDefaults()
		if err != nil || got.MmapTables != c.want {
			t.Errorf("MemoryLimit, MmapTables %v: resolved to %v, %v; want %v", c.given, got.MmapTables, err, c.want)
		}
	}
	// Negative sizes turn value separation off.
	for _, size := range []int{ValueSeparationOff, -4096} {
		got, err := (&Options{ValueSeparation: ValueSeparation{MinSize: size}}).withDefaults()
		if err != nil || got.ValueSeparation.MinSize != ValueSeparationOff {
			t.Errorf("MinSize %d: resolved to %d, %v; want %d", size, got.ValueSeparation.MinSize, err, ValueSeparationOff)
		}
	}
	// The L0 thresholds follow a changed trigger.
	got, err := (&Options{L0CompactionTrigger: 10}).withDefaults()
	if err != nil || got.L0SlowdownTrigger != 50 || got.L0StopTrigger != 90 || got.compaction.L0CompactionTrigger != 10 ||
		got.compaction.L0CompactionConcurrency != 20 {
		t.Errorf("trigger 10: %+v, %v", got, err)
	}
	got, _ = (&Options{DisableFilters: true, BitsPerKey: 12}).withDefaults()
	if got.BitsPerKey != 0 || got.compaction.BitsPerKey != 0 {
		t.Errorf("DisableFilters leaves %v bits/key (%v for compactions)", got.BitsPerKey, got.compaction.BitsPerKey)
	}
	got, _ = (&Options{FilterAllocation: OptimalAllocation, Compression: NoCompression, TopLevelCompression: ZstdCompression, BlockSize: 512, DisableBlockAlign: true}).withDefaults()
	if got.compaction.FilterAllocation != OptimalAllocation || got.compaction.TableOptions != (sstable.WriterOptions{BlockSize: 512, Compression: NoCompression}) ||
		got.compaction.TopLevelCompression != ZstdCompression {
		t.Errorf("compaction options %+v do not carry the DB's", got.compaction)
	}
}

// TestIndexPartitionSizeDefault checks IndexPartitionSize's default: 4
// KiB partitions under MemoryLimit, none without it, and a size set (or
// none, negative) kept under a limit — in what the table writers take.
func TestIndexPartitionSizeDefault(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want int // the table writers' IndexPartitionSize
	}{
		{Options{}, 0},
		{Options{MemoryLimit: 64 << 20}, 4 << 10},
		{Options{MemoryLimit: 64 << 20, IndexPartitionSize: 1 << 10}, 1 << 10},
		{Options{MemoryLimit: 64 << 20, IndexPartitionSize: -1}, 0},
		{Options{IndexPartitionSize: 8 << 10}, 8 << 10},
	} {
		got, err := tc.opts.withDefaults()
		if err != nil {
			t.Fatalf("MemoryLimit %d, IndexPartitionSize %d: %v", tc.opts.MemoryLimit, tc.opts.IndexPartitionSize, err)
		}
		if p := got.compaction.TableOptions.IndexPartitionSize; p != tc.want {
			t.Errorf("MemoryLimit %d, IndexPartitionSize %d: tables written with partitions of %d, want %d",
				tc.opts.MemoryLimit, tc.opts.IndexPartitionSize, p, tc.want)
		}
	}
}

// TestOptionsValidation checks that each option out of range is refused
// with an *ArgumentError naming it, and that the edges of each range are
// accepted.
func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		arg  string
	}{
		{Options{L0CompactionTrigger: 4, L0SlowdownTrigger: 3}, "opts.L0SlowdownTrigger"},
		{Options{L0SlowdownTrigger: 10, L0StopTrigger: 9}, "opts.L0StopTrigger"},
		{Options{BaseLevelSize: 1000}, "opts.BaseLevelSize"},
		{Options{LevelMultiplier: 1}, "opts.LevelMultiplier"},
		{Options{LevelMultiplier: 1001}, "opts.LevelMultiplier"},
		{Options{TargetFileSize: 100}, "opts.TargetFileSize"},
		{Options{BitsPerKey: 0.5}, "opts.BitsPerKey"},
		{Options{BitsPerKey: -1}, "opts.BitsPerKey"},
		{Options{BitsPerKey: 65}, "opts.BitsPerKey"},
		{Options{BitsPerKey: math.NaN()}, "opts.BitsPerKey"},
		{Options{FilterAllocation: ProgressiveAllocation + 1}, "opts.FilterAllocation"},
		{Options{Compression: 9}, "opts.Compression"},
		{Options{TopLevelCompression: 9}, "opts.TopLevelCompression"},
		{Options{L0CompactionConcurrency: -1}, "opts.L0CompactionConcurrency"},
		{Options{LevelSizing: StaticLevelSizing + 1}, "opts.LevelSizing"},
		{Options{MaxConcurrentCompactions: -1}, "opts.MaxConcurrentCompactions"},
		{Options{ValueSeparation: ValueSeparation{DeadShare: -0.1}}, "opts.ValueSeparation.DeadShare"},
		{Options{MmapTables: MapNoTables + 1}, "opts.MmapTables"},
		{Options{ValueSeparation: ValueSeparation{DeadShare: 1.5}}, "opts.ValueSeparation.DeadShare"},
		{Options{ValueSeparation: ValueSeparation{DeadShare: math.NaN()}}, "opts.ValueSeparation.DeadShare"},
		{Options{MemoryLimit: 1 << 20}, "opts.MemoryLimit"},
		{Options{MemoryLimit: 64 << 20, BlockCacheSize: 8 << 20}, "opts.BlockCacheSize"},
		{Options{MemoryLimit: 64 << 20, LevelFilters: []FilterSpec{Bloom(10)}}, "opts.LevelFilters"},
		{Options{MemoryLimit: 64 << 20, MemtableSize: 20 << 20}, "opts.MemtableSize"},
		{Options{MemoryLimit: 8 << 20, MaxConcurrentCompactions: 4, TargetFileSize: 16 << 20}, "opts.MemoryLimit"},
	} {
		_, err := tc.opts.withDefaults()
		var ae *ArgumentError
		if !errors.As(err, &ae) || ae.Arg != tc.arg {
			t.Errorf("%+v: error %v, want an *ArgumentError for %s", tc.opts, err, tc.arg)
		}
	}
	for _, o := range []Options{
		{BaseLevelSize: 1024, TargetFileSize: 1024, LevelMultiplier: 2, BitsPerKey: 1},
		{L0CompactionTrigger: 1, L0SlowdownTrigger: 1, L0StopTrigger: 1, BitsPerKey: 64, FilterAllocation: OptimalAllocation},
		{DisableFilters: true, BitsPerKey: -3},
		{LevelMultiplier: 1000},
		{LevelSizing: StaticLevelSizing, MaxConcurrentCompactions: 1},
		{MaxConcurrentCompactions: 64},
	} {
		if _, err := o.withDefaults(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestMemoryLimitShares checks how withDefaults divides MemoryLimit: the
// memtables a quarter (MemtableSize from it when unset, two memtables
// held at the default MaxImmutableMemtables, less 1/32 for the arena's
// last chunk; a set MemtableSize kept), the compactions' reserve per
// compaction, the tables half of the rest and the block cache all of the
// rest until tables pin anything; and that no limit changes nothing.
func TestMemoryLimitShares(t *testing.T) {
	const limit = 256 << 20
	for _, tc := range []struct {
		opts              Options
		memtable, reserve int64
	}{
		{Options{MemoryLimit: limit, MaxConcurrentCompactions: 2}, limit / 4 / 2 * 31 / 32, 2 * (1<<20 + (2<<20)/8)},
		{Options{MemoryLimit: limit, MaxConcurrentCompactions: 1, MemtableSize: 1 << 20, TargetFileSize: 8 << 20}, 1 << 20, 1<<20 + 1<<20},
	} {
		got, err := tc.opts.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		m := got.memory
		rest := limit - 2*tc.memtable - tc.reserve
		if got.MemtableSize != tc.memtable || m.memtables != 2*tc.memtable || m.compactions != tc.reserve ||
			m.pinned != rest/2 || got.BlockCacheSize != rest || m.limit != limit {
			t.Errorf("%+v: memtable %d, shares %+v, cache %d; want memtable %d, compactions %d, pinned %d, cache %d",
				tc.opts, got.MemtableSize, m, got.BlockCacheSize, tc.memtable, tc.reserve, rest/2, rest)
		}
	}
	if got, err := (&Options{}).withDefaults(); err != nil || got.memory != (memoryShares{}) {
		t.Errorf("no limit: shares %+v, %v", got.memory, err)
	}
}

// TestCompressionValues checks that the DB's compressions are the tables'
// own and keep the numbering the DB's enum always had: zero the default.
func TestCompressionValues(t *testing.T) {
	for _, tc := range []struct {
		c    Compression
		want uint8
		name string
	}{
		{DefaultCompression, 0, "default"},
		{NoCompression, 1, "none"},
		{SnappyCompression, 2, "snappy"},
		{ZstdCompression, 3, "zstd"},
	} {
		if uint8(tc.c) != tc.want || tc.c.String() != tc.name {
			t.Errorf("%v = %d, want %d (%s)", tc.c, uint8(tc.c), tc.want, tc.name)
		}
	}
	var tableOpts sstable.WriterOptions
	tableOpts.Compression = ZstdCompression // one type: no conversion
	if tableOpts.Compression != sstable.ZstdCompression {
		t.Error("Compression is not sstable.Compression")
	}
}

// TestMetricsBlockCache checks that Metrics.BlockCache reports the block
// cache: its capacity, what a lookup put in it, a miss and then a hit.
func TestMetricsBlockCache(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), BlockCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Put([]byte("k"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := d.Get([]byte("k")); err != nil {
			t.Fatal(err)
		}
	}
	c := d.Metrics().BlockCache
	if c.Capacity <= 0 || c.Capacity > 1<<20 || c.Blocks < 1 || c.Bytes <= 0 || c.Misses < 1 || c.Hits < 1 || c.Rejected != 0 {
		t.Errorf("BlockCache = %+v after two Gets of a flushed key", c)
	}
}

// TestBlockCacheAdmission reads a DB of many times its block cache's size
// by Get and MultiGet against a map of what was written: every answer is
// the map's whether its block was cached or read and not admitted, and
// once the cache is full, Metrics counts blocks not admitted, and a
// block read twice is cached at its second miss and hit at its third.
func TestBlockCacheAdmission(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), BlockCacheSize: 256 << 10, MemtableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 22_000 {
		k, v := fmt.Sprintf("k%06d", i), fmt.Sprintf("v%d-%x", i, rng.Uint64())
		if i >= 20_000 {
			k = fmt.Sprintf("m%06d", i-20_000)
		}
		model[k] = v
		if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	// One level of tables and no compaction to come: the blocks the Gets
	// read stay the same blocks.
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for q := range 6000 {
		k := fmt.Sprintf("k%06d", rng.IntN(22_000)) // some absent
		want, ok := model[k]
		if q%2 == 0 {
			got, err := d.Get([]byte(k))
			if ok && (err != nil || string(got) != want) || !ok && err != ErrNotFound {
				t.Fatalf("Get(%s) = %q, %v; want %q, present %v", k, got, err, want, ok)
			}
			continue
		}
		k2 := fmt.Sprintf("k%06d", rng.IntN(22_000))
		want2, ok2 := model[k2]
		got, err := d.MultiGet([][]byte{[]byte(k), []byte(k2)})
		if err != nil || (got[0] != nil) != ok || string(got[0]) != want || (got[1] != nil) != ok2 || string(got[1]) != want2 {
			t.Fatalf("MultiGet(%s, %s) = %q, %v; want %q, %q", k, k2, got, err, want, want2)
		}
	}
	before := d.Metrics().BlockCache
	if before.Rejected == 0 {
		t.Fatalf("BlockCache = %+v: a full cache admitted every block", before)
	}
	// A key of a block no Get has asked for ("m" keys, never read above):
	// its first miss is not admitted unless its shard has room, and the
	// block is cached at its second miss at the latest, and hit at the
	// third Get.
	k := "m001000"
	var hits, rejected [3]uint64
	for i := range 3 {
		if got, err := d.Get([]byte(k)); err != nil || string(got) != model[k] {
			t.Fatalf("Get(%s) = %q, %v; want %q", k, got, err, model[k])
		}
		m := d.Metrics().BlockCache
		hits[i], rejected[i] = m.Hits-before.Hits, m.Rejected-before.Rejected
	}
	switch {
	case hits[0] != 0 || rejected[0] > 1:
		t.Fatalf("first Get of %s: %d hits, %d not admitted", k, hits[0], rejected[0])
	case rejected[0] == 1 && (hits[1] != 0 || rejected[1] != 1):
		t.Fatalf("second Get of %s, its block not admitted at the first: %d hits, %d not admitted; want 0, 1 (admitted now)", k, hits[1], rejected[1])
	case rejected[0] == 0 && hits[1] != 1:
		t.Fatalf("second Get of %s, its block admitted at the first: %d hits, want 1", k, hits[1])
	case hits[2] != hits[1]+1:
		t.Fatalf("third Get of %s: %d hits, want %d", k, hits[2]-hits[1], 1)
	}
}

package compaction

import (
	"fmt"
	"math"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// FilterAllocation chooses how the filter memory, Options.BitsPerKey bits
// per key on average, is spread over the levels. It is not called a filter
// policy: in LevelDB and Pebble that is the filter algorithm, a separate
// choice (the filter family) from how much memory each level's filters get.
type FilterAllocation uint8

// The filter allocations. The zero value is UniformAllocation, the
// conventional choice and the baseline OptimalAllocation is measured
// against.
const (
	// UniformAllocation builds every table with Options.BitsPerKey: each
	// level has the same false-positive rate p, and a lookup for an absent
	// key that probes L runs pays about L·p wasted block reads. Under a
	// filter budget the tree has outgrown, it plans as BestAllocation, L0
	// with Bloom filters of the same memory (FiltersWithinBudget).
	UniformAllocation FilterAllocation = iota
	// OptimalAllocation (Monkey) gives each level a false-positive rate
	// proportional to its size within the same total memory: small levels
	// get many bits per key, the largest a little less than the average,
	// and the expected wasted reads of an absent-key lookup drop to about
	// the largest level's rate. See BitsPerKeyForLevels.
	OptimalAllocation
	// BestAllocation chooses each level's filter family and parameter —
	// none, Bloom at bits per key on a grid of tenths, fuse at each
	// fingerprint width or Ribbon at each result width — to minimize the expected false-positive reads
	// of an absent-key lookup, Σ over runs of their false-positive rates,
	// within N·BitsPerKey bits (UniformAllocation's nominal memory),
	// counting each family's real rate and its cost in tables of the
	// level's size: Monkey generalized to a choice of family, solved as
	// a knapsack's linear relaxation, which spends the budget by giving
	// a fraction of one level's tables the next richer filter. See
	// FiltersForLevels.
	BestAllocation
	// ProgressiveAllocation is Pebble's progressive filter policy, for
	// comparison: binary fuse filters of 16, 16, 16, 12, 10, 8 and 4
	// fingerprint bits in L0–L6 (ProgressiveFilters(0)), whatever the
	// shape of the tree and BitsPerKey (0 still disables filters). It
	// ignores the memory budget: ProgressiveFilters and
	// ProgressiveOffset put it at a given memory.
	ProgressiveAllocation
)

// String returns the allocation's name as the tools print it and take it
// (bloomkv bench -allocation): "uniform", "optimal", "best" or
// "progressive".
func (a FilterAllocation) String() string {
	switch a {
	case UniformAllocation:
		return "uniform"
	case OptimalAllocation:
		return "optimal"
	case BestAllocation:
		return "best"
	case ProgressiveAllocation:
		return "progressive"
	}
	return fmt.Sprintf("FilterAllocation(%d)", uint8(a))
}

// Options are the DB's options as the picker, the merge and the filter
// allocation take them: resolved. The DB builds them from its
// bloomkv.Options once those are defaulted and checked, which is where each
// field's default and range are documented and enforced; this package
// neither defaults nor checks them, so that each rule lives in one place.
// Every field must therefore be set (tests build complete options): a zero
// L0CompactionTrigger, BaseLevelSize or LevelMultiplier is a caller's bug,
// not a request for a default.
type Options struct {
	// L0CompactionTrigger is the number of L0 tables at which L0 is
	// compacted into the base level (its score reaches 1); at least 1.
	L0CompactionTrigger int
	// L0SlowdownTrigger is the number of L0 tables from which the DB
	// paces writes, and L0 comes first among the compactions (Pick); at
	// least L0CompactionTrigger.
	L0SlowdownTrigger int

	// BaseLevelSize is the target size of L1 in bytes; level n ≥ 1 targets
	// BaseLevelSize·LevelMultiplier^(n−1).
	BaseLevelSize uint64
	// LevelMultiplier is T, the size ratio between adjacent levels; at
	// least 2. Larger T means fewer levels (fewer probes per read) but
	// more rewriting per byte written.
	LevelMultiplier int
	// TargetFileSize is the size at which a compaction cuts an output
	// table, at the next change of user key.
	TargetFileSize uint64
	// LevelSizing sets the levels' targets from BaseLevelSize upward or
	// from the largest level's size (TargetsOf).
	LevelSizing LevelSizing
	// MaxConcurrentCompactions is how many compactions Pick lets run at
	// once; at least 1.
	MaxConcurrentCompactions int
	// L0CompactionConcurrency is how many L0 tables past
	// L0CompactionTrigger open each slot beyond the first (Slots); 0
	// opens every slot whatever L0 holds.
	L0CompactionConcurrency int

	// BitsPerKey is the average filter memory per key over the whole tree,
	// in [1, bloom.MaxBitsPerKey]; 0 builds every table without a filter
	// (the DB's DisableFilters).
	BitsPerKey float64
	// FilterAllocation spreads BitsPerKey over the levels.
	FilterAllocation FilterAllocation
	// LevelFilters, if not nil, fixes each level's filter instead of
	// FilterAllocation: LevelFilters[i] for level i, whatever the shape.
	// BitsPerKey 0 still builds no filter anywhere.
	LevelFilters *[manifest.NumLevels]sstable.FilterSpec
	// FilterBudget, if not nil, gives the bits the point filters of a
	// tree of so many keys may take in all, the DB's share of its
	// MemoryLimit for them: the filters are planned within it for the
	// projected shape's keys (FiltersWithinBudget). It is asked for every
	// plan, so that the budget follows what the tables pin.
	FilterBudget FilterBudget
	// PagedFilterBits, if not 0, gives a table a paged filter of that many
	// bits per key wherever its planned filter rules out fewer keys than a
	// Bloom filter of as many bits would (PagedFilterFor): the DB sets it
	// to BitsPerKey under a MemoryLimit, whose budget leaves a large
	// tree's filters fewer bits.
	PagedFilterBits float64

	// Clock, if not nil, is the clock by which versions with a
	// time-to-live expire; Run reads it once, at its start. Nil: no
	// version is expired (the package's tests that are not about expiry
	// leave it so).
	Clock interface{ Now() time.Time }

	// TableOptions configure the output tables (block size, restart
	// interval, compression, prefix extractor). Their Filter and
	// RangeFilterBits are ignored: each output table gets its level's
	// filter (Compaction.Filter) and range filter (RangeFilterBits). Their
	// Compression is that of the levels below the base level, and of the
	// base level when it is the last (OutputCompression).
	TableOptions sstable.WriterOptions
	// TopLevelCompression is the compression of the tables of L0 (the
	// DB's flushes) and of the base level while a level is below it.
	TopLevelCompression sstable.Compression
	// RangeFilterBits is each level's range-filter setting, bits per key
	// (sstable.WriterOptions.RangeFilterBits; 0: none).
	RangeFilterBits [manifest.NumLevels]float64
	// BlobDeadShare is the dead share of a blob file at which compactions
	// relocate its live values (Compaction.RelocateBlobs) and the picker
	// rewrites tables that reference it (pickBlobRewrite); 0: never.
	BlobDeadShare float64
	// Merger is the DB's merge operator (bloomkv.Merger), with which Run
	// folds merge operands; nil if the DB has none, and then Run keeps
	// every operand as it is.
	Merger *base.Merger
}

// FilterBudget gives the bits the point filters of a tree of keys
// entries may take in all.
type FilterBudget interface {
	FilterBits(keys float64) float64
	// Overspent reports whether the filters in use take more than the
	// budget leaves them now: tables written for a smaller tree, or for
	// levels at their targets while they held more, keep their filters
	// until they are rewritten. PlanForLevel then plans for the shape the
	// tree has (UnsettledShape), L0 with it.
	Overspent() bool
}

// OutputCompression returns the compression of c's output tables:
// TopLevelCompression for a compaction from L0 into a base level above the
// last, TableOptions.Compression for every other. (A compaction into the
// base level comes from L0: the levels between are empty.)
func (o *Options) OutputCompression(c *Compaction) sstable.Compression {
	if c.Level == 0 && c.OutputLevel < lastLevel {
		return o.TopLevelCompression
	}
	return o.TableOptions.Compression
}

// LevelTargetSize returns the target size in bytes of level (1 or deeper)
// under StaticLevelSizing: BaseLevelSize·LevelMultiplier^(level−1),
// saturating at math.MaxUint64.
// L0 has no size target, only a table count (L0CompactionTrigger): 0.
func (o *Options) LevelTargetSize(level int) uint64 {
	if level < 1 {
		return 0
	}
	t := o.BaseLevelSize
	for range level - 1 {
		if t > math.MaxUint64/uint64(o.LevelMultiplier) {
			return math.MaxUint64
		}
		t *= uint64(o.LevelMultiplier)
	}
	return t
}

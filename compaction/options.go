package compaction

import (
	"fmt"
	"io"
	"math"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/sstable"
)

// FilterPolicy chooses how the filter memory is spread over the levels.
type FilterPolicy uint8

// The filter policies. The zero value is Uniform, the conventional choice
// and the baseline Optimal is measured against.
const (
	// Uniform builds every table with Options.BitsPerKey: each level has the
	// same false-positive rate p, and a lookup for an absent key that
	// probes L runs pays about L·p wasted block reads.
	Uniform FilterPolicy = iota
	// Optimal (Monkey) gives each level a false-positive rate proportional
	// to its size within the same total memory: small levels get many
	// bits per key, the largest a little less than the average, and the
	// expected wasted reads of an absent-key lookup drop to about the
	// largest level's rate. See BitsPerKeyForLevels.
	Optimal
)

func (p FilterPolicy) String() string {
	switch p {
	case Uniform:
		return "uniform"
	case Optimal:
		return "optimal"
	}
	return fmt.Sprintf("FilterPolicy(%d)", uint8(p))
}

// Options configure the picker, the merge and the filter allocation. The zero
// value, like a nil *Options, gives the defaults documented on each field.
//
// The defaults are sized for an embedded store with the DB's default 4 MiB
// memtable: L0 compacts at about 16 MiB (4 flushes), L1 holds about as much
// as L0 at its trigger (so an L0→L1 compaction rewrites about as much L1 as
// it brings in), and each deeper level is 10 times larger: 16 MiB, 160 MiB,
// 1.6 GiB, 16 GiB, 160 GiB, 1.6 TiB for L1–L6.
type Options struct {
	// L0CompactionTrigger is the number of L0 tables at which L0 is
	// compacted into L1 (its score reaches 1). Default 4.
	L0CompactionTrigger int
	// L0SlowdownTrigger is the number of L0 tables at which the DB starts
	// to slow writes down so compaction can catch up. This package does
	// not use it; it lives here with the other L0 thresholds. Default
	// 5·L0CompactionTrigger (20); at least L0CompactionTrigger.
	L0SlowdownTrigger int
	// L0StopTrigger is the number of L0 tables at which the DB stops
	// writes until compaction brings L0 back under it: every L0 table
	// whose range holds a key is probed by every read of it, so L0 must
	// stay bounded. Default 9·L0CompactionTrigger (36); at least
	// L0SlowdownTrigger.
	//
	// Why RocksDB's thresholds (20 and 36 at a trigger of 4) rather than
	// LevelDB's (8 and 12): a probe of a table whose filter rules the key
	// out reads nothing, so with filters an L0 table costs a missing-key
	// Get one filter check and a present-key Get about one percent of a
	// block read, and writes need not wait as early. Measured on a
	// 1,000,000-key fillrandom (bench/peers settings, 2 cores): LevelDB's
	// thresholds stalled writes 166 times for 338 ms, 690k ops/s; these 10
	// times for 80–115 ms, 790k–840k ops/s.
	L0StopTrigger int

	// BaseLevelSize is the target size of L1 in bytes; level n ≥ 1 targets
	// BaseLevelSize·LevelMultiplier^(n−1). Default 16 MiB; at least 1 KiB
	// (small values are for tests that want deep trees from little data).
	BaseLevelSize uint64
	// LevelMultiplier is T, the size ratio between adjacent levels. Larger
	// T means fewer levels (fewer probes per read) but more rewriting per
	// byte written. Default 10; in [2, 1000].
	LevelMultiplier int
	// TargetFileSize is the size at which a compaction cuts an output
	// table, at the next change of user key. Default 2 MiB; at least 1 KiB.
	TargetFileSize uint64

	// BitsPerKey is the average filter memory per key over the whole tree.
	// Default 10 (about 1% false positives per table under Uniform); in
	// [1, bloom.MaxBitsPerKey].
	BitsPerKey float64
	// DisableFilters builds every table without a filter: the baseline
	// the filters are measured against. BitsPerKey is then 0.
	DisableFilters bool
	// FilterPolicy spreads BitsPerKey over the levels. Default Uniform.
	FilterPolicy FilterPolicy

	// TableOptions configure the output tables (block size, restart
	// interval, compression). Their BitsPerKey is ignored: each output
	// table gets the bits per key of its level (Compaction.BitsPerKey).
	TableOptions sstable.WriterOptions
}

// OptionError reports an option that cannot be used: which field, its value,
// and why.
type OptionError struct {
	Field  string // e.g. "L0StopTrigger"
	Value  any
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("compaction: invalid option %s = %v: %s", e.Field, e.Value, e.Reason)
}

func optionError(field string, value any, format string, args ...any) error {
	return &OptionError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// Defaults and limits of the options.
const (
	DefaultL0CompactionTrigger = 4
	DefaultBaseLevelSize       = 16 << 20
	DefaultLevelMultiplier     = 10
	DefaultTargetFileSize      = 2 << 20
	DefaultBitsPerKey          = 10

	minLevelSize       = 1 << 10
	maxLevelMultiplier = 1000
)

// WithDefaults returns a copy of o (which may be nil) with every zero field
// at its default, or an *OptionError naming the first field out of range.
func (o *Options) WithDefaults() (Options, error) {
	opts := o.resolved()
	switch {
	case opts.L0CompactionTrigger < 1:
		return opts, optionError("L0CompactionTrigger", opts.L0CompactionTrigger, "must be at least 1")
	case opts.L0SlowdownTrigger < opts.L0CompactionTrigger:
		return opts, optionError("L0SlowdownTrigger", opts.L0SlowdownTrigger,
			"must be at least L0CompactionTrigger (%d)", opts.L0CompactionTrigger)
	case opts.L0StopTrigger < opts.L0SlowdownTrigger:
		return opts, optionError("L0StopTrigger", opts.L0StopTrigger,
			"must be at least L0SlowdownTrigger (%d)", opts.L0SlowdownTrigger)
	case opts.BaseLevelSize < minLevelSize:
		return opts, optionError("BaseLevelSize", opts.BaseLevelSize, "must be at least %d", minLevelSize)
	case opts.LevelMultiplier < 2 || opts.LevelMultiplier > maxLevelMultiplier:
		return opts, optionError("LevelMultiplier", opts.LevelMultiplier, "must be in [2, %d]", maxLevelMultiplier)
	case opts.TargetFileSize < minLevelSize:
		return opts, optionError("TargetFileSize", opts.TargetFileSize, "must be at least %d", minLevelSize)
	case !opts.DisableFilters && (math.IsNaN(opts.BitsPerKey) || opts.BitsPerKey < 1 || opts.BitsPerKey > bloom.MaxBitsPerKey):
		return opts, optionError("BitsPerKey", opts.BitsPerKey,
			"must be in [1, %d] (use DisableFilters for none)", bloom.MaxBitsPerKey)
	case opts.FilterPolicy > Optimal:
		return opts, optionError("FilterPolicy", opts.FilterPolicy, "unknown policy")
	}
	// The writer checks its own options; ask it now rather than in the
	// middle of a compaction.
	if _, err := sstable.NewWriter(io.Discard, opts.TableOptions); err != nil {
		return opts, optionError("TableOptions", opts.TableOptions, "%v", err)
	}
	return opts, nil
}

// resolved returns a copy of o with defaults for the zero fields, and for
// negative ones: the functions that take an *Options use it without
// validating, so they must not misbehave on values WithDefaults refuses.
func (o *Options) resolved() Options {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.L0CompactionTrigger <= 0 {
		opts.L0CompactionTrigger = DefaultL0CompactionTrigger
	}
	if opts.L0SlowdownTrigger <= 0 {
		opts.L0SlowdownTrigger = 5 * opts.L0CompactionTrigger
	}
	if opts.L0StopTrigger <= 0 {
		opts.L0StopTrigger = 9 * opts.L0CompactionTrigger
	}
	if opts.BaseLevelSize == 0 {
		opts.BaseLevelSize = DefaultBaseLevelSize
	}
	if opts.LevelMultiplier <= 0 {
		opts.LevelMultiplier = DefaultLevelMultiplier
	}
	if opts.TargetFileSize == 0 {
		opts.TargetFileSize = DefaultTargetFileSize
	}
	switch {
	case opts.DisableFilters:
		opts.BitsPerKey = 0
	case opts.BitsPerKey == 0:
		opts.BitsPerKey = DefaultBitsPerKey
	}
	opts.TableOptions.BitsPerKey = 0 // per level; see Compaction.BitsPerKey
	return opts
}

// LevelTargetSize returns the target size in bytes of level (1 or deeper):
// BaseLevelSize·LevelMultiplier^(level−1), saturating at math.MaxUint64.
// L0 has no size target, only a table count (L0CompactionTrigger): 0.
func (o *Options) LevelTargetSize(level int) uint64 {
	if level < 1 {
		return 0
	}
	opts := o.resolved()
	t := opts.BaseLevelSize
	for range level - 1 {
		if t > math.MaxUint64/uint64(opts.LevelMultiplier) {
			return math.MaxUint64
		}
		t *= uint64(opts.LevelMultiplier)
	}
	return t
}

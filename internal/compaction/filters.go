package compaction

import (
	"math"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// ln2sq is (ln 2)², the exponent of a Bloom filter's false-positive rate per
// bit per key: p ≈ e^(−b·(ln 2)²).
const ln2sq = math.Ln2 * math.Ln2

// bitsGrid is the resolution of an allocation: a tenth of a bit per key.
// Rounding to it keeps the number of distinct bits per key small (bloom
// memoizes its probe count per value, and Metrics prints them) at a cost of
// at most half a step, 0.5% of the default 10 bits per key.
const bitsGrid = 0.1

// roundBits rounds b to the nearest multiple of bitsGrid, as the float64
// nearest to it, so that it prints as it should (26.7, not
// 26.700000000000003).
func roundBits(b float64) float64 { return math.Round(b/bitsGrid) / (1 / bitsGrid) }

// BitsPerKeyForLevels returns the bits per key of each level's filters for a
// tree of shape s with an average of avg bits per key (0 for no filters).
// Levels with no data get 0.
//
// UniformAllocation gives every level avg.
//
// OptimalAllocation follows Monkey (Dayan, Athanassoulis and Idreos, SIGMOD 2017). The
// expected number of wasted block reads of a lookup for an absent key is the
// sum over the runs it probes of their false-positive rates. With n_i keys
// in run i at b_i bits per key, p_i ≈ e^(−b_i·(ln 2)²); minimize Σ_i p_i
// subject to the memory of UniformAllocation, Σ_i n_i·b_i = N·avg (N = Σ_i n_i). The
// Lagrangian condition ∂/∂b_i: −(ln 2)²·p_i + λ·n_i = 0 gives
//
//	p_i = (λ/(ln 2)²)·n_i      — each run's rate proportional to its size,
//
// so with T = 10 each level has a tenth of the rate of the next, and the sum
// is dominated by the largest level: about a constant instead of L·p.
// Solving the memory constraint for λ:
//
//	b_i = avg + (Σ_j (n_j/N)·ln n_j − ln n_i) / (ln 2)²
//
// — the average plus the log of how much smaller than the size-weighted
// (geometric) mean the run is, in units of (ln 2)²: 4.8 bits per key per
// factor of 10. A run whose b_i falls outside [1, bloom.MaxBitsPerKey] is
// clamped there (a table's filter has at least 1 bit per key — smaller ones
// buy next to nothing — and at most the blocked filter's limit) and the
// others are re-solved with the memory that leaves: the Karush-Kuhn-Tucker
// solution, found by bisection on the common level log(λ). avg ≥ 1 makes
// the constraint satisfiable. Results are rounded to a tenth of a bit.
//
// The model's e^(−b·(ln 2)²) is the classic filter's rate; the tables'
// cache-line-blocked filters flatten out at high bits per key, so their true
// optimum differs a little. Not by much: at 10 bits per key and T = 10, no
// move of memory between two levels lowers the expected reads, computed
// with the blocked filters' rates, by as much as 1% (0.2% at best; see
// TestOptimalNearBlockedOptimum), so the closed form stands.
func BitsPerKeyForLevels(s Shape, avg float64, alloc FilterAllocation) [manifest.NumLevels]float64 {
	var bits [manifest.NumLevels]float64
	if !(avg > 0) {
		return bits
	}
	avg = clampBits(avg)
	if alloc != OptimalAllocation {
		for level := range bits {
			if s.runs(level) > 0 {
				bits[level] = avg
			}
		}
		return bits
	}

	// b(x) = clamp((x − ln n)/(ln 2)²) is nondecreasing in x, and so is the
	// memory it spends: bisect x until the memory is N·avg.
	var total float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for level := range bits {
		if s.runs(level) == 0 {
			continue
		}
		total += s.Sizes[level]
		ln := math.Log(s.runSize(level))
		lo = min(lo, ln+ln2sq*1)
		hi = max(hi, ln+ln2sq*bloom.MaxBitsPerKey)
	}
	if total == 0 {
		return bits
	}
	spend := func(x float64) float64 {
		var m float64
		for level := range bits {
			if s.runs(level) > 0 {
				m += s.Sizes[level] * clampBits((x-math.Log(s.runSize(level)))/ln2sq)
			}
		}
		return m
	}
	budget := total * avg
	for range 100 {
		mid := (lo + hi) / 2
		if spend(mid) < budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	for level := range bits {
		if s.runs(level) > 0 {
			b := clampBits((hi - math.Log(s.runSize(level))) / ln2sq)
			bits[level] = clampBits(roundBits(b))
		}
	}
	return bits
}

// clampBits clamps bits per key to what a table's filter can have.
func clampBits(b float64) float64 { return min(max(b, 1), bloom.MaxBitsPerKey) }

// FilterForLevel returns the filter of the table numbered salt (its file
// number) written to level in v: PlanForLevel(v, level, opts).For(salt),
// which is the level's one filter, or, where BestAllocation mixes two in
// the level, one of them by a hash of salt (LevelFilter.For). The DB
// calls it for every table it flushes (level 0), and Run for every
// compaction output (Compaction.OutputFilter, from the plan Pick and
// PickManual put in the compaction), with the table's file number, and
// the table records its filter's family and parameters: tables built at
// different times, with different shapes, allocations or families, mix
// freely. A table moved to a level (IsTrivialMove) keeps its filter, one
// that suits the level's — the cheaper where the level mixes two.
func FilterForLevel(v *manifest.Version, level int, opts *Options, salt uint64) sstable.FilterSpec {
	return PlanForLevel(v, level, opts).For(salt)
}

// PagedFilterFor returns the bits per key of the paged filter
// (sstable.WriterOptions.PagedFilterBits) of a table whose filter is
// spec, under Options.PagedFilterBits bits: bits where spec's expected
// false-positive rate is above a Bloom filter's of that many bits — a
// filter the budget planned below what BitsPerKey asked for, or none —
// and 0, none, where spec rules out as many keys already, or bits is 0.
func PagedFilterFor(spec sstable.FilterSpec, bits float64) float64 {
	if bits == 0 || spec.Family != sstable.NoFilter && spec.ExpectedFalsePositiveRate() <= sstable.Bloom(bits).ExpectedFalsePositiveRate() {
		return 0
	}
	return bits
}

// PlanForLevel returns the filters of the tables written to level in v:
// none when filters are disabled (BitsPerKey 0); Options.LevelFilters'
// entry for the level if they are set; else the level's entry of
// FiltersForLevels for ProjectedShape under FilterAllocation — a Bloom
// filter of BitsPerKey under UniformAllocation, Monkey's under
// OptimalAllocation, the family and parameter of BestAllocation, or the
// mix of two, Pebble's widths under ProgressiveAllocation; with a
// FilterBudget, FiltersWithinBudget's plan within it.
//
// The allocations that weigh the levels (OptimalAllocation,
// BestAllocation) plan a table of L1 or deeper for the settled shape,
// ProjectedShape without L0 (Shape.Settled): an L0 table lives only until
// the next L0 compaction, so the deeper levels' tables, which outlive
// many, are planned to spend the whole budget on the tree they settle in.
// Planned with L0 in the budget, they left L0's share unspent whenever L0
// was empty — most of the time, and always once compactions settle — and
// more of it the smaller the tree was when they were written (L0 at its
// trigger is 1.7% of a tree of 10^6 entries at the default sizes, 17% of
// one of 10^5). L0's own tables are planned on the whole shape, as
// before; while L0 holds tables, their filters' memory is then on top of
// the budget the deeper levels spend: at most L0's keys times its
// filters' bits per key above the budget's.
func PlanForLevel(v *manifest.Version, level int, opts *Options) LevelFilter {
	switch {
	case opts.BitsPerKey == 0:
		return LevelFilter{}
	case opts.LevelFilters != nil:
		return Single(opts.LevelFilters[level])
	case opts.FilterAllocation == UniformAllocation && opts.FilterBudget == nil:
		// The shape decides nothing here: no projection per table built.
		return Single(sstable.Bloom(clampBits(opts.BitsPerKey)))
	case opts.FilterAllocation == ProgressiveAllocation && opts.FilterBudget == nil:
		return Single(ProgressiveFilters(0)[level])
	}
	s := ProjectedShape(v, level, opts)
	switch {
	case opts.FilterBudget != nil && opts.FilterBudget.Overspent():
		s = UnsettledShape(v, level, opts)
	case level > 0:
		s = s.Settled()
	}
	budget := -1.0
	if opts.FilterBudget != nil {
		budget = opts.FilterBudget.FilterBits(s.totalKeys())
	}
	return FiltersWithinBudget(s, opts, budget)[level]
}

package compaction

import (
	"math"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/sstable"
)

// FiltersWithinBudget returns the filters of each level's tables for a
// tree of shape s under opts (BitsPerKey, FilterAllocation, the prefix
// extractor) whose filters may take at most budget bits in all — the
// DB's filter share of its MemoryLimit — as FilterMemory counts them. A
// budget < 0 is none: FiltersForLevels at BitsPerKey.
//
// While the tree's keys at BitsPerKey fit the budget, the plan is
// FiltersForLevels' at BitsPerKey. Once the tree outgrows it, the average
// falls to what the budget leaves per key, avg = budget / keys, and the
// bits go where a bit removes the most expected reads, as Monkey's
// solution does under a memory constraint: the largest run — the deepest
// level — loses the most, one bit per key less there saving the most
// memory for the least rise in the expected reads:
//
//   - UniformAllocation, the default, and BestAllocation get
//     BestAllocation's plan at avg, every family a candidate, the
//     default with L0's filters Bloom filters of the same memory
//     (bloomOfSameMemory): uniform filters cannot be kept once the budget
//     binds, and memory is then what is short. A Standard Ribbon filter
//     buys the false-positive rate of a blocked Bloom filter of about 1.4
//     times its bits per key at these sizes (2^−3 at 3.2 bits per key in
//     a table of 20,000 keys, where the Bloom filter needs 4.4), for
//     about 100 ns more of a compaction's CPU per key (ribbon's
//     BenchmarkBuild: 80–190 ns a key from its hash). In a tree of the
//     shape the peers runner leaves at 100,000,000 keys, its filters left
//     3.4 bits per key, Bloom filters alone planned this way expect 0.29
//     false-positive reads per absent-key Get, every family 0.16
//     (TestBudgetFamiliesAt100M);
//   - OptimalAllocation keeps to Bloom filters, of any bits per key —
//     Monkey's problem solved with the blocked filters' real rates and
//     costs (bestPlan over bloomCandidates) — for comparisons within the
//     same budget;
//   - ProgressiveAllocation lowers Pebble's widths by the offset that
//     fits (ProgressiveOffset).
//
// Below an average of one bit per key, where no Bloom filter fits,
// Optimal takes BestAllocation's plan too, which may leave the largest
// levels without filters. A plan never exceeds the budget, but where even
// the cheapest filters do (a prefix extractor's, which every table must
// have; Pebble's narrowest widths).
func FiltersWithinBudget(s Shape, opts *Options, budget float64) FilterPlan {
	avg, alloc := opts.BitsPerKey, opts.FilterAllocation
	keys := s.totalKeys()
	if budget < 0 || !(avg > 0) || opts.LevelFilters != nil || keys == 0 || keys*avg <= budget {
		return FiltersForLevels(s, avg, alloc, opts)
	}
	avg = budget / keys
	switch {
	case alloc == ProgressiveAllocation:
		progressive := ProgressiveFilters(ProgressiveOffset(s, avg))
		return FiltersForLevels(s, avg, alloc, &Options{LevelFilters: &progressive})
	case alloc == OptimalAllocation && avg >= 1:
		return bestPlan(s, avg, bloomCandidates())
	}
	plan := FiltersForLevels(s, avg, BestAllocation, opts)
	if alloc == UniformAllocation {
		plan[0] = bloomOfSameMemory(plan[0], s.tableKeys(0))
	}
	return plan
}

// bloomOfSameMemory returns, for a level planned f in tables of n keys, the
// Bloom filter of the most bits per key on the planner's grid that costs
// no more than f — the default's L0 under a budget that binds — or f
// itself where it has no fuse or Ribbon filter, or costs less than a bit
// per key. A Ribbon build holds 36 bytes a key of working memory on the Go
// heap while it runs, and an L0 table is built from a memtable's keys or,
// by an intra-L0 compaction, from several memtables' at once (up to
// maxIntraL0Tables TargetFileSizes: 4.3 MB of it for 120,000 keys of
// 100-byte values in tables of 1 MiB), when under a small limit no block
// cache is left to give way to it. At 4,000,000 keys under a MemoryLimit
// of 16 MiB (bloomkv bench, alternating runs) the process peaked at
// 42.0–44.8 MiB with L0's filters Bloom filters (three runs), at 46.0–48.9
// with Ribbon filters there (three), and at 40.9–41.2 with Bloom filters
// everywhere (two, before every family was planned with). An L0 table
// lives only until its compaction, so the rate its filter gives up weighs
// little (there the expected false-positive reads were no higher: 0.017
// against 0.021, one pair of runs).
func bloomOfSameMemory(f LevelFilter, n int) LevelFilter {
	if f.Lo.Family != sstable.FuseFamily && f.Lo.Family != sstable.RibbonFamily &&
		f.Hi.Family != sstable.FuseFamily && f.Hi.Family != sstable.RibbonFamily {
		return f
	}
	cost := f.cost(func(spec sstable.FilterSpec) float64 { return spec.BitsPerKey(n) })
	for b := math.Floor(min(cost, bloom.MaxBitsPerKey)/bitsGrid) * bitsGrid; b >= 1; b = roundBits(b - bitsGrid) {
		if spec := sstable.Bloom(roundBits(b)); spec.BitsPerKey(n) <= cost {
			return Single(spec)
		}
	}
	return f
}

// bloomCandidates returns BestAllocation's Bloom candidates: a prefix of
// those after none (bestCandidates lists them in order of family and
// bits), the same slice each time, so that a table size's curve of them
// is computed once (curveFor keys its cache by the slice).
func bloomCandidates() []candidate {
	all := bestCandidates()[1:]
	k := 0
	for k < len(all) && all[k].spec.Family == sstable.BloomFamily {
		k++
	}
	return all[:k]
}

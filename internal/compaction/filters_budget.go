package compaction

import (
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
// memory for the least rise in the expected reads. Each allocation keeps
// its family:
//
//   - UniformAllocation and OptimalAllocation get BestAllocation's
//     solver (bestPlan) over Bloom filters alone, of at most BitsPerKey
//     for Uniform — no level gets more than was asked — and of any bits
//     per key for Optimal, Monkey's problem solved with the blocked
//     filters' real rates and costs;
//   - BestAllocation is its plan at avg;
//   - ProgressiveAllocation lowers Pebble's widths by the offset that
//     fits (ProgressiveOffset).
//
// Below an average of one bit per key, where no Bloom filter fits, Uniform
// and Optimal take BestAllocation's plan, which may leave the largest
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
	case alloc == BestAllocation || avg < 1:
		return FiltersForLevels(s, avg, BestAllocation, opts)
	case alloc == UniformAllocation:
		return bestPlan(s, avg, bloomCandidates(clampBits(opts.BitsPerKey)))
	}
	return bestPlan(s, avg, bloomCandidates(bloom.MaxBitsPerKey))
}

// bloomCandidates returns BestAllocation's Bloom candidates of at most
// ceiling bits per key: a prefix of those after none (bestCandidates
// lists them in order of bits), so that a table size's curve of them is
// computed once per ceiling (curveFor keys its cache by the slice).
func bloomCandidates(ceiling float64) []candidate {
	all := bestCandidates()[1:]
	k := 0
	for k < len(all) && all[k].spec.Family == sstable.BloomFamily && all[k].spec.Bits <= ceiling {
		k++
	}
	return all[:k]
}

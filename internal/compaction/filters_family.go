package compaction

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// FiltersForLevels returns the filter of each level's tables for a tree of
// shape s with an average of avg bits per key (0: no filters), under
// alloc. Levels with no data get none (the zero spec). opts, if not nil,
// adds the DB's constraints: its LevelFilters replace the allocation, and
// a prefix extractor (TableOptions.Prefix), whose prefixes live in the
// filters, keeps BestAllocation from leaving a level without one.
//
// UniformAllocation and OptimalAllocation give Bloom filters of
// BitsPerKeyForLevels' bits per key; ProgressiveAllocation gives
// ProgressiveFilters(0), whatever s and avg.
//
// BestAllocation minimizes the expected false-positive reads of a lookup
// for an absent key, Σ_i r_i·p_i(c_i) over the levels i (r_i runs: every
// L0 table, one for each deeper level), subject to the memory
// Σ_i n_i·m_i(c_i) ≤ N·avg bits (N = Σ_i n_i keys), where level i's
// filter c_i is one of a candidate set — none (p = 1, m = 0), Bloom at 1
// to 30 bits per key in tenths and whole bits up to bloom.MaxBitsPerKey,
// fuse at every fingerprint width — p_i is the candidate's false-positive
// rate (FilterSpec.ExpectedFalsePositiveRate) and m_i its cost in bits
// per key in a table of the level's (FilterSpec.BitsPerKey at Shape's
// keys per table: the fuse family's overhead in small tables and its
// fallback to Bloom where that is smaller, every filter's header and
// rounding). This is Monkey's problem with a choice of family and each
// family's real curves in place of e^(−b·(ln 2)²): a multiple-choice
// knapsack, solved by Lagrangian relaxation. For a price λ per bit each
// level independently takes the candidate minimizing r_i·p_i + λ·n_i·m_i;
// the memory that spends falls as λ rises, and λ is bisected to the
// smallest price whose choices fit the budget. Those choices are optimal
// for the memory they spend, which falls short of the budget by at most
// one step of one level between the candidates a price can choose (the
// lower convex hull of its (memory, reads)). A greedy repair then spends
// the rest — at each step the single change of one level that removes the
// most reads per bit and still fits — and exchanges pairs of changes (one
// level to another hull candidate, up or down, another to the best
// candidate the memory left allows) while a pair removes reads, refilling
// after each. Every step is checked against the budget as FilterMemory
// sums it, so the budget is never exceeded. The answer is within one such
// step's reads of the optimum, and on small trees nearly always the
// optimum (TestBestMatchesBruteForce searches every combination). A plan
// takes under a millisecond for a tree of four levels, a few for seven;
// the candidates' rates, computed once, about a second of CPU.
//
// In tables of a few dozen keys a filter's fixed costs (a Bloom filter's
// 40-byte header and whole 64-byte blocks) exceed a level's share of the
// budget, and BestAllocation may then leave the largest levels without a
// filter where the other allocations spend more than avg.
func FiltersForLevels(s Shape, avg float64, alloc FilterAllocation, opts *Options) [manifest.NumLevels]sstable.FilterSpec {
	var specs [manifest.NumLevels]sstable.FilterSpec
	if !(avg > 0) {
		return specs
	}
	fixed := func(filters *[manifest.NumLevels]sstable.FilterSpec) [manifest.NumLevels]sstable.FilterSpec {
		for level := range specs {
			if s.runs(level) > 0 {
				specs[level] = filters[level]
			}
		}
		return specs
	}
	switch {
	case opts != nil && opts.LevelFilters != nil:
		return fixed(opts.LevelFilters)
	case alloc == BestAllocation:
		cands := bestCandidates()
		if opts != nil && opts.TableOptions.Prefix != nil {
			cands = cands[1:] // without none, the first
		}
		return bestFilters(s, clampBits(avg), cands)
	case alloc == ProgressiveAllocation:
		progressive := ProgressiveFilters(0)
		return fixed(&progressive)
	}
	for level, bits := range BitsPerKeyForLevels(s, avg, alloc) {
		if bits > 0 {
			specs[level] = sstable.Bloom(bits)
		}
	}
	return specs
}

// progressiveBits are the fingerprint widths of Pebble's progressive
// filter policy in L0–L6: the small, hot levels get nearly exact filters
// and the largest ones cheap filters.
var progressiveBits = [manifest.NumLevels]int{16, 16, 16, 12, 10, 8, 4}

// ProgressiveFilters returns the filters of ProgressiveAllocation, Pebble's
// progressive policy, with every level's fingerprint width shifted by
// offset and clamped to [fuse.MinBits, fuse.MaxBits]: offset 0 is the
// policy itself, 16/16/16/12/10/8/4 bits in L0–L6, and other offsets move
// it along its own shape to another memory, for comparisons at equal
// memory (ProgressiveOffset).
func ProgressiveFilters(offset int) [manifest.NumLevels]sstable.FilterSpec {
	var specs [manifest.NumLevels]sstable.FilterSpec
	for level, w := range progressiveBits {
		specs[level] = sstable.Fuse(min(max(w+offset, fuse.MinBits), fuse.MaxBits))
	}
	return specs
}

// ProgressiveOffset returns the largest offset at which
// ProgressiveFilters(offset) spends at most the memory of avg bits per key
// on a tree of shape s (FilterMemory ≤ N·avg), so that the progressive
// policy is compared at no more memory than the others and one offset
// more would exceed it. If even the smallest widths exceed it, it returns
// the offset that makes every width fuse.MinBits.
func ProgressiveOffset(s Shape, avg float64) int {
	lowest := fuse.MinBits - progressiveBits[0] // every width at the minimum
	budget := s.totalKeys() * avg
	for d := fuse.MaxBits - progressiveBits[manifest.NumLevels-1]; d > lowest; d-- {
		if FilterMemory(s, ProgressiveFilters(d)) <= budget {
			return d
		}
	}
	return lowest
}

// ExpectedFalsePositiveReads returns the expected number of data blocks a
// lookup for an absent key reads in vain in a tree of shape s whose
// levels' tables have filters: the sum over the runs it probes — every L0
// table, one table of each deeper level with data — of their filters'
// false-positive rates (FilterSpec.ExpectedFalsePositiveRate; 1 for no
// filter: every probe reads). It is what BestAllocation minimizes, and what
// the benchmarks and tools compare allocations by.
func ExpectedFalsePositiveReads(s Shape, filters [manifest.NumLevels]sstable.FilterSpec) float64 {
	var sum float64
	for level, spec := range filters {
		if runs := s.runs(level); runs > 0 {
			sum += float64(runs) * spec.ExpectedFalsePositiveRate()
		}
	}
	return sum
}

// FilterMemory returns the memory of the filters of a tree of shape s,
// in bits (when s's Sizes and EntrySize give the keys): Σ over the levels
// with data of their keys times FilterSpec.BitsPerKey at the keys of one
// of their tables (Shape.TableSize), which counts each family's overhead
// in tables of that size. It is the memory BestAllocation budgets.
func FilterMemory(s Shape, filters [manifest.NumLevels]sstable.FilterSpec) float64 {
	var m float64
	for level, spec := range filters {
		if s.runs(level) > 0 {
			m += s.keys(level) * spec.BitsPerKey(s.tableKeys(level))
		}
	}
	return m
}

// totalKeys returns the entries of the levels with data.
func (s *Shape) totalKeys() float64 {
	var n float64
	for level := range s.Sizes {
		if s.runs(level) > 0 {
			n += s.keys(level)
		}
	}
	return n
}

// candidate is a filter BestAllocation may give a level, with its
// false-positive rate: a Bloom filter's is a sum of some thousand terms,
// computed once per candidate rather than in every plan.
type candidate struct {
	spec sstable.FilterSpec
	fpr  float64
}

// bestCandidates returns BestAllocation's candidates (see
// FiltersForLevels): none, Bloom from 1 to 30 bits per key in steps of
// bitsGrid — Monkey's resolution — and in whole bits above, where only the
// smallest levels of generous budgets go, fuse at every width. Their rates
// cost about a second of CPU, mostly the Bloom filters' probe counts
// (which package bloom remembers for the writers), paid the first time a
// BestAllocation is planned, spread over the CPUs.
var bestCandidates = sync.OnceValue(func() []candidate {
	specs := []sstable.FilterSpec{{}} // none first: FiltersForLevels drops it under a prefix extractor
	for tenths := 10; tenths <= 300; tenths++ {
		specs = append(specs, sstable.Bloom(float64(tenths)/10))
	}
	for bits := 31; bits <= bloom.MaxBitsPerKey; bits++ {
		specs = append(specs, sstable.Bloom(float64(bits)))
	}
	for w := fuse.MinBits; w <= fuse.MaxBits; w++ {
		specs = append(specs, sstable.Fuse(w))
	}
	return newCandidates(specs)
})

// newCandidates returns specs with their false-positive rates, computed in
// parallel.
func newCandidates(specs []sstable.FilterSpec) []candidate {
	cands := make([]candidate, len(specs))
	parallel(len(specs), func(i int) { cands[i] = candidate{specs[i], specs[i].ExpectedFalsePositiveRate()} })
	return cands
}

// bestFilters solves BestAllocation over cands (see FiltersForLevels), for
// an average of avg bits per key. If cands has no candidate of zero cost
// (no none) and even the cheapest exceed the budget, it returns the
// cheapest.
func bestFilters(s Shape, avg float64, cands []candidate) [manifest.NumLevels]sstable.FilterSpec {
	// Each level's candidates as memory (bits) and expected reads, and
	// the lower convex hull of those points, which is all the price's
	// choice needs: a linear cost is least at a vertex, and ties go to
	// the cheaper, a vertex too.
	type level struct {
		index      int
		mem, reads []float64
		hull       []int
		choice     int
		// byMem lists the candidates cheapest first, and fewest[k] is
		// the one of byMem[:k+1] with the fewest reads: the best
		// candidate within a memory, by a binary search.
		byMem, fewest []int
	}
	var levels []*level
	for i := range manifest.NumLevels {
		if s.runs(i) == 0 {
			continue
		}
		l := &level{index: i, mem: make([]float64, len(cands)), reads: make([]float64, len(cands))}
		keys, n, runs := s.keys(i), s.tableKeys(i), float64(s.runs(i))
		for c, cand := range cands {
			l.mem[c] = keys * cand.spec.BitsPerKey(n)
			l.reads[c] = runs * cand.fpr
		}
		l.hull = lowerHull(l.mem, l.reads)
		l.byMem = make([]int, len(cands))
		for c := range l.byMem {
			l.byMem[c] = c
		}
		slices.SortStableFunc(l.byMem, func(a, b int) int { return cmp.Compare(l.mem[a], l.mem[b]) })
		l.fewest = make([]int, len(cands))
		for k, c := range l.byMem {
			l.fewest[k] = c
			if k > 0 && l.reads[l.fewest[k-1]] <= l.reads[c] {
				l.fewest[k] = l.fewest[k-1]
			}
		}
		levels = append(levels, l)
	}
	budget := s.totalKeys() * avg

	// memory sums the chosen memory in level order, as FilterMemory does,
	// so that the check against the budget is FilterMemory's.
	memory := func() float64 {
		var m float64
		for _, l := range levels {
			m += l.mem[l.choice]
		}
		return m
	}
	// pick sets each level's choice to its candidate minimizing
	// reads + λ·memory; ties go to the cheaper.
	pick := func(lambda float64) {
		for _, l := range levels {
			best := l.hull[0]
			for _, c := range l.hull[1:] {
				if l.reads[c]+lambda*l.mem[c] < l.reads[best]+lambda*l.mem[best] {
					best = c
				}
			}
			l.choice = best
		}
	}

	// The price λ = e^x, bisected on x: at λ = 0 every level takes its
	// lowest rate, at e^80 reads per bit its cheapest candidate (a bit of
	// any level then costs more than all the reads of the tree).
	pick(0)
	if memory() > budget {
		lo, hi := -80.0, 80.0
		for range 64 {
			mid := (lo + hi) / 2
			pick(math.Exp(mid))
			if memory() > budget {
				lo = mid
			} else {
				hi = mid
			}
		}
		pick(math.Exp(hi))
	}

	// Greedy repair: spend what the price's choices leave of the budget.
	// Every step lowers one level's reads, so there are at most as many as
	// candidates per level. A step is checked against the budget as
	// FilterMemory sums it; one the running total let through by a
	// rounding is undone and not tried again.
	total := memory()
	rejected := map[[2]int]bool{}
	fill := func() {
		for total <= budget {
			var up *level
			upTo, upScore := 0, 0.0
			for _, l := range levels {
				cur := l.choice
				for c := range cands {
					gain := l.reads[cur] - l.reads[c]
					if !(gain > 0) || total-l.mem[cur]+l.mem[c] > budget || rejected[[2]int{l.index, c}] {
						continue
					}
					score := math.Inf(1) // as cheap or cheaper: take it
					if extra := l.mem[c] - l.mem[cur]; extra > 0 {
						score = gain / extra
					}
					if score > upScore {
						up, upTo, upScore = l, c, score
					}
				}
			}
			if up == nil {
				return
			}
			from := up.choice
			up.choice = upTo
			if total = memory(); total > budget {
				up.choice = from
				total = memory()
				rejected[[2]int{up.index, upTo}] = true
			}
		}
	}
	fill()

	// Exchanges: where no single level's step fits what is left — a fuse
	// width is a factor of 2 in rate, and the largest level's step can
	// be most of the budget's slack — a pair of changes may: one level
	// to another of its hull's candidates, up or down, and another to any
	// candidate. Take the pair that removes the most reads within the
	// budget, refill, and repeat while a pair helps.
	reads := func() float64 {
		var r float64
		for _, l := range levels {
			r += l.reads[l.choice]
		}
		return r
	}
	for range 4 * len(levels) {
		var li, lj *level
		var ci, cj int
		best := -1e-12 * reads() // the least improvement worth a step
		for _, a := range levels {
			for _, c := range a.hull {
				if c == a.choice {
					continue
				}
				ta := total - a.mem[a.choice] + a.mem[c]
				da := a.reads[c] - a.reads[a.choice]
				for _, b := range levels {
					if b == a {
						continue
					}
					// b's best candidate within what a leaves.
					room := budget - ta + b.mem[b.choice]
					k, _ := slices.BinarySearchFunc(b.byMem, room, func(c int, room float64) int {
						return cmp.Compare(b.mem[c], room)
					})
					for k < len(b.byMem) && b.mem[b.byMem[k]] <= room {
						k++ // past the candidates of memory equal to room
					}
					if k == 0 {
						continue
					}
					d := b.fewest[k-1]
					if delta := da + b.reads[d] - b.reads[b.choice]; delta < best {
						li, ci, lj, cj, best = a, c, b, d, delta
					}
				}
			}
		}
		if li == nil {
			break
		}
		fromI, fromJ := li.choice, lj.choice
		li.choice, lj.choice = ci, cj
		if total = memory(); total > budget {
			li.choice, lj.choice = fromI, fromJ
			total = memory()
			break
		}
		fill()
	}

	var specs [manifest.NumLevels]sstable.FilterSpec
	for _, l := range levels {
		specs[l.index] = cands[l.choice].spec
	}
	return specs
}

// lowerHull returns the indices of the vertices of the lower convex hull
// of the points (mem[i], reads[i]) that no other point beats in both,
// cheapest first: the candidates some price λ ≥ 0 chooses.
func lowerHull(mem, reads []float64) []int {
	order := make([]int, len(mem))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(mem[a], mem[b]); c != 0 {
			return c
		}
		return cmp.Compare(reads[a], reads[b])
	})
	var hull []int
	for _, p := range order {
		if len(hull) > 0 && reads[p] >= reads[hull[len(hull)-1]] {
			continue // no fewer reads for no less memory
		}
		// Drop the last vertex while it is on or above the segment from
		// the one before it to p.
		for len(hull) >= 2 {
			a, b := hull[len(hull)-2], hull[len(hull)-1]
			if (reads[b]-reads[a])*(mem[p]-mem[a]) < (reads[p]-reads[a])*(mem[b]-mem[a]) {
				break
			}
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	return hull
}

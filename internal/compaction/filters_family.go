package compaction

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/sstable"
)

// FiltersForLevels returns the filters of each level's tables for a tree
// of shape s with an average of avg bits per key (0: no filters), under
// alloc. Levels with no data get none (the zero LevelFilter). opts, if not
// nil, adds the DB's constraints: its LevelFilters replace the allocation,
// and a prefix extractor (TableOptions.Prefix), whose prefixes live in the
// filters, keeps BestAllocation from leaving a level without one.
//
// UniformAllocation and OptimalAllocation give Bloom filters of
// BitsPerKeyForLevels' bits per key; ProgressiveAllocation gives
// ProgressiveFilters(0), whatever s and avg: one filter per level
// (Single). Only BestAllocation mixes two in a level.
//
// BestAllocation minimizes the expected false-positive reads of a lookup
// for an absent key, Σ_i r_i·p_i(c_i) over the levels i (r_i runs: every
// L0 table, one for each deeper level), subject to the memory
// Σ_i n_i·m_i(c_i) ≤ N·avg bits (N = Σ_i n_i keys), where level i's
// filter c_i is one of a candidate set — none (p = 1, m = 0), Bloom at 1
// to 30 bits per key in tenths and whole bits up to bloom.MaxBitsPerKey,
// fuse at every fingerprint width, ribbon at every result width — p_i is
// the candidate's false-positive rate
// (FilterSpec.ExpectedFalsePositiveRate) and m_i its cost in bits per key
// in a table of the level's (FilterSpec.BitsPerKey at Shape's keys per
// table: the fuse and ribbon families' overhead in small tables and their
// fallback to Bloom where that is smaller, every filter's header and
// rounding). This is Monkey's problem with a choice of family and each
// family's real curves in place of e^(−b·(ln 2)²): a multiple-choice
// knapsack.
//
// Its candidates are discrete, and a fuse width is a step of about 1.1
// bits per key: no combination of one candidate per level may come near
// the budget (fuse 7 on the largest level where fuse 8 does not fit). A
// level's tables need not share one filter, though. Giving candidate b to
// the tables of a fraction x of its keys and a to the others costs and
// reads the mix (1−x)·a + x·b of the two, so the choices of a level are
// the segments
// of the lower convex hull of its candidates' (memory, reads), and the
// problem is the knapsack's linear relaxation, solved exactly by the
// classic greedy (Sinha and Zoltners): every level starts at its
// cheapest hull vertex, and the hull segments of all levels are bought
// in order of reads removed per bit — each level's in order, its hull
// being convex — until one does not fit whole; that one's level mixes
// its two vertices with the x the budget leaves. Only one level mixes
// (ties aside), and the budget is spent to within the rounding of x to
// whole tables of the level (x is a multiple of 1/tables, rounded down;
// a level of one table cannot mix), whose remainder a greedy repair
// (below) spends on the other levels. Where x rounds down to nothing —
// not one of the level's tables fits its step, as in an L0 of a few
// runs — the level keeps its vertex and the segments after it, of the
// other levels, are tried in turn, whole or mixed. The result is the
// optimum of the relaxation, which no combination of single candidates
// beats, to within that rounding. Which tables get b their file numbers decide
// (LevelFilter.For), so x holds on average over the level's tables.
// The relaxation's plans also follow the tree's growth steadily: as a
// level's share of the keys shrinks, its filter moves up one vertex at a
// time, through mixes, where the best single candidates swing a small
// level's filter several widths up and back down as the slack the
// largest level's step leaves moves to it and away.
//
// The rounding can cost more than the discreteness where the mixing
// level has few tables, so BestAllocation also solves the problem
// without mixing and keeps the plan with fewer expected reads. That
// solution is a Lagrangian relaxation: for a price λ per bit each level
// independently takes the candidate minimizing r_i·p_i + λ·n_i·m_i, λ is
// bisected to the smallest price whose choices fit the budget, a greedy
// repair spends the rest — at each step the single change of one level
// that removes the most reads per bit and still fits — and pairs of
// changes are exchanged (one level to another hull candidate, up or
// down, another to the best candidate the memory left allows) while a
// pair removes reads, refilling after each; on small trees it is nearly
// always the optimum over single candidates (TestBestMatchesBruteForce
// searches every combination). Every step of both is checked against the
// budget as FilterMemory sums it, so a plan never exceeds it. A plan
// takes 0.1–0.2 ms for a tree of four levels (BenchmarkBestPlan), a
// little more for seven; each table size's costs of the candidates (a
// tableCurve, about 20 µs) are computed once and kept, the candidates'
// rates once per process (about a fifth of a second of CPU).
//
// In tables of a few dozen keys a filter's fixed costs (a Bloom filter's
// 40-byte header and whole 64-byte blocks) exceed a level's share of the
// budget, and BestAllocation may then leave the largest levels without a
// filter where the other allocations spend more than avg.
func FiltersForLevels(s Shape, avg float64, alloc FilterAllocation, opts *Options) FilterPlan {
	var plan FilterPlan
	if !(avg > 0) {
		return plan
	}
	fixed := func(filters *[manifest.NumLevels]sstable.FilterSpec) FilterPlan {
		for level := range plan {
			if s.runs(level) > 0 {
				plan[level] = Single(filters[level])
			}
		}
		return plan
	}
	switch {
	case opts != nil && opts.LevelFilters != nil:
		return fixed(opts.LevelFilters)
	case alloc == BestAllocation:
		cands := bestCandidates()
		if opts != nil && opts.TableOptions.Prefix != nil {
			cands = cands[1:] // without none, the first
		}
		return bestPlan(s, clampBits(avg), cands)
	case alloc == ProgressiveAllocation:
		progressive := ProgressiveFilters(0)
		return fixed(&progressive)
	}
	for level, bits := range BitsPerKeyForLevels(s, avg, alloc) {
		if bits > 0 {
			plan[level] = Single(sstable.Bloom(bits))
		}
	}
	return plan
}

// LevelFilter is the filters of one level's tables in a FilterPlan: the
// fraction HiFraction of them get Hi, the others Lo, each table by its
// file number (For). Most levels have one filter, Lo == Hi and
// HiFraction 0 (Single; the zero LevelFilter is no filter); where
// BestAllocation mixes two, Lo is the cheaper and HiFraction in (0, 1).
// HiFraction is a fraction of the level's keys as much as of its tables:
// the plan takes its tables to be of one size (Shape.TableSize).
type LevelFilter struct {
	Lo, Hi     sstable.FilterSpec
	HiFraction float64
}

// Single returns the LevelFilter of one filter, spec, for every table.
func Single(spec sstable.FilterSpec) LevelFilter { return LevelFilter{Lo: spec, Hi: spec} }

// Mixed reports whether the level's tables get two filters.
func (f LevelFilter) Mixed() bool { return f.HiFraction > 0 && f.Lo != f.Hi }

// For returns the filter of the level's table numbered salt (its file
// number): Hi if salt hashes (splitmix64) to a number in [0, 1) below
// HiFraction, else Lo. The choice depends on salt alone, so it is the
// same every time the table is planned, and over tables of distinct
// numbers Hi goes to HiFraction of them but for binomial noise, whatever
// the pattern of the numbers. The hash does not depend on the level
// either: a table that gets Hi at one fraction gets it at every larger
// one.
func (f LevelFilter) For(salt uint64) sstable.FilterSpec {
	if f.HiFraction > 0 && saltUnit(salt) < f.HiFraction {
		return f.Hi
	}
	return f.Lo
}

// String renders the filters, e.g. "fuse 8-bit" or
// "fuse 7-bit + 35.2% fuse 8-bit".
func (f LevelFilter) String() string {
	if !f.Mixed() {
		return f.Lo.String()
	}
	return fmt.Sprintf("%v + %.1f%% %v", f.Lo, 100*f.HiFraction, f.Hi)
}

// mix returns the average of lo, a cost of Lo, and hi, Hi's, weighted by
// the fraction of the level under each: lo itself for a level of one
// filter, to the last bit.
func (f LevelFilter) mix(lo, hi float64) float64 {
	if f.HiFraction == 0 {
		return lo
	}
	return (1-f.HiFraction)*lo + f.HiFraction*hi
}

// cost returns the mix of of(Lo) and of(Hi), without calling of(Hi) for
// a level of one filter.
func (f LevelFilter) cost(of func(sstable.FilterSpec) float64) float64 {
	if f.HiFraction == 0 {
		return of(f.Lo)
	}
	return f.mix(of(f.Lo), of(f.Hi))
}

// saltUnit maps salt to [0, 1): splitmix64's output function of it, in
// 53 bits.
func saltUnit(salt uint64) float64 {
	z := salt + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// FilterPlan is an allocation's filters for each level of a tree
// (FiltersForLevels).
type FilterPlan [manifest.NumLevels]LevelFilter

// FixedPlan returns the plan of one filter per level, specs.
func FixedPlan(specs [manifest.NumLevels]sstable.FilterSpec) FilterPlan {
	var plan FilterPlan
	for level, spec := range specs {
		plan[level] = Single(spec)
	}
	return plan
}

// Filters are the filters of a tree's levels as ExpectedFalsePositiveReads
// and FilterMemory take them: a FilterPlan, or one spec per level.
type Filters interface {
	FilterPlan | [manifest.NumLevels]sstable.FilterSpec
}

// asPlan returns filters as a plan.
func asPlan[F Filters](filters F) FilterPlan {
	switch f := any(filters).(type) {
	case FilterPlan:
		return f
	case [manifest.NumLevels]sstable.FilterSpec:
		return FixedPlan(f)
	}
	panic("unreachable")
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
// filter: every probe reads), a level that mixes two filters at the mix
// of their rates (LevelFilter.HiFraction of Hi's). It is what
// BestAllocation minimizes, and what the benchmarks and tools compare
// allocations by.
func ExpectedFalsePositiveReads[F Filters](s Shape, filters F) float64 {
	var sum float64
	for level, f := range asPlan(filters) {
		if runs := float64(s.runs(level)); runs > 0 {
			sum += f.cost(func(spec sstable.FilterSpec) float64 { return runs * spec.ExpectedFalsePositiveRate() })
		}
	}
	return sum
}

// FilterMemory returns the memory of the filters of a tree of shape s,
// in bits (when s's Sizes and EntrySize give the keys): Σ over the levels
// with data of their keys times FilterSpec.BitsPerKey at the keys of one
// of their tables (Shape.TableSize), which counts each family's overhead
// in tables of that size; a level that mixes two filters at the mix of
// their costs. It is the memory BestAllocation budgets.
func FilterMemory[F Filters](s Shape, filters F) float64 {
	var m float64
	for level, f := range asPlan(filters) {
		if s.runs(level) > 0 {
			keys, n := s.keys(level), s.tableKeys(level)
			m += f.cost(func(spec sstable.FilterSpec) float64 { return keys * spec.BitsPerKey(n) })
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
// smallest levels of generous budgets go, fuse and ribbon at every width.
// Their rates cost about a fifth of a second of CPU (0.19–0.24 s measured
// on amd64), mostly the Bloom filters' probe counts (which package bloom
// remembers for the writers), paid the first time a BestAllocation is
// planned, spread over the CPUs.
var bestCandidates = sync.OnceValue(func() []candidate {
	specs := []sstable.FilterSpec{{}} // none first: FiltersForLevels drops it under a prefix extractor
	// Bloom from 1 to 30 bits per key, perBit grid steps to a bit.
	const perBit = 1 / bitsGrid
	for step := perBit; step <= 30*perBit; step++ {
		specs = append(specs, sstable.Bloom(step/perBit))
	}
	for bits := 31; bits <= bloom.MaxBitsPerKey; bits++ {
		specs = append(specs, sstable.Bloom(float64(bits)))
	}
	for w := fuse.MinBits; w <= fuse.MaxBits; w++ {
		specs = append(specs, sstable.Fuse(w))
	}
	for r := ribbon.MinBits; r <= ribbon.MaxBits; r++ {
		specs = append(specs, sstable.Ribbon(r))
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

// bestPlan solves BestAllocation over cands (see FiltersForLevels), for
// an average of avg bits per key: of bestPlans' two plans, the one with
// fewer expected reads, the relaxation's on a tie. If cands has no
// candidate of zero cost (no none) and even the cheapest exceed the
// budget, it returns the cheapest.
func bestPlan(s Shape, avg float64, cands []candidate) FilterPlan {
	relaxed, single, relaxedReads, singleReads := bestPlans(s, avg, cands)
	if relaxedReads <= singleReads {
		return relaxed
	}
	return single
}

// bestPlans returns BestAllocation's plans over cands for an average of
// avg bits per key (see FiltersForLevels) and their expected reads: the
// linear relaxation's, which mixes two candidates in one level (reads
// +Inf if even the cheapest candidates exceed the budget), and the best
// it finds of one candidate per level.
func bestPlans(s Shape, avg float64, cands []candidate) (relaxed, single FilterPlan, relaxedReads, singleReads float64) {
	// Each level's candidates as memory (bits) and expected reads, and
	// the lower convex hull of those points, which is all the price's
	// choice and the relaxation need: a linear cost is least at a
	// vertex, and ties go to the cheaper, a vertex too.
	type level struct {
		index      int
		mem, reads []float64
		hull       []int
		// The level's candidate, and in a mix the richer one, hi, for
		// the fraction frac of its keys (0: choice alone). tables is
		// the number of tables it holds, of which frac is a multiple.
		choice, hi int
		frac       float64
		tables     float64
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
		curve := curveFor(cands, n)
		for c, cand := range cands {
			l.mem[c] = keys * curve.bitsPerKey[c]
			l.reads[c] = runs * cand.fpr
		}
		l.tables = max(1, math.Round(keys/float64(n)))
		if i == 0 {
			l.tables = runs
		}
		l.hull, l.byMem, l.fewest = curve.hull, curve.byMem, curve.fewest
		levels = append(levels, l)
	}
	budget := s.totalKeys() * avg

	// memory sums the chosen memory in level order, as FilterMemory does
	// (LevelFilter.mix included), so that the check against the budget is
	// FilterMemory's; reads sums the expected reads likewise.
	mixOf := func(l *level) LevelFilter { return LevelFilter{HiFraction: l.frac} }
	memory := func() float64 {
		var m float64
		for _, l := range levels {
			m += mixOf(l).mix(l.mem[l.choice], l.mem[l.hi])
		}
		return m
	}
	reads := func() float64 {
		var r float64
		for _, l := range levels {
			r += mixOf(l).mix(l.reads[l.choice], l.reads[l.hi])
		}
		return r
	}
	plan := func() FilterPlan {
		var p FilterPlan
		for _, l := range levels {
			p[l.index] = Single(cands[l.choice].spec)
			if l.frac > 0 {
				p[l.index] = LevelFilter{Lo: cands[l.choice].spec, Hi: cands[l.hi].spec, HiFraction: l.frac}
			}
		}
		return p
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
			l.choice, l.hi, l.frac = best, best, 0
		}
	}

	// Greedy repair: spend what the choices leave of the budget on the
	// levels that do not mix. Every step lowers one level's reads, so
	// there are at most as many as candidates per level. A step is
	// checked against the budget as FilterMemory sums it; one the running
	// total let through by a rounding is undone and not tried again.
	var total float64
	var rejected map[[2]int]bool // by fill, in one of the plans below
	fill := func() {
		for total <= budget {
			var up *level
			upTo, upScore := 0, 0.0
			for _, l := range levels {
				if l.frac > 0 {
					continue
				}
				cur := l.choice
				for c := range cands {
					gain := l.reads[cur] - l.reads[c]
					if !(gain > 0) || total-l.mem[cur]+l.mem[c] > budget || len(rejected) > 0 && rejected[[2]int{l.index, c}] {
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
			up.choice, up.hi = upTo, upTo
			if total = memory(); total > budget {
				up.choice, up.hi = from, from
				total = memory()
				rejected[[2]int{up.index, upTo}] = true
			}
		}
	}

	// The relaxation (see FiltersForLevels).
	relaxedReads = math.Inf(1)
	for _, l := range levels {
		l.choice, l.hi, l.frac = l.hull[0], l.hull[0], 0
	}
	rejected = map[[2]int]bool{}
	if total = memory(); total <= budget {
		type segment struct {
			l     *level
			k     int     // from l.hull[k] to l.hull[k+1]
			slope float64 // reads per bit, < 0
		}
		var segs []segment
		for _, l := range levels {
			for k := range len(l.hull) - 1 {
				a, b := l.hull[k], l.hull[k+1]
				segs = append(segs, segment{l, k, (l.reads[b] - l.reads[a]) / (l.mem[b] - l.mem[a])})
			}
		}
		// The most reads removed per bit first; a level's segments are
		// in its hull's order already (their slopes rise), and stay so.
		slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.slope, b.slope) })
		for _, sg := range segs {
			l := sg.l
			from, to := l.hull[sg.k], l.hull[sg.k+1]
			if l.choice != from {
				continue // the level stopped at an earlier segment
			}
			l.choice, l.hi = to, to
			if total = memory(); total <= budget {
				continue
			}
			// The first segment that does not fit whole: the fraction
			// of the level's keys the rest of the budget buys at to,
			// in whole tables, rounded down (and down again while a
			// rounding of the sum exceeds the budget).
			l.choice, l.hi = from, from
			left := budget - memory()
			l.hi, l.frac = to, math.Floor(left/(l.mem[to]-l.mem[from])*l.tables)/l.tables
			for l.frac > 0 && memory() > budget {
				l.frac = max(0, l.frac-1/l.tables)
			}
			if l.frac > 0 {
				break
			}
			// Not even one of the level's tables fits the step (a level
			// of few tables, such as L0's few runs): the level stays at
			// from — its later segments start elsewhere, and are passed
			// over — and the next segments, of other levels, may still
			// fit, whole or in part.
			l.hi = from
		}
		total = memory()
		fill() // what the rounding to whole tables left
		relaxed, relaxedReads = plan(), reads()
	}

	// One candidate per level. The price λ = e^x, bisected on x: at λ = 0
	// every level takes its lowest rate, at e^80 reads per bit its
	// cheapest candidate (a bit of any level then costs more than all
	// the reads of the tree).
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
	total, rejected = memory(), map[[2]int]bool{}
	fill()

	// Exchanges: where no single level's step fits what is left — a fuse
	// width is a factor of 2 in rate, and the largest level's step can
	// be most of the budget's slack — a pair of changes may: one level
	// to another of its hull's candidates, up or down, and another to any
	// candidate. Take the pair that removes the most reads within the
	// budget, refill, and repeat while a pair helps.
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
		li.hi, lj.hi = ci, cj
		if total = memory(); total > budget {
			li.choice, lj.choice = fromI, fromJ
			li.hi, lj.hi = fromI, fromJ
			total = memory()
			break
		}
		fill()
	}

	return relaxed, plan(), relaxedReads, reads()
}

// tableCurve is what bestPlans needs of the candidates in a level whose
// tables hold n keys, all of which depends on n alone: each candidate's
// bits per key (FilterSpec.BitsPerKey(n)), the lower convex hull of
// their (bits per key, rate), the candidates by bits per key, cheapest
// first, and fewest[k], the one of byMem[:k+1] with the lowest rate. A
// level's memory and reads are its keys and runs times these: positive
// factors, which change neither which candidates are hull vertices nor
// their order (but for rounding); so a plan, made for every table a flush
// or compaction writes, scales the curve of its table size instead of
// costing each candidate and sorting them again.
type tableCurve struct {
	bitsPerKey          []float64
	hull, byMem, fewest []int
}

// curveKey identifies a tableCurve: the candidate set (its first element
// and length: bestCandidates' slice, or that slice without none) and n.
type curveKey struct {
	cands *candidate
	len   int
	n     int
}

// maxCurves bounds the curves kept: a DB plans few table sizes at a time
// (its target table size, its L0 tables', those of levels smaller than a
// table), but the last two change as the tree grows, so the cache is
// emptied when it reaches this many.
const maxCurves = 1024

var curves struct {
	sync.Mutex
	m map[curveKey]*tableCurve
}

// curveFor returns the tableCurve of cands in tables of n keys, from the
// cache or computed and kept. The curve is shared and must not be
// modified.
func curveFor(cands []candidate, n int) *tableCurve {
	key := curveKey{&cands[0], len(cands), n}
	curves.Lock()
	c, ok := curves.m[key]
	curves.Unlock()
	if ok {
		return c
	}
	c = newTableCurve(cands, n)
	curves.Lock()
	if curves.m == nil || len(curves.m) >= maxCurves {
		curves.m = make(map[curveKey]*tableCurve)
	}
	curves.m[key] = c
	curves.Unlock()
	return c
}

// newTableCurve computes the tableCurve of cands in tables of n keys.
func newTableCurve(cands []candidate, n int) *tableCurve {
	type point struct {
		bits, fpr float64
		i         int // the candidate
	}
	pts := make([]point, len(cands))
	c := &tableCurve{bitsPerKey: make([]float64, len(cands))}
	fpr := make([]float64, len(cands))
	for i, cand := range cands {
		c.bitsPerKey[i], fpr[i] = cand.spec.BitsPerKey(n), cand.fpr
		pts[i] = point{c.bitsPerKey[i], cand.fpr, i}
	}
	// One sort, by memory, then rate, serves both the hull and byMem
	// (among candidates of equal memory, the binary search over byMem
	// takes them all, so their order there does not matter). A stable
	// sort, because the candidates come in runs already sorted — each
	// family's by its parameter — which its insertion sort and merges
	// take in a few passes: a third of the time of slices.SortFunc.
	slices.SortStableFunc(pts, func(a, b point) int {
		if c := cmp.Compare(a.bits, b.bits); c != 0 {
			return c
		}
		return cmp.Compare(a.fpr, b.fpr)
	})
	c.byMem = make([]int, len(cands))
	c.fewest = make([]int, len(cands))
	for k, p := range pts {
		c.byMem[k], c.fewest[k] = p.i, p.i
		if k > 0 && fpr[c.fewest[k-1]] <= p.fpr {
			c.fewest[k] = c.fewest[k-1]
		}
	}
	c.hull = lowerHull(c.byMem, c.bitsPerKey, fpr)
	return c
}

// lowerHull returns the indices of the vertices of the lower convex hull
// of the points (mem[i], reads[i]) that no other point beats in both,
// cheapest first: the candidates some price λ ≥ 0 chooses. order lists
// the points by mem, then reads.
func lowerHull(order []int, mem, reads []float64) []int {
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

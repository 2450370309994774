package compaction

import (
	"cmp"
	"fmt"
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
// budget as FilterMemory sums it, so a plan never exceeds it. The steps
// are the methods of planner (filters_best.go): relax, then bisect, fill
// and exchange. A plan takes 0.1–0.2 ms for a tree of four levels
// (BenchmarkBestPlan), a little more for seven; each table size's costs of the candidates (a
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

// tableCurve is what the planner needs of the candidates in a level whose
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
// table), but all of them change as the tree grows — the keys of a
// TargetFileSize table follow the tables' bytes per entry, which every
// version moves a little — so the cache is emptied when it reaches this
// many. A curve of bestCandidates' 374 filters takes about 9 KB on the Go
// heap: with up to 1,024, the curves held 5.6 MB of the live heap at the
// heap's peak during a 50,000,000-key fill under a MemoryLimit of 128 MiB,
// which planned with every family; with 64, too little to show in the
// profile, and the peak's heap objects were 43.7 MB against 54.0 (one run
// each).
const maxCurves = 64

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

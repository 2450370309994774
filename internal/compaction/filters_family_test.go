package compaction

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/sstable"
)

// defaultTree returns the shape of a tree of keys entries of 16-byte keys
// and 100-byte values under the default options: L0 at its trigger, four
// tables of BaseLevelSize/4 as ProjectedShape plans it, L1, L2, … full to
// their targets (16 MiB, 160 MiB, …) and the deepest level holding the
// rest, in 2 MiB tables (TargetFileSize). In bytes, with the entries'
// size, 116 bytes, as EntrySize: the tree as it is, not as the
// projection's estimate of the entry size sees it.
func defaultTree(keys float64) Shape {
	opts := defaultOptions()
	const entry = 16 + 100
	s := Shape{L0Tables: opts.L0CompactionTrigger, TableSize: float64(opts.TargetFileSize), EntrySize: entry}
	left := keys * entry
	s.Sizes[0] = min(left, float64(opts.BaseLevelSize))
	left -= s.Sizes[0]
	for level := 1; left > 0; level++ {
		s.Sizes[level] = min(left, float64(opts.LevelTargetSize(level)))
		left -= s.Sizes[level]
	}
	return s
}

// budget is the memory BestAllocation may spend on s at avg bits per key.
func budget(s Shape, avg float64) float64 { return s.totalKeys() * avg }

// coarseCandidates returns none, Bloom filters from step to 24 bits per key
// in steps of step, and fuse filters of every width: a subset of
// BestAllocation's candidates small enough to search exhaustively.
func coarseCandidates(step float64) []candidate {
	specs := []sstable.FilterSpec{{}}
	for b := step; b <= 24; b += step {
		specs = append(specs, sstable.Bloom(b))
	}
	for w := 1; w <= 16; w++ {
		specs = append(specs, sstable.Fuse(w))
	}
	return newCandidates(specs)
}

// levelCosts returns each level's candidates' memory and reads in s, the
// levels with data in order.
func levelCosts(s Shape, cands []candidate) (mem, reads [][]float64) {
	for level := range manifest.NumLevels {
		if s.runs(level) == 0 {
			continue
		}
		var m, r []float64
		for _, c := range cands {
			m = append(m, s.keys(level)*c.spec.BitsPerKey(s.tableKeys(level)))
			r = append(r, float64(s.runs(level))*c.fpr)
		}
		mem, reads = append(mem, m), append(reads, r)
	}
	return mem, reads
}

// bruteForce returns the fewest expected reads of any combination of one
// candidate per level whose memory, summed in level order as FilterMemory
// sums it, is within the budget.
func bruteForce(s Shape, avg float64, cands []candidate) float64 {
	mem, reads := levelCosts(s, cands)
	limit := budget(s, avg)
	best := math.Inf(1)
	var search func(level int, m, r float64)
	search = func(level int, m, r float64) {
		if level == len(mem) {
			best = min(best, r)
			return
		}
		for c := range cands {
			if m+mem[level][c] <= limit {
				search(level+1, m+mem[level][c], r+reads[level][c])
			}
		}
	}
	search(0, 0, 0)
	return best
}

// lpBound solves the linear relaxation of the problem BestAllocation
// solves, where a level may take a mix of two candidates: the classic
// greedy, which starts every level at its cheapest candidate and buys the
// segments of the levels' lower convex hulls (found here by gift
// wrapping) in order of reads saved per bit, splitting the first that does
// not fit. Its minimum z bounds any combination's reads from below, and
// BestAllocation's mixed plan attains it but for the rounding of the
// split level's fraction to whole tables. The combination of the whole
// segments bought is one of the Lagrangian's candidates for the price λ
// just above the split segment's, so its answer over single candidates
// is at most z plus the reads of that one segment, step: one step of one
// level's grid. split is the split level, -1 if none.
func lpBound(s Shape, avg float64, cands []candidate) (z, step float64, split int) {
	mem, reads := levelCosts(s, cands)
	var index []int // the levels with data
	for level := range manifest.NumLevels {
		if s.runs(level) > 0 {
			index = append(index, level)
		}
	}
	type segment struct {
		level  int
		dm, dr float64
	}
	var segs []segment
	left := budget(s, avg)
	for level := range mem {
		m, r := mem[level], reads[level]
		cur := 0
		for c := range m {
			if m[c] < m[cur] || m[c] == m[cur] && r[c] < r[cur] {
				cur = c
			}
		}
		z += r[cur]
		left -= m[cur]
		for {
			next, slope := -1, 0.0
			for c := range m {
				if m[c] > m[cur] && r[c] < r[cur] {
					if sl := (r[c] - r[cur]) / (m[c] - m[cur]); next < 0 || sl < slope {
						next, slope = c, sl
					}
				}
			}
			if next < 0 {
				break
			}
			segs = append(segs, segment{index[level], m[next] - m[cur], r[cur] - r[next]})
			cur = next
		}
	}
	slices.SortStableFunc(segs, func(a, b segment) int { return -cmp.Compare(a.dr/a.dm, b.dr/b.dm) })
	for _, sg := range segs {
		if sg.dm <= left {
			z, left = z-sg.dr, left-sg.dm
			continue
		}
		return z - sg.dr*max(left, 0)/sg.dm, sg.dr, sg.level
	}
	return z, 0, -1
}

// levelTables is the number of tables of level in s, as BestAllocation
// rounds a mix's fraction to them.
func levelTables(s Shape, level int) float64 {
	if level == 0 {
		return float64(s.runs(0))
	}
	return max(1, math.Round(s.keys(level)/float64(s.tableKeys(level))))
}

// randomSmallShape returns a tree of 3 or 4 levels with data — L0 in up to
// four tables, and deeper levels from 10^3 to 10^8 keys — in tables of
// 10^2 to 10^6 keys, where a fuse filter's overhead and a Bloom filter's
// header and blocks differ.
func randomSmallShape(rng *rand.Rand, levels int) Shape {
	var s Shape
	first := rng.IntN(2) // with or without L0
	for level := first; level < first+levels; level++ {
		s.Sizes[level] = math.Pow(10, 3+5*rng.Float64())
	}
	s.L0Tables = 1 + rng.IntN(4)
	s.TableSize = math.Pow(10, 2+4*rng.Float64())
	return s
}

// TestBestMatchesBruteForce checks BestAllocation against the linear
// relaxation's optimum (lpBound), which it attains by mixing two
// candidates in one level, and an exhaustive search of every combination
// of one candidate per level, on trees of 3 and 4 levels and a coarse
// candidate grid (Bloom filters at every 1 or 2 bits per key, fuse
// filters at every width): no plan has fewer expected reads than the
// relaxation's; BestAllocation's has at most as many as the relaxation's
// plus what rounding its split level's fraction down to whole tables
// costs (the split segment's reads over the level's tables), and at most
// as many as the exhaustive optimum plus one step of one level's grid
// (its plan without mixing is that close); its own answer over its full
// grid, which holds the coarse one, is as close; and the budget is never
// exceeded.
func TestBestMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	fine := bestCandidates()
	var gaps, below []float64
	for i := range 16 {
		levels, step := 3, 1.0
		if i%4 == 0 {
			levels, step = 4, 2.0 // 29 candidates: 707,281 combinations
		}
		coarse := coarseCandidates(step)
		s := randomSmallShape(rng, levels)
		avg := 1.5 + 18*rng.Float64()
		limit := budget(s, avg)
		brute := bruteForce(s, avg, coarse)
		z, lpStep, split := lpBound(s, avg, coarse)
		if brute < z*(1-1e-9) {
			t.Fatalf("shape %+v at %.2f bits/key: brute force %.6g below the linear bound %.6g", s, avg, brute, z)
		}
		// The relaxation's plan loses at most one table's share of the
		// split segment to the rounding.
		rounding := 0.0
		if split >= 0 {
			rounding = lpStep / levelTables(s, split)
		}
		got := bestPlan(s, avg, coarse)
		reads, m := ExpectedFalsePositiveReads(s, got), FilterMemory(s, got)
		if m > limit {
			t.Errorf("shape %+v at %.2f bits/key: %v spends %.6g bits of %.6g", s, avg, got, m, limit)
		}
		if reads < z*(1-1e-9) {
			t.Errorf("shape %+v at %.2f bits/key: %v has %.6g expected reads, below the linear bound %.6g", s, avg, got, reads, z)
		}
		if bound := min(z+rounding, brute+lpStep); reads > bound*(1+1e-9)+1e-12 {
			t.Errorf("shape %+v at %.2f bits/key: %v has %.6g expected reads; the linear bound is %.6g (rounding %.3g), brute force %.6g (step %.3g)",
				s, avg, got, reads, z, rounding, brute, lpStep)
		}
		full := FiltersForLevels(s, avg, BestAllocation, nil)
		fineZ, fineStep, fineSplit := lpBound(s, avg, fine)
		fineRounding := 0.0
		if fineSplit >= 0 {
			fineRounding = fineStep / levelTables(s, fineSplit)
		}
		fullReads := ExpectedFalsePositiveReads(s, full)
		if FilterMemory(s, full) > limit || fullReads > min(fineZ+fineRounding, brute+fineStep)*(1+1e-9)+1e-12 || fullReads < fineZ*(1-1e-9) {
			t.Errorf("shape %+v at %.2f bits/key: the full grid's %v has %.6g expected reads in %.6g bits of %.6g; its linear bound %.6g (rounding %.3g), brute force over the coarse one %.6g (step %.3g)",
				s, avg, full, fullReads, FilterMemory(s, full), limit, fineZ, fineRounding, brute, fineStep)
		}
		gaps = append(gaps, reads/z-1)
		below = append(below, reads/brute-1)
	}
	slices.Sort(gaps)
	slices.Sort(below)
	t.Logf("BestAllocation over the coarse grid: reads above the linear bound by %.2g (median), %.2g (worst) of it; against the exhaustive optimum over single candidates %+.2g (median), %+.2g (worst)",
		gaps[len(gaps)/2], gaps[len(gaps)-1], below[len(below)/2], below[len(below)-1])
}

// TestBestWithinBudget checks, on random trees of up to seven levels and
// budgets from 1 to 64 bits per key, that BestAllocation never spends more
// than the budget, that at most one level mixes two filters, of which the
// first is the cheaper, at a fraction in whole tables of the level, and
// that under a prefix extractor it leaves no level without a filter.
func TestBestWithinBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	prefixed := &Options{TableOptions: sstable.WriterOptions{Prefix: &sstable.PrefixExtractor{Name: "p", Split: func(k []byte) int { return 1 }}}}
	sawNone, mixes := false, 0
	for range 60 {
		var s Shape
		for level := range s.Sizes {
			if rng.IntN(4) > 0 {
				s.Sizes[level] = math.Pow(10, 1+9*rng.Float64())
			}
		}
		s.L0Tables = rng.IntN(12)
		if rng.IntN(2) == 0 {
			s.TableSize = math.Pow(10, 1+6*rng.Float64())
		}
		avg := 1 + 63*rng.Float64()*rng.Float64()
		limit := budget(s, avg)
		got := FiltersForLevels(s, avg, BestAllocation, nil)
		if m := FilterMemory(s, got); m > limit {
			t.Fatalf("shape %+v at %.3f bits/key: %v spends %.8g bits, over the budget %.8g", s, avg, got, m, limit)
		}
		mixed := 0
		for level, f := range got {
			if err := errors.Join(f.Lo.Check(), f.Hi.Check()); err != nil || s.runs(level) == 0 && f != (LevelFilter{}) {
				t.Fatalf("shape %+v: L%d gets %v (%v)", s, level, f, err)
			}
			if !f.Mixed() {
				if f.Lo != f.Hi || f.HiFraction != 0 {
					t.Fatalf("shape %+v: L%d gets %+v, not one filter in canonical form", s, level, f)
				}
				sawNone = sawNone || s.runs(level) > 0 && f.Lo.Family == sstable.NoFilter
				continue
			}
			mixed++
			n := s.tableKeys(level)
			tables := f.HiFraction * levelTables(s, level)
			if f.HiFraction >= 1 || math.Abs(tables-math.Round(tables)) > 1e-6 || s.keys(level)*f.Lo.BitsPerKey(n) >= s.keys(level)*f.Hi.BitsPerKey(n) {
				t.Fatalf("shape %+v: L%d mixes %v (%.6g of %v tables)", s, level, f, tables, levelTables(s, level))
			}
		}
		if mixed > 1 {
			t.Errorf("shape %+v at %.3f bits/key: %d levels mix two filters: %v", s, avg, mixed, got)
		}
		mixes += mixed
		for level, f := range FiltersForLevels(s, avg, BestAllocation, prefixed) {
			if s.runs(level) > 0 && (f.Lo.Family == sstable.NoFilter || f.Hi.Family == sstable.NoFilter) {
				t.Fatalf("shape %+v at %.3f bits/key, with a prefix extractor: L%d has no filter (%v)", s, avg, level, f)
			}
		}
	}
	t.Logf("%d of 60 plans mix two filters in a level", mixes)
	if !sawNone {
		t.Log("no level went without a filter (the budgets were never that tight)")
	}
	// At 1 bit per key no filter fits the largest level whole (their
	// headers, blocks and slots cost more): without it, but for some of
	// its tables, or with a prefix extractor's cheapest filter, over the
	// budget.
	s := defaultTree(1e7)
	got := FiltersForLevels(s, 1, BestAllocation, nil)
	prefix := FiltersForLevels(s, 1, BestAllocation, prefixed)
	t.Logf("at 1 bit/key: %v; with a prefix extractor %v (%.3f bits/key)", got, prefix, FilterMemory(s, prefix)/s.totalKeys())
	if got[3].Lo != (sstable.FilterSpec{}) || prefix[3].Lo.Family == sstable.NoFilter {
		t.Errorf("at 1 bit/key the largest level gets %v, %v with a prefix extractor", got[3], prefix[3])
	}
}

// TestBestSpendsBudget checks that BestAllocation spends its budget on
// the default trees, whose largest level holds hundreds of tables: all of
// it but the rounding of a mix to whole tables (a table's share of the
// step between its two filters), where one combination of single
// filters falls short by up to a fuse width's step of the largest level
// — and with fewer expected reads than that combination.
func TestBestSpendsBudget(t *testing.T) {
	for _, keys := range []float64{1e6, 3e6, 1e7, 3e7} {
		for _, avg := range []float64{6, 8, 10, 12, 14} {
			s := defaultTree(keys)
			limit := budget(s, avg)
			got := FiltersForLevels(s, avg, BestAllocation, nil)
			_, single, _, _ := bestPlans(s, avg, bestCandidates())
			m, reads := FilterMemory(s, got), ExpectedFalsePositiveReads(s, got)
			slack := 0.0
			for level, f := range got {
				if f.Mixed() {
					n := s.tableKeys(level)
					slack += s.keys(level) * (f.Hi.BitsPerKey(n) - f.Lo.BitsPerKey(n)) / levelTables(s, level)
				}
			}
			singleReads := ExpectedFalsePositiveReads(s, single)
			t.Logf("%g keys at %v bits/key: %.4f bits/key spent, %.5f reads: %v; single filters %.4f bits/key, %.5f reads",
				keys, avg, m/s.totalKeys(), reads, planString(s, got), FilterMemory(s, single)/s.totalKeys(), singleReads)
			if m > limit || m < limit-slack-1e-9*limit {
				t.Errorf("%g keys at %v bits/key: %v spends %.6g bits of %.6g (slack %.3g)", keys, avg, got, m, limit, slack)
			}
			if reads > singleReads {
				t.Errorf("%g keys at %v bits/key: %.6g reads, more than single filters' %.6g", keys, avg, reads, singleReads)
			}
		}
	}
}

// planString renders the plan's levels with data.
func planString(s Shape, p FilterPlan) string {
	var levels []string
	for level, f := range p {
		if s.runs(level) > 0 {
			levels = append(levels, fmt.Sprintf("L%d %v", level, f))
		}
	}
	return "[" + strings.Join(levels, ", ") + "]"
}

// TestBestOnDefaultTrees compares the allocations on the default trees of
// 10^6 and 10^7 keys at 10 bits per key: BestAllocation must need at most
// 0.4 times Uniform's expected false-positive reads per absent-key Get, and
// do no worse than the progressive policy at no more memory. The
// progressive policy is put at the memory by ProgressiveOffset: the
// largest common shift of Pebble's widths whose memory is within the
// budget (the next one up exceeds it), so it is matched to within one
// step of its widths, from below; the figures of the step above are
// printed too. On the 10^6-key tree Best needs at most half of its reads.
// On the 10^7-key tree no allocation can: Best is the exhaustive optimum
// to within one step (the brute-force check below), and the shifted
// progressive widths are within 0.8 of it.
func TestBestOnDefaultTrees(t *testing.T) {
	for _, tc := range []struct {
		keys        float64
		progressive float64 // the most of the progressive policy's reads Best may need
	}{
		{1e6, 0.5},
		{1e7, 0.8},
	} {
		s := defaultTree(tc.keys)
		n := s.totalKeys()
		uniform := FiltersForLevels(s, 10, UniformAllocation, nil)
		monkey := FiltersForLevels(s, 10, OptimalAllocation, nil)
		best := FiltersForLevels(s, 10, BestAllocation, nil)
		d := ProgressiveOffset(s, 10)
		below, above := FixedPlan(ProgressiveFilters(d)), FixedPlan(ProgressiveFilters(d+1))
		row := func(name string, f FilterPlan) float64 {
			reads := ExpectedFalsePositiveReads(s, f)
			t.Logf("%g keys, %-22s %.5f false-positive reads per missing Get, %.3f bits/key: %v", tc.keys, name, reads, FilterMemory(s, f)/n, planString(s, f))
			return reads
		}
		ru := row("uniform", uniform)
		row("optimal (Monkey)", monkey)
		rp := row(fmt.Sprintf("progressive %+d", d), below)
		row(fmt.Sprintf("progressive %+d", d+1), above)
		rb := row("best", best)
		if FilterMemory(s, below) > budget(s, 10) || FilterMemory(s, above) <= budget(s, 10) {
			t.Errorf("progressive offset %d does not bracket the budget", d)
		}
		if FilterMemory(s, best) > budget(s, 10) {
			t.Errorf("best spends %.4f bits/key", FilterMemory(s, best)/n)
		}
		if rb > 0.4*ru {
			t.Errorf("%g keys: best %.5f reads, uniform %.5f: ratio %.2f, want ≤ 0.4", tc.keys, rb, ru, rb/ru)
		}
		if rb > tc.progressive*rp {
			t.Errorf("%g keys: best %.5f reads, progressive %.5f at no more memory: ratio %.2f, want ≤ %v", tc.keys, rb, rp, rb/rp, tc.progressive)
		}
		t.Logf("%g keys: best/uniform %.3f, best/progressive %.3f", tc.keys, rb/ru, rb/rp)
		// Best is the optimum over a coarse grid, to within one step,
		// and the linear relaxation's over its own, to within the
		// rounding to whole tables.
		brute := bruteForce(s, 10, coarseCandidates(2))
		z, step, split := lpBound(s, 10, bestCandidates())
		if rb > brute+step {
			t.Errorf("%g keys: best %.5f reads, brute force %.5f (step %.3g)", tc.keys, rb, brute, step)
		}
		if split >= 0 && rb > z+step/levelTables(s, split)+1e-12 {
			t.Errorf("%g keys: best %.5f reads, the linear bound %.5f (step %.3g over %v tables)", tc.keys, rb, z, step, levelTables(s, split))
		}
	}
}

func TestProgressiveFilters(t *testing.T) {
	want := [manifest.NumLevels]sstable.FilterSpec{
		sstable.Fuse(16), sstable.Fuse(16), sstable.Fuse(16), sstable.Fuse(12), sstable.Fuse(10), sstable.Fuse(8), sstable.Fuse(4),
	}
	if got := ProgressiveFilters(0); got != want {
		t.Errorf("ProgressiveFilters(0) = %v, want Pebble's %v", got, want)
	}
	for _, d := range []int{-20, -3, 5, 20} {
		for level, spec := range ProgressiveFilters(d) {
			if w := min(max(int(want[level].Bits)+d, 1), 16); spec != sstable.Fuse(w) {
				t.Errorf("ProgressiveFilters(%d)[%d] = %v, want fuse %d", d, level, spec, w)
			}
		}
	}
	// The allocation: Pebble's widths on the levels with data, whatever
	// the budget; none without filters.
	s := tenfold(3, 1e6, 2)
	for _, avg := range []float64{1, 10, 40} {
		got := FiltersForLevels(s, avg, ProgressiveAllocation, nil)
		for level, spec := range got {
			if w := want[level]; s.runs(level) > 0 && spec != Single(w) || s.runs(level) == 0 && spec != (LevelFilter{}) {
				t.Errorf("at %v bits/key L%d gets %v", avg, level, spec)
			}
		}
	}
	if got := FiltersForLevels(s, 0, ProgressiveAllocation, nil); got != (FilterPlan{}) {
		t.Errorf("no filters: %v", got)
	}
	// ProgressiveOffset brackets the budget, up to the widest filters.
	for _, avg := range []float64{2, 6, 10, 14, 20, 30} {
		s := defaultTree(1e7)
		d := ProgressiveOffset(s, avg)
		widest := d == 16-4
		if FilterMemory(s, ProgressiveFilters(d)) > budget(s, avg) || !widest && FilterMemory(s, ProgressiveFilters(d+1)) <= budget(s, avg) {
			t.Errorf("at %v bits/key: offset %d does not bracket the budget", avg, d)
		}
		if avg == 30 && !widest {
			t.Errorf("at %v bits/key: offset %d, want every width at 16", avg, d)
		}
	}
	if d := ProgressiveOffset(defaultTree(1e7), 0.5); d != 1-16 {
		t.Errorf("below any filter's cost: offset %d, want every width at 1", d)
	}
}

// TestFiltersForLevels checks the other allocations' plans, the
// LevelFilters override and FilterForLevel, which asks FiltersForLevels
// for the projected shape.
func TestFiltersForLevels(t *testing.T) {
	s := tenfold(4, 1e6, 2)
	for _, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation} {
		if got, want := FiltersForLevels(s, 10, alloc, nil), FixedPlan(bloomSpecs(BitsPerKeyForLevels(s, 10, alloc))); got != want {
			t.Errorf("%v: %v, want Bloom filters of %v", alloc, got, want)
		}
	}
	for _, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation, BestAllocation, ProgressiveAllocation} {
		if got := FiltersForLevels(s, 0, alloc, nil); got != (FilterPlan{}) {
			t.Errorf("%v without filters: %v", alloc, got)
		}
		if got := FiltersForLevels(Shape{}, 10, alloc, nil); got != (FilterPlan{}) {
			t.Errorf("%v on an empty tree: %v", alloc, got)
		}
	}
	fixed := [manifest.NumLevels]sstable.FilterSpec{sstable.Fuse(16), sstable.Bloom(12), {}, sstable.Fuse(8), sstable.Fuse(7), sstable.Fuse(6), sstable.Fuse(5)}
	got := FiltersForLevels(s, 10, BestAllocation, &Options{LevelFilters: &fixed})
	want := fixed
	want[5], want[6] = sstable.FilterSpec{}, sstable.FilterSpec{} // no data
	if got != FixedPlan(want) {
		t.Errorf("LevelFilters: %v, want %v", got, want)
	}

	// The default options, 2 MiB tables: every allocation gives every
	// level a filter. (In tables of a few dozen keys a filter's header
	// and whole blocks cost more than a level's share of the budget, and
	// BestAllocation leaves the largest levels without.)
	v := checkedVersion(t, levels{
		0: {meta(9, "a", "z", 1, 9, 4<<20)},
		1: {meta(1, "a", "z", 0, 0, 16<<20)},
		2: {meta(2, "a", "z", 0, 0, 160<<20)},
		3: {meta(3, "a", "z", 0, 0, 1600<<20)},
	})
	opts := *defaultOptions()
	for _, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation, BestAllocation, ProgressiveAllocation} {
		o := opts
		o.FilterAllocation = alloc
		var specs []LevelFilter
		for level := range 5 {
			// Below L0, the settled shape: L0's tables are not there for
			// long.
			shape := ProjectedShape(v, level, &o)
			if level > 0 {
				shape = shape.Settled()
			}
			want := FiltersForLevels(shape, 10, alloc, &o)[level]
			if got := PlanForLevel(v, level, &o); got != want {
				t.Errorf("%v L%d: PlanForLevel %v, FiltersForLevels %v", alloc, level, got, want)
			}
			for salt := range uint64(50) {
				if got := FilterForLevel(v, level, &o, salt); got != want.For(salt) || got.Check() != nil || got.Family == sstable.NoFilter {
					t.Errorf("%v L%d: FilterForLevel(%d) %v, FiltersForLevels %v", alloc, level, salt, got, want)
				}
			}
			if alloc != BestAllocation && want.Mixed() {
				t.Errorf("%v L%d: %v", alloc, level, want)
			}
			specs = append(specs, PlanForLevel(v, level, &o))
		}
		t.Logf("%v: %v", alloc, specs)
		o.LevelFilters = &fixed
		for level := range manifest.NumLevels {
			if got := FilterForLevel(v, level, &o, 1); got != fixed[level] || PlanForLevel(v, level, &o) != Single(fixed[level]) {
				t.Errorf("%v with LevelFilters, L%d: %v", alloc, level, got)
			}
		}
		o.BitsPerKey = 0 // the DB's DisableFilters wins
		for level := range manifest.NumLevels {
			if got := FilterForLevel(v, level, &o, 1); got != (sstable.FilterSpec{}) || PlanForLevel(v, level, &o) != (LevelFilter{}) {
				t.Errorf("%v with LevelFilters and no filters, L%d: %v", alloc, level, got)
			}
		}
	}
}

// TestExpectedFalsePositiveReads checks the production sum against the
// tests' own, from package bloom, for Bloom filters, and FilterMemory
// against the tables' own size formula.
func TestExpectedFalsePositiveReads(t *testing.T) {
	s := tenfold(4, 1e5, 3)
	s.TableSize = 2e4
	bits := [manifest.NumLevels]float64{14, 13.2, 0, 9.5, 7}
	if got, want := ExpectedFalsePositiveReads(s, bloomSpecs(bits)), bloomReads(s, bits); math.Abs(got-want) > 1e-15 {
		t.Errorf("ExpectedFalsePositiveReads = %v, want %v", got, want)
	}
	f := [manifest.NumLevels]sstable.FilterSpec{sstable.Fuse(12), sstable.Bloom(11), {}, sstable.Fuse(9), sstable.Fuse(7)}
	want := 3*math.Ldexp(1, -12) + f[1].ExpectedFalsePositiveRate() + 1 + math.Ldexp(1, -9) + math.Ldexp(1, -7)
	if got := ExpectedFalsePositiveReads(s, f); math.Abs(got-want) > 1e-12 {
		t.Errorf("ExpectedFalsePositiveReads(%v) = %v, want %v", f, got, want)
	}
	// L0's tables hold 1e5/3 keys each; the others are cut at 2e4.
	wantMem := 1e5*f[0].BitsPerKey(33333) + 1e5*f[1].BitsPerKey(20000) + 1e7*f[3].BitsPerKey(20000) + 1e8*f[4].BitsPerKey(20000)
	if got := FilterMemory(s, f); math.Abs(got/wantMem-1) > 1e-12 {
		t.Errorf("FilterMemory(%v) = %v, want %v", f, got, wantMem)
	}
	// The same as a plan; and with L3 mixing two filters, their mix.
	if got := FixedPlan(f); ExpectedFalsePositiveReads(s, got) != ExpectedFalsePositiveReads(s, f) || FilterMemory(s, got) != FilterMemory(s, f) {
		t.Errorf("FixedPlan(%v) costs or reads other than %v", got, f)
	}
	p := FixedPlan(f)
	p[3] = LevelFilter{Lo: sstable.Fuse(9), Hi: sstable.Fuse(10), HiFraction: 0.25}
	want += 0.25 * (math.Ldexp(1, -10) - math.Ldexp(1, -9))
	wantMem += 1e7 * 0.25 * (sstable.Fuse(10).BitsPerKey(20000) - sstable.Fuse(9).BitsPerKey(20000))
	if got := ExpectedFalsePositiveReads(s, p); math.Abs(got-want) > 1e-12 {
		t.Errorf("ExpectedFalsePositiveReads(%v) = %v, want %v", p, got, want)
	}
	if got := FilterMemory(s, p); math.Abs(got/wantMem-1) > 1e-12 {
		t.Errorf("FilterMemory(%v) = %v, want %v", p, got, wantMem)
	}
}

// counts returns the integers from lo to hi.
func counts(lo, hi int) []int {
	out := make([]int, 0, hi-lo+1)
	for n := lo; n <= hi; n++ {
		out = append(out, n)
	}
	return out
}

// TestTrivialMoveOfAFallback builds small tables under fuse and ribbon
// specs, which the writer gives the Bloom filter of the same rate, and
// checks that they may move where that spec is wanted (a rewrite would
// build the same filter again), and not where another width is.
func TestTrivialMoveOfAFallback(t *testing.T) {
	key := 0
	for _, fam := range []struct {
		spec func(w int) sstable.FilterSpec
		// sizes are tables' key counts, some of which fall back: a fuse
		// filter costs more than a Bloom filter up to some hundreds of
		// keys, a Ribbon filter (at least 128 slots) up to some dozens —
		// at 4 bits and more: at 2 its 128 slots cost less than one
		// Bloom block. Every count up to 150 finds the largest Ribbon
		// table that falls back, which fills its Bloom filter's blocks.
		sizes  []int
		widths []int
		max    int
	}{
		{sstable.Fuse, []int{100, 200, 400, 700, 1000, 1400}, []int{2, 4, 8, 12, 16}, fuse.MaxBits},
		{sstable.Ribbon, counts(1, 150), []int{4, 8, 12, 16, 24}, ribbon.MaxBits},
	} {
		for _, w := range fam.widths {
			spec := fam.spec(w)
			// The largest table that falls back, for the least rounding to
			// whole blocks. (The smallest fuse tables keep their fuse
			// filter too: a Bloom filter takes at least one 512-bit block.)
			var props sstable.Properties
			for _, n := range fam.sizes {
				if _, p := buildKeysTable(t, &key, n, spec); p.FilterFamily == sstable.BloomFamily {
					props = p
				}
			}
			if props.FilterFamily != sstable.BloomFamily {
				t.Fatalf("no table of %v falls back to Bloom", spec)
			}
			m := TableMetadata(1, 1000, &props)
			standIn := spec.StandIn()
			t.Logf("%v: %d keys get a Bloom filter of %.2f bits/key payload, %d probes; the stand-in is %v (%d probes)",
				spec, props.FilterKeys, props.FilterBitsPer, props.FilterProbes, standIn, bloom.BlockedProbes(standIn.Bits))
			if uint64(bloom.BlockedProbes(standIn.Bits)) != props.FilterProbes {
				t.Errorf("%v: the writer's Bloom filter has %d probes, the stand-in's %v %d", spec, props.FilterProbes, standIn, bloom.BlockedProbes(standIn.Bits))
			}
			if !filterSuits(m, spec) {
				t.Errorf("%v: the fallback table (%v) does not suit its own spec", spec, props.FilterBitsPer)
			}
			// Adjacent widths' stand-ins may be within the Bloom family's
			// slack of each other; three bits apart they are not.
			other := w + 3
			if other > fam.max {
				other = w - 3
			}
			if filterSuits(m, fam.spec(other)) {
				t.Errorf("%v: the fallback table suits %v", spec, fam.spec(other))
			}
		}
	}
}

// TestBestTrivialMoves checks that under BestAllocation a table moves
// where the level below wants the filter it has — where the level mixes
// two, the cheaper — and is rewritten where it wants another.
func TestBestTrivialMoves(t *testing.T) {
	// The default options: L1 16 MiB, and 2 MiB tables below, where fuse
	// and Ribbon filters pay.
	opts := with(defaultOptions(), func(o *Options) { o.FilterAllocation = BestAllocation })
	f := meta(1, "a", "c", 1, 1, 20<<20)
	v := checkedVersion(t, levels{1: {f}, 2: {meta(2, "x", "z", 1, 1, 100<<20)}})
	plan := PlanForLevel(v, 2, opts)
	want := plan.Lo
	t.Logf("L2 wants %v", plan)
	for _, tc := range []struct {
		have sstable.FilterSpec
		move bool
	}{
		{want, true},
		{plan.Hi, !plan.Mixed()},
		{sstable.FilterSpec{Family: want.Family, Bits: want.Bits + 1}, false},
		{sstable.Fuse(int(want.Bits)), want.Family == sstable.FuseFamily},
		{sstable.Ribbon(int(want.Bits)), want.Family == sstable.RibbonFamily},
		{sstable.Bloom(want.Bits), false},
		{sstable.FilterSpec{}, false},
	} {
		if want.Family != sstable.FuseFamily && want.Family != sstable.RibbonFamily {
			t.Fatalf("L2 wants %v; the cases are for a fuse or Ribbon filter", want)
		}
		f.FilterBitsPerKey, f.FilterFamily, f.FilterParam = 1.25*tc.have.Bits, uint8(tc.have.Family), tc.have.Bits
		c := Pick(v, opts, nil)
		if c == nil || c.Level != 1 || c.Filter != want || c.Filters() != plan {
			t.Fatalf("Pick = %v, want L1→L2 with %v", c, plan)
		}
		if c.IsTrivialMove() != tc.move {
			t.Errorf("a table of %v to L2: IsTrivialMove = %v, want %v", tc.have, c.IsTrivialMove(), tc.move)
		}
	}

	// A compaction to a level of two filters: its outputs get either,
	// by their numbers, as FilterForLevel gives them; a table moves there
	// with the cheaper only, whatever its number.
	mix := LevelFilter{Lo: sstable.Fuse(7), Hi: sstable.Fuse(8), HiFraction: 0.5}
	c := &Compaction{Level: 1, OutputLevel: 2, Inputs: [2][]*manifest.FileMetadata{{f}}}
	c.setFilters(mix)
	if c.Filters() != mix || c.Filter != mix.Lo {
		t.Fatalf("setFilters(%v): %v, %v", mix, c.Filters(), c.Filter)
	}
	got := map[sstable.FilterSpec]int{}
	for num := range uint64(200) {
		spec := c.OutputFilter(num)
		got[spec]++
		if spec != mix.For(num) {
			t.Errorf("output %d: %v, want %v", num, spec, mix.For(num))
		}
		for _, have := range []sstable.FilterSpec{mix.Lo, mix.Hi} {
			f.FileNum = num
			f.FilterBitsPerKey, f.FilterFamily, f.FilterParam = 1.25*have.Bits, uint8(have.Family), have.Bits
			if c.IsTrivialMove() != (have == mix.Lo) {
				t.Errorf("table %d of %v to a level of %v: IsTrivialMove = %v", num, have, mix, c.IsTrivialMove())
			}
		}
	}
	if got[mix.Lo] < 50 || got[mix.Hi] < 50 {
		t.Errorf("the outputs' filters: %v", got)
	}
	c.setFilters(Single(mix.Lo))
	if c.FilterHiFraction != 0 || c.FilterHi != (sstable.FilterSpec{}) || c.Filters() != Single(mix.Lo) {
		t.Errorf("setFilters of one filter: %+v", c)
	}
}

// TestLevelFilterFor checks the choice of a mix's filter by a table's
// number: over many numbers — consecutive ones, as flushes take them,
// and every k-th, as one level's tables get them among the others' — the
// richer filter goes to its fraction of them, within four standard
// deviations of the binomial's; a number that gets it at one fraction
// gets it at every larger one; and a level of one filter always gives
// it.
func TestLevelFilterFor(t *testing.T) {
	const n = 20000
	lo, hi := sstable.Fuse(7), sstable.Fuse(8)
	for _, x := range []float64{0.01, 0.1, 0.25, 0.5, 0.77, 0.99} {
		f := LevelFilter{Lo: lo, Hi: hi, HiFraction: x}
		for _, pattern := range []struct {
			start, stride uint64
		}{{1, 1}, {1000, 1}, {3, 7}, {2, 64}, {1 << 40, 1000003}} {
			count := 0
			for i := range uint64(n) {
				if f.For(pattern.start+i*pattern.stride) == hi {
					count++
				}
			}
			mean, sd := n*x, math.Sqrt(n*x*(1-x))
			if math.Abs(float64(count)-mean) > 4*sd {
				t.Errorf("fraction %v, numbers %d + %d·i: %d of %d get %v, want %.0f ± %.0f", x, pattern.start, pattern.stride, count, n, hi, mean, 4*sd)
			}
		}
	}
	for salt := range uint64(n) {
		prev := false
		for _, x := range []float64{0.1, 0.3, 0.5, 0.9} {
			got := LevelFilter{Lo: lo, Hi: hi, HiFraction: x}.For(salt) == hi
			if prev && !got {
				t.Fatalf("table %d gets %v at a smaller fraction than %v, not at it", salt, hi, x)
			}
			prev = got
		}
		if Single(lo).For(salt) != lo || (LevelFilter{}).For(salt) != (sstable.FilterSpec{}) {
			t.Fatalf("table %d: a level of one filter gives another", salt)
		}
	}
	if u := saltUnit(0); u < 0 || u >= 1 {
		t.Errorf("saltUnit(0) = %v", u)
	}
	if s := (LevelFilter{Lo: lo, Hi: hi, HiFraction: 0.352}).String(); s != "fuse 7-bit + 35.2% fuse 8-bit" {
		t.Errorf("String() = %q", s)
	}
	if s := Single(lo).String(); s != lo.String() {
		t.Errorf("String() = %q, want %q", s, lo.String())
	}
}

// BenchmarkBestPlan times BestAllocation's plan of a tree the bench's
// fills grow (L0 of one table, a small base level, 8,000-key tables),
// as a flush or compaction asks it: for the same shape (size=same: the
// curves of its table sizes cached) and for an L0 that grows by one key
// each plan (size=new: one curve computed each time, as new table sizes
// come).
func BenchmarkBestPlan(b *testing.B) {
	for _, grow := range []bool{false, true} {
		name := "size=same"
		if grow {
			name = "size=new"
		}
		b.Run(name, func(b *testing.B) {
			s := Shape{TableSize: 8000, L0Tables: 1}
			s.Sizes[0], s.Sizes[4], s.Sizes[5], s.Sizes[6] = 8000, 4000, 30000, 266000
			FiltersForLevels(s, 10, BestAllocation, nil) // the candidates' rates, once
			for b.Loop() {
				if grow {
					s.Sizes[0]++
				}
				FiltersForLevels(s, 10, BestAllocation, nil)
			}
		})
	}
}

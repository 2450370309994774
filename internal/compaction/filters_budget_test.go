package compaction

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/sstable"
)

// bloomGrid returns Bloom filters of 1 to most bits per key in whole
// bits: the grid the budgeted Bloom plans are checked against.
func bloomGrid(most float64) []candidate {
	var specs []sstable.FilterSpec
	for b := 1.0; b <= most; b++ {
		specs = append(specs, sstable.Bloom(b))
	}
	return newCandidates(specs)
}

// bitsOf returns a level's Bloom bits per key, the mix's where it mixes
// two.
func bitsOf(f LevelFilter) float64 { return f.mix(f.Lo.Bits, f.Hi.Bits) }

// TestFiltersWithinBudget checks FiltersWithinBudget on random trees of
// three levels under budgets below what the requested bits per key
// would cost: every plan spends at most the budget (as FilterMemory
// counts it) and has no fewer expected reads than the information-
// theoretic floor; Uniform's and Best's are Best's plan at the budget's
// average, every family a candidate, Uniform's with L0's filters Bloom
// filters of the same memory (TestBloomOfSameMemory); Optimal's are Bloom filters, the
// fewest bits per key in the largest run, within one step of one
// level's grid of the exhaustive optimum over Bloom filters of 1 to 30
// whole bits per key, as bestPlan does (TestBestMatchesBruteForce):
// its grid of tenths holds the whole bits; and a budget the requested
// bits fit leaves the plan as without one.
func TestFiltersWithinBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 38))
	var worst float64
	for i := range 24 {
		s := randomSmallShape(rng, 3)
		requested := float64(8 + rng.IntN(10))
		avg := 1.5 + (requested-2)*rng.Float64()
		limit := budget(s, avg)
		for _, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation, BestAllocation} {
			opts := &Options{BitsPerKey: requested, FilterAllocation: alloc}
			plan := FiltersWithinBudget(s, opts, limit)
			reads, m := ExpectedFalsePositiveReads(s, plan), FilterMemory(s, plan)
			if m > limit {
				t.Errorf("%d: %v at %.2f of %v bits/key on %+v: spends %.6g bits of %.6g", i, alloc, avg, requested, s, m, limit)
			}
			if floor := FamilyFalsePositiveFloor(s, avg); reads < floor*(1-1e-9) {
				t.Errorf("%d: %v: %.6g expected reads, below the floor %.6g", i, alloc, reads, floor)
			}
			if same := FiltersWithinBudget(s, opts, budget(s, requested)); same != FiltersForLevels(s, requested, alloc, nil) {
				t.Errorf("%d: %v within a budget that fits %v bits/key: %v, want %v", i, alloc, requested, same, FiltersForLevels(s, requested, alloc, nil))
			}
			if alloc != OptimalAllocation {
				want := bestPlan(s, avg, bestCandidates())
				if alloc == UniformAllocation {
					want[0] = bloomOfSameMemory(want[0], s.tableKeys(0))
				}
				if plan != want {
					t.Errorf("%d: %v within the budget: %v, want Best's plan at %.2f bits/key, %v", i, alloc, plan, avg, want)
				}
				continue
			}
			// Bloom filters only; the largest run gets the fewest bits.
			largest, fewest := -1, math.Inf(1)
			for level, f := range plan {
				if s.runs(level) == 0 {
					continue
				}
				for _, spec := range []sstable.FilterSpec{f.Lo, f.Hi} {
					if spec.Family != sstable.BloomFamily {
						t.Errorf("%d: Optimal's L%d gets %v, want Bloom filters", i, level, f)
					}
				}
				if largest < 0 || s.runSize(level) > s.runSize(largest) {
					largest = level
				}
				fewest = min(fewest, bitsOf(f))
			}
			if bitsOf(plan[largest]) != fewest {
				t.Errorf("%d: %v within the budget: %v; the largest run, L%d, does not get the fewest bits", i, alloc, plan, largest)
			}
			if avg < 1 {
				continue
			}
			grid := bloomGrid(30)
			brute := bruteForce(s, avg, grid)
			_, step, _ := lpBound(s, avg, grid)
			if reads > (brute+step)*(1+1e-9) {
				t.Errorf("%d: %v within %.2f bits/key: %v has %.6g expected reads, the exhaustive optimum over whole bits %.6g (step %.3g)", i, alloc, avg, plan, reads, brute, step)
			}
			worst = max(worst, reads/brute-1)
		}
	}
	t.Logf("Optimal's budgeted plans: at most %+.3g above the exhaustive optimum over whole bits", worst)
}

// TestBudgetFamiliesAt100M checks FiltersWithinBudget's figures for the
// default at 100,000,000 keys: the tree the peers runner leaves under a
// MemoryLimit of 128 MiB (its settled levels' bytes, 94 bytes an entry,
// tables of 2 MiB), given 3.4 bits per key for its filters (the runs'
// ended with 2.58 and 2.61). Bloom filters alone (Optimal) expect 0.29
// false-positive reads per absent-key Get, every family (the default)
// 0.16 — the rates of each plan's filters summed by
// ExpectedFalsePositiveReads, which does not plan —, both spend the
// budget and stay above the information-theoretic floor, and the
// default's deepest level gets a Ribbon filter.
func TestBudgetFamiliesAt100M(t *testing.T) {
	s := Shape{TableSize: 2 << 20, EntrySize: 94}
	s.Sizes[3], s.Sizes[4], s.Sizes[5], s.Sizes[6] = 15.8*(1<<20), 80.7*(1<<20), 810.6*(1<<20), 7.92*(1<<30)
	const avg = 3.4
	limit := budget(s, avg)
	for _, tc := range []struct {
		alloc FilterAllocation
		reads float64
	}{
		{OptimalAllocation, 0.29},
		{UniformAllocation, 0.16},
	} {
		plan := FiltersWithinBudget(s, &Options{BitsPerKey: 10, FilterAllocation: tc.alloc}, limit)
		if m := FilterMemory(s, plan); m > limit || m < limit*0.99 {
			t.Errorf("%v: spends %.4g bits of a budget of %.4g, want within 1%% below it", tc.alloc, m, limit)
		}
		reads := ExpectedFalsePositiveReads(s, plan)
		if math.Abs(reads-tc.reads) > 0.005 {
			t.Errorf("%v: %v expects %.4f false-positive reads per absent-key Get, want %.2f", tc.alloc, plan, reads, tc.reads)
		}
		if floor := FamilyFalsePositiveFloor(s, avg); reads < floor {
			t.Errorf("%v: %.4f expected reads, below the floor %.4f", tc.alloc, reads, floor)
		}
		if f := plan[6].Lo.Family; tc.alloc == UniformAllocation && f != sstable.RibbonFamily {
			t.Errorf("the default's L6 gets %v, want a Ribbon filter", plan[6])
		}
	}
}

// TestBloomOfSameMemory checks the default's L0 under a budget: a level
// planned a fuse or Ribbon filter, alone or mixed, gets the Bloom filter of
// the most bits per key on the planner's grid that costs no more in tables
// of its size — a tenth of a bit more costs more — and a level of Bloom
// filters or none keeps its plan.
func TestBloomOfSameMemory(t *testing.T) {
	for _, tc := range []struct {
		f LevelFilter
		n int
	}{
		{Single(sstable.Ribbon(12)), 100_000},
		{Single(sstable.Ribbon(3)), 20_000},
		{Single(sstable.Fuse(8)), 5_000},
		{LevelFilter{Lo: sstable.Ribbon(9), Hi: sstable.Ribbon(10), HiFraction: 0.4}, 250_000},
		{LevelFilter{Lo: sstable.Bloom(9.5), Hi: sstable.Ribbon(10), HiFraction: 0.5}, 50_000},
	} {
		cost := tc.f.cost(func(spec sstable.FilterSpec) float64 { return spec.BitsPerKey(tc.n) })
		got := bloomOfSameMemory(tc.f, tc.n)
		if got.Mixed() || got.Lo.Family != sstable.BloomFamily {
			t.Errorf("%v in tables of %d keys: %v, want one Bloom filter", tc.f, tc.n, got)
			continue
		}
		if c := got.Lo.BitsPerKey(tc.n); c > cost {
			t.Errorf("%v in tables of %d keys (%.3f bits/key): %v costs %.3f", tc.f, tc.n, cost, got, c)
		}
		if richer := sstable.Bloom(roundBits(got.Lo.Bits + bitsGrid)); richer.BitsPerKey(tc.n) <= cost {
			t.Errorf("%v in tables of %d keys (%.3f bits/key): %v, but %v costs %.3f, no more", tc.f, tc.n, cost, got, richer, richer.BitsPerKey(tc.n))
		}
	}
	for _, f := range []LevelFilter{{}, Single(sstable.Bloom(7.3)), {Lo: sstable.Bloom(4), Hi: sstable.Bloom(5), HiFraction: 0.3}} {
		if got := bloomOfSameMemory(f, 10_000); got != f {
			t.Errorf("%v: %v, want it kept", f, got)
		}
	}
}

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
// theoretic floor; Uniform's and Optimal's are Bloom filters (of at most
// the requested bits for Uniform), the fewest bits per key in the
// largest run, and come within one step of one level's grid of the
// exhaustive optimum over Bloom filters of whole bits per key (up to the
// requested bits for Uniform, up to 30 for Optimal), as bestPlan does
// (TestBestMatchesBruteForce): their grid of tenths holds the whole bits;
// Best's is its plan at the budget's average; and a budget the requested
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
			switch alloc {
			case BestAllocation:
				if want := bestPlan(s, avg, bestCandidates()); plan != want {
					t.Errorf("%d: Best within the budget: %v, want its plan at %.2f bits/key, %v", i, plan, avg, want)
				}
				continue
			}
			// Bloom filters only, of at most the requested bits for
			// Uniform; the largest run gets the fewest bits.
			largest, fewest := -1, math.Inf(1)
			for level, f := range plan {
				if s.runs(level) == 0 {
					continue
				}
				for _, spec := range []sstable.FilterSpec{f.Lo, f.Hi} {
					if spec.Family != sstable.BloomFamily || (alloc == UniformAllocation && spec.Bits > requested) {
						t.Errorf("%d: %v's L%d gets %v, want Bloom filters (of at most %v bits/key for Uniform)", i, alloc, level, f, requested)
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
			ceiling := requested
			if alloc == OptimalAllocation {
				ceiling = 30
			}
			grid := bloomGrid(ceiling)
			brute := bruteForce(s, avg, grid)
			_, step, _ := lpBound(s, avg, grid)
			if reads > (brute+step)*(1+1e-9) {
				t.Errorf("%d: %v within %.2f bits/key: %v has %.6g expected reads, the exhaustive optimum over whole bits %.6g (step %.3g)", i, alloc, avg, plan, reads, brute, step)
			}
			worst = max(worst, reads/brute-1)
		}
	}
	t.Logf("Uniform's and Optimal's budgeted plans: at most %+.3g above the exhaustive optimum over whole bits", worst)
}

package compaction

import (
	"math"
	"math/rand/v2"
	"testing"
)

// plannerCase is a random tree, budget and candidate set for the
// planner's steps: 1 to 6 levels with data, 0.5 to 24 bits per key, over
// the coarse grid or BestAllocation's own candidates.
func plannerCase(rng *rand.Rand, i int) (Shape, float64, []candidate) {
	s := randomSmallShape(rng, 1+rng.IntN(6))
	cands := coarseCandidates(1 + float64(rng.IntN(2)))
	if i%2 == 1 {
		cands = bestCandidates()
	}
	return s, 0.5 + 23.5*rng.Float64(), cands
}

// TestPlannerRelax checks relax against the linear relaxation's optimum
// z (lpBound, computed by its own greedy over hulls found by gift
// wrapping): its plan spends at most the budget, mixes at most one level,
// and has z's expected reads, but for at most one table's share of the
// split segment lost to rounding the mix to whole tables; its reads are
// ExpectedFalsePositiveReads of its plan. Without a candidate of no cost
// and a budget below the cheapest, it reports +Inf.
func TestPlannerRelax(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	for i := range 40 {
		s, avg, cands := plannerCase(rng, i)
		plan, reads := newPlanner(s, avg, cands).relax()
		z, step, split := lpBound(s, avg, cands)
		rounding := 0.0
		if split >= 0 {
			rounding = step / levelTables(s, split)
		}
		mixed := 0
		for _, f := range plan {
			if f.Mixed() {
				mixed++
			}
		}
		switch want := ExpectedFalsePositiveReads(s, plan); {
		case FilterMemory(s, plan) > budget(s, avg):
			t.Errorf("%+v at %.2f bits/key: %v spends %.6g bits of %.6g", s, avg, plan, FilterMemory(s, plan), budget(s, avg))
		case mixed > 1:
			t.Errorf("%+v at %.2f bits/key: %v mixes %d levels", s, avg, plan, mixed)
		case math.Abs(reads-want) > 1e-9*want:
			t.Errorf("%+v at %.2f bits/key: relax reports %.9g reads, its plan %v has %.9g", s, avg, reads, plan, want)
		case reads < z*(1-1e-9) || reads > (z+rounding)*(1+1e-9)+1e-12:
			t.Errorf("%+v at %.2f bits/key: %.6g reads, want within [z, z+rounding] = [%.6g, %.6g]", s, avg, reads, z, z+rounding)
		}
	}
	s := defaultTree(1e6)
	if plan, reads := newPlanner(s, 0.01, bestCandidates()[1:]).relax(); !math.IsInf(reads, 1) || plan != (FilterPlan{}) {
		t.Errorf("a budget below every filter, no none: %v, %v reads; want no plan, +Inf", plan, reads)
	}
}

// oracleChoice returns, for each level's memory and reads (levelCosts),
// the candidate minimizing reads + λ·memory over all candidates, the
// cheapest on a tie, and the sum of their memory in level order.
func oracleChoice(mem, reads [][]float64, lambda float64) (choice []int, total float64) {
	for l := range mem {
		best := 0
		for c := range mem[l] {
			v, b := reads[l][c]+lambda*mem[l][c], reads[l][best]+lambda*mem[l][best]
			if v < b || v == b && mem[l][c] < mem[l][best] {
				best = c
			}
		}
		choice = append(choice, best)
		total += mem[l][best]
	}
	return choice, total
}

// TestPlannerBisect checks bisect against the Lagrangian computed over
// every candidate rather than the hulls: at the price λ it returns, each
// level's choice minimizes reads + λ·memory, the choices fit the budget,
// and at a price a millionth lower they do not (unless λ is 0: the
// fewest reads of every level fit).
func TestPlannerBisect(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 2))
	for i := range 40 {
		s, avg, cands := plannerCase(rng, i)
		p := newPlanner(s, avg, cands)
		lambda := p.bisect()
		mem, reads := levelCosts(s, cands)
		want, _ := oracleChoice(mem, reads, lambda)
		for l, pl := range p.levels {
			got, min := reads[l][pl.choice]+lambda*mem[l][pl.choice], reads[l][want[l]]+lambda*mem[l][want[l]]
			if got > min*(1+1e-9) || pl.frac != 0 {
				t.Errorf("%+v at %.2f bits/key, λ %.6g: level L%d took %v (cost %.9g), the minimum is %v (%.9g)",
					s, avg, lambda, pl.index, cands[pl.choice].spec, got, cands[want[l]].spec, min)
			}
		}
		if m := FilterMemory(s, p.plan()); m > budget(s, avg) {
			t.Errorf("%+v at %.2f bits/key: λ %.6g spends %.6g bits of %.6g", s, avg, lambda, m, budget(s, avg))
		}
		if _, below := oracleChoice(mem, reads, lambda*(1-1e-6)); lambda > 0 && below <= budget(s, avg) {
			t.Errorf("%+v at %.2f bits/key: λ %.6g is not the smallest price that fits: a millionth lower spends %.6g bits of %.6g",
				s, avg, lambda, below, budget(s, avg))
		}
	}
}

// planAt returns p's plan with level l (an index into p.levels) at
// candidate c instead of its choice.
func planAt(p *planner, l, c int) FilterPlan {
	plan := p.plan()
	plan[p.levels[l].index] = Single(p.cands[c].spec)
	return plan
}

// TestPlannerFill starts from random choices within the budget and checks
// that fill leaves no single change of one level that removes reads and
// fits the budget (by FilterMemory, with a margin for the rounding of
// fill's running total), that it removes reads or leaves them, and that
// its plan fits the budget.
func TestPlannerFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 3))
	for i := range 40 {
		s, avg, cands := plannerCase(rng, i)
		p := newPlanner(s, avg, cands)
		limit := budget(s, avg)
		for _, l := range p.levels {
			l.choice, l.hi = l.hull[0], l.hull[0] // the cheapest: none
		}
		for _, l := range p.levels {
			c := rng.IntN(len(cands))
			if l.choice, l.hi = c, c; p.memory() > limit {
				l.choice, l.hi = l.hull[0], l.hull[0]
			}
		}
		before := p.reads()
		p.total, p.rejected = p.memory(), map[[2]int]bool{}
		p.fill()
		plan := p.plan()
		if m := FilterMemory(s, plan); m > limit || p.reads() > before {
			t.Errorf("%+v at %.2f bits/key: fill made %v, %.6g bits of %.6g, %.6g reads from %.6g", s, avg, plan, m, limit, p.reads(), before)
		}
		for l, pl := range p.levels {
			for c := range cands {
				if pl.reads[c] < pl.reads[pl.choice] && FilterMemory(s, planAt(p, l, c)) <= limit*(1-1e-9) {
					t.Errorf("%+v at %.2f bits/key: after fill %v, L%d may still take %v within the budget",
						s, avg, plan, pl.index, cands[c].spec)
				}
			}
		}
	}
}

// TestPlannerExchange runs exchange after bisect and fill, as single
// does, and checks that it never adds reads nor exceeds the budget, and
// that where it reports convergence no pair of changes — one level to
// another of its hull's candidates, another to any candidate — removes a
// billionth of the reads within the budget (costs by levelCosts, from the
// specs, with a margin for the rounding of the running total). Most cases
// converge.
func TestPlannerExchange(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 4))
	const cases = 40
	converged := 0
	for i := range cases {
		s, avg, cands := plannerCase(rng, i)
		p := newPlanner(s, avg, cands)
		limit := budget(s, avg)
		p.bisect()
		p.total, p.rejected = p.memory(), map[[2]int]bool{}
		p.fill()
		before := p.reads()
		done := p.exchange()
		plan, reads := p.plan(), p.reads()
		if m := FilterMemory(s, plan); m > limit || reads > before {
			t.Errorf("%+v at %.2f bits/key: exchange made %v, %.6g bits of %.6g, %.6g reads from %.6g", s, avg, plan, m, limit, reads, before)
		}
		if !done {
			continue
		}
		converged++
		mem, rd := levelCosts(s, cands)
		choice := make([]int, len(p.levels))
		for l, pl := range p.levels {
			choice[l] = pl.choice
		}
		// sum returns the memory and reads of the choices with level a at
		// c and b at d, summed in level order as FilterMemory sums them.
		sum := func(a, c, b, d int) (m, r float64) {
			for l, ch := range choice {
				switch l {
				case a:
					ch = c
				case b:
					ch = d
				}
				m, r = m+mem[l][ch], r+rd[l][ch]
			}
			return m, r
		}
		for a, la := range p.levels {
			for _, c := range la.hull {
				for b, lb := range p.levels {
					for d := range cands {
						if m, r := sum(a, c, b, d); b != a && m <= limit*(1-1e-9) && r < reads*(1-1e-9) {
							t.Errorf("%+v at %.2f bits/key: exchange converged at %v (%.6g reads), but L%d → %v, L%d → %v has %.6g",
								s, avg, plan, reads, la.index, cands[c].spec, lb.index, cands[d].spec, r)
						}
					}
				}
			}
		}
	}
	if converged < cases/2 {
		t.Errorf("exchange converged in %d of %d cases, want most", converged, cases)
	}
}

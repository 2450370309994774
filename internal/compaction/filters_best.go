package compaction

import (
	"cmp"
	"math"
	"slices"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

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
	p := newPlanner(s, avg, cands)
	relaxed, relaxedReads = p.relax()
	single, singleReads = p.single()
	return relaxed, single, relaxedReads, singleReads
}

// planner solves BestAllocation's problem for one tree: the levels with
// data, each with its candidates' costs and its current choice, and the
// budget. Its steps — relax, bisect, fill, exchange — change the choices;
// memory, reads and plan read them.
type planner struct {
	cands  []candidate
	levels []*planLevel
	budget float64 // bits: the tree's keys times the average bits per key
	// total is the memory of the choices as memory sums it, kept by the
	// steps between their checks.
	total float64
	// rejected holds the changes (level index, candidate) that fill made
	// and undid, the running total having let them through by a rounding;
	// fill tries them no more. A plan starts it empty.
	rejected map[[2]int]bool
}

// planLevel is one level with data in a planner: each candidate's memory
// (bits) and expected reads in the level, and the lower convex hull of
// those points, which is all the price's choice and the relaxation need
// (a linear cost is least at a vertex, and ties go to the cheaper, a
// vertex too).
type planLevel struct {
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

// newPlanner returns the planner of tree s at avg bits per key over cands,
// with each level's costs scaled from its table size's curve (curveFor).
func newPlanner(s Shape, avg float64, cands []candidate) *planner {
	p := &planner{cands: cands, budget: s.totalKeys() * avg}
	for i := range manifest.NumLevels {
		if s.runs(i) == 0 {
			continue
		}
		l := &planLevel{index: i, mem: make([]float64, len(cands)), reads: make([]float64, len(cands))}
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
		p.levels = append(p.levels, l)
	}
	return p
}

// memory sums the chosen memory in level order, as FilterMemory does
// (LevelFilter.mix included), so that the check against the budget is
// FilterMemory's.
func (p *planner) memory() float64 {
	var m float64
	for _, l := range p.levels {
		m += LevelFilter{HiFraction: l.frac}.mix(l.mem[l.choice], l.mem[l.hi])
	}
	return m
}

// reads sums the chosen expected reads likewise.
func (p *planner) reads() float64 {
	var r float64
	for _, l := range p.levels {
		r += LevelFilter{HiFraction: l.frac}.mix(l.reads[l.choice], l.reads[l.hi])
	}
	return r
}

// plan returns the choices as a FilterPlan.
func (p *planner) plan() FilterPlan {
	var fp FilterPlan
	for _, l := range p.levels {
		fp[l.index] = Single(p.cands[l.choice].spec)
		if l.frac > 0 {
			fp[l.index] = LevelFilter{Lo: p.cands[l.choice].spec, Hi: p.cands[l.hi].spec, HiFraction: l.frac}
		}
	}
	return fp
}

// relax solves the knapsack's linear relaxation (see FiltersForLevels) and
// returns its plan and expected reads: every level starts at its cheapest
// hull vertex; the hull segments of all levels are bought in order of
// reads removed per bit until one does not fit whole, whose level mixes
// its two vertices at the fraction, in whole tables, that the budget
// leaves — or, if not one of its tables fits, stays, and the next
// segments, of other levels, are tried; then fill spends what the
// rounding to whole tables left. At most one level mixes. The reads are
// +Inf, and the plan the zero FilterPlan, if even the cheapest vertices
// exceed the budget.
func (p *planner) relax() (FilterPlan, float64) {
	for _, l := range p.levels {
		l.choice, l.hi, l.frac = l.hull[0], l.hull[0], 0
	}
	p.rejected = map[[2]int]bool{}
	if p.total = p.memory(); p.total > p.budget {
		return FilterPlan{}, math.Inf(1)
	}
	type segment struct {
		l     *planLevel
		k     int     // from l.hull[k] to l.hull[k+1]
		slope float64 // reads per bit, < 0
	}
	var segs []segment
	for _, l := range p.levels {
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
		if p.total = p.memory(); p.total <= p.budget {
			continue
		}
		// The first segment that does not fit whole: the fraction
		// of the level's keys the rest of the budget buys at to,
		// in whole tables, rounded down (and down again while a
		// rounding of the sum exceeds the budget).
		l.choice, l.hi = from, from
		left := p.budget - p.memory()
		l.hi, l.frac = to, math.Floor(left/(l.mem[to]-l.mem[from])*l.tables)/l.tables
		for l.frac > 0 && p.memory() > p.budget {
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
	p.total = p.memory()
	p.fill() // what the rounding to whole tables left
	return p.plan(), p.reads()
}

// single returns the best plan it finds of one candidate per level and its
// expected reads: the Lagrangian's choices at the smallest price that fits
// (bisect), the rest of the budget spent (fill), then pairs of changes
// exchanged while one removes reads (exchange).
func (p *planner) single() (FilterPlan, float64) {
	p.bisect()
	p.total, p.rejected = p.memory(), map[[2]int]bool{}
	p.fill()
	p.exchange()
	return p.plan(), p.reads()
}

// pick sets each level's choice to its candidate minimizing
// reads + λ·memory, the first of the hull's on a tie (the cheaper), and
// ends every mix.
func (p *planner) pick(lambda float64) {
	for _, l := range p.levels {
		best := l.hull[0]
		for _, c := range l.hull[1:] {
			if l.reads[c]+lambda*l.mem[c] < l.reads[best]+lambda*l.mem[best] {
				best = c
			}
		}
		l.choice, l.hi, l.frac = best, best, 0
	}
}

// bisect picks (pick) at the smallest price λ per bit whose choices fit
// the budget, and returns λ: 0 if the fewest reads of every level fit,
// else e^x with x bisected in [−80, 80] to 64 steps — at e^80 reads per
// bit every level takes its cheapest candidate (a bit of any level then
// costs more than all the reads of the tree). Memory falls as λ rises, so
// the choices at any smaller price exceed the budget.
func (p *planner) bisect() float64 {
	p.pick(0)
	if p.memory() <= p.budget {
		return 0
	}
	lo, hi := -80.0, 80.0
	for range 64 {
		mid := (lo + hi) / 2
		p.pick(math.Exp(mid))
		if p.memory() > p.budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	p.pick(math.Exp(hi))
	return math.Exp(hi)
}

// fill is the greedy repair: it spends what the choices leave of the
// budget on the levels that do not mix, a step at a time, each the single
// change of one level's candidate that removes the most reads per bit (one
// as cheap or cheaper first) and still fits. Every step lowers one level's
// reads, so there are at most as many as candidates per level. A step is
// checked against the budget as FilterMemory sums it (memory); one the
// running total let through by a rounding is undone and rejected. It
// needs p.total to be the choices' memory.
func (p *planner) fill() {
	for p.total <= p.budget {
		var up *planLevel
		upTo, upScore := 0, 0.0
		for _, l := range p.levels {
			if l.frac > 0 {
				continue
			}
			cur := l.choice
			for c := range p.cands {
				gain := l.reads[cur] - l.reads[c]
				if !(gain > 0) || p.total-l.mem[cur]+l.mem[c] > p.budget || len(p.rejected) > 0 && p.rejected[[2]int{l.index, c}] {
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
		if p.total = p.memory(); p.total > p.budget {
			up.choice, up.hi = from, from
			p.total = p.memory()
			p.rejected[[2]int{up.index, upTo}] = true
		}
	}
}

// exchange improves a plan of one candidate per level where no single
// level's step fits what is left — a fuse width is a factor of 2 in rate,
// and the largest level's step can be most of the budget's slack — by a
// pair of changes that does: one level to another of its hull's
// candidates, up or down, and another to the candidate with the fewest
// reads within the memory the first leaves. It takes the pair that
// removes the most reads within the budget (at least a 10^−12 part of
// them), refills (fill), and repeats, at most 4 times per level. It
// reports whether it stopped because no pair removed reads; it stops too
// when a pair's sum, as memory makes it, exceeds the budget (undone). It
// needs p.total to be the choices' memory.
func (p *planner) exchange() (converged bool) {
	for range 4 * len(p.levels) {
		var li, lj *planLevel
		var ci, cj int
		best := -1e-12 * p.reads() // the least improvement worth a step
		for _, a := range p.levels {
			for _, c := range a.hull {
				if c == a.choice {
					continue
				}
				ta := p.total - a.mem[a.choice] + a.mem[c]
				da := a.reads[c] - a.reads[a.choice]
				for _, b := range p.levels {
					if b == a {
						continue
					}
					// b's best candidate within what a leaves.
					room := p.budget - ta + b.mem[b.choice]
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
			return true
		}
		fromI, fromJ := li.choice, lj.choice
		li.choice, lj.choice = ci, cj
		li.hi, lj.hi = ci, cj
		if p.total = p.memory(); p.total > p.budget {
			li.choice, lj.choice = fromI, fromJ
			li.hi, lj.hi = fromI, fromJ
			p.total = p.memory()
			return false
		}
		p.fill()
	}
	return false
}

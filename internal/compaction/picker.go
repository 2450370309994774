package compaction

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// lastLevel is the deepest level. It is never compacted by the picker: there
// is no level below it to compact into.
const lastLevel = manifest.NumLevels - 1

// Scores returns each level's compaction score in v, whose targets are t
// (TargetsOf): for L0 its number of tables over L0CompactionTrigger (every
// L0 table costs every read a probe, so L0 is limited by count, not size);
// for the levels from the base level to L5 their size over their target.
// The last level scores 0: it has nowhere to go; so do the levels above the
// base level, which are empty. A level whose score is at least 1 needs
// compacting.
func Scores(v *manifest.Version, t Targets, opts *Options) [manifest.NumLevels]float64 {
	var s [manifest.NumLevels]float64
	s[0] = float64(v.NumFiles(0)) / float64(opts.L0CompactionTrigger)
	for level := t.Base; level < lastLevel; level++ {
		s[level] = float64(v.LevelDataSize(level)) / float64(t.Size[level])
	}
	return s
}

// Pick returns the compaction the version needs most that can run beside
// the running ones, or nil if there is none: no level scores at least 1,
// every one that does conflicts with a running compaction, or the running
// ones take every slot.
//
// Order. The levels that score at least 1 are tried by their score over
// the score of the level they compact into (the base level for L0; at
// least 0.01; the last level counts 1), highest first, ties to the
// shallower level — as Pebble does: a level whose output level is itself
// far over its target waits, and the bottom of the tree drains first.
// Ordered by their own scores, a backlog makes the levels near the top win
// every time — they swell fastest relative to their targets — and data
// piles up there: an overfull base level makes every L0 compaction rewrite
// all of it, while the compactions into the bottom level starve. From
// L0SlowdownTrigger tables, where writes are paced, L0 comes first.
//
// From L0 it takes every table into the base level: they overlap, and a
// lookup probes them all, so compacting all of them at once is what
// shortens L0 — save from L0SlowdownTrigger tables while the base level,
// past its target, outranks L0, when it merges L0's newest tables into one
// L0 table, or waits for them (intraL0Due). From a deeper level it takes
// the one table whose overlap with the next level is the smallest fraction
// of its own size (ties to the first in key order) among those that
// conflict with no running compaction: the table that moves the most bytes
// down per byte rewritten, which keeps write amplification low and needs no
// state between calls (unlike LevelDB's round-robin compaction pointer).
// Either way the output level's tables that overlap the inputs' key range
// join them (but for a merge of L0 into itself).
//
// Concurrency. Up to Slots(v, opts) compactions run at once: one while L0
// is low, up to opts.MaxConcurrentCompactions as it grows (while one may,
// L0 takes its turn by priority like any level). When two or more may,
// one is kept for L0: compactions of deeper levels take at most all but
// one slot, so that an L0 compaction never waits for a slot behind
// compactions deeper down — it waits only for a
// running compaction of the base level that holds a table it needs, one
// table's worth of work. One exception is a wait of that same kind: while
// the base level outranks a due L0 that is below L0SlowdownTrigger, or
// one that waits for tables to merge into itself (intraL0Due), a
// compaction of the base level may take L0's slot. An L0 compaction holds
// every base table its tables overlap — all of them, under random writes
// — for its whole run; were L0 always to take its slot back at once, the
// base level's compactions, which need those tables too, would run only
// in the moments between two L0 compactions, so the base level swelled
// far past its target and every L0 compaction rewrote all of it. (In a
// 10,000,000-key random fill at the peers runner's settings: 3.1 bytes of
// the base level rewritten per byte of L0 without the exception, 1.4 with
// it, and 8% fewer bytes written by flushes and compactions by the fill's
// end.) L0 then waits for base-level compactions of a table each, as it
// would for a busy table, and from the slowdown trigger on it goes first.
//
// At most one L0 compaction runs at a time: one takes every L0 table
// there is, and L0 tables flushed while it runs are newer than all its
// inputs, so they may stay above its outputs. A
// candidate conflicts with a running compaction if they share an input
// table, or if their key ranges overlap and one's output level is the
// other's input or output level (conflicts). Flushes never conflict: they
// only add L0 tables newer than every compaction's.
func Pick(v *manifest.Version, opts *Options, running []*Compaction) *Compaction {
	slots := Slots(v, opts)
	if len(running) >= slots {
		return nil
	}
	busy := map[uint64]bool{}
	l0Running, deeperRunning := false, 0
	for _, r := range running {
		if r.Level == 0 {
			l0Running = true
		} else {
			deeperRunning++
		}
		for _, files := range r.Inputs {
			for _, f := range files {
				busy[f.FileNum] = true
			}
		}
	}
	deeperAllowed := slots == 1 || deeperRunning < slots-1

	t := TargetsOf(v, opts)
	scores := Scores(v, t, opts)
	// The base level may take L0's slot while it outranks a due L0 that
	// is below the slowdown trigger (see the doc above).
	baseMayTakeL0Slot := scores[0] >= 1 && v.NumFiles(0) < opts.L0SlowdownTrigger
	for _, level := range byPriority(v, t, scores, opts) {
		if level == 0 {
			baseMayTakeL0Slot = false // L0 outranks every level after it
			if l0Running {
				continue
			}
			if intraL0Due(v, t, scores, opts) {
				if c := intraL0(v, opts); c != nil {
					return c.chosen(v, scores[0], opts)
				}
				// L0 waits for a run to merge (see intraL0Due),
				// and the base level, which outranks it, may
				// take its slot.
				baseMayTakeL0Slot = true
				continue
			}
			c := candidateOf(v, 0, t.Base, slices.Clone(v.Levels[0]))
			if !conflictsAny(c, running, busy) {
				return c.chosen(v, scores[0], opts)
			}
			continue
		}
		if !deeperAllowed && (level != t.Base || !baseMayTakeL0Slot) {
			continue
		}
		for _, f := range byOverlap(v, level) {
			if busy[f.FileNum] {
				continue
			}
			c := candidateOf(v, level, level+1, []*manifest.FileMetadata{f})
			if !conflictsAny(c, running, busy) {
				return c.chosen(v, scores[level], opts)
			}
		}
	}
	if !deeperAllowed {
		return nil
	}
	return pickBlobRewrite(v, opts, running, busy)
}

// Slots returns how many compactions may run at once in v: up to
// MaxConcurrentCompactions, and with L0CompactionConcurrency set, one
// while L0 holds fewer than L0CompactionTrigger+L0CompactionConcurrency
// tables and one more for each L0CompactionConcurrency tables beyond (as
// Pebble's L0CompactionConcurrency). Compactions share the cores with the
// writes: while L0 is low the tree keeps up with one, and each compaction
// more takes CPU from the writers. Once L0 grows the slots open, so that
// L0 waits behind a compaction deeper down for at most
// L0CompactionConcurrency tables' worth of flushes, then takes a slot of
// its own.
func Slots(v *manifest.Version, opts *Options) int {
	most := max(opts.MaxConcurrentCompactions, 1)
	if opts.L0CompactionConcurrency <= 0 {
		return most
	}
	return min(most, 1+max(0, v.NumFiles(0)-opts.L0CompactionTrigger)/opts.L0CompactionConcurrency)
}

// byPriority returns the levels that score at least 1 in the order Pick
// tries them.
func byPriority(v *manifest.Version, t Targets, scores [manifest.NumLevels]float64, opts *Options) []int {
	var levels []int
	var priority [manifest.NumLevels]float64
	for level := range lastLevel {
		if scores[level] < 1 {
			continue
		}
		priority[level] = rank(level, t, scores)
		if level == 0 && v.NumFiles(0) >= opts.L0SlowdownTrigger {
			priority[level] = math.Inf(1)
		}
		levels = append(levels, level)
	}
	slices.SortStableFunc(levels, func(a, b int) int { return cmp.Compare(priority[b], priority[a]) })
	return levels
}

// rank returns level's score over the score of the level it compacts
// into (the base level for L0; at least 0.01; the last level counts 1):
// the order of byPriority, before L0's precedence from the slowdown
// trigger.
func rank(level int, t Targets, scores [manifest.NumLevels]float64) float64 {
	const minNext = 0.01
	next := 1.0
	switch {
	case level == 0 && t.Base < lastLevel:
		next = max(scores[t.Base], minNext)
	case level > 0 && level+1 < lastLevel:
		next = max(scores[level+1], minNext)
	}
	return scores[level] / next
}

// conflictsAny reports whether c conflicts with one of running, whose
// input tables are busy.
func conflictsAny(c *Compaction, running []*Compaction, busy map[uint64]bool) bool {
	for _, files := range c.Inputs {
		for _, f := range files {
			if busy[f.FileNum] {
				return true
			}
		}
	}
	for _, r := range running {
		if conflicts(c, r) {
			return true
		}
	}
	return false
}

// conflicts reports whether compactions a and b, disjoint in their input
// tables, may not run together: their key ranges overlap and one writes
// into a level the other reads or writes. Two such compactions could put
// overlapping tables into one level, or one could miss a table the other
// adds to a level it reads. (Within the rules of Pick such a pair always
// shares an input table too — the output level's overlapping tables are
// inputs — but the range test does not rely on it.)
func conflicts(a, b *Compaction) bool {
	if bytes.Compare(a.Largest, b.Smallest) < 0 || bytes.Compare(b.Largest, a.Smallest) < 0 {
		return false
	}
	return a.OutputLevel == b.OutputLevel || a.OutputLevel == b.Level || a.Level == b.OutputLevel
}

// byOverlap returns the tables of level (1 or deeper, not empty) ordered by
// the ratio of their overlapping bytes in the next level to their own size,
// smallest first, ties in key order.
func byOverlap(v *manifest.Version, level int) []*manifest.FileMetadata {
	files := slices.Clone(v.Levels[level])
	ratio := make(map[uint64]float64, len(files))
	for _, f := range files {
		var overlap uint64
		for _, g := range v.Overlapping(level+1, f.Smallest.UserKey, f.Largest.UserKey) {
			overlap += g.Size
		}
		ratio[f.FileNum] = float64(overlap) / float64(max(f.Size, 1))
	}
	slices.SortStableFunc(files, func(a, b *manifest.FileMetadata) int {
		return cmp.Compare(ratio[a.FileNum], ratio[b.FileNum])
	})
	return files
}

// PickManual returns the next step of compacting the user-key range
// [lo, hi] (inclusive; hi == nil means no upper bound, so pass []byte{} for
// the empty key) down to the deepest level that holds any of it, or nil
// when nothing in the range is above that level. The DB's Compact(lo, hi)
// runs the steps until nil:
//
//	for c := PickManual(v, lo, hi, opts); c != nil; c = PickManual(v, lo, hi, opts) {
//		run c, install its edit, v = the new current version
//	}
//
// Each step takes the shallowest level with tables in the range and moves
// every one of them (for L0, every table overlapping them, transitively)
// into the next level with that level's overlapping tables. Data only moves
// down, so the loop ends — unless writes keep adding L0 tables to the range
// as fast as it compacts them; a DB that cares bounds the loop.
//
// Data already in the deepest level stays as it is: there is no level below
// to merge it with, so its tombstones, which had nothing below them to hide
// when they got there, were dropped then. L0 is the exception: its tables
// overlap, so data only in L0 moves to L1 to become one sorted run.
func PickManual(v *manifest.Version, lo, hi []byte, opts *Options) *Compaction {
	if hi == nil {
		hi = largestUserKey(v)
		if hi == nil {
			return nil // the version is empty
		}
	}
	if bytes.Compare(lo, hi) > 0 {
		return nil
	}
	deepest := -1
	for level := lastLevel; level >= 0 && deepest < 0; level-- {
		if len(v.Overlapping(level, lo, hi)) > 0 {
			deepest = level
		}
	}
	base := TargetsOf(v, opts).Base
	if deepest == 0 {
		deepest = base // L0 is not one run: merge it into the base level
	}
	for level := 0; level < deepest; level++ {
		var inputs []*manifest.FileMetadata
		output := level + 1
		if level == 0 {
			inputs, output = l0Closure(v, lo, hi), base
		} else {
			inputs = slices.Clone(v.Overlapping(level, lo, hi))
		}
		if len(inputs) == 0 {
			continue
		}
		c := newCompaction(v, level, output, inputs, opts)
		c.Manual = true
		return c
	}
	return nil
}

// l0Closure returns the L0 tables overlapping [lo, hi], widened until no
// other L0 table overlaps the union of their ranges, in L0 order. A table
// left out overlaps none of the chosen ones, so moving these down never
// puts a version of a key below an older version left in L0.
func l0Closure(v *manifest.Version, lo, hi []byte) []*manifest.FileMetadata {
	for {
		files := v.Overlapping(0, lo, hi)
		if len(files) == 0 {
			return nil
		}
		nlo, nhi := keyRange(files)
		if bytes.Compare(nlo, lo) >= 0 && bytes.Compare(nhi, hi) <= 0 {
			return files
		}
		lo, hi = minBytes(lo, nlo), maxBytes(hi, nhi)
	}
}

// newCompaction completes a compaction of inputs (tables of level) into
// output, the next level or, from L0, the base level (the levels between
// are empty): the output level's overlapping tables, the key range, the
// bottommost flag, and what the outputs get (complete).
func newCompaction(v *manifest.Version, level, output int, inputs []*manifest.FileMetadata, o *Options) *Compaction {
	c := candidateOf(v, level, output, inputs)
	c.complete(v, o)
	return c
}

// chosen completes a candidate Pick returns: its score and what its
// outputs get, their filters planned only for the one chosen — under
// BestAllocation a plan is a small optimization, too dear to make for
// every candidate a running compaction rules out.
func (c *Compaction) chosen(v *manifest.Version, score float64, o *Options) *Compaction {
	c.Score = score
	c.complete(v, o)
	return c
}

// complete sets what c's outputs get from v and o: their filters, their
// compression, and the grandparents their cuts follow.
func (c *Compaction) complete(v *manifest.Version, o *Options) {
	c.setFilters(PlanForLevel(v, c.OutputLevel, o))
	c.Compression = o.OutputCompression(c)
	c.RelocateBlobs = relocatable(v, o)
	if c.OutputLevel > 0 && c.OutputLevel < lastLevel {
		c.Grandparents = slices.Clone(v.Overlapping(c.OutputLevel+1, c.Smallest, c.Largest))
	}
}

// candidateOf is newCompaction without the filters: what the conflict checks
// look at.
func candidateOf(v *manifest.Version, level, output int, inputs []*manifest.FileMetadata) *Compaction {
	c := &Compaction{Level: level, OutputLevel: output}
	c.Inputs[0] = inputs
	lo, hi := keyRange(inputs)
	c.Inputs[1] = slices.Clone(v.Overlapping(output, lo, hi))
	c.Smallest, c.Largest = keyRange(c.Inputs[0], c.Inputs[1])
	c.Bottommost = bottommost(v, output, c.Smallest, c.Largest)
	return c
}

// bottommost reports whether no level of v below output has a table
// overlapping [lo, hi] (Compaction.Bottommost).
func bottommost(v *manifest.Version, output int, lo, hi []byte) bool {
	for below := output + 1; below < manifest.NumLevels; below++ {
		if len(v.Overlapping(below, lo, hi)) > 0 {
			return false
		}
	}
	return true
}

// largestUserKey returns the largest user key in the version, nil if it is
// empty.
func largestUserKey(v *manifest.Version) []byte {
	var hi []byte
	found := false
	for _, f := range v.Files() {
		if !found || bytes.Compare(f.Largest.UserKey, hi) > 0 {
			hi, found = f.Largest.UserKey, true
		}
	}
	if found && hi == nil {
		return []byte{} // the empty key: an upper bound, not "none"
	}
	return hi
}

func minBytes(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

func maxBytes(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

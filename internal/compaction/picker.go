package compaction

import (
	"bytes"
	"slices"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// lastLevel is the deepest level. It is never compacted by the picker: there
// is no level below it to compact into.
const lastLevel = manifest.NumLevels - 1

// Scores returns each level's compaction score: for L0 its number of tables
// over L0CompactionTrigger (every L0 table costs every read a probe, so L0
// is limited by count, not size); for L1 to L5 its size over its target
// (Options.LevelTargetSize). The last level scores 0: it has nowhere to go.
// A level whose score is at least 1 needs compacting.
func Scores(v *manifest.Version, opts *Options) [manifest.NumLevels]float64 {
	var s [manifest.NumLevels]float64
	s[0] = float64(v.NumFiles(0)) / float64(opts.L0CompactionTrigger)
	for level := 1; level < lastLevel; level++ {
		s[level] = float64(v.LevelSize(level)) / float64(opts.LevelTargetSize(level))
	}
	return s
}

// Pick returns the compaction the version needs most, or nil if no level
// scores at least 1. The level with the highest score wins, ties going to
// the shallower level (it feeds the others).
//
// From L0 it takes every table: they overlap, and a lookup probes them all,
// so compacting all of them at once is what shortens L0. From a deeper level
// it takes the one table whose overlap with the next level is the smallest
// fraction of its own size (ties to the first in key order): the table that
// moves the most bytes down per byte rewritten, which keeps write
// amplification low and needs no state between calls (unlike LevelDB's
// round-robin compaction pointer). Either way the next level's tables that
// overlap the inputs' key range join them.
//
// The DB runs one compaction at a time; flushes that add L0 tables while it
// runs do not invalidate it (their versions are newer than all its inputs).
func Pick(v *manifest.Version, opts *Options) *Compaction {
	scores := Scores(v, opts)
	best := -1
	for level := range lastLevel {
		if scores[level] >= 1 && (best < 0 || scores[level] > scores[best]) {
			best = level
		}
	}
	if best < 0 {
		return nil
	}
	var inputs []*manifest.FileMetadata
	if best == 0 {
		inputs = slices.Clone(v.Levels[0])
	} else {
		inputs = []*manifest.FileMetadata{leastOverlapping(v, best)}
	}
	c := newCompaction(v, best, inputs, opts)
	c.Score = scores[best]
	return c
}

// leastOverlapping returns the table of level (1 or deeper, not empty) with
// the smallest ratio of overlapping bytes in the next level to its own size.
func leastOverlapping(v *manifest.Version, level int) *manifest.FileMetadata {
	var best *manifest.FileMetadata
	bestRatio := 0.0
	for _, f := range v.Levels[level] {
		var overlap uint64
		for _, g := range v.Overlapping(level+1, f.Smallest.UserKey, f.Largest.UserKey) {
			overlap += g.Size
		}
		ratio := float64(overlap) / float64(max(f.Size, 1))
		if best == nil || ratio < bestRatio {
			best, bestRatio = f, ratio
		}
	}
	return best
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
	if deepest == 0 {
		deepest = 1 // L0 is not one run: merge it into L1
	}
	for level := 0; level < deepest; level++ {
		var inputs []*manifest.FileMetadata
		if level == 0 {
			inputs = l0Closure(v, lo, hi)
		} else {
			inputs = slices.Clone(v.Overlapping(level, lo, hi))
		}
		if len(inputs) == 0 {
			continue
		}
		c := newCompaction(v, level, inputs, opts)
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
// level+1: the next level's overlapping tables, the key range, the
// bottommost flag and the output tables' filters.
func newCompaction(v *manifest.Version, level int, inputs []*manifest.FileMetadata, o *Options) *Compaction {
	c := &Compaction{Level: level, OutputLevel: level + 1}
	c.Inputs[0] = inputs
	lo, hi := keyRange(inputs)
	c.Inputs[1] = slices.Clone(v.Overlapping(level+1, lo, hi))
	c.Smallest, c.Largest = keyRange(c.Inputs[0], c.Inputs[1])
	c.Bottommost = true
	for below := level + 2; below < manifest.NumLevels; below++ {
		if len(v.Overlapping(below, c.Smallest, c.Largest)) > 0 {
			c.Bottommost = false
			break
		}
	}
	c.setFilters(PlanForLevel(v, c.OutputLevel, o))
	return c
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

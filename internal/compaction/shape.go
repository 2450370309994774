package compaction

import "github.com/bloomkv/bloomkv/internal/manifest"

// Shape is the tree as the filter allocation sees it: how much each level
// holds, and how many tables L0 is split into. A lookup for an absent key
// probes the filter of every L0 table and of one table in every deeper level
// that has data, so each L0 table is a run of its own and each deeper level
// one run.
type Shape struct {
	// Sizes[i] is the amount of data in level i, in entries or in any unit
	// proportional to them (bytes, when key and value sizes do not depend
	// on the level). Only ratios matter.
	Sizes [manifest.NumLevels]float64
	// L0Tables is how many tables L0 is split into, taken to be of equal
	// size Sizes[0]/L0Tables. 0 counts as 1 when Sizes[0] > 0.
	L0Tables int
}

// runs returns the number of separately probed runs of level in s.
func (s *Shape) runs(level int) int {
	switch {
	case !(s.Sizes[level] > 0):
		return 0
	case level == 0:
		return max(1, s.L0Tables)
	}
	return 1
}

// runSize returns the size of one run of level.
func (s *Shape) runSize(level int) float64 { return s.Sizes[level] / float64(s.runs(level)) }

// ProjectedShape returns the shape the filter allocation plans for when a
// table is written to level in v: the tree a little ahead of where it is,
// so that tables built while it grows do not get filters sized for a
// moment's shape. In bytes:
//
//   - L0 at its trigger: max(its tables, L0CompactionTrigger) tables, each
//     max(their mean size, BaseLevelSize/L0CompactionTrigger) — between
//     compactions L0 grows to the trigger, and every lookup probes all of
//     it.
//   - Levels above the deepest: max(size, target). They fill to their
//     targets and are kept there by compaction.
//   - The deepest level — the deepest with data, or level if deeper — at
//     max(size, the projected size of the level above): it holds the bulk
//     of the data, it is growing, and it will soon outgrow the level above.
//   - Levels below it are empty, and are not probed.
func ProjectedShape(v *manifest.Version, level int, opts *Options) Shape {
	var s Shape
	trigger := opts.L0CompactionTrigger
	s.L0Tables = max(v.NumFiles(0), trigger)
	perTable := float64(opts.BaseLevelSize) / float64(trigger)
	if n := v.NumFiles(0); n > 0 {
		perTable = max(perTable, float64(v.LevelSize(0))/float64(n))
	}
	s.Sizes[0] = perTable * float64(s.L0Tables)

	deepest := level
	for l := lastLevel; l > deepest; l-- {
		if v.NumFiles(l) > 0 {
			deepest = l
		}
	}
	for l := 1; l <= deepest; l++ {
		size := float64(v.LevelSize(l))
		if l < deepest {
			s.Sizes[l] = max(size, float64(opts.LevelTargetSize(l)))
		} else {
			s.Sizes[l] = max(size, s.Sizes[l-1])
		}
	}
	return s
}

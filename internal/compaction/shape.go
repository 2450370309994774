package compaction

import (
	"math"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

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

	// TableSize and EntrySize, in the unit of Sizes, say how many keys a
	// table holds, which the allocations that weigh each family's real
	// cost need (BestAllocation; FilterMemory): a fuse filter costs more
	// per key in a small table, and every filter has a fixed overhead.
	// TableSize is the size of one table of levels 1 and deeper, which
	// compactions cut at about TargetFileSize (0: each level is one
	// table); an L0 table is its run, Sizes[0]/L0Tables. EntrySize is the
	// size of one entry (0 counts as 1: Sizes count entries). Monkey's
	// closed form (OptimalAllocation) ignores both: its bits per key do
	// not depend on the table size.
	TableSize, EntrySize float64
}

// Settled returns s once L0's tables are compacted away: without L0.
// Its deeper levels are as they are — a projection (ProjectedShape) has
// them at the sizes they grow to anyway.
func (s Shape) Settled() Shape {
	s.Sizes[0], s.L0Tables = 0, 0
	return s
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

// maxTableKeys caps the keys a table is planned with: the fuse family's
// size formula refuses sets above 2^31 keys (fuse.SizeBytes), and at this
// many every family's bits per key is at its limit anyway.
const maxTableKeys = 1 << 30

// keys returns the number of entries level holds: Sizes[level]/EntrySize.
func (s *Shape) keys(level int) float64 { return s.Sizes[level] / s.entrySize() }

// tableKeys returns the number of keys a table of level is planned with:
// an L0 table holds its run, a deeper level's table min(Sizes, TableSize)
// (a level smaller than one table is one table), in entries, at least 1.
func (s *Shape) tableKeys(level int) int {
	if s.runs(level) == 0 {
		return 1
	}
	size := s.runSize(level)
	if level > 0 && s.TableSize > 0 {
		size = min(size, s.TableSize)
	}
	n := math.Round(size / s.entrySize())
	return int(min(max(n, 1), maxTableKeys))
}

// entrySize is EntrySize, with 0 (unknown, or Sizes in entries) as 1.
func (s *Shape) entrySize() float64 {
	if s.EntrySize > 0 {
		return s.EntrySize
	}
	return 1
}

// ProjectedShape returns the shape the filter allocation plans for when a
// table is written to level in v: the tree as compaction settles it, a
// little ahead of where it is, so that tables built while it grows and
// while compactions catch up do not get filters sized for a moment's
// shape. In bytes:
//
//   - L0 at its trigger: max(its tables, L0CompactionTrigger) tables, each
//     max(their mean size, BaseLevelSize/L0CompactionTrigger) — between
//     compactions L0 grows to the trigger, and every lookup probes all of
//     it.
//   - Levels above the deepest at their targets (TargetsOf): they fill to
//     them, and compaction brings them back to them when they pass them.
//     What a level holds above its target is on its way down, and is
//     projected in the deepest level. Under dynamic sizing the levels
//     above the base level have no target: they are projected as they
//     are, empty unless the tree has shrunk.
//   - The deepest level — the deepest with data, or level if deeper — at
//     max(its size and the levels' excess above it, the projected size of
//     the level above, BaseLevelSize): it holds the bulk of the data, it
//     is growing, and it will soon outgrow the level above.
//   - Levels below it are empty, and are not probed.
//
// A level over its target was once projected at its size. But the base
// level of a tree of 10^6 entries holds 3–5 times its target through most
// of a fill, so the tables of every level were planned for that shape:
// the settled tree spent 9.5–9.8 of 10 bits per key, its base level's
// filters and the next one's sized for levels that had drained away
// (fuse 10 and 11 bits where the settled tree's plan is 13 and 11).
// Planned for the settled shape, the settled tree spends 9.8–9.9, and a
// level's tables spend more than its share while it is over its target:
// at most its excess's keys times the difference between the bits per key
// the plan gives the level and the deepest level.
//
// Tables below L0 are TargetFileSize, where compactions cut them. An
// entry takes the bytes the version's tables take per entry, as recorded
// (FileMetadata.Entries), or projectedEntrySize while no table records
// its entries: the keys per table a filter's cost depends on follow.
func ProjectedShape(v *manifest.Version, level int, opts *Options) Shape {
	s := Shape{TableSize: float64(opts.TargetFileSize), EntrySize: entrySize(v)}
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
	targets := TargetsOf(v, opts)
	var excess float64
	for l := 1; l < deepest; l++ {
		size, target := float64(v.LevelSize(l)), float64(targets.Size[l])
		if target == 0 {
			s.Sizes[l] = size
			continue
		}
		s.Sizes[l] = target
		excess += max(0, size-target)
	}
	if deepest > 0 {
		s.Sizes[deepest] = max(float64(v.LevelSize(deepest))+excess, s.Sizes[max(deepest-1, 1)], float64(opts.BaseLevelSize))
	}
	return s
}

// UnsettledShape is ProjectedShape with the levels above the deepest at
// their sizes where they pass their targets, and the deepest level without
// their excess: the shape a fill that outruns its compactions holds now.
// PlanForLevel plans with it while the filters in use take more than
// their budget (FilterBudget.Overspent), so that the tables written to a
// level holding several times its target get the bits of its size, not
// those of the target it will drain to.
func UnsettledShape(v *manifest.Version, level int, opts *Options) Shape {
	s := ProjectedShape(v, level, opts)
	deepest := 0
	for l := 1; l < manifest.NumLevels; l++ {
		if s.Sizes[l] > 0 {
			deepest = l
		}
	}
	var moved float64
	for l := 1; l < deepest; l++ {
		if size := float64(v.LevelSize(l)); size > s.Sizes[l] {
			moved += size - s.Sizes[l]
			s.Sizes[l] = size
		}
	}
	if deepest > 0 {
		s.Sizes[deepest] = max(s.Sizes[deepest]-moved, float64(v.LevelSize(deepest)))
	}
	return s
}

// entrySize returns the bytes per entry of v's tables that record their
// entries, or projectedEntrySize if none does.
func entrySize(v *manifest.Version) float64 {
	var size, entries uint64
	for _, m := range v.Files() {
		if m.Entries > 0 {
			size, entries = size+m.Size, entries+m.Entries
		}
	}
	if entries == 0 {
		return projectedEntrySize
	}
	return float64(size) / float64(entries)
}

// projectedEntrySize is the size in bytes of a table's entry on disk that
// ProjectedShape assumes while no table of the version records its
// entries, to turn table sizes into the key counts a filter's cost depends
// on: about a 16-byte key and a 100-byte value, with the block format's
// few bytes per entry. Only the cost of small tables depends on it: a Bloom filter's header and whole blocks,
// and a fuse filter's slots per key, which at the default 2 MiB tables
// are 1.25 fingerprints' worth at 16,384 keys (128-byte entries), 1.19 at
// 65,536 (32 bytes), 1.39 at 4,096 (512 bytes). Planned with an entry
// size a quarter of the real one, BestAllocation overspends its budget by
// about 5% (10.5 bits per key for 10 on a tree of 10^7 entries of 116
// bytes); with four times the real one it underspends (9.1) and the
// expected false-positive reads nearly double.
const projectedEntrySize = 128

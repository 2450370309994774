package compaction

import (
	"fmt"
	"math"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// LevelSizing chooses how the target sizes of levels 1–5 are set.
type LevelSizing uint8

// The level sizings. The zero value is DynamicLevelSizing.
const (
	// DynamicLevelSizing sets the targets from the largest level's actual
	// size, as RocksDB's level_compaction_dynamic_level_bytes and Pebble's
	// dynamic base level do: each level above it targets 1/T of the level
	// below, and L0 compacts into the base level, the shallowest whose
	// target is at least BaseLevelSize/T, skipping the empty levels above.
	// The largest level then holds about (T−1)/T of the data however much
	// there is (90% at T = 10), so that space amplification stays near
	// 1/(T−1) and every read probes as few levels as the data needs.
	DynamicLevelSizing LevelSizing = iota
	// StaticLevelSizing sets them from the top, as LevelDB does: L1 targets
	// BaseLevelSize, each deeper level T times more. L0 compacts into L1,
	// and the bottom level holds whatever the levels above do not: half
	// the data, when it is just past a level's target.
	StaticLevelSizing
)

// String returns the sizing's name: "dynamic" or "static".
func (s LevelSizing) String() string {
	switch s {
	case DynamicLevelSizing:
		return "dynamic"
	case StaticLevelSizing:
		return "static"
	}
	return fmt.Sprintf("LevelSizing(%d)", uint8(s))
}

// Targets are the levels' target sizes in one version: where L0 compacts
// to, and the size at which each level needs compacting.
type Targets struct {
	// Base is the level L0 compacts into. Levels between L0 and Base are
	// empty and stay so: nothing compacts into them.
	Base int
	// Size[level] is the target of levels Base to 5; 0 for L0, for the
	// levels above Base (nothing may be compacted out of them: they hold
	// nothing) and for the last level, which has nowhere to go.
	Size [manifest.NumLevels]uint64
}

// TargetsOf returns v's level targets under opts.LevelSizing.
//
// Dynamic sizing, after RocksDB's CalculateBaseBytes: let M be the size of
// the largest level below L0 and F the shallowest non-empty one. Dividing
// M by T once per level from the last up to F gives F's target; if that is
// above BaseLevelSize, the base level moves up past F, one level per
// division, until the target is at most BaseLevelSize (or the base is L1).
// Each level from the base down targets T times the one above, but never
// less than BaseLevelSize: a small level above an L0 that holds more would
// win the compaction scores and let L0 fill up. While every level below L0
// is empty the base is the last level: the first L0 compaction writes the
// bottom of the tree directly.
func TargetsOf(v *manifest.Version, opts *Options) Targets {
	var t Targets
	if opts.LevelSizing == StaticLevelSizing {
		t.Base = 1
		for level := 1; level < lastLevel; level++ {
			t.Size[level] = opts.LevelTargetSize(level)
		}
		return t
	}
	first, largest := -1, uint64(0)
	for level := 1; level < manifest.NumLevels; level++ {
		size := v.LevelDataSize(level)
		if size > 0 && first < 0 {
			first = level
		}
		largest = max(largest, size)
	}
	if first < 0 {
		t.Base = lastLevel
		return t
	}
	mult := float64(opts.LevelMultiplier)
	base := float64(opts.BaseLevelSize)
	size := float64(largest)
	for level := lastLevel - 1; level >= first; level-- {
		size /= mult
	}
	t.Base = first
	for t.Base > 1 && size > base {
		t.Base--
		size /= mult
	}
	if size > base {
		size = base // even L1 would be above it: L1 gets it
	}
	for level := t.Base; level < lastLevel; level++ {
		if level > t.Base {
			size *= mult
		}
		t.Size[level] = uint64(min(max(size, base), math.MaxUint64/2))
	}
	return t
}

package compaction

import (
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// dynamicOpts size levels dynamically from a base of 1000 bytes, ×10.
var dynamicOpts = with(defaultOptions(), func(o *Options) {
	o.LevelSizing = DynamicLevelSizing
	o.BaseLevelSize = 1000
})

// sized returns a version whose levels hold one table of the given sizes
// each (0: empty), over disjoint key ranges so that any sizes are valid.
func sized(t *testing.T, sizes [manifest.NumLevels]uint64) *manifest.Version {
	var ls levels
	for level, size := range sizes {
		if size > 0 {
			k := string(rune('a' + level))
			ls[level] = append(ls[level], meta(uint64(level+1), k, k, 1, 1, size))
		}
	}
	return checkedVersion(t, ls)
}

// TestTargetsOf checks the dynamic targets against answers worked out by
// hand from the rule in TargetsOf's doc, and the static ones against
// BaseLevelSize·T^(n−1).
func TestTargetsOf(t *testing.T) {
	type sizes = [manifest.NumLevels]uint64
	for _, tc := range []struct {
		name  string
		sizes sizes
		want  Targets
	}{
		{"empty: L0 compacts into the last level", sizes{}, Targets{Base: 6}},
		{"only L0", sizes{0: 5000}, Targets{Base: 6}},
		{"the bottom below one base level", sizes{6: 800}, Targets{Base: 6}},
		// 5000/10 = 500 ≤ 1000: L5 becomes the base, at the floor.
		{"the bottom past one base level", sizes{6: 5000}, Targets{Base: 5, Size: sizes{5: 1000}}},
		// 10^6 → L5 10^5 → L4 10^4 → L3 1000: the base.
		{"a million bytes", sizes{6: 1e6}, Targets{Base: 3, Size: sizes{3: 1000, 4: 1e4, 5: 1e5}}},
		{"data above the base level's place moves the base up to it, not down",
			sizes{4: 50, 6: 1e6}, Targets{Base: 3, Size: sizes{3: 1000, 4: 1e4, 5: 1e5}}},
		// 2·10^6 → L5 2·10^5 → L4 2·10^4 → L3 2000 → L2 200: base L2,
		// and L2's 200 is floored at 1000.
		{"the floor", sizes{6: 2e6}, Targets{Base: 2, Size: sizes{2: 1000, 3: 2000, 4: 2e4, 5: 2e5}}},
		// A statically shaped tree: the largest level is L3, 30000 bytes;
		// L1 would target 0.3, so every level but L5 gets the floor and
		// the data moves down.
		{"a static tree", sizes{1: 1000, 2: 10000, 3: 30000}, Targets{Base: 1, Size: sizes{1: 1000, 2: 1000, 3: 1000, 4: 1000, 5: 3000}}},
		// 10^12 would need L1 at 10^7: L1 gets the base size.
		{"too much for L1", sizes{6: 1e12}, Targets{Base: 1, Size: sizes{1: 1000, 2: 1e4, 3: 1e5, 4: 1e6, 5: 1e7}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TargetsOf(sized(t, tc.sizes), dynamicOpts); got != tc.want {
				t.Errorf("TargetsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
	static := with(dynamicOpts, func(o *Options) { o.LevelSizing = StaticLevelSizing })
	got := TargetsOf(sized(t, sizes{6: 1e6}), static)
	if want := (Targets{Base: 1, Size: sizes{1: 1000, 2: 1e4, 3: 1e5, 4: 1e6, 5: 1e7}}); got != want {
		t.Errorf("static: %+v, want %+v", got, want)
	}
}

// TestDynamicTreeShape fills every level of a tree to its target, as
// compactions would, and checks the property dynamic sizing is for: the
// targets stay put, and the largest level holds at least
// B/(B + B/(T−1) + BaseLevelSize) of the data — the levels above it
// target B/T, B/T², …, save the base level, which the floor may raise by
// less than BaseLevelSize.
func TestDynamicTreeShape(t *testing.T) {
	for _, bottom := range []uint64{2e4, 1e6, 3e7, 1e10} {
		v := sized(t, [manifest.NumLevels]uint64{6: bottom})
		tg := TargetsOf(v, dynamicOpts)
		var ls [manifest.NumLevels]uint64
		ls[6] = bottom
		total := bottom
		for level := tg.Base; level < lastLevel; level++ {
			ls[level] = tg.Size[level]
			total += tg.Size[level]
		}
		full := TargetsOf(sized(t, ls), dynamicOpts)
		if full != tg {
			t.Errorf("bottom %d: the targets moved when the levels filled them: %+v, then %+v", bottom, tg, full)
		}
		b, mult := float64(bottom), float64(dynamicOpts.LevelMultiplier)
		bound := b / (b + b/(mult-1) + float64(dynamicOpts.BaseLevelSize))
		if share := b / float64(total); share < bound {
			t.Errorf("bottom %d: the bottom level holds %.3f of the data at the targets %+v, below %.3f", bottom, share, tg, bound)
		}
	}
}

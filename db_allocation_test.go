package bloomkv

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// fullAllocKeys are the keys of TestOptimalFilterAllocation's tree of four
// levels below L0.
const fullAllocKeys = 250_000

var allocKeys = flag.Int("alloc.keys", 20_000, "keys TestOptimalFilterAllocation writes; from 250000, a tree of four levels below L0 where Optimal must halve Uniform's wasted reads (make test-plain)")

// TestOptimalFilterAllocation measures Monkey (OptimalAllocation) against
// UniformAllocation in a real tree: the same keys, written the same way,
// into a tree of at least four levels below L0 with T = 10 and 10 bits per
// key on average. The judge is the
// expected false-positive block reads of a lookup for an absent key — the
// sum over levels of each level's measured false-positive rate, L0 per
// table — at equal total filter memory (within 2%). Optimal must need at
// most half of Uniform's.
//
// Optimal sizes each table for the shape the tree is growing into, so its
// memory lands near, not on, the budget; Uniform is then measured at
// Optimal's memory (see uniformAtMemory), and the comparison is made there.
//
// The tree of four levels takes 250,000 keys (-alloc.keys=250000, which
// `make test-plain` passes): a minute or more of the plain run, whose
// trees (Optimal's and up to six Uniform ones) would make go test ./... alone run past its default
// timeout with -count=3. At the default 20,000 keys, and under -race, the
// tree is shallower and the test checks only that Optimal beats Uniform.
func TestOptimalFilterAllocation(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	keys, lookups, full := *allocKeys, 100_000, *allocKeys >= fullAllocKeys
	if !full {
		lookups = 40_000
	}
	type result struct {
		wastedReads float64 // Σ over levels of the measured FPR
		filterBytes uint64
		levels      int
	}
	run := func(alloc FilterAllocation, bitsPerKey float64) result {
		db, err := Open("/db", &Options{
			FS: vfs.NewMem(), FilterAllocation: alloc, BitsPerKey: bitsPerKey, LevelMultiplier: 10,
			BaseLevelSize: 4 << 10, TargetFileSize: 2 << 10, BlockSize: 1024,
			// L0 drains after every flush, so both trees end with the same
			// (empty) L0 and compare only the levels the allocation shapes.
			// One compaction at a time, and the writes below flush and wait
			// for them after every 1,000 keys, which a memtable of 1 MiB
			// holds with room to spare: no flush but those, and no
			// compaction beside the writes, so that the shapes depend on
			// the allocation alone, not on how the background work raced
			// the writes on a busy machine.
			MemtableSize: 1 << 20, L0CompactionTrigger: 1, MaxConcurrentCompactions: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rng := rand.New(rand.NewPCG(5, 5))
		for i := range keys {
			if err := db.Put(key(2*rng.IntN(100_000_000)), nil, NoSync); err != nil {
				t.Fatal(err)
			}
			if i%1000 == 999 {
				db.waitForCompactions(t) // flushes first
			}
		}
		db.waitForCompactions(t)
		for range lookups {
			if _, err := db.Get(key(2*rng.IntN(100_000_000) + 1)); err != ErrNotFound {
				t.Fatal(err)
			}
		}
		m := db.Metrics()
		var r result
		for i, l := range m.Levels {
			if l.Tables == 0 {
				continue
			}
			if i > 0 {
				r.levels++
			}
			// Each level's measured rate; an L0 lookup probes every table.
			runs := 1
			if i == 0 {
				runs = l.Tables
			}
			r.wastedReads += float64(runs) * l.FalsePositiveRate()
		}
		r.filterBytes = m.FilterMemory
		t.Logf("%v at %.2f bits/key: %d levels below L0, %.4f false-positive reads per absent lookup, %d filter bytes\n%s",
			alloc, bitsPerKey, r.levels, r.wastedReads, r.filterBytes, m)
		return r
	}
	optimal := run(OptimalAllocation, 10)
	target := float64(optimal.filterBytes)
	uniformReads, uniformBytes := uniformAtMemory(t, target, func(bitsPerKey float64) (float64, float64, int) {
		r := run(UniformAllocation, bitsPerKey)
		return float64(r.filterBytes), r.wastedReads, r.levels
	}, full)
	if full && optimal.levels < 4 {
		t.Fatalf("the tree has %d levels below L0; the comparison needs at least 4", optimal.levels)
	}
	uniform := result{wastedReads: uniformReads, filterBytes: uint64(uniformBytes)}
	want := 0.5
	if !full {
		want = 1
	}
	if ratio := optimal.wastedReads / uniform.wastedReads; ratio > want {
		t.Errorf("optimal wastes %.4f reads per lookup, uniform %.4f: ratio %.2f, want ≤ %v", optimal.wastedReads, uniform.wastedReads, ratio, want)
	} else {
		t.Logf("optimal/uniform wasted reads: %.2f", ratio)
	}
}

// uniformAtMemory returns Uniform's wasted reads per lookup at the filter
// memory target, and the memory it compared at. Memory moves in steps with
// bits per key — a small table's filter is a whole number of 512-bit
// blocks, so one more bit per key can add a block to every table at once —
// so a run within 2% of target may not exist. It measures runs until it
// has one within 2%, or one on each side of target, and then interpolates
// linearly between the nearest two: the wasted reads of a Uniform tree
// with exactly Optimal's memory.
func uniformAtMemory(t *testing.T, target float64, run func(bitsPerKey float64) (bytes, reads float64, levels int), full bool) (float64, float64) {
	type point struct{ bytes, reads float64 }
	var below, above *point
	b := 10.0
	for range 6 {
		m, reads, levels := run(b)
		if full && levels < 4 {
			t.Fatalf("the Uniform tree at %.2f bits/key has %d levels below L0; the comparison needs at least 4", b, levels)
		}
		p := &point{m, reads}
		if math.Abs(m/target-1) <= 0.02 {
			return reads, m
		}
		if m < target && (below == nil || m > below.bytes) {
			below = p
		}
		if m > target && (above == nil || m < above.bytes) {
			above = p
		}
		if below != nil && above != nil {
			f := (target - below.bytes) / (above.bytes - below.bytes)
			t.Logf("Uniform at %.0f filter bytes, interpolated between runs at %.0f and %.0f bytes", target, below.bytes, above.bytes)
			return below.reads + f*(above.reads-below.reads), target
		}
		b *= target / m // proportional step toward the target's side
		if m > target {
			b = min(b, b*0.97)
		} else {
			b = max(b, b*1.03)
		}
	}
	t.Fatalf("no Uniform run came within 2%% of, or bracketed, %.0f filter bytes", target)
	return 0, 0
}

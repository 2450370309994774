package compaction

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// tenfold returns the shape of a tree with levels L1…Ln each 10 times the
// one before, L1 holding l1 keys, and L0 split into l0Tables tables holding
// together as much as L1 (0: no L0).
func tenfold(n int, l1 float64, l0Tables int) Shape {
	var s Shape
	for level := 1; level <= n; level++ {
		s.Sizes[level] = l1 * math.Pow(10, float64(level-1))
	}
	if l0Tables > 0 {
		s.Sizes[0], s.L0Tables = l1, l0Tables
	}
	return s
}

func TestOptimalHalvesUniformPredicted(t *testing.T) {
	for levels := 4; levels <= 6; levels++ {
		for _, l0 := range []int{0, 4} {
			s := tenfold(levels, 1e6, l0)
			uni := BitsPerKeyForLevels(s, 10, UniformAllocation)
			opt := BitsPerKeyForLevels(s, 10, OptimalAllocation)
			mu, mo := bloomMemory(s, uni), bloomMemory(s, opt)
			eu, eo := bloomReads(s, uni), bloomReads(s, opt)
			t.Logf("L1-L%d, %d L0 tables: uniform %.4f, optimal %.4f false-positive reads (ratio %.2f), memory ratio %.4f, optimal bits/key %v",
				levels, l0, eu, eo, eo/eu, mo/mu, opt)
			if math.Abs(mo/mu-1) > 0.02 {
				t.Errorf("L1-L%d: optimal memory %.0f, uniform %.0f: not within 2%%", levels, mo, mu)
			}
			if eo > eu/2 {
				t.Errorf("L1-L%d: optimal %.4f false-positive reads, more than half of uniform's %.4f", levels, eo, eu)
			}
			// Smaller runs get at least as many bits per key.
			for level := 1; level < levels; level++ {
				if opt[level] < opt[level+1] {
					t.Errorf("L%d gets %v bits/key, fewer than the larger L%d's %v", level, opt[level], level+1, opt[level+1])
				}
			}
			if l0 > 0 && opt[0] < opt[1] {
				t.Errorf("an L0 table gets %v bits/key, fewer than the larger L1's %v", opt[0], opt[1])
			}
		}
	}
}

// TestOptimalHalvesUniformMeasured builds the tables of a T = 10 tree with
// four levels and two L0 tables under each allocation, and counts the filter
// positives of lookups for absent keys: every one is a data block read in
// vain. The tables of the two allocations have filters of different sizes;
// the reader needs no options to use them.
func TestOptimalHalvesUniformMeasured(t *testing.T) {
	const probes = 20_000
	// (Tables of fewer than about 50 keys have filters of one 512-bit
	// block, more bits per key than asked for: keep L0's tables above.)
	s := tenfold(4, 100, 2)
	var measured, memory [2]float64
	for i, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation} {
		bits := BitsPerKeyForLevels(s, 10, alloc)
		key := 0
		var perLevel [manifest.NumLevels]float64
		for level := range manifest.NumLevels {
			for range s.runs(level) {
				r, props := buildKeysTable(t, &key, int(s.runSize(level)), sstable.Bloom(bits[level]))
				memory[i] += float64(props.FilterBytes)
				fp := 0
				for p := range probes {
					var stats sstable.LookupStats
					if _, _, found, err := r.Get(sstable.MakeLookupKey([]byte(fmt.Sprintf("absent%08d", p)), base.SeqNumMax), &stats); err != nil || found {
						t.Fatalf("absent key: found %v, %v", found, err)
					}
					if !stats.FilterNegative {
						fp++
					}
				}
				perLevel[level] += float64(fp) / probes
			}
		}
		for _, rate := range perLevel {
			measured[i] += rate
		}
		t.Logf("%v: bits/key %v, measured false-positive reads per level %.5f, sum %.5f (predicted %.5f), filter bytes %.0f",
			alloc, bits, perLevel, measured[i], bloomReads(s, bits), memory[i])
	}
	if math.Abs(memory[1]/memory[0]-1) > 0.02 {
		t.Errorf("optimal filters take %.0f bytes, uniform %.0f: not within 2%%", memory[1], memory[0])
	}
	if measured[1] > measured[0]/2 {
		t.Errorf("optimal measures %.5f false-positive reads, more than half of uniform's %.5f", measured[1], measured[0])
	}
}

// buildKeysTable writes n fresh keys to a table with the filter and opens
// it.
func buildKeysTable(t *testing.T, next *int, n int, filter sstable.FilterSpec) (*sstable.Reader, sstable.Properties) {
	t.Helper()
	var buf bytes.Buffer
	w, err := sstable.NewWriter(&buf, sstable.WriterOptions{Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		*next++
		if err := w.Add(base.MakeInternalKey([]byte(fmt.Sprintf("key%08d", *next)), 1, base.KindSet), nil); err != nil {
			t.Fatal(err)
		}
	}
	props, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	r, err := sstable.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r, props
}

// TestOptimalNearBlockedOptimum checks the closed form, derived for classic
// filters, against the blocked filters the tables have: moving memory
// between any two levels, in steps of up to two bits per key of the
// smaller, never lowers the expected false-positive reads by 1%.
func TestOptimalNearBlockedOptimum(t *testing.T) {
	s := tenfold(4, 1e6, 0)
	opt := BitsPerKeyForLevels(s, 10, OptimalAllocation)
	best := bloomReads(s, opt)
	for i := 1; i <= 4; i++ {
		for j := 1; j <= 4; j++ {
			for _, delta := range []float64{0.5, 1, 2} {
				if i == j {
					continue
				}
				moved := opt
				moved[i] += delta
				moved[j] -= delta * s.Sizes[i] / s.Sizes[j]
				if moved[j] < 1 || moved[i] > 64 {
					continue
				}
				if e := bloomReads(s, moved); e < best*0.99 {
					t.Errorf("moving %v bits/key of L%d from L%d: %.5f false-positive reads, the allocation's %.5f", delta, i, j, e, best)
				}
			}
		}
	}
}

func TestBitsPerKeyForLevelsEdges(t *testing.T) {
	s := tenfold(3, 1000, 2)
	if got := BitsPerKeyForLevels(s, 0, OptimalAllocation); got != [manifest.NumLevels]float64{} {
		t.Errorf("no filters: %v", got)
	}
	if got := BitsPerKeyForLevels(Shape{}, 10, OptimalAllocation); got != [manifest.NumLevels]float64{} {
		t.Errorf("empty tree: %v", got)
	}
	for _, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation} {
		// One run gets the average, whatever the allocation.
		one := Shape{Sizes: [manifest.NumLevels]float64{3: 500}}
		if got := BitsPerKeyForLevels(one, 7.3, alloc); got != [manifest.NumLevels]float64{3: 7.3} {
			t.Errorf("%v, one level: %v", alloc, got)
		}
		// The extremes of the range leave nothing to move.
		for _, avg := range []float64{1, 64} {
			got := BitsPerKeyForLevels(s, avg, alloc)
			for level := range 4 {
				if got[level] != avg {
					t.Errorf("%v at %v bits/key: L%d gets %v", alloc, avg, level, got[level])
				}
			}
		}
	}
	// A huge last level under a small budget: the small levels hit the
	// ceiling, and the memory still adds up.
	rng := rand.New(rand.NewPCG(3, 3))
	for range 200 {
		var s Shape
		for level := range s.Sizes {
			if rng.IntN(3) > 0 {
				s.Sizes[level] = math.Pow(10, rng.Float64()*12)
			}
		}
		s.L0Tables = rng.IntN(10)
		avg := 1 + rng.Float64()*20
		got := BitsPerKeyForLevels(s, avg, OptimalAllocation)
		var total float64
		for level, size := range s.Sizes {
			if size > 0 && (got[level] < 1 || got[level] > 64) || size == 0 && got[level] != 0 {
				t.Fatalf("shape %v, avg %v: L%d gets %v", s, avg, level, got[level])
			}
			total += size
		}
		// Rounding to a tenth of a bit moves the memory by at most half
		// of one per key.
		if m := bloomMemory(s, got); math.Abs(m/total-avg) > bitsGrid/2+1e-9 {
			t.Fatalf("shape %v, avg %v: %v spends %v bits/key", s, avg, got, m/total)
		}
	}
}

// growingVersion returns the version of TestProjectedShape and
// TestUnsettledShape: two L0 tables, L1 under its target of 1000, L2 at
// 12000 over its 10000, and L3 of deepest bytes.
func growingVersion(t *testing.T, deepest uint64) *manifest.Version {
	t.Helper()
	return checkedVersion(t, levels{
		0: {meta(9, "a", "z", 10, 19, 600), meta(8, "a", "z", 1, 9, 400)},
		1: {meta(1, "a", "z", 0, 0, 400)},
		2: {meta(2, "a", "z", 0, 0, 12000)},
		3: {meta(3, "a", "z", 0, 0, deepest)},
	})
}

func TestProjectedShape(t *testing.T) {
	opts := with(defaultOptions(), func(o *Options) { o.BaseLevelSize = 1000 })
	// Tables below L0 are cut at TargetFileSize; the entries' size is the
	// projection's estimate.
	tables := Shape{TableSize: float64(opts.TargetFileSize), EntrySize: projectedEntrySize}
	// A new DB: L0 at its trigger, tables of a quarter of L1's target.
	if got := ProjectedShape(&manifest.Version{}, 0, opts); got != (Shape{Sizes: [manifest.NumLevels]float64{1000}, L0Tables: 4, TableSize: tables.TableSize, EntrySize: tables.EntrySize}) {
		t.Errorf("empty version: %+v", got)
	}
	v := growingVersion(t, 3000)
	// The levels above the deepest at their targets, 1000 and 10000: L2's
	// 2000 over it are on their way down, and the deepest level, 3000
	// with them, is projected as large as the level above.
	want := Shape{Sizes: [manifest.NumLevels]float64{4 * 500, 1000, 10000, 10000}, L0Tables: 4, TableSize: tables.TableSize, EntrySize: tables.EntrySize}
	if got := ProjectedShape(v, 1, opts); got != want {
		t.Errorf("growing tree: %+v, want %+v", got, want)
	}
	// Writing below the deepest level: it is projected to grow as large
	// as the one above, which is at its target.
	want = Shape{Sizes: [manifest.NumLevels]float64{4 * 500, 1000, 10000, 100000, 100000}, L0Tables: 4, TableSize: tables.TableSize, EntrySize: tables.EntrySize}
	if got := ProjectedShape(v, 4, opts); got != want {
		t.Errorf("a new level: %+v, want %+v", got, want)
	}
	// A deepest level larger than the one above takes the excess on top
	// of its size: 30000 and L2's 2000.
	v.Levels[3][0].Size = 30000
	want = Shape{Sizes: [manifest.NumLevels]float64{4 * 500, 1000, 10000, 32000}, L0Tables: 4, TableSize: tables.TableSize, EntrySize: tables.EntrySize}
	if got := ProjectedShape(v, 2, opts); got != want {
		t.Errorf("a level over its target: %+v, want %+v", got, want)
	}
	v.Levels[3][0].Size = 3000
	// Tables that record their entries give the entries' size: those of
	// the tables that do, 600+12000 bytes over 10+90 entries.
	v.Levels[0][0].Entries, v.Levels[2][0].Entries = 10, 90
	if got := ProjectedShape(v, 1, opts).EntrySize; got != 126 {
		t.Errorf("EntrySize %v, want 126", got)
	}
}

// TestUnsettledShape checks the shape a fill that outruns its compactions
// holds: ProjectedShape's, but the levels above the deepest at their
// sizes where they pass their targets, and the deepest level without the
// excess ProjectedShape moves into it, never below its size.
func TestUnsettledShape(t *testing.T) {
	opts := with(defaultOptions(), func(o *Options) { o.BaseLevelSize = 1000 })
	tables := Shape{TableSize: float64(opts.TargetFileSize), EntrySize: projectedEntrySize}
	v := growingVersion(t, 30000)
	// L1 under its target of 1000 stays at it; L2, 12000 against 10000,
	// at its size; L3 at its size, 30000, not with L2's 2000 on top.
	want := Shape{Sizes: [manifest.NumLevels]float64{4 * 500, 1000, 12000, 30000}, L0Tables: 4, TableSize: tables.TableSize, EntrySize: tables.EntrySize}
	if got := UnsettledShape(v, 1, opts); got != want {
		t.Errorf("a level over its target: %+v, want %+v", got, want)
	}
	// A deepest level smaller than the one above is projected as large as
	// that level's target, 10000 (ProjectedShape's rule); the 2000 of
	// L2's excess counted at L2 come off it, never below its own 3000, so
	// that the tree's bytes stay ProjectedShape's.
	v.Levels[3][0].Size = 3000
	want.Sizes[3] = 10000 - 2000
	if got := UnsettledShape(v, 1, opts); got != want {
		t.Errorf("a small deepest level: %+v, want %+v", got, want)
	}
	// A tree at its targets is ProjectedShape's.
	v.Levels[2][0].Size = 9000
	if got, projected := UnsettledShape(v, 1, opts), ProjectedShape(v, 1, opts); got != projected {
		t.Errorf("a settled tree: %+v, want ProjectedShape's %+v", got, projected)
	}
}

// overspentBudget is a FilterBudget of a fixed number of bits, overspent
// or not.
type overspentBudget struct {
	bits      float64
	overspent bool
}

func (b overspentBudget) FilterBits(float64) float64 { return b.bits }
func (b overspentBudget) Overspent() bool            { return b.overspent }

// TestPlanForLevelOverspent checks that an overspent budget plans a level
// holding several times its target for its size: with fewer bits per key
// than the plan for the settled shape gives it, and the budget kept.
func TestPlanForLevelOverspent(t *testing.T) {
	v := checkedVersion(t, levels{
		1: {meta(1, "a", "z", 0, 0, 16000)},
		2: {meta(2, "a", "z", 0, 0, 640000)}, // four times its target
		3: {meta(3, "a", "z", 0, 0, 1600000)},
	})
	opts := *with(defaultOptions(), func(o *Options) { o.BaseLevelSize = 16000 })
	projected := ProjectedShape(v, 2, &opts)
	keys := projected.totalKeys()
	opts.FilterBudget = overspentBudget{bits: 4 * keys}
	settled := bitsOf(PlanForLevel(v, 2, &opts))
	opts.FilterBudget = overspentBudget{bits: 4 * keys, overspent: true}
	plan := FiltersWithinBudget(UnsettledShape(v, 2, &opts), &opts, 4*keys)
	if got := PlanForLevel(v, 2, &opts); got != plan[2] {
		t.Errorf("overspent: L2's plan %v, want UnsettledShape's %v", got, plan[2])
	}
	if unsettled := bitsOf(plan[2]); unsettled >= settled {
		t.Errorf("L2 at four times its target: %.2f bits per key planned for its size, not fewer than the %.2f for its target", unsettled, settled)
	}
}

func TestFilterForLevel(t *testing.T) {
	v := checkedVersion(t, levels{
		0: {meta(9, "a", "z", 1, 9, 4000)},
		1: {meta(1, "a", "z", 0, 0, 16000)},
		2: {meta(2, "a", "z", 0, 0, 160000)},
		3: {meta(3, "a", "z", 0, 0, 1600000)},
		4: {meta(4, "a", "z", 0, 0, 16000000)},
	})
	base := *with(defaultOptions(), func(o *Options) { o.BaseLevelSize = 16000 })
	uniform, optimal, none := base, base, base
	optimal.FilterAllocation = OptimalAllocation
	none.BitsPerKey = 0 // the DB's DisableFilters
	var bits [manifest.NumLevels]float64
	for level := range manifest.NumLevels {
		if got := FilterForLevel(v, level, &uniform, uint64(level)); got != sstable.Bloom(10) {
			t.Errorf("uniform L%d: %v", level, got)
		}
		if got := FilterForLevel(v, level, &none, uint64(level)); got != (sstable.FilterSpec{}) {
			t.Errorf("no filters L%d: %v", level, got)
		}
		spec := FilterForLevel(v, level, &optimal, uint64(level))
		if spec.Family != sstable.BloomFamily {
			t.Errorf("optimal L%d: %v, want a Bloom filter", level, spec)
		}
		bits[level] = spec.Bits
	}
	t.Logf("optimal bits/key by level: %v", bits)
	for level := 1; level <= 4; level++ {
		if bits[level] >= bits[level-1] {
			t.Errorf("L%d gets %v bits/key, not fewer than L%d's %v", level, bits[level], level-1, bits[level-1])
		}
	}
	if bits[4] >= 10 || bits[4] < 9 {
		t.Errorf("the largest level gets %v bits/key, want a little under the average", bits[4])
	}
	// Compactions carry their output level's bits.
	v.Levels[1] = append(v.Levels[1][:0:0], meta(1, "a", "z", 0, 0, 40000))
	c := Pick(v, &optimal, nil)
	if c == nil || c.Filter != FilterForLevel(v, c.OutputLevel, &optimal, 7) || c.Filters() != PlanForLevel(v, c.OutputLevel, &optimal) {
		t.Errorf("Pick = %v, want its output level's filter", c)
	}
}

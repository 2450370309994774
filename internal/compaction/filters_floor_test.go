package compaction

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/ribbon"
)

// TestFalsePositiveFloorMatchesSearch checks the water-filling against a
// search of the budget's splits between the levels: on trees of two
// levels every split in steps of 1/20,000 of the budget, on trees of three
// a grid of 400 × 400; the floor is never above the best split found, and
// below it by no more than the grid's resolution allows.
func TestFalsePositiveFloorMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for i := range 24 {
		levels := 2 + i%2
		var s Shape
		for l := manifest.NumLevels - levels; l < manifest.NumLevels; l++ {
			s.Sizes[l] = math.Pow(10, 3+4*rng.Float64())
		}
		avg := 1 + 15*rng.Float64()
		c := []float64{1, 1.125}[i%2]
		floor := floorReads(s, avg, func(int) float64 { return c })

		var keys []float64
		for l := range manifest.NumLevels {
			if s.Sizes[l] > 0 {
				keys = append(keys, s.Sizes[l])
			}
		}
		total := budget(s, avg)
		reads := func(shares []float64) float64 { // shares of the budget, summing to 1
			var r float64
			for j, sh := range shares {
				r += math.Exp2(-total * sh / keys[j] / c)
			}
			return r
		}
		search := math.Inf(1)
		if levels == 2 {
			const steps = 20_000
			for k := range steps + 1 {
				x := float64(k) / steps
				search = min(search, reads([]float64{x, 1 - x}))
			}
		} else {
			const steps = 400
			for a := range steps + 1 {
				for b := range steps + 1 - a {
					x, y := float64(a)/steps, float64(b)/steps
					search = min(search, reads([]float64{x, y, 1 - x - y}))
				}
			}
		}
		if floor > search*(1+1e-9) {
			t.Errorf("tree %v, %.2f bits/key, c = %v: floor %.6g above a split the search found, %.6g", s.Sizes, avg, c, floor, search)
		}
		if floor < search*(1-0.02) {
			t.Errorf("tree %v, %.2f bits/key, c = %v: floor %.6g, but the best split found is %.6g", s.Sizes, avg, c, floor, search)
		}
	}
}

// TestFalsePositiveFloorBoundsBest checks the floors' order: the
// information-theoretic floor is at most the families' — whose payload is
// at least 1.125 bits per bit of rate for a fuse filter, at any table
// size, and for a Ribbon filter ribbon.SlotsFor(n)/n, a slot per key and
// its spare ones — which is at most the expected reads of BestAllocation's
// plan and of Pebble's progressive widths at every offset within the
// budget, on the default trees and random small ones.
func TestFalsePositiveFloorBoundsBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	shapes := []Shape{defaultTree(1e6), defaultTree(1e7), defaultTree(1e8)}
	for range 8 {
		shapes = append(shapes, randomSmallShape(rng, 3+rng.IntN(2)))
	}
	for i, s := range shapes {
		for _, avg := range []float64{2, 6, 10, 16} {
			name := fmt.Sprintf("tree %d at %v bits/key", i, avg)
			info := FalsePositiveFloor(s, avg)
			famFloor := FamilyFalsePositiveFloor(s, avg)
			ideal := floorReads(s, avg, func(level int) float64 {
				n := int(s.tableKeys(level))
				return min(1.125, float64(ribbon.SlotsFor(max(n, 1)))/float64(n))
			})
			if famFloor < ideal*(1-1e-9) {
				t.Errorf("%s: family floor %.5g below that of min(1.125, Ribbon slots per key) bits per bit of rate, %.5g", name, famFloor, ideal)
			}
			best := ExpectedFalsePositiveReads(s, FiltersForLevels(s, avg, BestAllocation, nil))
			if !(info > 0 && info <= famFloor && famFloor <= best*(1+1e-9)) {
				t.Errorf("%s: floors %.5g (perfect), %.5g (families), best %.5g: want 0 < perfect ≤ families ≤ best", name, info, famFloor, best)
			}
			for d := -15; d <= 15; d++ {
				p := ProgressiveFilters(d)
				if FilterMemory(s, p) > budget(s, avg) {
					continue
				}
				if r := ExpectedFalsePositiveReads(s, p); famFloor > r*(1+1e-9) {
					t.Errorf("%s: family floor %.5g above progressive %+d's %.5g", name, famFloor, d, r)
				}
			}
		}
	}
}

// TestFalsePositiveFloorEdges checks the floor without a budget or data,
// and that it falls as the budget grows.
func TestFalsePositiveFloorEdges(t *testing.T) {
	s := defaultTree(1e6)
	var runs float64 // every L0 table, one per deeper level with data
	for l := range manifest.NumLevels {
		runs += float64(s.runs(l))
	}
	if got := FalsePositiveFloor(s, 0); got != runs {
		t.Errorf("no budget: %v reads, want %v, every run", got, runs)
	}
	if got := FalsePositiveFloor(Shape{}, 10); got != 0 {
		t.Errorf("empty tree: %v reads, want 0", got)
	}
	prev := math.Inf(1)
	for avg := 0.5; avg <= 30; avg += 0.5 {
		got := FalsePositiveFloor(s, avg)
		if !(got < prev) {
			t.Errorf("%v bits/key: floor %.5g, not below %.5g at %v", avg, got, prev, avg-0.5)
		}
		prev = got
	}
	// One level of one run: 2^−avg exactly.
	var one Shape
	one.Sizes[6] = 1e6
	if got, want := FalsePositiveFloor(one, 10), math.Exp2(-10); math.Abs(got-want) > 1e-12 {
		t.Errorf("one level at 10 bits/key: %.6g, want 2^-10 = %.6g", got, want)
	}
}

// TestMaxFilterFraming checks maxFilterFraming against built filters of
// every family: their encodings exceed their payloads by at most it, and
// the fuse and ribbon families' by exactly it.
func TestMaxFilterFraming(t *testing.T) {
	hashes := make([]uint64, 5000)
	for i := range hashes {
		hashes[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	type filter interface {
		MarshalBinary() ([]byte, error)
		SizeBytes() int
	}
	blocked, err := bloom.BuildBlocked(hashes, 10)
	if err != nil {
		t.Fatal(err)
	}
	filters := map[string]filter{"bloom 10": blocked}
	for _, w := range []int{8, 13} {
		f, err := fuse.Build(hashes, w)
		if err != nil {
			t.Fatal(err)
		}
		filters[fmt.Sprintf("fuse %d", w)] = f
		g, err := ribbon.Build(hashes, w)
		if err != nil {
			t.Fatal(err)
		}
		filters[fmt.Sprintf("ribbon %d", w)] = g
	}
	for name, f := range filters {
		encoded, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		framing := len(encoded) - f.SizeBytes()
		if framing > maxFilterFraming || !strings.HasPrefix(name, "bloom") && framing != maxFilterFraming {
			t.Errorf("%s: %d bytes besides the payload, want at most %d (fuse and ribbon: exactly)", name, framing, maxFilterFraming)
		}
	}
}

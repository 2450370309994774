package rangefilter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
)

// The sizes of the false-positive tests: under -race, which runs them ten
// times slower, one setting each on smaller tables (make test runs the
// full grid without it).
var (
	fprKeys    = raceOr(50_000, 10_000)  // keys per table
	fprQueries = raceOr(100_000, 20_000) // empty ranges per setting
)

// raceOr returns normal, or underRace under -race.
func raceOr(normal, underRace int) int {
	if race.Enabled {
		return underRace
	}
	return normal
}

// emptyRanges returns count ranges [x, x+width) with from ≤ x < to−width
// that hold none of xs, sorted.
func emptyRanges(r *rand.Rand, xs []uint64, from, to, width uint64, count int) []uint64 {
	los := make([]uint64, 0, count)
	for len(los) < count {
		x := from + r.Uint64N(to-from-width)
		i, _ := slices.BinarySearch(xs, x)
		if i == len(xs) || xs[i] >= x+width {
			los = append(los, x)
		}
	}
	return los
}

// TestFalsePositiveRate measures each key shape's rate on 100,000 empty
// ranges per bits per key and width (one setting and 20,000 under -race), against Grafite's bound ℓ/2^(B−2) —
// the measured count may pass it by no more than 4 standard deviations of
// a binomial at the bound — and against the rate the hash predicts, 1 −
// (1 − w/r)^n summed over the queries for a range covering w mapped values:
// within 5 standard deviations, both ways.
func TestFalsePositiveRate(t *testing.T) {
	bitsPerKey := []float64{8, 12, 16, 20}
	widths := []uint64{1, 2, 8, 32, 128}
	testShapes := shapes
	if race.Enabled {
		bitsPerKey, widths, testShapes = []float64{16}, []uint64{32}, []shape{decimal}
	}
	for _, sh := range testShapes {
		r := rand.New(rand.NewPCG(42, uint64(len(sh.name))))
		keys, xs := shapeKeys(r, sh, fprKeys, 0, sh.max)
		for _, bpk := range bitsPerKey {
			f := build(t, keys, bpk)
			if f.Exact() {
				t.Fatalf("%s: %d random keys exact at %v bits per key", sh.name, len(keys), bpk)
			}
			for _, w := range widths {
				t.Run(fmt.Sprintf("%s/B=%v/width=%d", sh.name, bpk, w), func(t *testing.T) {
					var lo, hi []byte
					positives, predicted := 0, 0.0
					for _, x := range emptyRanges(r, xs, 0, sh.max, w, fprQueries) {
						lo, hi = sh.key(lo, x), sh.key(hi, x+w)
						if f.MayContainRange(lo, hi) {
							positives++
						}
						a, _, _ := f.km.ceil(lo)
						b, strict, _ := f.km.ceil(hi)
						if strict {
							b--
						}
						covered := float64(b - a + 1)
						predicted += -math.Expm1(float64(f.values) * math.Log1p(-covered/float64(f.f.r)))
					}
					n := float64(fprQueries)
					bound := float64(w) / math.Exp2(bpk-2)
					if limit := n*bound + 4*math.Sqrt(n*bound*(1-bound)); float64(positives) > limit {
						t.Errorf("%d false positives of %d, more than %.0f (bound %.3g)", positives, fprQueries, limit, bound)
					}
					p := predicted / n
					if sd := math.Sqrt(n * p * (1 - p)); math.Abs(float64(positives)-predicted) > 5*sd+1 {
						t.Errorf("%d false positives of %d, predicted %.1f ± %.1f", positives, fprQueries, predicted, sd)
					}
					t.Logf("rate %.5f, predicted %.5f, bound %.5f, %.2f bits per key", float64(positives)/n, p, bound, f.BitsPerKey())
				})
			}
		}
	}
}

// TestShortScanTarget is the goal the table integration sets: an empty
// scan of up to 32 keys at 16 bits per key skips at least 98% of the
// tables. Each shape is checked sparse, at width 32 integers, and dense —
// keys 1 to 3 apart, like the bench's 0, 2, 4, … — at width 1, the only
// empty ranges among such keys; half the ranges fall inside the table's
// keys, half anywhere.
func TestShortScanTarget(t *testing.T) {
	for _, sh := range shapes {
		for _, dense := range []bool{false, true} {
			r := rand.New(rand.NewPCG(7, 8))
			var xs []uint64
			if dense {
				base := r.Uint64N(sh.max / 2)
				for i := range uint64(fprKeys) {
					xs = append(xs, base+2*i+r.Uint64N(2)*(i%2)) // gaps of 1 to 3
				}
				xs = slices.Compact(xs)
			} else {
				_, xs = shapeKeys(r, sh, fprKeys, 0, sh.max)
			}
			keys := make([][]byte, len(xs))
			for i, x := range xs {
				keys[i] = sh.key(nil, x)
			}
			f := build(t, keys, 16)
			width := uint64(32)
			if dense {
				width = 1 // the only empty ranges inside a dense table
			}
			positives := 0
			var lo, hi []byte
			los := append(emptyRanges(r, xs, xs[0], xs[len(xs)-1], width, fprQueries/8),
				emptyRanges(r, xs, 0, sh.max, width, fprQueries/8)...)
			for _, x := range los {
				lo, hi = sh.key(lo, x), sh.key(hi, x+width)
				if f.MayContainRange(lo, hi) {
					positives++
				}
			}
			rate := float64(positives) / float64(len(los))
			t.Logf("%s dense=%v: rate %.5f at width %d, %.2f bits per key, exact %v", sh.name, dense, rate, width, f.BitsPerKey(), f.Exact())
			if rate > 0.02 {
				t.Errorf("%s dense=%v: rate %.4f at width %d and 16 bits per key, above 2%%", sh.name, dense, rate, width)
			}
		}
	}
}

package main

import (
	"math"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
)

// TestCalcFixedK checks calc -k's comparison against the formulas worked
// here: a classic filter's rate (1 − e^(−kn/m))^k in the same memory, the
// bits per item a fixed k needs put back into the rate (they must give the
// target), and for the blocked filter the fewest bits per item (to 0.01)
// whose Putze rate reaches the target; a k other than the optimal one
// never needs fewer bits.
func TestCalcFixedK(t *testing.T) {
	for _, tc := range []struct {
		n          int
		p, bits    float64 // bits > 0: sized by bits per item
		k          int
		wantClassK int // the optimal classic k, worked by hand
	}{
		{1_000_000, 0.01, 0, 4, 7},
		{1_000_000, 0.01, 0, 7, 7},
		{50_000, 0.001, 0, 2, 10},
		{1000, 0, 10, 3, 7},
		{1000, 0, 16, 20, 11},
		{1_000_000, 1e-4, 0, 1, 13},
	} {
		var rows []calcRow
		var err error
		if tc.bits > 0 {
			rows, err = calcByBits(tc.n, tc.bits)
		} else {
			rows, err = calcByRate(tc.n, tc.p)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := fixedKRows(rows, tc.n, tc.p, tc.bits > 0, tc.k)
		if len(got) != 2 || got[0].name != "classic" || got[1].name != "blocked" {
			t.Fatalf("%+v: rows %+v", tc, got)
		}
		classic, blocked := got[0], got[1]
		if classic.optK != tc.wantClassK {
			t.Errorf("%+v: optimal classic k %d, want %d", tc, classic.optK, tc.wantClassK)
		}
		n, k := float64(tc.n), float64(tc.k)
		m := float64(rows[0].bits)
		if want := math.Pow(1-math.Exp(-k*n/m), k); !near(classic.fpr, want, 1e-12) {
			t.Errorf("%+v: classic FPR at k = %d: %v, the formula gives %v", tc, tc.k, classic.fpr, want)
		}
		target := tc.p
		if tc.bits > 0 {
			target = math.Pow(1-math.Exp(-float64(classic.optK)*n/m), float64(classic.optK))
		}
		if !near(classic.target, target, 1e-12) {
			t.Errorf("%+v: classic target %v, want %v", tc, classic.target, target)
		}
		for _, c := range []struct {
			k    int
			need float64
		}{{tc.k, classic.need}, {classic.optK, classic.optNeed}} {
			if rate := math.Pow(1-math.Exp(-float64(c.k)/c.need), float64(c.k)); !near(rate, target, 1e-9) {
				t.Errorf("%+v: %v bits/item at k = %d give rate %v, not the target %v", tc, c.need, c.k, rate, target)
			}
		}
		if classic.need < classic.optNeed*(1-1e-12) {
			t.Errorf("%+v: k = %d needs %v bits/item, fewer than the optimal k's %v", tc, tc.k, classic.need, classic.optNeed)
		}

		if blocked.tooManyProbes != (tc.k > bloom.MaxBlockedProbes) {
			t.Errorf("%+v: blocked tooManyProbes = %v", tc, blocked.tooManyProbes)
		}
		c := float64(rows[1].bits) / n
		if want := bloom.BlockedFalsePositiveRate(c, tc.k); blocked.fpr != want {
			t.Errorf("%+v: blocked FPR at k = %d: %v, want %v", tc, tc.k, blocked.fpr, want)
		}
		if blocked.optFPR != rows[1].fpr {
			t.Errorf("%+v: blocked optimal FPR %v, the table's %v", tc, blocked.optFPR, rows[1].fpr)
		}
		for _, b := range []struct {
			k    int
			need float64
		}{{tc.k, blocked.need}, {blocked.optK, blocked.optNeed}} {
			if math.IsInf(b.need, 1) {
				if r := bloom.BlockedFalsePositiveRate(bloom.MaxBitsPerKey, b.k); r <= blocked.target {
					t.Errorf("%+v: k = %d out of reach, yet %d bits/item give %v ≤ %v", tc, b.k, bloom.MaxBitsPerKey, r, blocked.target)
				}
				continue
			}
			if r := bloom.BlockedFalsePositiveRate(b.need, b.k); r > blocked.target {
				t.Errorf("%+v: %v bits/item at k = %d give %v, above the target %v", tc, b.need, b.k, r, blocked.target)
			}
			if r := bloom.BlockedFalsePositiveRate(b.need-0.02, b.k); r <= blocked.target {
				t.Errorf("%+v: %v bits/item at k = %d is not the fewest: %v give %v", tc, b.need, b.k, b.need-0.02, r)
			}
		}
	}
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

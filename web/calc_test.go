package web

import (
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
)

// TestCalc checks the calculator against the formulas: the classic filter
// is ClassicParams' (m = ⌈−n·ln p/(ln 2)²⌉, k = round(m/n·ln 2)); the
// blocked one has whole blocks at BlockedBitsPerKey(p), as NewBlocked
// builds it; the fixed-k filter is the smallest reaching p, one bit fewer
// missing it; the bound is log2(1/p).
func TestCalc(t *testing.T) {
	h := FilterHandler()
	for _, c := range []struct {
		n int
		p float64
		k int // 0: none
	}{
		{1_000_000, 0.01, 4},
		{1000, 0.001, 0},
		{1, 0.5, 1},
		{100_000, 1e-6, 16},
		{50_000, 0.05, 2},
		{MaxItems, 0.01, 0},
	} {
		q := fmt.Sprintf("/api/calc?n=%d&p=%g", c.n, c.p)
		if c.k > 0 {
			q += fmt.Sprintf("&k=%d", c.k)
		}
		t.Run(q, func(t *testing.T) {
			r := get[calcResponse](t, h, q)
			n := float64(c.n)
			m := uint64(math.Ceil(-n * math.Log(c.p) / (math.Ln2 * math.Ln2)))
			k := max(1, int(math.Round(float64(m)/n*math.Ln2)))
			if r.Classic.M != m || r.Classic.K != k || r.Classic.Bytes != 8*((m+63)/64) ||
				r.Classic.BitsPerKey != float64(m)/n || r.Classic.FPR != bloom.ClassicFalsePositiveRate(m, k, n) {
				t.Errorf("classic %+v, want m = %d, k = %d", r.Classic, m, k)
			}
			if c.n >= 1000 && math.Abs(r.Classic.FPR-c.p) > 0.05*c.p { // rounding m and k moves small filters further
				t.Errorf("classic rate %v, far from the target %v", r.Classic.FPR, c.p)
			}
			bpk := bloom.BlockedBitsPerKey(c.p)
			if c.n <= 1_000_000 {
				f, err := bloom.NewBlocked(c.n, bpk)
				if err != nil {
					t.Fatal(err)
				}
				if r.Blocked.M != f.Bits() || r.Blocked.K != f.Probes() || r.Blocked.Bytes != uint64(f.SizeBytes()) {
					t.Errorf("blocked %+v, want NewBlocked's %d bits, %d probes, %d bytes", r.Blocked, f.Bits(), f.Probes(), f.SizeBytes())
				}
			}
			if r.Blocked.M%512 != 0 || r.Blocked.FPR != bloom.BlockedFalsePositiveRate(float64(r.Blocked.M)/n, r.Blocked.K) ||
				r.Blocked.BitsPerKey < bpk {
				t.Errorf("blocked %+v, want whole 512-bit blocks of at least %v bits/key and their rate", r.Blocked, bpk)
			}
			if r.BoundBitsPerKey != math.Log2(1/c.p) {
				t.Errorf("bound %v, want log2(1/p) = %v", r.BoundBitsPerKey, math.Log2(1/c.p))
			}
			switch {
			case c.k == 0 && r.FixedK != nil:
				t.Errorf("fixed k %+v without k", r.FixedK)
			case c.k > 0:
				f := r.FixedK
				if f == nil || f.K != c.k || f.FPR != bloom.ClassicFalsePositiveRate(f.M, c.k, n) {
					t.Fatalf("fixed k %+v, want k = %d", f, c.k)
				}
				if f.FPR > c.p*(1+1e-12) || f.M > 1 && bloom.ClassicFalsePositiveRate(f.M-1, c.k, n) <= c.p {
					t.Errorf("fixed k: %d bits give %v; want the fewest bits reaching %v", f.M, f.FPR, c.p)
				}
				if f.M < r.Classic.M-1 && c.k != r.Classic.K {
					t.Errorf("fixed k = %d needs %d bits, fewer than the optimal k's %d", c.k, f.M, r.Classic.M)
				}
			}
		})
	}
	checkRefusals(t, h, []refusal{
		{"POST", "/api/calc?n=10&p=0.1", "", http.StatusMethodNotAllowed, "use GET"},
		{"GET", "/api/calc?p=0.1", "", http.StatusBadRequest, "n = \"\""},
		{"GET", "/api/calc?n=abc&p=0.1", "", http.StatusBadRequest, "want an integer"},
		{"GET", "/api/calc?n=0&p=0.1", "", http.StatusBadRequest, "must be in [1, 10000000000]"},
		{"GET", "/api/calc?n=10000000001&p=0.1", "", http.StatusBadRequest, "must be in [1, "},
		{"GET", "/api/calc?n=99999999999999999999999&p=0.1", "", http.StatusBadRequest, "must be in [1, "},
		{"GET", "/api/calc?n=10", "", http.StatusBadRequest, "p = \"\""},
		{"GET", "/api/calc?n=10&p=0", "", http.StatusBadRequest, "in (0, 1)"},
		{"GET", "/api/calc?n=10&p=1", "", http.StatusBadRequest, "in (0, 1)"},
		{"GET", "/api/calc?n=10&p=NaN", "", http.StatusBadRequest, "in (0, 1)"},
		{"GET", "/api/calc?n=10&p=x", "", http.StatusBadRequest, "in (0, 1)"},
		{"GET", "/api/calc?n=10&p=1e-300", "", http.StatusBadRequest, "probes"},
		{"GET", "/api/calc?n=10&p=0.9999", "", http.StatusBadRequest, "p = 0.9999: the blocked filter cannot be sized"},
		{"GET", "/api/calc?n=10000000000&p=1e-30", "", http.StatusBadRequest, "maximum"},
		{"GET", "/api/calc?n=10&p=0.1&k=0", "", http.StatusBadRequest, "k = \"0\": must be in [1, 64]"},
		{"GET", "/api/calc?n=10&p=0.1&k=65", "", http.StatusBadRequest, "must be in [1, 64]"},
		{"GET", "/api/calc?n=10&p=0.1&k=two", "", http.StatusBadRequest, "want an integer"},
		{"GET", "/api/calc?n=10000000000&p=1e-9&k=1", "", http.StatusBadRequest, "would need more than 1099511627776 bits, the most a filter may have"},
	})
}

// TestChart checks the chart's lines, point by point, against the bloom
// package's rates: the optimal classic filter (k = round(c·ln 2)), the
// fixed k, the blocked filter at its best k, and the bound 2^−c.
func TestChart(t *testing.T) {
	h := FilterHandler()
	for _, k := range []int{0, 1, 4, 16} {
		target := "/api/chart"
		want := 4
		if k > 0 {
			target, want = fmt.Sprintf("/api/chart?k=%d", k), k
		}
		r := get[chartResponse](t, h, target)
		if r.K != want || len(r.Lines) != 4 || len(r.X) != int((chartTo-chartFrom)/chartStep)+1 || r.X[0] != chartFrom {
			t.Fatalf("%s: k = %d, %d lines, %d points; want k = %d, 4 lines over [%v, %v]", target, r.K, len(r.Lines), len(r.X), want, chartFrom, chartTo)
		}
		for i, c := range r.X {
			m := uint64(c * chartItems)
			opt := max(1, int(math.Round(c*math.Ln2)))
			wants := map[string]float64{
				"classic": bloom.ClassicFalsePositiveRate(m, opt, chartItems),
				"fixedK":  bloom.ClassicFalsePositiveRate(m, want, chartItems),
				"blocked": bloom.BlockedFalsePositiveRate(c, bloom.BlockedProbes(c)),
				"bound":   math.Pow(2, -c),
			}
			for _, l := range r.Lines {
				if w, ok := wants[l.Name]; !ok || math.Abs(l.Y[i]-w) > 1e-12*w {
					t.Errorf("%s: %s at c = %v: %v, want %v", target, l.Name, c, l.Y[i], w)
				}
			}
			// The optimal classic filter is within a few percent of the
			// straight line e^(−c·(ln 2)²) (exact for a real-valued k), and
			// 1.44× the bound's bits: p^(1/1.44) is the bound at c/1.44.
			if ideal := math.Exp(-c * math.Ln2 * math.Ln2); math.Abs(wants["classic"]/ideal-1) > 0.12 {
				t.Errorf("classic at c = %v: %v, off the straight line's %v", c, wants["classic"], ideal)
			}
		}
	}
	checkRefusals(t, h, []refusal{
		{"GET", "/api/chart?k=0", "", http.StatusBadRequest, "must be in [1, 16]"},
		{"GET", "/api/chart?k=17", "", http.StatusBadRequest, "must be in [1, 16]"},
		{"GET", "/api/chart?k=", "", http.StatusOK, ""},
		{"DELETE", "/api/chart", "", http.StatusMethodNotAllowed, "use GET"},
	})
}

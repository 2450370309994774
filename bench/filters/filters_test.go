package filters

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
)

// The tests' setting: fewer keys than the benchmarks' million, so that the
// tests stay fast (also under -race), but a million absent keys, so that a
// measured rate of about 1% has a binomial error of about 1% of itself.
const (
	testN          = 100_000
	testAbsent     = 1_000_000
	testBitsPerKey = 10
)

type testSuite struct {
	present, absent []Key
	filters         []Filter
}

var loadTestSuite = sync.OnceValues(func() (*testSuite, error) {
	s := &testSuite{
		present: Keys(testN, PresentTag, Seed),
		absent:  Keys(testAbsent, AbsentTag, Seed),
	}
	var err error
	s.filters, err = Build(s.present, testBitsPerKey)
	return s, err
})

func suite(t *testing.T) *testSuite {
	t.Helper()
	s, err := loadTestSuite()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return s
}

func TestKeysDistinctDisjointAndFixed(t *testing.T) {
	present, absent := Keys(10_000, PresentTag, Seed), Keys(10_000, AbsentTag, Seed)
	seen := make(map[Key]bool, len(present)+len(absent))
	for _, set := range [][]Key{present, absent} {
		for _, k := range set {
			if seen[k] {
				t.Fatalf("key %x appears twice", k)
			}
			seen[k] = true
		}
	}
	again := Keys(10_000, PresentTag, Seed)
	for i := range present {
		if present[i] != again[i] {
			t.Fatalf("Keys with the same seed differ at %d: %x, then %x", i, present[i], again[i])
		}
	}
}

func TestBuildOrder(t *testing.T) {
	s := suite(t)
	want := []string{BloomkvBlocked, BloomkvClassic, BitsAndBlooms}
	if len(s.filters) != len(want) {
		t.Fatalf("Build returned %d filters, want %d", len(s.filters), len(want))
	}
	for i, f := range s.filters {
		if f.Name() != want[i] {
			t.Errorf("filter %d is %s, want %s", i, f.Name(), want[i])
		}
	}
}

func TestNoFalseNegatives(t *testing.T) {
	s := suite(t)
	for _, f := range s.filters {
		for _, k := range s.present {
			if !f.MayContain(k[:]) {
				t.Errorf("%s: MayContain(%x) = false for an added key", f.Name(), k)
				break
			}
		}
	}
}

// TestEqualMemory checks the rule of the comparison: every filter has the
// same memory, the blocked one rounded up to whole 512-bit (64-byte)
// blocks, and the two classic filters the same probes.
func TestEqualMemory(t *testing.T) {
	s := suite(t)
	wantBytes := testN * testBitsPerKey / 8
	for _, f := range s.filters {
		if d := f.Bytes() - wantBytes; d < 0 || d >= 64 {
			t.Errorf("%s: %d bytes, want %d rounded up to at most one 64-byte block", f.Name(), f.Bytes(), wantBytes)
		}
	}
	if c, bb := s.filters[1], s.filters[2]; c.Probes() != bb.Probes() {
		t.Errorf("%s has %d probes, %s %d", c.Name(), c.Probes(), bb.Name(), bb.Probes())
	}
}

// TestFalsePositiveRate checks each filter's measured rate against the rate
// its formula predicts, within 5 standard deviations of the measurement.
// Two things make the measured rate vary, independently:
//
//   - which absent keys hit set bits, given the filter: binomial over A
//     keys, variance p(1−p)/A;
//   - which bits the n present keys set: variance σ_f² (see filterSD).
//
// The tolerance is 5·√(p(1−p)/A + σ_f²), so at least 5 binomial standard
// deviations. At this setting σ_f is about 0.35 of the binomial deviation
// for the classic filters and 1.5 of it for the blocked one, whose ~2,000
// blocks hold unequal numbers of keys; the tolerance comes to about 6% of
// the rate for the classic filters and 9% for the blocked one — tight
// enough to catch, say, double hashing inside a block, which measures 18%
// above the blocked formula.
func TestFalsePositiveRate(t *testing.T) {
	s := suite(t)
	for _, f := range s.filters {
		got, want := MeasureFPR(f, s.absent), f.PredictedFPR()
		binomial := want * (1 - want) / float64(len(s.absent))
		sdF := filterSD(f, len(s.present))
		tol := 5 * math.Sqrt(binomial+sdF*sdF)
		t.Logf("%s: measured %.5f, predicted %.5f, tolerance ±%.5f (σ_binomial %.2g, σ_filter %.2g)",
			f.Name(), got, want, tol, math.Sqrt(binomial), sdF)
		if math.Abs(got-want) > tol {
			t.Errorf("%s: measured false-positive rate %.5f, formula %.5f: off by more than %.5f",
				f.Name(), got, want, tol)
		}
	}
}

// filterSD returns σ_f, the standard deviation across random key sets of
// the true false-positive rate of filter f holding n keys.
//
// Blocked: the rate is the mean over B blocks of r(i), the classic rate of a
// 512-bit block holding i keys, i ~ Poisson(λ = 512·n/m) as in
// bloom.BlockedFalsePositiveRate; so σ_f² ≈ Var[r(i)]/B.
//
// Classic: the rate is (X/m)^k for X bits set. X is the occupied bins when
// kn balls fall into m bins, c = kn/m: Var X ≈ m·e^−c·(1 − (1+c)·e^−c), and
// σ_f ≈ k·p·σ_X/X.
func filterSD(f Filter, n int) float64 {
	k, m := float64(f.Probes()), float64(8*f.Bytes())
	if f.Name() != BloomkvBlocked {
		c := k * float64(n) / m
		x := -m * math.Expm1(-c)
		varX := m * math.Exp(-c) * (1 - (1+c)*math.Exp(-c))
		return k * f.PredictedFPR() * math.Sqrt(varX) / x
	}
	const blockBits = 512
	lambda := blockBits * float64(n) / m
	var mean, meanSq float64
	for i := 0.0; i <= lambda+20*math.Sqrt(lambda)+20; i++ {
		lg, _ := math.Lgamma(i + 1)
		w := math.Exp(i*math.Log(lambda) - lambda - lg)
		r := math.Pow(-math.Expm1(k*i*math.Log1p(-1.0/blockBits)), k)
		mean += w * r
		meanSq += w * r * r
	}
	return math.Sqrt((meanSq - mean*mean) / (m / blockBits))
}

func TestBuildRejectsBadSizes(t *testing.T) {
	for _, c := range []struct {
		name       string
		keys       int
		bitsPerKey float64
		arg        string
	}{
		{"bits per key below 1", 10, 0.5, "bitsPerKey"},
		{"bits per key NaN", 10, math.NaN(), "bitsPerKey"},
		{"no keys", 0, 10, "m"},
	} {
		_, err := Build(Keys(c.keys, PresentTag, Seed), c.bitsPerKey)
		var ae *bloom.ArgumentError
		if !errors.As(err, &ae) || ae.Arg != c.arg {
			t.Errorf("%s: Build error %v, want a *bloom.ArgumentError for %s", c.name, err, c.arg)
		}
	}
}

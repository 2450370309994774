package bloom

import (
	"errors"
	"math"
	"testing"
)

func TestClassicParams(t *testing.T) {
	for _, tc := range []struct {
		n     int
		p     float64
		wantM uint64
		wantK int
	}{
		// m = ⌈−n ln p / ln²2⌉, k = round(m/n · ln 2), worked by hand.
		{1_000_000, 0.01, 9_585_059, 7},
		{1_000_000, 0.001, 14_377_588, 10},
		{1000, 0.1, 4793, 3},
		{1, 0.5, 2, 1},
	} {
		m, k, err := ClassicParams(tc.n, tc.p)
		if err != nil || m != tc.wantM || k != tc.wantK {
			t.Errorf("ClassicParams(%d, %v) = %d, %d, %v; want %d, %d", tc.n, tc.p, m, k, err, tc.wantM, tc.wantK)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		arg  string
		call func() error
	}{
		{"n zero", "n", func() error { _, err := NewClassic(0, 0.01); return err }},
		{"n negative", "n", func() error { _, err := NewClassic(-5, 0.01); return err }},
		{"p zero", "p", func() error { _, err := NewClassic(10, 0); return err }},
		{"p one", "p", func() error { _, err := NewClassic(10, 1); return err }},
		{"p negative", "p", func() error { _, err := NewCounting(10, -0.1); return err }},
		{"p NaN", "p", func() error { _, err := NewClassic(10, math.NaN()); return err }},
		{"p too small for k", "p", func() error { _, err := NewClassic(10, 1e-30); return err }},
		{"n overflows bits", "n", func() error { _, err := NewClassic(math.MaxInt, 0.01); return err }},
		{"m zero", "m", func() error { _, err := NewClassicSize(0, 3); return err }},
		{"m too large", "m", func() error { _, err := NewCountingSize(MaxBits+1, 3); return err }},
		{"k zero", "k", func() error { _, err := NewClassicSize(64, 0); return err }},
		{"k too large", "k", func() error { _, err := NewClassicSize(64, MaxProbes+1); return err }},
		{"blocked n negative", "n", func() error { _, err := NewBlocked(-1, 10); return err }},
		{"blocked bits/key zero", "bitsPerKey", func() error { _, err := NewBlocked(10, 0); return err }},
		{"blocked bits/key NaN", "bitsPerKey", func() error { _, err := BuildBlocked(nil, math.NaN()); return err }},
		{"blocked bits/key huge", "bitsPerKey", func() error { _, err := NewBlocked(10, 65); return err }},
		{"blocked n overflows", "n", func() error { _, err := NewBlocked(math.MaxInt/2, 64); return err }},
		{"check bits/key small", "bitsPerKey", func() error { return CheckBitsPerKey(0.5) }},
		{"check bits/key huge", "bitsPerKey", func() error { return CheckBitsPerKey(MaxBitsPerKey + 0.1) }},
		{"bitmap too long", "bitmap", func() error { _, err := NewClassicFromBitmap(8, 1, []byte{1, 2}); return err }},
		{"bitmap bits past m", "bitmap", func() error { _, err := NewClassicFromBitmap(4, 1, []byte{0x08}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *ArgumentError", err)
			}
			if ae.Arg != tc.arg {
				t.Fatalf("error names %q, want %q: %v", ae.Arg, tc.arg, err)
			}
		})
	}
	for _, b := range []float64{1, 10, MaxBitsPerKey} {
		if err := CheckBitsPerKey(b); err != nil {
			t.Errorf("CheckBitsPerKey(%v) = %v, want nil: the range is closed", b, err)
		}
	}
}

func TestClassicFalsePositiveRateFormula(t *testing.T) {
	// At the optimal k the rate is about 0.6185^(m/n): 0.6185^10 = 0.82%.
	if got := ClassicFalsePositiveRate(10_000, 7, 1000); math.Abs(got-0.008194) > 1e-5 {
		t.Fatalf("rate at 10 bits/key, k = 7: %v, want 0.008194", got)
	}
	if got := ClassicFalsePositiveRate(0, 1, 1); got != 1 {
		t.Fatalf("empty filter rate %v, want 1", got)
	}
}

func TestBlockedFalsePositiveRateFormula(t *testing.T) {
	// Known values of the Putze formula for 512-bit blocks.
	for _, tc := range []struct {
		bitsPerKey float64
		k          int
		want       float64
	}{
		{10, 7, 0.0095712},
		{16, 10, 0.0008246},
		{8, 5, 0.0231212},
	} {
		got := BlockedFalsePositiveRate(tc.bitsPerKey, tc.k)
		if math.Abs(got-tc.want)/tc.want > 1e-3 {
			t.Errorf("BlockedFalsePositiveRate(%v, %d) = %v, want %v", tc.bitsPerKey, tc.k, got, tc.want)
		}
		if k := BlockedProbes(tc.bitsPerKey); k != tc.k {
			t.Errorf("BlockedProbes(%v) = %d, want %d", tc.bitsPerKey, k, tc.k)
		}
	}
	// A blocked filter is never better than a classic one at the same
	// memory, and converges to it as blocks hold fewer keys.
	for c := 2.0; c <= 40; c += 2 {
		k := BlockedProbes(c)
		classic := ClassicFalsePositiveRate(1_000_000, k, 1_000_000/c)
		if blocked := BlockedFalsePositiveRate(c, k); blocked < classic*0.999 {
			t.Errorf("at %v bits/key, k = %d: blocked %v below classic %v", c, k, blocked, classic)
		}
	}
}

func TestBlockedBitsPerKey(t *testing.T) {
	for _, p := range []float64{0.1, 0.01, 0.001} {
		c := BlockedBitsPerKey(p)
		if r := BlockedFalsePositiveRate(c, BlockedProbes(c)); r > p {
			t.Errorf("BlockedBitsPerKey(%v) = %v reaches only %v", p, c, r)
		}
		if r := BlockedFalsePositiveRate(c-0.02, BlockedProbes(c-0.02)); r <= p {
			t.Errorf("BlockedBitsPerKey(%v) = %v is not the fewest: %v already reaches %v", p, c, c-0.02, r)
		}
		if c < MinBitsPerKey(p) {
			t.Errorf("BlockedBitsPerKey(%v) = %v beats the lower bound %v", p, c, MinBitsPerKey(p))
		}
	}
}

// TestClassicBitsPerKey checks the closed form by putting its answer back
// into the rate formula, and the lesson it teaches: the optimal k needs the
// fewest bits, about 1.44·log2(1/p), and a k off by some needs more.
func TestClassicBitsPerKey(t *testing.T) {
	for _, p := range []float64{0.5, 0.1, 0.01, 0.001, 1e-6} {
		best, bestK := math.Inf(1), 0
		for k := 1; k <= 30; k++ {
			c := ClassicBitsPerKey(p, k)
			if rate := math.Pow(-math.Expm1(-float64(k)/c), float64(k)); math.Abs(rate-p)/p > 1e-9 {
				t.Fatalf("p = %v, k = %d: %v bits/key give rate %v", p, k, c, rate)
			}
			if c < best {
				best, bestK = c, k
			}
		}
		opt := -math.Log2(p) / math.Ln2 // 1.44·log2(1/p), at the unrounded optimal k
		if best < opt*(1-1e-9) || best > opt*1.05 {
			t.Errorf("p = %v: the fewest bits/key %v (k = %d), want just above %v", p, best, bestK, opt)
		}
		// The best integer k is next to the real optimum log2(1/p).
		if kStar := -math.Log2(p); float64(bestK) < math.Floor(kStar) || float64(bestK) > math.Ceil(kStar) {
			t.Errorf("p = %v: best k %d, not next to the optimum %.2f", p, bestK, kStar)
		}
	}
	for _, tc := range []struct {
		p float64
		k int
	}{{0, 3}, {1, 3}, {math.NaN(), 3}, {0.01, 0}} {
		if c := ClassicBitsPerKey(tc.p, tc.k); !math.IsNaN(c) {
			t.Errorf("ClassicBitsPerKey(%v, %d) = %v, want NaN", tc.p, tc.k, c)
		}
	}
}

func TestBlockedBitsPerKeyAtProbes(t *testing.T) {
	for _, tc := range []struct {
		p float64
		k int
	}{{0.01, 7}, {0.01, 4}, {0.01, 2}, {0.001, 10}, {0.001, 3}, {0.1, 1}} {
		c := BlockedBitsPerKeyAtProbes(tc.p, tc.k)
		if r := BlockedFalsePositiveRate(c, tc.k); r > tc.p {
			t.Errorf("BlockedBitsPerKeyAtProbes(%v, %d) = %v reaches only %v", tc.p, tc.k, c, r)
		}
		if r := BlockedFalsePositiveRate(c-0.02, tc.k); r <= tc.p {
			t.Errorf("BlockedBitsPerKeyAtProbes(%v, %d) = %v is not the fewest: %v reaches %v", tc.p, tc.k, c, c-0.02, r)
		}
		if best := BlockedBitsPerKey(tc.p); c < best {
			t.Errorf("k = %d needs %v bits/key for %v, fewer than the best k's %v", tc.k, c, tc.p, best)
		}
	}
	// One probe cannot reach 1e-4 within 64 bits per key (it needs about
	// 10,000); nor can a k no block takes.
	for _, tc := range []struct {
		p float64
		k int
	}{{1e-4, 1}, {0.01, 0}, {0.01, MaxBlockedProbes + 1}} {
		if c := BlockedBitsPerKeyAtProbes(tc.p, tc.k); !math.IsInf(c, 1) {
			t.Errorf("BlockedBitsPerKeyAtProbes(%v, %d) = %v, want +Inf", tc.p, tc.k, c)
		}
	}
}

// TestBlockedFalsePositiveRateSum checks BlockedFalsePositiveRate's
// recurrences against the sum written out term by term (each Poisson
// weight from the log-gamma, each classic rate from a power) from i = 0,
// over the bits per key and probe counts the filters and planners use.
func TestBlockedFalsePositiveRateSum(t *testing.T) {
	direct := func(bitsPerKey float64, k int) float64 {
		lambda := 512 / bitsPerKey
		logKeep := math.Log1p(-1.0 / 512)
		var sum float64
		for i := 0; i <= int(lambda+20*math.Sqrt(lambda)+20); i++ {
			fi := float64(i)
			lg, _ := math.Lgamma(fi + 1)
			sum += math.Exp(fi*math.Log(lambda)-lambda-lg) * math.Pow(-math.Expm1(float64(k)*fi*logKeep), float64(k))
		}
		return sum
	}
	for _, bitsPerKey := range []float64{0.8, 1, 1.5, 2, 3.3, 4, 5, 6.25, 7, 8, 9.7, 10, 12, 14.5, 16, 20, 24, 32, 40, 64} {
		for k := 1; k <= MaxBlockedProbes; k++ {
			got, want := BlockedFalsePositiveRate(bitsPerKey, k), direct(bitsPerKey, k)
			if math.Abs(got-want) > 1e-12*want {
				t.Errorf("BlockedFalsePositiveRate(%v, %d) = %v, the sum term by term %v: off by %.2g", bitsPerKey, k, got, want, (got-want)/want)
			}
		}
	}
}

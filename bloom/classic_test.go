package bloom

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestNoFalseNegatives adds random key sets of random sizes to every kind of
// filter and checks that each added key tests positive, before and after a
// serialization round trip.
func TestNoFalseNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 20 {
		n := 1 + rng.IntN(5000)
		keys := keySet('P', n, uint64(trial))
		p := []float64{0.5, 0.1, 0.01, 0.0001}[trial%4]
		bitsPerKey := []float64{1, 2, 6.5, 10, 23}[trial%5]

		classic, err := NewClassic(n, p)
		must(t, err)
		counting, err := NewCounting(n, p)
		must(t, err)
		incremental, err := NewBlocked(n, bitsPerKey)
		must(t, err)
		hashes := make([]uint64, n)
		for i, k := range keys {
			classic.Add(k)
			counting.Add(k)
			incremental.Add(k)
			hashes[i] = Hash(k)
		}
		built, err := BuildBlocked(hashes, bitsPerKey)
		must(t, err)

		for _, f := range []Filter{classic, counting, incremental, built} {
			data, _ := f.MarshalBinary()
			decoded, err := Unmarshal(data)
			must(t, err)
			for _, k := range keys {
				if !f.MayContain(k) || !decoded.MayContain(k) {
					t.Fatalf("trial %d: %T lost key %x (n = %d)", trial, f, k, n)
				}
			}
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestClassicFalsePositiveRate measures the rate over at least a million
// absent keys and compares it with (1 − e^(−kn/m))^k. The 15% tolerance is
// the specification's; the query count is chosen so that binomial noise is
// at most a fifth of it, so a pass is not luck and a fail is not noise.
// Under -race, p = 0.01 alone (settingsFor).
func TestClassicFalsePositiveRate(t *testing.T) {
	const n, tol = 100_000, 0.15
	for _, p := range settingsFor([]float64{0.1, 0.01, 0.001}, 1) {
		f, err := NewClassic(n, p)
		must(t, err)
		for _, k := range keySet('P', n, 1) {
			f.Add(k)
		}
		want := ClassicFalsePositiveRate(f.Bits(), f.Probes(), n)
		got := measureFPR(f.MayContain, queriesFor(want, tol, 5, 1_000_000), 2)
		if math.Abs(got-want)/want > tol {
			t.Errorf("p = %v: measured %.5f, formula %.5f", p, got, want)
		}
		t.Logf("p = %v (m = %d, k = %d): measured %.5f%%, formula %.5f%%", p, f.Bits(), f.Probes(), 100*got, 100*want)
	}
}

func TestTestAndAdd(t *testing.T) {
	f, err := NewClassic(1000, 0.001)
	must(t, err)
	keys := keySet('P', 1000, 3)
	falsePositives := 0
	for _, k := range keys {
		if f.TestAndAdd(k) {
			falsePositives++ // a new key that tested positive
		}
		if !f.TestAndAdd(k) {
			t.Fatalf("second TestAndAdd of %x reported absent", k)
		}
	}
	// Each first call is a query against a filter of fewer than n keys, so
	// false positives are rarer than p: expect ≤ 1, allow a generous 10.
	if falsePositives > 10 {
		t.Fatalf("%d of 1000 new keys reported present at p = 0.001", falsePositives)
	}
}

func TestUnion(t *testing.T) {
	a, _ := NewClassic(2000, 0.01)
	b, _ := NewClassic(2000, 0.01)
	keysA, keysB := keySet('P', 1000, 4), keySet('Q', 1000, 5)
	for i := range keysA {
		a.Add(keysA[i])
		b.Add(keysB[i])
	}
	// Union is the OR of the bits: compare with a filter built from both.
	both, _ := NewClassic(2000, 0.01)
	for i := range keysA {
		both.Add(keysA[i])
		both.Add(keysB[i])
	}
	must(t, a.Union(b))
	if got, want := a.AppendBitmap(nil), both.AppendBitmap(nil); string(got) != string(want) {
		t.Fatal("union differs from the filter of both key sets")
	}
	other, _ := NewClassic(3000, 0.01)
	if err := a.Union(other); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("union of different sizes: %v, want ErrIncompatible", err)
	}
}

// TestEstimatedCount checks the Swamidass–Baldi estimate against the true
// count. The tolerance is five standard deviations of the estimate, from the
// variance of the number of set bits X (balls in bins, kn balls, m bins):
// Var X ≈ m·e^(−2t)·(e^t − 1 − t) with t = kn/m, and by the delta method
// sd(n̂) = sd(X) / (k·(1 − X/m)).
func TestEstimatedCount(t *testing.T) {
	for _, n := range []int{100, 10_000, 100_000} {
		f, _ := NewClassic(n, 0.01)
		for _, k := range keySet('P', n, 6) {
			f.Add(k)
		}
		m, k := float64(f.Bits()), float64(f.Probes())
		tt := k * float64(n) / m
		sdX := math.Sqrt(m * math.Exp(-2*tt) * (math.Exp(tt) - 1 - tt))
		sd := sdX / (k * math.Exp(-tt))
		if got := f.EstimatedCount(); math.Abs(got-float64(n)) > 5*sd {
			t.Errorf("n = %d: estimated %.1f, more than 5 sd (%.1f) away", n, got, sd)
		}
		// The estimated rate from the fill agrees with the formula for n.
		want := ClassicFalsePositiveRate(f.Bits(), f.Probes(), float64(n))
		if got := f.EstimatedFalsePositiveRate(); math.Abs(got-want)/want > 0.1 {
			t.Errorf("n = %d: estimated rate %v, formula %v", n, got, want)
		}
	}
	full, _ := NewClassicSize(64, 1)
	for i := range 10_000 {
		full.AddHash(uint64(i) << 54) // reduce maps the top 6 bits to every bit
	}
	if got := full.EstimatedCount(); !math.IsInf(got, 1) {
		t.Fatalf("full filter estimate %v, want +Inf", got)
	}
}

// TestClassicLocations pins the probe positions: they are part of the
// Redis-shared filter's format, so they must never change. The oracle is
// the definition computed with big integers: position i is
// ⌊((h + i·remix(h)) mod 2⁶⁴) · m / 2⁶⁴⌋.
func TestClassicLocations(t *testing.T) {
	const m, k = 1_000_003, 4
	h := Hash([]byte("bloomkv"))
	if h != 0x990d48f26be15134 { // xxhash64("bloomkv"), seed 0
		t.Fatalf("Hash(\"bloomkv\") = %#x: the hash function changed", h)
	}
	got := ClassicLocations(nil, h, m, k)
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for i := range k {
		x := new(big.Int).Mul(big.NewInt(int64(i)), new(big.Int).SetUint64(remix(h)))
		x.Add(x, new(big.Int).SetUint64(h)).Mod(x, two64)
		x.Mul(x, big.NewInt(m)).Rsh(x, 64)
		if got[i] != x.Uint64() {
			t.Fatalf("location %d = %d, definition gives %d", i, got[i], x.Uint64())
		}
	}
	if want := []uint64{597860, 249769, 901682, 553591}; !slices.Equal(got, want) {
		t.Fatalf("locations %v, pinned %v", got, want)
	}
	// The filter sets exactly those bits.
	f, _ := NewClassicSize(m, k)
	f.Add([]byte("bloomkv"))
	bitmap := f.AppendBitmap(nil)
	for i := range uint64(m) {
		if set := bitmap[i/8]&(0x80>>(i%8)) != 0; set != slices.Contains(got, i) {
			t.Fatalf("bit %d set = %v, locations %v", i, set, got)
		}
	}
}

func TestBitmapRoundTrip(t *testing.T) {
	for _, m := range []uint64{1, 7, 8, 63, 64, 65, 1000} {
		f, _ := NewClassicSize(m, 3)
		for _, k := range keySet('P', 20, m) {
			f.Add(k)
		}
		bitmap := f.AppendBitmap(nil)
		if uint64(len(bitmap)) != (m+7)/8 {
			t.Fatalf("m = %d: bitmap of %d bytes", m, len(bitmap))
		}
		// Redis drops trailing zero bytes; a short bitmap must still load.
		trimmed := bitmap
		for len(trimmed) > 0 && trimmed[len(trimmed)-1] == 0 {
			trimmed = trimmed[:len(trimmed)-1]
		}
		g, err := NewClassicFromBitmap(m, 3, trimmed)
		must(t, err)
		if string(g.AppendBitmap(nil)) != string(bitmap) {
			t.Fatalf("m = %d: bitmap changed in a round trip", m)
		}
	}
}

// TestClassicConcurrent adds disjoint key sets from several goroutines while
// others query; run under -race it also proves the absence of data races.
func TestClassicConcurrent(t *testing.T) {
	const writers, perWriter = 4, 5000
	f, _ := NewClassic(writers*perWriter, 0.01)
	c, _ := NewCounting(writers*perWriter, 0.01)
	b, _ := NewBlocked(writers*perWriter, 10)
	sets := make([][][]byte, writers)
	for w := range sets {
		sets[w] = keySet(byte('a'+w), perWriter, uint64(w))
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for _, k := range sets[w] {
				f.TestAndAdd(k)
				c.Add(k)
				b.Add(k)
				if !f.MayContain(k) || !c.MayContain(k) || !b.MayContain(k) {
					t.Errorf("key %x absent right after its Add", k)
					return
				}
			}
		}()
		go func() { // a reader racing the writers
			defer wg.Done()
			for _, k := range sets[(w+1)%writers] {
				f.MayContain(k)
				c.MayContain(k)
				b.MayContain(k)
			}
			f.MarshalBinary()
			f.EstimatedCount()
		}()
	}
	wg.Wait()
	for _, set := range sets {
		for _, k := range set {
			if !f.MayContain(k) || !c.MayContain(k) || !b.MayContain(k) {
				t.Fatalf("key %x lost under concurrency", k)
			}
		}
	}
	if got := c.EstimatedCount(); got != writers*perWriter && c.Saturated() == 0 {
		t.Fatalf("counting filter counts %v, want %d", got, writers*perWriter)
	}
}

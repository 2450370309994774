package workload

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestFNVHash64 checks YCSB's hash against the standard library's
// FNV-1a over the value's eight little-endian bytes, made non-negative as
// Java's Math.abs does.
func TestFNVHash64(t *testing.T) {
	for _, v := range []int64{0, 1, 2, 255, 256, 1 << 40, 9_999_999, math.MaxInt64, -1, math.MinInt64} {
		h := fnv.New64a()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
		want := int64(h.Sum64())
		if want < 0 {
			want = -want
		}
		if got := fnvHash64(v); got != want {
			t.Errorf("fnvHash64(%d) = %d, want %d", v, got, want)
		}
	}
}

// grayCDF is the exact law of YCSB's Zipfian generator over n items at
// exponent theta, derived independently from its definition: P(rank ≤ k)
// is, for k = 0, 1/ζ(n); for k = 1, (1 + 0.5^θ)/ζ(n); above, the u for
// which n·(η·u − η + 1)^α < k+1, u = ((k+1)/n)^(1−θ) − 1 + η) / η, at
// least (1 + 0.5^θ)/ζ(n) and at most 1.
func grayCDF(n int, theta float64) []float64 {
	var zetan float64
	for i := 1; i <= n; i++ {
		zetan += math.Pow(float64(i), -theta)
	}
	zeta2 := 1 + math.Pow(0.5, theta)
	eta := (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan)
	cdf := make([]float64, n)
	for k := range cdf {
		switch k {
		case 0:
			cdf[k] = 1 / zetan
		case 1:
			cdf[k] = zeta2 / zetan
		default:
			u := (math.Pow(float64(k+1)/float64(n), 1-theta) - 1 + eta) / eta
			cdf[k] = min(max(u, zeta2/zetan), 1)
		}
	}
	return cdf
}

// zipfLaw is the exact Zipf law over n ranks: P(k) = (k+1)^−θ / ζ(n).
func zipfLaw(n int, theta float64) []float64 {
	p := make([]float64, n)
	var zetan float64
	for i := range p {
		p[i] = math.Pow(float64(i+1), -theta)
		zetan += p[i]
	}
	for i := range p {
		p[i] /= zetan
	}
	return p
}

// chiSquareCritical is the value a χ² statistic of df degrees of freedom
// exceeds with probability 0.001 (Wilson–Hilferty: within 1% for df ≥ 10).
func chiSquareCritical(df int) float64 {
	const z = 3.0902 // the standard normal's 0.999 quantile
	d := float64(df)
	return d * math.Pow(1-2/(9*d)+z*math.Sqrt(2/(9*d)), 3)
}

// within reports whether count of n draws is within 4.5 binomial standard
// deviations of probability p (a false failure about once in 150,000).
func within(count, n int, p float64) bool {
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return math.Abs(float64(count)-float64(n)*p) <= 4.5*sd+1
}

// TestZipfianLaw draws 300,000 ranks of 100 items from the generator
// (fixed seed) and checks them against two oracles: the exact law of
// YCSB's algorithm (grayCDF), by a χ² test at p = 0.001 over all ranks;
// and the exact Zipf law, from which the algorithm departs by design
// (Gray et al.'s closed form is exact for the two most popular ranks
// only): ranks 0 and 1 within binomial bounds of Zipf's, and the
// algorithm's law within +20%/−5.2% of Zipf's at every rank, as the
// generator's doc says (at 100 and 10,000 items; the sampling at 100).
func TestZipfianLaw(t *testing.T) {
	const theta = ZipfianConstant
	for _, n := range []int{100, 10_000} {
		cdf, zipf := grayCDF(n, theta), zipfLaw(n, theta)
		for k := range n {
			p := cdf[k]
			if k > 0 {
				p -= cdf[k-1]
			}
			if r := p / zipf[k]; r > 1.200 || r < 0.948 {
				t.Errorf("n=%d rank %d: the algorithm's probability %.5g is %.3f× Zipf's %.5g", n, k, p, r, zipf[k])
			}
		}
		if n > 100 {
			continue // sampling is checked on 100 items: 10,000 would need far more draws per rank
		}
		const draws = 300_000
		z := newZipfian(0, int64(n-1), theta, rand.New(rand.NewPCG(1, 2)))
		counts := make([]int, n)
		for range draws {
			v := z.next()
			if v < 0 || v >= int64(n) {
				t.Fatalf("rank %d outside [0, %d)", v, n)
			}
			counts[v]++
		}
		var chi2 float64
		for k, c := range counts {
			p := cdf[k]
			if k > 0 {
				p -= cdf[k-1]
			}
			e := draws * p
			chi2 += (float64(c) - e) * (float64(c) - e) / e
		}
		if crit := chiSquareCritical(n - 1); chi2 > crit {
			t.Errorf("n=%d: χ² %.1f against the algorithm's law, above %.1f (p = 0.001, %d degrees of freedom)", n, chi2, crit, n-1)
		}
		for k := range 2 {
			if !within(counts[k], draws, zipf[k]) {
				t.Errorf("n=%d rank %d: %d of %d draws, Zipf's law expects %.0f", n, k, counts[k], draws, draws*zipf[k])
			}
		}
	}
}

// TestZipfianGrows checks nextN past the item count the generator was
// made with: ζ is extended to the new count (the most popular rank's
// probability 1/ζ(n) falls accordingly) and the draws stay in range.
func TestZipfianGrows(t *testing.T) {
	z := newZipfian(0, 99, ZipfianConstant, rand.New(rand.NewPCG(3, 4)))
	const draws = 200_000
	var zero int
	for range draws {
		v := z.nextN(1000)
		if v < 0 || v >= 1000 {
			t.Fatalf("rank %d outside [0, 1000)", v)
		}
		if v == 0 {
			zero++
		}
	}
	if want := zipfLaw(1000, ZipfianConstant)[0]; !within(zero, draws, want) {
		t.Errorf("rank 0: %d of %d draws, want %.0f (1/ζ(1000))", zero, draws, draws*want)
	}
	if z.countForZeta != 1000 {
		t.Errorf("ζ summed to %d items, want 1000", z.countForZeta)
	}
}

// TestScrambledZipfian checks that the scrambled generator covers the key
// space — every one of 1,000 items drawn — and puts its most popular
// item where the hash sends rank 0, with rank 0's probability (1/ζ over
// YCSB's 10¹⁰+1 items, 3.78%, plus the share of the other ranks hashed to
// the same item, about 1/1000 of the rest).
func TestScrambledZipfian(t *testing.T) {
	const n, draws = 1000, 300_000
	s := newScrambledZipfian(0, n-1, ZipfianConstant, rand.New(rand.NewPCG(5, 6)))
	counts := make([]int, n)
	for range draws {
		v := s.next()
		if v < 0 || v >= n {
			t.Fatalf("item %d outside [0, %d)", v, n)
		}
		counts[v]++
	}
	for i, c := range counts {
		if c == 0 {
			t.Fatalf("item %d never drawn in %d draws", i, draws)
		}
	}
	hot := fnvHash64(0) % n
	p0 := 1 / scrambledZetan
	if p := p0 + (1-p0)/n; !within(counts[hot], draws, p) {
		t.Errorf("item %d (rank 0 hashed): %d of %d draws, want about %.0f", hot, counts[hot], draws, draws*p)
	}
	for i, c := range counts {
		if c > counts[hot] {
			t.Errorf("item %d drawn %d times, more than rank 0's item %d (%d)", i, c, hot, counts[hot])
		}
	}
}

// TestSkewedLatest checks that the latest distribution follows the
// inserts: the newest acknowledged record is the most popular, with rank
// 0's probability, and no draw is past it.
func TestSkewedLatest(t *testing.T) {
	c := newAckCounter(1000)
	g := newSkewedLatest(c, rand.New(rand.NewPCG(7, 8)))
	for round := range 2 {
		last := c.last()
		const draws = 100_000
		var newest int
		for range draws {
			v := g.next()
			if v < 1 || v > last {
				t.Fatalf("round %d: record %d outside [1, %d]", round, v, last)
			}
			if v == last {
				newest++
			}
		}
		if want := zipfLaw(int(last), ZipfianConstant)[0]; !within(newest, draws, want) {
			t.Errorf("round %d: the newest record %d drawn %d of %d times, want about %.0f", round, last, newest, draws, draws*want)
		}
		for range 100 { // insert 100 records
			c.acknowledge(c.nextValue())
		}
	}
}

// TestAckCounter checks that last moves only over acknowledged numbers
// with none missing below them, from one goroutine and from many.
func TestAckCounter(t *testing.T) {
	c := newAckCounter(10)
	a, b, d := c.nextValue(), c.nextValue(), c.nextValue()
	if a != 10 || b != 11 || d != 12 || c.last() != 9 {
		t.Fatalf("numbers %d %d %d, last %d", a, b, d, c.last())
	}
	c.acknowledge(b)
	if c.last() != 9 {
		t.Errorf("11 acknowledged before 10: last %d, want 9", c.last())
	}
	c.acknowledge(a)
	if c.last() != 11 {
		t.Errorf("10 and 11 acknowledged: last %d, want 11", c.last())
	}
	c.acknowledge(d)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				v := c.nextValue()
				if v > c.last()+9000 {
					t.Errorf("number %d far past last %d", v, c.last())
				}
				c.acknowledge(v)
			}
		}()
	}
	wg.Wait()
	if c.last() != 13+8000-1 || len(c.pending) != 0 {
		t.Errorf("after 8,000 more: last %d, want %d; %d pending", c.last(), 13+8000-1, len(c.pending))
	}
}

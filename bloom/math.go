package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// Limits on filter parameters. They keep every size computation far from
// overflow and every probe loop short.
const (
	// MaxBits is the largest classic or counting filter, in bits or
	// counters: 2^40 (128 GiB of bits). A 32-bit platform holds less: no
	// filter there has more than 2^31 bytes, about 2^34 bits or 2^32
	// 4-bit counters (2^31 of 8 bits, 2^30 of 16), since an int must count
	// them.
	MaxBits = 1 << 40
	// MaxProbes is the largest number of probes of a classic or counting
	// filter. A target rate that needs more (p below about 1e-19) is refused.
	MaxProbes = 64
	// MaxBlockedProbes is the largest number of probes in one 512-bit block.
	MaxBlockedProbes = 32
	// MaxBitsPerKey is the largest bits-per-key a blocked filter accepts;
	// past it a 512-bit block holds too few keys for the formula to matter.
	MaxBitsPerKey = 64
)

// platformMaxInt is the largest int of the platform the package is built
// for: 2^31−1 on 32-bit platforms, where MaxBits bits are far more words
// than an int can count.
const platformMaxInt uint64 = math.MaxInt

// maxFilterWords is the most 64-bit words w a filter may have on a platform
// whose largest int is maxInt: the bytes of its words with the slack
// alignedWords allocates, 8·(w+7), and of its encoding (header, payload,
// checksum), 36+8·w+4, must both be ints. Past that, make panics or a
// conversion to int silently wraps — on a 32-bit platform 2^38 bits are
// 2^32 words, which convert to an int of 0.
func maxFilterWords(maxInt uint64) uint64 {
	return min(maxInt/8-(blockWords-1), (maxInt-headerLen-checksumLen)/8)
}

// checkFits returns an *ArgumentError naming arg, whose value is value,
// when a filter of words 64-bit words is more than a platform whose largest
// int is maxInt can hold (see maxFilterWords).
func checkFits(arg string, value any, words, maxInt uint64) error {
	if why := tooLarge(words, maxInt); why != "" {
		return argError(arg, value, "%s", why)
	}
	return nil
}

// tooLarge says why a filter of words 64-bit words does not fit a platform
// whose largest int is maxInt, or returns "" if it fits.
func tooLarge(words, maxInt uint64) string {
	if limit := maxFilterWords(maxInt); words > limit {
		return fmt.Sprintf("the filter needs %d bytes, more than the %d a %d-bit platform can hold in one slice",
			words*8, limit*8, bits.Len64(maxInt)+1)
	}
	return ""
}

// sizeFor is ClassicParams for a filter of kind (classic, or counting with
// counters of counterBits bits) that must fit a platform whose largest int
// is maxInt.
func sizeFor(kind Kind, n int, p float64, counterBits int, maxInt uint64) (m uint64, k int, err error) {
	m, k, err = ClassicParams(n, p)
	if err == nil {
		err = checkFits("n", n, payloadWords(kind, m, counterBits), maxInt)
	}
	return m, k, err
}

// ClassicParams returns the size m in bits and the number of probes k of a
// classic Bloom filter for n expected items at false-positive rate p:
//
//	m = ⌈−n·ln p / (ln 2)²⌉,  k = round((m/n)·ln 2), at least 1.
//
// It returns an *ArgumentError when n < 1, p is not in (0, 1), or the filter
// would exceed MaxBits or MaxProbes.
func ClassicParams(n int, p float64) (m uint64, k int, err error) {
	if n < 1 {
		return 0, 0, argError("n", n, "expected insertions must be at least 1")
	}
	if math.IsNaN(p) || p <= 0 || p >= 1 {
		return 0, 0, argError("p", p, "false-positive rate must be in (0, 1)")
	}
	bitsF := math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
	if bitsF > MaxBits {
		return 0, 0, argError("n", n, "at p = %v the filter needs %.0f bits, more than the maximum %d", p, bitsF, uint64(MaxBits))
	}
	m = uint64(bitsF)
	k = probesFor(float64(m) / float64(n))
	if k > MaxProbes {
		return 0, 0, argError("p", p, "needs %d probes, more than the maximum %d", k, MaxProbes)
	}
	return m, k, nil
}

// probesFor is the classic filter's optimal probe count for bits per item c.
func probesFor(c float64) int { return max(1, int(math.Round(c*math.Ln2))) }

// ClassicFalsePositiveRate is the expected false-positive rate of a classic
// filter of m bits and k probes holding n distinct items: (1 − e^(−kn/m))^k.
func ClassicFalsePositiveRate(m uint64, k int, n float64) float64 {
	if m == 0 {
		return 1
	}
	return math.Pow(-math.Expm1(-float64(k)*n/float64(m)), float64(k))
}

// BlockedFalsePositiveRate is the expected false-positive rate of a blocked
// filter with bitsPerKey bits per key and k probes per key, all in one block
// of 512 bits (Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient
// Bloom Filters", 2007). The number of keys in a block is Poisson with mean
// λ = 512/bitsPerKey, and a block holding i keys answers falsely with the
// classic rate of a 512-bit filter of i keys:
//
//	FPR = Σ_i Poisson(i; λ) · (1 − (1 − 1/512)^(k·i))^k
func BlockedFalsePositiveRate(bitsPerKey float64, k int) float64 {
	if !(bitsPerKey > 0) || k < 1 {
		return 1
	}
	const b = blockBits
	lambda := b / bitsPerKey
	logKeep := math.Log1p(-1.0 / b) // ln(1 − 1/512)
	// The terms by recurrence from the Poisson's mode m, where it is
	// largest: Poisson(i+1) = Poisson(i)·λ/(i+1) upward and Poisson(i−1) =
	// Poisson(i)·i/λ downward, until the tail is negligible (20 standard
	// deviations and 20 more). Each term costs one Expm1 and k products
	// instead of a log-gamma and a power: the sum is asked for every table
	// written and every bits-per-key a planner tries. Starting at the mode
	// keeps every term in range where e^−λ itself would underflow.
	m := math.Floor(lambda)
	lgm, _ := math.Lgamma(m + 1)
	poissonAtMode := math.Exp(m*math.Log(lambda) - lambda - lgm)
	tail := 20*math.Sqrt(lambda) + 20
	term := func(i, poisson float64) float64 {
		return poisson * powInt(-math.Expm1(float64(k)*i*logKeep), k)
	}
	sum := term(m, poissonAtMode)
	for i, poisson := m+1, poissonAtMode*lambda/(m+1); i <= lambda+tail; i++ {
		sum += term(i, poisson)
		poisson *= lambda / (i + 1)
	}
	for i, poisson := m-1, poissonAtMode*m/lambda; i >= 0 && i >= lambda-tail; i-- {
		sum += term(i, poisson)
		poisson *= i / lambda
	}
	return sum
}

// powInt returns x^k for k ≥ 1 by repeated squaring.
func powInt(x float64, k int) float64 {
	r := 1.0
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r *= x
		}
		x *= x
	}
	return r
}

// BlockedProbes returns the number of probes that minimizes
// BlockedFalsePositiveRate at bitsPerKey. Because a block's keys are unevenly
// spread, it is smaller than the classic (m/n)·ln 2 at high bits per key.
func BlockedProbes(bitsPerKey float64) int {
	if k, ok := blockedProbesMemo.Load(bitsPerKey); ok {
		return k.(int)
	}
	best, bestRate := 1, math.Inf(1)
	for k := 1; k <= MaxBlockedProbes; k++ {
		if r := BlockedFalsePositiveRate(bitsPerKey, k); r < bestRate {
			best, bestRate = k, r
		}
	}
	blockedProbesMemo.Store(bitsPerKey, best)
	return best
}

// blockedProbesMemo remembers BlockedProbes by bits per key: the sums cost
// half a millisecond, and every table a DB writes asks again.
var blockedProbesMemo sync.Map

// ClassicBitsPerKey returns the bits per item a classic filter with a fixed
// k probes needs for false-positive rate p: the c that solves
// (1 − e^(−k/c))^k = p, that is c = −k / ln(1 − p^(1/k)). At the optimal k
// it is about 1.44·log2(1/p), what ClassicParams sizes; any other k needs
// more. It returns NaN for a p outside (0, 1) or a k below 1.
func ClassicBitsPerKey(p float64, k int) float64 {
	if !(p > 0 && p < 1) || k < 1 {
		return math.NaN()
	}
	// 1 − p^(1/k) as −expm1(ln(p)/k), exact for p^(1/k) near 1.
	return -float64(k) / math.Log(-math.Expm1(math.Log(p)/float64(k)))
}

// BlockedBitsPerKey returns the fewest bits per key (to 0.01) at which a
// blocked filter with its best probe count reaches false-positive rate p,
// or MaxBitsPerKey if none up to the limit does.
func BlockedBitsPerKey(p float64) float64 {
	c, _ := fewestBitsPerKey(p, func(c float64) float64 { return BlockedFalsePositiveRate(c, BlockedProbes(c)) })
	return c
}

// BlockedBitsPerKeyAtProbes is BlockedBitsPerKey for a blocked filter of a
// fixed k probes instead of the best k at each bits per key. It returns
// +Inf when no bits per key up to MaxBitsPerKey reaches p with k probes,
// or when k is outside [1, MaxBlockedProbes].
func BlockedBitsPerKeyAtProbes(p float64, k int) float64 {
	if k < 1 || k > MaxBlockedProbes {
		return math.Inf(1)
	}
	c, ok := fewestBitsPerKey(p, func(c float64) float64 { return BlockedFalsePositiveRate(c, k) })
	if !ok {
		return math.Inf(1)
	}
	return c
}

// fewestBitsPerKey bisects for the fewest bits per key c in [0.01,
// MaxBitsPerKey], rounded up to 0.01, with rate(c) ≤ p; rate must fall as
// c grows. It returns MaxBitsPerKey and false if rate(MaxBitsPerKey) > p.
func fewestBitsPerKey(p float64, rate func(c float64) float64) (float64, bool) {
	lo, hi := 0.01, float64(MaxBitsPerKey)
	if rate(hi) > p {
		return hi, false
	}
	for hi-lo > 0.005 {
		mid := (lo + hi) / 2
		if rate(mid) <= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Ceil(hi*100) / 100, true
}

// MinBitsPerKey is the information-theoretic lower bound on the memory of
// any approximate-membership structure with false-positive rate p:
// log2(1/p) bits per key. A classic Bloom filter needs 1.44 times as much.
func MinBitsPerKey(p float64) float64 { return -math.Log2(p) }

package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/bloomkv/bloomkv/bloom"
)

// MaxItems bounds the calculator's n.
const MaxItems = 10_000_000_000

// filterSize is one filter the calculator sizes.
type filterSize struct {
	M          uint64  `json:"m"`          // bits
	K          int     `json:"k"`          // probes
	Bytes      uint64  `json:"bytes"`      // memory of the bits: whole 64-bit words
	BitsPerKey float64 `json:"bitsPerKey"` // m/n
	FPR        float64 `json:"fpr"`        // the expected false-positive rate at n items
}

type calcResponse struct {
	N int     `json:"n"`
	P float64 `json:"p"`
	// Classic is bloom.ClassicParams(n, p); Blocked the blocked filter at
	// bloom.BlockedBitsPerKey(p) in whole 512-bit blocks; FixedK, when k is
	// given, the classic filter of k probes with the fewest bits that
	// reaches p. BoundBitsPerKey is bloom.MinBitsPerKey(p).
	Classic         filterSize  `json:"classic"`
	Blocked         filterSize  `json:"blocked"`
	FixedK          *filterSize `json:"fixedK,omitempty"`
	BoundBitsPerKey float64     `json:"boundBitsPerKey"`
}

func (s *server) calc(r *http.Request) (any, error) {
	q := r.URL.Query()
	n, err := intParam(q.Get("n"), "n", 1, MaxItems)
	if err != nil {
		return nil, err
	}
	p, err := strconv.ParseFloat(q.Get("p"), 64)
	if err != nil || !(p > 0 && p < 1) {
		return nil, badRequest("p = %q: want a false-positive rate in (0, 1)", q.Get("p"))
	}
	m, k, err := bloom.ClassicParams(n, p)
	if err != nil {
		return nil, badRequest("n = %d at p = %g: %s", n, p, reason(err))
	}
	resp := &calcResponse{N: n, P: p, Classic: classicSize(n, m, k), BoundBitsPerKey: bloom.MinBitsPerKey(p)}
	resp.Blocked, err = blockedSize(n, bloom.BlockedBitsPerKey(p))
	if err != nil {
		// The argument the bloom package names is one the request did not
		// carry: say which of the request's parameters led to it.
		return nil, badRequest("p = %g: the blocked filter cannot be sized: %s", p, reason(err))
	}
	if ks := q.Get("k"); ks != "" {
		fk, err := intParam(ks, "k", 1, bloom.MaxProbes)
		if err != nil {
			return nil, err
		}
		m, err := fixedKBits(n, p, fk)
		if err != nil {
			return nil, err
		}
		size := classicSize(n, m, fk)
		resp.FixedK = &size
	}
	return resp, nil
}

func classicSize(n int, m uint64, k int) filterSize {
	return filterSize{M: m, K: k, Bytes: 8 * ((m + 63) / 64), BitsPerKey: float64(m) / float64(n),
		FPR: bloom.ClassicFalsePositiveRate(m, k, float64(n))}
}

// blockedSize sizes a blocked filter for n items at bitsPerKey as
// bloom.NewBlocked does — whole 512-bit blocks — without allocating it,
// and gives its rate at the bits per item those blocks hold.
func blockedSize(n int, bitsPerKey float64) (filterSize, error) {
	if err := bloom.CheckBitsPerKey(bitsPerKey); err != nil {
		return filterSize{}, err
	}
	blocks := max(1, uint64(math.Ceil(float64(n)*bitsPerKey/512)))
	if blocks > bloom.MaxBits/512 {
		return filterSize{}, &bloom.ArgumentError{Arg: "n", Value: n, Reason: fmt.Sprintf("the blocked filter would need more than %d bits, the most a filter may have", uint64(bloom.MaxBits))}
	}
	m := blocks * 512
	k := bloom.BlockedProbes(bitsPerKey)
	return filterSize{M: m, K: k, Bytes: m / 8, BitsPerKey: float64(m) / float64(n),
		FPR: bloom.BlockedFalsePositiveRate(float64(m)/float64(n), k)}, nil
}

// fixedKBits is the fewest bits m at which a classic filter of k probes
// over n items reaches rate p: n times bloom.ClassicBitsPerKey, rounded up.
func fixedKBits(n int, p float64, k int) (uint64, error) {
	m := math.Ceil(float64(n) * bloom.ClassicBitsPerKey(p, k))
	if !(m <= bloom.MaxBits) {
		return 0, badRequest("k = %d: at p = %g the filter would need more than %d bits, the most a filter may have", k, p, uint64(bloom.MaxBits))
	}
	return uint64(max(1, m)), nil
}

// reason returns why the bloom package refused an argument, without the
// package's prefix and the argument's Go name: the request's parameters
// are named by the message that carries it.
func reason(err error) string {
	var ae *bloom.ArgumentError
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return err.Error()
}

func intParam(s, name string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		if errors.Is(err, strconv.ErrRange) || err == nil {
			return 0, badRequest("%s = %q: must be in [%d, %d]", name, s, lo, hi)
		}
		return 0, badRequest("%s = %q: want an integer in [%d, %d]", name, s, lo, hi)
	}
	return v, nil
}

// The chart's x axis: bits per element from chartFrom to chartTo.
const (
	chartFrom = 1.0
	chartTo   = 24.0
	chartStep = 0.5
	// chartItems is the n the classic lines are computed at: large enough
	// that m = c·n is c bits per item to many digits.
	chartItems = 1_000_000
)

// chartLine is one curve: the rate at each of the chart's X.
type chartLine struct {
	Name  string    `json:"name"`
	Label string    `json:"label"`
	Y     []float64 `json:"y"`
}

type chartResponse struct {
	K     int         `json:"k"`
	X     []float64   `json:"x"` // bits per element
	Lines []chartLine `json:"lines"`
}

func chartX() []float64 {
	var x []float64
	for c := chartFrom; c <= chartTo; c += chartStep {
		x = append(x, c)
	}
	return x
}

// blockedLine is the blocked filter's curve, the same for every request and
// the slowest to compute (BlockedProbes sums a series per probe count).
var blockedLine = sync.OnceValue(func() chartLine {
	l := chartLine{Name: "blocked", Label: "blocked (512-bit blocks), best k"}
	for _, c := range chartX() {
		l.Y = append(l.Y, bloom.BlockedFalsePositiveRate(c, bloom.BlockedProbes(c)))
	}
	return l
})

func (s *server) chart(r *http.Request) (any, error) {
	k := 4
	if ks := r.URL.Query().Get("k"); ks != "" {
		var err error
		if k, err = intParam(ks, "k", 1, MaxPlaygroundProbes); err != nil {
			return nil, err
		}
	}
	x := chartX()
	classic := chartLine{Name: "classic", Label: "classic, optimal k"}
	fixed := chartLine{Name: "fixedK", Label: "classic, k = " + strconv.Itoa(k)}
	bound := chartLine{Name: "bound", Label: "lower bound, 2^−c"}
	for _, c := range x {
		m := uint64(c * chartItems)
		classic.Y = append(classic.Y, bloom.ClassicFalsePositiveRate(m, max(1, int(math.Round(c*math.Ln2))), chartItems))
		fixed.Y = append(fixed.Y, bloom.ClassicFalsePositiveRate(m, k, chartItems))
		bound.Y = append(bound.Y, math.Exp2(-c))
	}
	return &chartResponse{K: k, X: x, Lines: []chartLine{classic, fixed, blockedLine(), bound}}, nil
}

package bloom

import (
	"fmt"
	"io"
	"math"
	"sync/atomic"
)

// DefaultCounterBits is the width of a Counting filter's counters unless a
// CounterBits option says otherwise: 4 bits, as Fan et al. chose — when
// each item is added once and k is optimal, any of the m counters reaches
// 16 with probability below 1.37·10^-15·m.
const DefaultCounterBits = 4

// validCounterBits reports whether w is a counter width: 4, 8 or 16.
func validCounterBits(w int) bool { return w == 4 || w == 8 || w == 16 }

// CountingOption configures NewCounting and NewCountingSize.
type CountingOption func(*countingOptions)

type countingOptions struct{ counterBits int }

// CounterBits makes the filter's counters bits wide: 4 (the default), 8 or
// 16, saturating at 15, 255 or 65,535. An item added more often than a
// counter can count — the same item inserted 1,000 times, say — needs 16:
// narrower counters saturate and the item can then never be removed. Wider
// counters cost memory: the filter's size is m·bits/8 bytes, rounded up to
// whole 64-bit words. Another width makes the constructor return an
// *ArgumentError naming "counterBits".
func CounterBits(bits int) CountingOption {
	return func(o *countingOptions) { o.counterBits = bits }
}

// countingWidth applies opts and validates the width they choose.
func countingWidth(opts []CountingOption) (int, error) {
	o := countingOptions{counterBits: DefaultCounterBits}
	for _, opt := range opts {
		opt(&o)
	}
	if !validCounterBits(o.counterBits) {
		return 0, argError("counterBits", o.counterBits, "a counter is 4, 8 or 16 bits wide")
	}
	return o.counterBits, nil
}

// Counting is a counting Bloom filter (Fan, Cao, Almeida and Broder, 2000):
// a classic filter whose bits are counters — 4 bits by default, 8 or 16 by
// the CounterBits option — so items can be removed. Add increments an
// item's k counters, Remove decrements them, and an item may be present
// while all its counters are non-zero.
//
// A counter that reaches its maximum (15, 255 or 65,535) saturates: it is
// never incremented or decremented again, because after an overflow its
// true count is unknown and a decrement could reach zero while items still
// need it — a false negative. So saturation trades removal for safety: an
// item whose counters have all saturated stays present for good, whatever
// is removed, and every other item sharing a saturated counter keeps that
// counter non-zero. Inserting one item 1,000 times and removing it 1,000
// times leaves it absent with 16-bit counters and present (stuck at 15 or
// 255) with 4- or 8-bit ones; Saturated counts such counters. Remove
// refuses an item the filter says is absent, since taking its counters
// down would erase other items.
//
// A Counting is safe for concurrent use. Each counter changes by a
// compare-and-swap of its 64-bit word; it outran striped locks in the
// package's benchmarks (BenchmarkCountingConcurrency). Removing an item
// that was never added is a caller's error the filter cannot always catch
// (it may test positive), and it can cause false negatives.
//
// INVARIANT: with w-bit counters (w = width), counter i is bits
// w·(i mod 64/w) … w·(i mod 64/w)+w−1 of words[i/(64/w)]; counters at
// i ≥ m are always zero; max = 2^w − 1.
type Counting struct {
	m     uint64
	k     int
	n     uint64
	width uint   // bits per counter: 4, 8 or 16
	max   uint64 // a saturated counter: 2^width − 1
	words []uint64
}

// NewCounting returns an empty counting filter sized for n items at
// false-positive rate p: the m and k of a classic filter (ClassicParams),
// with 4-bit counters unless a CounterBits option chooses 8 or 16.
func NewCounting(n int, p float64, opts ...CountingOption) (*Counting, error) {
	width, err := countingWidth(opts)
	if err != nil {
		return nil, err
	}
	m, k, err := sizeFor(KindCounting, n, p, width, platformMaxInt)
	if err != nil {
		return nil, err
	}
	f := newCounting(m, k, width)
	f.n = uint64(n)
	return f, nil
}

// NewCountingSize returns an empty counting filter of m counters, k probes,
// and 4-bit counters unless a CounterBits option chooses 8 or 16. An m
// above MaxBits or too large for the platform (more than 2^31 bytes of
// counters on a 32-bit one), or a k outside [1, MaxProbes], returns an
// *ArgumentError naming it.
func NewCountingSize(m uint64, k int, opts ...CountingOption) (*Counting, error) {
	width, err := countingWidth(opts)
	if err != nil {
		return nil, err
	}
	if err := checkSize(KindCounting, m, k, width, platformMaxInt); err != nil {
		return nil, err
	}
	return newCounting(m, k, width), nil
}

// newCounting allocates a counting filter whose m, k and width checkSize
// accepted.
func newCounting(m uint64, k, width int) *Counting {
	return &Counting{m: m, k: k, width: uint(width), max: 1<<width - 1,
		words: alignedWords(int(payloadWords(KindCounting, m, width)))}
}

// counter returns the word holding counter i and the counter's bit shift.
func (f *Counting) counter(i uint64) (*uint64, uint) {
	perWord := 64 / uint64(f.width)
	return &f.words[i/perWord], uint(i%perWord) * f.width
}

// Add inserts item.
func (f *Counting) Add(item []byte) { f.AddHash(Hash(item)) }

// AddHash inserts the item whose Hash is h.
func (f *Counting) AddHash(h uint64) {
	h1, h2 := h, remix(h)
	for range f.k {
		f.step(reduce(h1, f.m), +1)
		h1 += h2
	}
}

// step adds delta (±1) to counter i unless it is saturated or, for a
// decrement, already zero.
func (f *Counting) step(i uint64, delta int) {
	w, shift := f.counter(i)
	for {
		old := atomic.LoadUint64(w)
		c := old >> shift & f.max
		if c == f.max || (delta < 0 && c == 0) {
			return
		}
		next := old + 1<<shift
		if delta < 0 {
			next = old - 1<<shift
		}
		if atomic.CompareAndSwapUint64(w, old, next) {
			return
		}
	}
}

// MayContain reports whether item may be present: all its counters are
// non-zero.
func (f *Counting) MayContain(item []byte) bool { return f.MayContainHash(Hash(item)) }

// MayContainHash is MayContain for the item whose Hash is h.
func (f *Counting) MayContainHash(h uint64) bool {
	h1, h2 := h, remix(h)
	for range f.k {
		w, shift := f.counter(reduce(h1, f.m))
		if atomic.LoadUint64(w)>>shift&f.max == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// Remove deletes one occurrence of item. If the filter says item is absent
// it returns an error wrapping ErrNotPresent and changes nothing. Saturated
// counters are left as they are (see Counting), so an item whose counters
// all saturated still tests present afterwards.
func (f *Counting) Remove(item []byte) error {
	if err := f.RemoveHash(Hash(item)); err != nil {
		return fmt.Errorf("%w: %q", err, item)
	}
	return nil
}

// RemoveHash is Remove for the item whose Hash is h.
func (f *Counting) RemoveHash(h uint64) error {
	if !f.MayContainHash(h) {
		return ErrNotPresent
	}
	h1, h2 := h, remix(h)
	for range f.k {
		f.step(reduce(h1, f.m), -1)
		h1 += h2
	}
	return nil
}

// Counters returns m, the number of counters.
func (f *Counting) Counters() uint64 { return f.m }

// Probes returns k, the number of counters per item.
func (f *Counting) Probes() int { return f.k }

// CounterBits returns the width of a counter in bits: 4, 8 or 16.
func (f *Counting) CounterBits() int { return int(f.width) }

// SizeBytes returns the memory the counters occupy.
func (f *Counting) SizeBytes() int { return len(f.words) * 8 }

// Saturated returns how many counters have saturated at their maximum,
// 2^CounterBits − 1. Saturation is permanent, so 0 means no counter has
// ever overflowed and every count is exact.
func (f *Counting) Saturated() uint64 {
	var n uint64
	f.eachCounter(func(c uint64) {
		if c == f.max {
			n++
		}
	})
	return n
}

// EstimatedCount returns the number of items added and not removed: the
// counters' sum over k, since each item adds one to k counters. It is exact
// while no counter has saturated; saturated counters stop counting, so past
// saturation it is an underestimate of the items added, and removals of
// items on saturated counters no longer lower it.
func (f *Counting) EstimatedCount() float64 {
	var sum uint64
	f.eachCounter(func(c uint64) { sum += c })
	return float64(sum) / float64(f.k)
}

// LoadFactor returns the fraction of counters that are non-zero, Z/m. For
// d distinct items present it is expected near 1 − e^(−kd/m), and the false
// positive rate is its k-th power (EstimatedFalsePositiveRate).
func (f *Counting) LoadFactor() float64 { return float64(f.nonZero()) / float64(f.m) }

// EstimatedFalsePositiveRate is (Z/m)^k for Z non-zero counters.
func (f *Counting) EstimatedFalsePositiveRate() float64 {
	return math.Pow(f.LoadFactor(), float64(f.k))
}

func (f *Counting) nonZero() uint64 {
	var n uint64
	f.eachCounter(func(c uint64) {
		if c != 0 {
			n++
		}
	})
	return n
}

// eachCounter calls fn with every counter of every word up to the word's
// last non-zero one; counters past it are zero.
func (f *Counting) eachCounter(fn func(c uint64)) {
	for i := range f.words {
		w := atomic.LoadUint64(&f.words[i])
		for ; w != 0; w >>= f.width {
			fn(w & f.max)
		}
	}
}

// MarshalBinary encodes the filter in the format the package doc draws.
func (f *Counting) MarshalBinary() ([]byte, error) { return marshal(f.header(), f.words), nil }

// WriteTo writes the encoding MarshalBinary returns to w.
func (f *Counting) WriteTo(w io.Writer) (int64, error) { return encode(w, f.header(), f.words) }

// UnmarshalBinary replaces f with the filter encoded in data, of any
// counter width. Damaged, truncated or other-kind input returns an error
// wrapping ErrCorrupt.
func (f *Counting) UnmarshalBinary(data []byte) error {
	h, words, err := decode(data, KindCounting)
	return f.set(h, words, err)
}

// ReadFrom replaces f with the filter encoded at the start of r, reading no
// byte past it.
func (f *Counting) ReadFrom(r io.Reader) (int64, error) {
	h, words, n, err := readFrom(r, KindCounting)
	return n, f.set(h, words, err)
}

func (f *Counting) header() header {
	return header{kind: KindCounting, k: f.k, m: f.m, n: f.n, counterBits: int(f.width)}
}

func (f *Counting) set(h header, words []uint64, err error) error {
	if err != nil {
		return err
	}
	perWord := uint64(64 / h.counterBits)
	if r := h.m % perWord; r != 0 && words[len(words)-1]>>(r*uint64(h.counterBits)) != 0 {
		return corruptf("counters set past the filter's %d counters", h.m)
	}
	*f = Counting{m: h.m, k: h.k, n: h.n, width: uint(h.counterBits), max: 1<<h.counterBits - 1, words: words}
	return nil
}

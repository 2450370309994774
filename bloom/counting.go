package bloom

import (
	"fmt"
	"io"
	"math"
	"sync/atomic"
)

const (
	counterBits     = 4
	counterMax      = 1<<counterBits - 1 // 15: a saturated counter
	countersPerWord = 64 / counterBits
)

// Counting is a counting Bloom filter (Fan, Cao, Almeida and Broder, 2000):
// a classic filter whose bits are 4-bit counters, so items can be removed.
// Add increments an item's k counters, Remove decrements them, and an item
// may be present while all its counters are non-zero.
//
// A counter that reaches 15 saturates: it is never incremented or
// decremented again, because after an overflow its true count is unknown
// and a decrement could reach zero while items still need it — a false
// negative. Remove refuses an item the filter says is absent, since taking
// its counters down would erase other items.
//
// A Counting is safe for concurrent use. Each counter changes by a
// compare-and-swap of its 64-bit word; it outran striped locks in the
// package's benchmarks (BenchmarkCountingConcurrency). Removing an item
// that was never added is a caller's error the filter cannot always catch
// (it may test positive), and it can cause false negatives.
//
// INVARIANT: counter i is bits 4·(i mod 16) … 4·(i mod 16)+3 of
// words[i/16]; counters at i ≥ m are always zero.
type Counting struct {
	m     uint64
	k     int
	n     uint64
	words []uint64
}

// NewCounting returns an empty counting filter sized for n items at
// false-positive rate p: the m and k of a classic filter (ClassicParams),
// with 4 bits per counter.
func NewCounting(n int, p float64) (*Counting, error) {
	m, k, err := sizeFor(KindCounting, n, p, platformMaxInt)
	if err != nil {
		return nil, err
	}
	f := newCounting(m, k)
	f.n = uint64(n)
	return f, nil
}

// NewCountingSize returns an empty counting filter of m counters, k probes.
// An m above MaxBits or too large for the platform (past about 2^32
// counters on a 32-bit one), or a k outside [1, MaxProbes], returns an
// *ArgumentError naming it.
func NewCountingSize(m uint64, k int) (*Counting, error) {
	if err := checkSize(KindCounting, m, k, platformMaxInt); err != nil {
		return nil, err
	}
	return newCounting(m, k), nil
}

// newCounting allocates a counting filter whose m and k checkSize accepted.
func newCounting(m uint64, k int) *Counting {
	return &Counting{m: m, k: k, words: alignedWords(int(payloadWords(KindCounting, m)))}
}

// counter returns the word holding counter i and the counter's bit shift.
func (f *Counting) counter(i uint64) (*uint64, uint) {
	return &f.words[i/countersPerWord], uint(i%countersPerWord) * counterBits
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
		c := old >> shift & counterMax
		if c == counterMax || (delta < 0 && c == 0) {
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
		if atomic.LoadUint64(w)>>shift&counterMax == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// Remove deletes one occurrence of item. If the filter says item is absent
// it returns an error wrapping ErrNotPresent and changes nothing.
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

// SizeBytes returns the memory the counters occupy.
func (f *Counting) SizeBytes() int { return len(f.words) * 8 }

// Saturated returns how many counters have saturated at 15.
func (f *Counting) Saturated() uint64 {
	var n uint64
	f.eachCounter(func(c uint64) {
		if c == counterMax {
			n++
		}
	})
	return n
}

// EstimatedCount returns the number of items added and not removed: the
// counters' sum over k, since each item adds one to k counters. Saturated
// counters stop counting, so past saturation it is an underestimate.
func (f *Counting) EstimatedCount() float64 {
	var sum uint64
	f.eachCounter(func(c uint64) { sum += c })
	return float64(sum) / float64(f.k)
}

// EstimatedFalsePositiveRate is (Z/m)^k for Z non-zero counters.
func (f *Counting) EstimatedFalsePositiveRate() float64 {
	var nonZero uint64
	f.eachCounter(func(c uint64) {
		if c != 0 {
			nonZero++
		}
	})
	return math.Pow(float64(nonZero)/float64(f.m), float64(f.k))
}

func (f *Counting) eachCounter(fn func(c uint64)) {
	for i := range f.words {
		w := atomic.LoadUint64(&f.words[i])
		for ; w != 0; w >>= counterBits {
			fn(w & counterMax)
		}
	}
}

// MarshalBinary encodes the filter in the format the package doc draws.
func (f *Counting) MarshalBinary() ([]byte, error) { return marshal(f.header(), f.words), nil }

// WriteTo writes the encoding MarshalBinary returns to w.
func (f *Counting) WriteTo(w io.Writer) (int64, error) { return encode(w, f.header(), f.words) }

// UnmarshalBinary replaces f with the filter encoded in data. Damaged,
// truncated or other-kind input returns an error wrapping ErrCorrupt.
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

func (f *Counting) header() header { return header{kind: KindCounting, k: f.k, m: f.m, n: f.n} }

func (f *Counting) set(h header, words []uint64, err error) error {
	if err != nil {
		return err
	}
	if r := h.m % countersPerWord; r != 0 && words[len(words)-1]>>(r*counterBits) != 0 {
		return corruptf("counters set past the filter's %d counters", h.m)
	}
	*f = Counting{m: h.m, k: h.k, n: h.n, words: words}
	return nil
}

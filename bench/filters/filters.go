// Package filters builds bloomkv's blocked and classic Bloom filters and
// github.com/bits-and-blooms/bloom/v3's filter over the same keys at the
// same memory, so their lookup times and false-positive rates can be put
// side by side. The benchmarks of this package and the command
// bench/cmd/filtercmp both use it; see package bench for how to run them.
//
// The timed loops are written out once per filter, calling each library's
// method directly, rather than through an interface or a function value:
// an indirect call costs a few nanoseconds on every lookup, the same for
// every filter, and would pull the ratios between them towards 1.
package filters

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	bitsandblooms "github.com/bits-and-blooms/bloom/v3"
	"github.com/bloomkv/bloomkv/bloom"
)

// KeyLen is the length of every key, in bytes.
const KeyLen = 16

// Key is one key. Keys are kept as arrays in one slice, not as separate
// byte slices, so that walking a key set reads memory in order and the
// filter's bits are the only random accesses a lookup makes.
type Key [KeyLen]byte

// Tags of the two key sets: a key's first byte is its set's tag, so a key
// of one set can never equal a key of the other.
const (
	PresentTag = 'P'
	AbsentTag  = 'A'
)

// Seed is the seed of the key sets, fixed so that every run measures the
// same keys and so the same false-positive rates.
const Seed = 20250101

// Keys returns n distinct keys: tag, then the key's index as 7 bytes
// big-endian (which makes the keys distinct), then 8 bytes from a PCG
// generator seeded by seed and tag (which makes them look random).
func Keys(n int, tag byte, seed uint64) []Key {
	r := rand.New(rand.NewPCG(seed, uint64(tag)))
	keys := make([]Key, n)
	for i := range keys {
		k := &keys[i]
		binary.BigEndian.PutUint64(k[:8], uint64(i))
		k[0] = tag
		binary.LittleEndian.PutUint64(k[8:], r.Uint64())
	}
	return keys
}

// Names of the filters, in the order Build returns them.
const (
	BloomkvBlocked = "bloomkv-blocked"
	BloomkvClassic = "bloomkv-classic"
	BitsAndBlooms  = "bitsandblooms"
)

// Filter is one of the compared filters, built over a set of keys.
type Filter interface {
	// Name is BloomkvBlocked, BloomkvClassic or BitsAndBlooms.
	Name() string
	// Bytes is the memory the filter's bits occupy.
	Bytes() int
	// Probes is k, the bits set per key.
	Probes() int
	// PredictedFPR is the false-positive rate the filter's formula
	// predicts for the keys it was built over.
	PredictedFPR() float64
	// MayContain is the filter's own lookup.
	MayContain(key []byte) bool
	// LookupBenchmark returns a benchmark of MayContain over keys, in turn.
	LookupBenchmark(keys []Key) func(*testing.B)
	// AddBenchmark returns a benchmark of adding keys, in turn, to an
	// empty filter of the same size; it starts a new filter, with the
	// timer stopped, after every len(keys) adds, so that the timed adds
	// are those of filling a filter as far as it was built to be filled.
	AddBenchmark(keys []Key) func(*testing.B)
}

// Build returns the three filters over keys at bitsPerKey bits per key:
// bloomkv's blocked and classic filters and bits-and-blooms' filter, in
// that order. The two classic filters have m = ⌈len(keys)·bitsPerKey⌉ bits
// and k = round(bitsPerKey·ln 2) probes; the blocked filter has m rounded up
// to whole 512-bit blocks and the probes bloom.BlockedProbes chooses.
// Invalid sizes return bloom's *ArgumentError.
func Build(keys []Key, bitsPerKey float64) ([]Filter, error) {
	n := len(keys)
	hashes := make([]uint64, n)
	for i := range keys {
		hashes[i] = bloom.Hash(keys[i][:])
	}
	// BuildBlocked first: it refuses a bitsPerKey outside [1, 64], so the
	// conversions below never see a negative or NaN product.
	blk, err := bloom.BuildBlocked(hashes, bitsPerKey)
	if err != nil {
		return nil, err
	}
	m := uint64(math.Ceil(float64(n) * bitsPerKey))
	k := max(1, int(math.Round(bitsPerKey*math.Ln2)))
	c, err := bloom.NewClassicSize(m, k)
	if err != nil {
		return nil, err
	}
	bb := bitsandblooms.New(uint(m), uint(k))
	for i := range keys {
		c.AddHash(hashes[i])
		bb.Add(keys[i][:])
	}
	return []Filter{
		&blocked{f: blk, n: n, bitsPerKey: bitsPerKey},
		&classic{f: c, n: n},
		&bitsAndBlooms{f: bb, n: n},
	}, nil
}

// MeasureFPR returns the share of keys that f reports as maybe present.
// For keys never added to f it is the measured false-positive rate.
func MeasureFPR(f Filter, keys []Key) float64 {
	positives := 0
	for i := range keys {
		if f.MayContain(keys[i][:]) {
			positives++
		}
	}
	return float64(positives) / float64(len(keys))
}

// Timing is the time per operation of one timed run of a benchmark.
type Timing struct {
	// Wall is wall-clock nanoseconds per operation, as testing reports.
	Wall float64
	// CPU is process CPU nanoseconds per operation (see CPUTime), or NaN
	// where CPUTime is not supported.
	CPU float64
}

// Measure times bench with testing.Benchmark, which calls it with a
// growing b.N until a call lasts the bench time and reports that last call;
// CPU is measured around every call, so the last measure is that call's.
func Measure(bench func(*testing.B)) Timing {
	var cpu float64
	r := testing.Benchmark(func(b *testing.B) { cpu = RunCPU(b, bench) })
	return Timing{Wall: float64(r.T.Nanoseconds()) / float64(r.N), CPU: cpu}
}

// RunCPU runs bench(b) and returns the process CPU nanoseconds per
// operation it took, or NaN where CPUTime is not supported.
func RunCPU(b *testing.B, bench func(*testing.B)) float64 {
	start, ok := CPUTime()
	bench(b)
	end, ok2 := CPUTime()
	if !ok || !ok2 {
		return math.NaN()
	}
	return float64(end-start) / float64(b.N)
}

type blocked struct {
	f          *bloom.Blocked
	n          int
	bitsPerKey float64
}

func (b *blocked) Name() string               { return BloomkvBlocked }
func (b *blocked) Bytes() int                 { return b.f.SizeBytes() }
func (b *blocked) Probes() int                { return b.f.Probes() }
func (b *blocked) PredictedFPR() float64      { return b.f.ExpectedFalsePositiveRate() }
func (b *blocked) MayContain(key []byte) bool { return b.f.MayContain(key) }

func (b *blocked) LookupBenchmark(keys []Key) func(*testing.B) {
	return func(tb *testing.B) {
		f := b.f
		// A wrapping index, not i % len(keys): a division costs more than
		// the rest of a lookup's arithmetic, and would be timed too.
		positives, j := 0, 0
		for range tb.N {
			if f.MayContain(keys[j][:]) {
				positives++
			}
			if j++; j == len(keys) {
				j = 0
			}
		}
		runtime.KeepAlive(positives) // so the compiler cannot drop the lookups
	}
}

func (b *blocked) AddBenchmark(keys []Key) func(*testing.B) {
	return func(tb *testing.B) {
		var f *bloom.Blocked
		j := 0
		for range tb.N {
			if j == 0 {
				tb.StopTimer()
				var err error
				if f, err = bloom.NewBlocked(b.n, b.bitsPerKey); err != nil {
					tb.Fatal(err)
				}
				tb.StartTimer()
			}
			f.Add(keys[j][:])
			if j++; j == len(keys) {
				j = 0
			}
		}
	}
}

type classic struct {
	f *bloom.Classic
	n int
}

func (c *classic) Name() string { return BloomkvClassic }
func (c *classic) Bytes() int   { return c.f.SizeBytes() }
func (c *classic) Probes() int  { return c.f.Probes() }
func (c *classic) PredictedFPR() float64 {
	return bloom.ClassicFalsePositiveRate(c.f.Bits(), c.f.Probes(), float64(c.n))
}
func (c *classic) MayContain(key []byte) bool { return c.f.MayContain(key) }

func (c *classic) LookupBenchmark(keys []Key) func(*testing.B) {
	return func(tb *testing.B) {
		f := c.f
		positives, j := 0, 0
		for range tb.N {
			if f.MayContain(keys[j][:]) {
				positives++
			}
			if j++; j == len(keys) {
				j = 0
			}
		}
		runtime.KeepAlive(positives) // so the compiler cannot drop the lookups
	}
}

func (c *classic) AddBenchmark(keys []Key) func(*testing.B) {
	return func(tb *testing.B) {
		var f *bloom.Classic
		j := 0
		for range tb.N {
			if j == 0 {
				tb.StopTimer()
				var err error
				if f, err = bloom.NewClassicSize(c.f.Bits(), c.f.Probes()); err != nil {
					tb.Fatal(err)
				}
				tb.StartTimer()
			}
			f.Add(keys[j][:])
			if j++; j == len(keys) {
				j = 0
			}
		}
	}
}

type bitsAndBlooms struct {
	f *bitsandblooms.BloomFilter
	n int
}

func (c *bitsAndBlooms) Name() string { return BitsAndBlooms }
func (c *bitsAndBlooms) Bytes() int   { return 8 * len(c.f.BitSet().Words()) }
func (c *bitsAndBlooms) Probes() int  { return int(c.f.K()) }

// PredictedFPR is the classic formula at bits-and-blooms' m and k: it is a
// classic Bloom filter, with its own hashing.
func (c *bitsAndBlooms) PredictedFPR() float64 {
	return bloom.ClassicFalsePositiveRate(uint64(c.f.Cap()), int(c.f.K()), float64(c.n))
}
func (c *bitsAndBlooms) MayContain(key []byte) bool { return c.f.Test(key) }

func (c *bitsAndBlooms) LookupBenchmark(keys []Key) func(*testing.B) {
	return func(tb *testing.B) {
		f := c.f
		positives, j := 0, 0
		for range tb.N {
			if f.Test(keys[j][:]) {
				positives++
			}
			if j++; j == len(keys) {
				j = 0
			}
		}
		runtime.KeepAlive(positives) // so the compiler cannot drop the lookups
	}
}

func (c *bitsAndBlooms) AddBenchmark(keys []Key) func(*testing.B) {
	return func(tb *testing.B) {
		var f *bitsandblooms.BloomFilter
		j := 0
		for range tb.N {
			if j == 0 {
				tb.StopTimer()
				f = bitsandblooms.New(c.f.Cap(), c.f.K())
				tb.StartTimer()
			}
			f.Add(keys[j][:])
			if j++; j == len(keys) {
				j = 0
			}
		}
	}
}

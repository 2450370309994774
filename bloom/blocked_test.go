package bloom

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"unsafe"
)

// TestBlockedFalsePositiveRate measures the rate over at least a million
// absent keys and compares it with the Putze formula at the filter's real
// bits per key. As for the classic filter, the query count makes binomial
// noise at most a fifth of the 10% tolerance. Under -race, 10 bits per key
// alone (settingsFor).
func TestBlockedFalsePositiveRate(t *testing.T) {
	const n, tol = 200_000, 0.10
	keys := keySet('P', n, 1)
	hashes := make([]uint64, n)
	for i, k := range keys {
		hashes[i] = Hash(k)
	}
	for _, bitsPerKey := range settingsFor([]float64{8, 10, 12, 16}, 1) {
		f, err := BuildBlocked(hashes, bitsPerKey)
		must(t, err)
		want := f.ExpectedFalsePositiveRate()
		got := measureFPR(f.MayContain, queriesFor(want, tol, 5, 1_000_000), 2)
		if math.Abs(got-want)/want > tol {
			t.Errorf("%v bits/key, k = %d: measured %.5f%%, formula %.5f%%", bitsPerKey, f.Probes(), 100*got, 100*want)
		}
		if bitsPerKey == 10 && got > 0.01 {
			t.Errorf("10 bits/key: measured %.5f%%, above 1%%", 100*got)
		}
		t.Logf("%v bits/key (%.3f real), k = %d: measured %.5f%%, formula %.5f%%", bitsPerKey, f.BitsPerKey(), f.Probes(), 100*got, 100*want)
	}
}

// TestBlockedProbesStayInBlock checks the defining property: every bit an
// item sets lies in one 512-bit block.
func TestBlockedProbesStayInBlock(t *testing.T) {
	for _, k := range keySet('P', 200, 9) {
		f, _ := NewBlocked(1000, 20) // 40 blocks, 11 probes: more than one remix
		f.Add(k)
		touched := map[int]bool{}
		for i, w := range f.blocks {
			if w != 0 {
				touched[i/blockWords] = true
			}
		}
		if len(touched) != 1 {
			t.Fatalf("key %x set bits in blocks %v", k, touched)
		}
		if got := popCount(f.blocks); got < 1 || got > uint64(f.Probes()) {
			t.Fatalf("key %x set %d bits with %d probes", k, got, f.Probes())
		}
	}
}

func TestBlockedBuildEqualsAdds(t *testing.T) {
	keys := keySet('P', 3000, 10)
	hashes := make([]uint64, len(keys))
	added, _ := NewBlocked(len(keys), 10)
	for i, k := range keys {
		hashes[i] = Hash(k)
		added.Add(k)
	}
	built, _ := BuildBlocked(hashes, 10)
	a, _ := added.MarshalBinary()
	b, _ := built.MarshalBinary()
	if string(a) != string(b) {
		t.Fatal("BuildBlocked and Add of the same keys give different filters")
	}
	if built.Keys() != 3000 || math.Abs(built.BitsPerKey()-10) > 512.0/3000 {
		t.Fatalf("keys %d, bits/key %v", built.Keys(), built.BitsPerKey())
	}
}

func TestBlockedEmpty(t *testing.T) {
	f, err := BuildBlocked(nil, 10)
	must(t, err)
	if f.Bits() != blockBits || f.ExpectedFalsePositiveRate() != 0 || f.MayContain([]byte("x")) {
		t.Fatalf("empty filter: %d bits, rate %v", f.Bits(), f.ExpectedFalsePositiveRate())
	}
}

func TestAlignedWords(t *testing.T) {
	for n := range 40 {
		w := alignedWords(n)
		if len(w) != n || cap(w) != n {
			t.Fatalf("alignedWords(%d): len %d cap %d", n, len(w), cap(w))
		}
		if n > 0 && uintptr(unsafe.Pointer(&w[0]))%64 != 0 {
			t.Fatalf("alignedWords(%d) not on a cache line", n)
		}
	}
}

// TestUnmarshalBinaryInto checks that a filter decoded into memory from the
// caller answers exactly as one decoded by UnmarshalBinary, lives in that
// memory, and that a wrong-sized allocation is refused.
func TestUnmarshalBinaryInto(t *testing.T) {
	f, err := NewBlocked(5000, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		f.Add(fmt.Appendf(nil, "key %d", i))
	}
	data, _ := f.MarshalBinary()
	var arena []uint64
	var got Blocked
	if err := got.UnmarshalBinaryInto(data, func(n int) []uint64 {
		arena = alignedWords(n)
		return arena
	}); err != nil {
		t.Fatal(err)
	}
	if &got.blocks[0] != &arena[0] {
		t.Fatal("the filter does not use the memory alloc returned")
	}
	for i := range 20000 {
		k := fmt.Appendf(nil, "key %d", i)
		if got.MayContain(k) != f.MayContain(k) {
			t.Fatalf("%q: %v, the original says %v", k, got.MayContain(k), f.MayContain(k))
		}
	}
	var e *ArgumentError
	if err := got.UnmarshalBinaryInto(data, func(n int) []uint64 { return make([]uint64, n-1) }); !errors.As(err, &e) || e.Arg != "alloc" {
		t.Fatalf("an allocation one word short: %v, want an ArgumentError on alloc", err)
	}
	if err := got.UnmarshalBinaryInto(data[:len(data)-1], func(n int) []uint64 {
		t.Fatal("alloc called for a truncated filter")
		return nil
	}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v, want ErrCorrupt", err)
	}
}

package bloom

import (
	"math"
	"testing"
	"unsafe"
)

// TestBlockedFalsePositiveRate measures the rate over at least a million
// absent keys and compares it with the Putze formula at the filter's real
// bits per key. As for the classic filter, the query count makes binomial
// noise at most a fifth of the 10% tolerance.
func TestBlockedFalsePositiveRate(t *testing.T) {
	const n, tol = 200_000, 0.10
	keys := keySet('P', n, 1)
	hashes := make([]uint64, n)
	for i, k := range keys {
		hashes[i] = Hash(k)
	}
	for _, bitsPerKey := range []float64{8, 10, 12, 16} {
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

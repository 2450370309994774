package ribbon

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/internal/radix"
)

// bigWidths returns the widths tested at a million keys.
func bigWidths() []int {
	if race.Enabled || testing.Short() {
		return []int{8}
	}
	return []int{1, 7, 8, 12, 16, 32}
}

// allWidths returns every width from MinBits to MaxBits.
func allWidths() []int {
	ws := make([]int, 0, MaxBits)
	for r := MinBits; r <= MaxBits; r++ {
		ws = append(ws, r)
	}
	return ws
}

// TestBuildNoFalseNegatives checks the defining property at every size:
// every hash a filter was built from is found, at every width.
func TestBuildNoFalseNegatives(t *testing.T) {
	for _, tc := range []struct {
		n      int
		widths []int
	}{
		{1, allWidths()},
		{2, allWidths()},
		{3, allWidths()},
		{100, allWidths()},
		{10_000, allWidths()},
		{1_000_000, bigWidths()},
	} {
		for _, r := range tc.widths {
			f, hashes := builtFilter(t, tc.n, r)
			if f.Keys() != uint64(tc.n) || f.Bits() != r || f.Slots() != SlotsFor(tc.n) {
				t.Fatalf("n = %d, r = %d: Keys %d, Bits %d, Slots %d (want %d)", tc.n, r, f.Keys(), f.Bits(), f.Slots(), SlotsFor(tc.n))
			}
			for i, h := range hashes {
				if !f.MayContainHash(h) {
					t.Fatalf("n = %d, r = %d: hash %d of the set (%#x) not found", tc.n, r, i, h)
				}
			}
		}
	}
}

// naiveContains answers a query bit by bit from the definition, as an
// oracle for MayContainHash's shifted word arithmetic: result bit j is the
// parity of the coefficients c_k (k = 0..127) AND bit j of slot s+k, slot
// i's bit j being bit i mod 64 of word j of block i/64.
func naiveContains(f *Filter, h uint64) bool {
	s, lo, hi, fp := row(mix(h, f.seed), f.slots)
	for j := range f.r {
		parity := uint64(0)
		for k := range uint64(128) {
			c := lo >> k & 1
			if k >= 64 {
				c = hi >> (k - 64) & 1
			}
			i := s + k
			parity ^= c & (f.words[i/64*f.r+j] >> (i % 64))
		}
		if parity&1 != uint64(fp>>j)&1 {
			return false
		}
	}
	return true
}

// TestMayContainHashMatchesNaive compares MayContainHash with
// naiveContains on members and non-members, at filters of one block
// pair (128 slots) up, so that starts at every offset in a block, at the
// first slot and at the last start are all met.
func TestMayContainHashMatchesNaive(t *testing.T) {
	offsets := map[uint64]bool{}
	for _, tc := range []struct{ n, r int }{{1, 1}, {50, 7}, {100, 8}, {1000, 13}, {5000, 32}} {
		f, hashes := builtFilter(t, tc.n, tc.r)
		check := func(h uint64) {
			s, _, _, _ := row(mix(h, f.seed), f.slots)
			offsets[s%64] = true
			if got, want := f.MayContainHash(h), naiveContains(f, h); got != want {
				t.Fatalf("n = %d, r = %d: %#x (start %d of %d slots): MayContainHash %v, naive %v", tc.n, tc.r, h, s, f.slots, got, want)
			}
		}
		for _, h := range hashes {
			check(h)
		}
		probes(20_000, 3, check)
	}
	if len(offsets) != 64 {
		t.Fatalf("starts met %d of the 64 offsets in a block", len(offsets))
	}
}

// TestSolutionSatisfiesEveryRow checks the solver against the band it
// solved, before any query code runs: for every stored row, the parity of
// its coefficients AND the solution at its slots equals its right-hand
// side, at every result bit.
func TestSolutionSatisfiesEveryRow(t *testing.T) {
	for _, r := range []int{1, 9, 32} {
		b := new(buffers)
		keys := randomHashes(3000, 8)
		m := SlotsFor(len(keys))
		f, ok := b.try(radix.Distinct(keys, make([]uint64, len(keys))), r, m, 1)
		if !ok {
			t.Fatalf("r = %d: no solution", r)
		}
		bit := func(i, j uint64) uint64 { return f.words[i/64*f.r+j] >> (i % 64) & 1 }
		rows := 0
		for i := range m {
			lo, hi, res := b.band.lo[i], b.band.hi[i], b.band.res[i]
			if lo == 0 {
				continue
			}
			rows++
			for j := range uint64(r) {
				p := uint64(0)
				for k := range uint64(128) {
					c := lo >> k & 1
					if k >= 64 {
						c = hi >> (k - 64) & 1
					}
					if c == 1 {
						p ^= bit(i+k, j)
					}
				}
				if p != uint64(res>>j)&1 {
					t.Fatalf("r = %d: row %d, result bit %d not satisfied", r, i, j)
				}
			}
		}
		if rows != len(keys) {
			t.Fatalf("r = %d: %d rows stored for %d distinct keys", r, rows, len(keys))
		}
	}
}

func TestFalsePositiveRate(t *testing.T) {
	const n = 10_000 // the rate does not depend on n; a small filter is fast to probe
	scale := 1
	if race.Enabled {
		scale = 16
	}
	for _, tc := range []struct{ r, probes int }{
		{1, 1 << 20},
		{4, 1 << 20},
		{7, 1 << 20},
		{8, 1 << 20},
		{12, 1 << 22},
		{16, 1 << 23},
	} {
		f, _ := builtFilter(t, n, tc.r)
		tc.probes /= scale
		positives := 0
		probes(tc.probes, 11, func(h uint64) {
			if f.MayContainHash(h) {
				positives++
			}
		})
		p := f.ExpectedFalsePositiveRate()
		if p != math.Ldexp(1, -tc.r) {
			t.Fatalf("r = %d: ExpectedFalsePositiveRate %v, want 2^-%d", tc.r, p, tc.r)
		}
		lo, hi := binomialBounds(tc.probes, p, 5)
		if float64(positives) < lo || float64(positives) > hi {
			t.Errorf("r = %d: %d false positives in %d probes, want %.0f to %.0f (rate %.3g, expected %.3g)",
				tc.r, positives, tc.probes, lo, hi, float64(positives)/float64(tc.probes), p)
		}
		t.Logf("r = %d: %d false positives in %d probes (%.4g; 2^-r = %.4g; bounds %.0f–%.0f)",
			tc.r, positives, tc.probes, float64(positives)/float64(tc.probes), p, lo, hi)
	}
}

func TestDuplicates(t *testing.T) {
	distinct := randomHashes(5000, 21)
	halfRepeated := append(slices.Clone(distinct), distinct[:2500]...)
	slices.Reverse(halfRepeated[2500:])
	allEqual := slices.Repeat([]uint64{0xdeadbeef}, 1000)
	for _, tc := range []struct {
		name     string
		hashes   []uint64
		distinct uint64
	}{
		{"distinct", distinct, 5000},
		{"half repeated", halfRepeated, 5000},
		{"all equal", allEqual, 1},
		{"two values", []uint64{1, 2, 1, 2, 2, 1}, 2},
		{"zero hash", []uint64{0, 0}, 1},
	} {
		for _, r := range []int{3, 8, 16} {
			before := slices.Clone(tc.hashes)
			f, err := Build(tc.hashes, r)
			if err != nil {
				t.Fatalf("%s, r = %d: %v", tc.name, r, err)
			}
			if !slices.Equal(before, tc.hashes) {
				t.Fatalf("%s, r = %d: Build modified the caller's hashes", tc.name, r)
			}
			if f.Keys() != tc.distinct {
				t.Fatalf("%s, r = %d: Keys %d, want %d distinct", tc.name, r, f.Keys(), tc.distinct)
			}
			if want := SizeBytes(int(tc.distinct), r); headerLen+f.SizeBytes()+checksumLen != want {
				t.Fatalf("%s, r = %d: payload %d bytes, SizeBytes(%d) %d", tc.name, r, f.SizeBytes(), tc.distinct, want)
			}
			for _, h := range tc.hashes {
				if !f.MayContainHash(h) {
					t.Fatalf("%s, r = %d: %#x not found", tc.name, r, h)
				}
			}
		}
	}
	// Repeats change nothing: the filter of a multiset is that of its set.
	a, _ := Build(distinct, 8)
	b, _ := Build(halfRepeated, 8)
	da, _ := a.MarshalBinary()
	db, _ := b.MarshalBinary()
	if !slices.Equal(da, db) {
		t.Fatal("repeated hashes build a different filter from the distinct ones")
	}
}

func TestBuildErrors(t *testing.T) {
	hashes := randomHashes(100, 2)
	for _, r := range []int{-1, 0, 33, 64, math.MaxInt} {
		_, err := Build(hashes, r)
		var e *ArgumentError
		if !errors.As(err, &e) || e.Arg != "bits" || e.Value != r || !strings.Contains(err.Error(), "[1, 32]") {
			t.Fatalf("Build(r = %d): %v, want an *ArgumentError naming bits and [1, 32]", r, err)
		}
	}
	for _, empty := range [][]uint64{nil, {}} {
		if f, err := Build(empty, 8); err != ErrEmpty || f != nil {
			t.Fatalf("Build(%#v): %v, %v; want ErrEmpty", empty, f, err)
		}
	}
	if _, err := Build(nil, 0); errors.Is(err, ErrEmpty) {
		t.Fatalf("Build(nil, 0): %v, want the argument error", err)
	}
}

// TestBuildFailureWrapsErrBuild builds 1000 keys into 128 slots, a system
// with more equations than unknowns: every seed fails.
func TestBuildFailureWrapsErrBuild(t *testing.T) {
	for _, r := range []int{1, 8, 32} {
		f, err := new(buffers).build(randomHashes(1000, 3), r, func(int) uint64 { return 128 }, 3)
		if !errors.Is(err, ErrBuild) || f != nil {
			t.Fatalf("r = %d: %v, %v; want an error wrapping ErrBuild", r, f, err)
		}
		if want := fmt.Sprintf("1000 distinct hashes, %d-bit results, 128 slots: no solution with 3 seeds", r); !strings.Contains(err.Error(), want) {
			t.Fatalf("r = %d: %q does not say %q", r, err, want)
		}
	}
}

// TestRetriesWithNewSeed gives a build too few slots for most seeds to
// work and checks that it takes a later seed, and that the filter it
// returns holds its keys.
func TestRetriesWithNewSeed(t *testing.T) {
	hashes := randomHashes(100_000, 4)
	// 1.5% spare: at 10^5 keys more attempts fail than succeed (at 2%,
	// about half do; see the package doc).
	slots := func(n int) uint64 { return uint64(math.Ceil(float64(n)*1.015/64)) * 64 }
	f, err := new(buffers).build(hashes, 8, slots, maxAttempts)
	if err != nil {
		t.Fatal(err)
	}
	if f.seed == firstSeed {
		t.Fatal("the first seed worked: choose tighter slots so that the retry is tested")
	}
	for _, h := range hashes {
		if !f.MayContainHash(h) {
			t.Fatalf("%#x lost", h)
		}
	}
	t.Logf("seed %d of the sequence worked", (f.seed-firstSeed)/seedStep)
}

func TestAccessors(t *testing.T) {
	for _, tc := range []struct{ n, r int }{{1, 1}, {3, 5}, {100, 8}, {1000, 11}, {10_000, 16}, {10_000, 32}} {
		f, _ := builtFilter(t, tc.n, tc.r)
		slots := SlotsFor(tc.n)
		if f.Slots() != slots || f.SizeBytes() != int(slots/8*uint64(tc.r)) {
			t.Fatalf("n = %d, r = %d: Slots %d, SizeBytes %d; want %d slots, %d bytes", tc.n, tc.r, f.Slots(), f.SizeBytes(), slots, slots/8*uint64(tc.r))
		}
		data, _ := f.MarshalBinary()
		if len(data) != SizeBytes(tc.n, tc.r) || len(data) != headerLen+f.SizeBytes()+checksumLen {
			t.Fatalf("n = %d, r = %d: encoding %d bytes, SizeBytes %d", tc.n, tc.r, len(data), SizeBytes(tc.n, tc.r))
		}
		if got, want := f.BitsPerKey(), 8*float64(len(data))/float64(tc.n); got != want || BitsPerKey(tc.r, tc.n) != want {
			t.Fatalf("n = %d, r = %d: BitsPerKey %v and %v, want %v", tc.n, tc.r, got, BitsPerKey(tc.r, tc.n), want)
		}
	}
}

func TestSlotsFor(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want uint64
	}{
		{1, 128}, {10, 128}, {128, 128}, {129, 192}, {630, 640}, // ε = 0 below 631 keys
		{700, 768},             // 700·1.05 = 735: ε is at least 0.05
		{1000, 1088},           // 1000·1.05 = 1050
		{10_000, 10_560},       // 10,000·1.05 = 10,500
		{100_000, 105_024},     // 10^5·1.05 = 105,000 ((log10 n − 2.8)/60 is 0.037)
		{1_000_000, 1_053_376}, // 10^6·(1 + 3.2/60) = 1,053,333.3
	} {
		if got := SlotsFor(tc.n); got != tc.want {
			t.Errorf("SlotsFor(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	prev := uint64(0)
	for n := 1; n <= 1<<31; n = n*3/2 + 1 {
		m := SlotsFor(n)
		if m%64 != 0 || m < minSlots || m > maxSlots || m < uint64(n) || m < prev {
			t.Fatalf("SlotsFor(%d) = %d: not a multiple of 64 in [%d, %d], at least n and non-decreasing", n, m, minSlots, uint64(maxSlots))
		}
		prev = m
	}
}

func TestSizeBytesRefuses(t *testing.T) {
	for _, tc := range []struct{ n, r int }{{0, 8}, {-1, 8}, {maxKeys + 1, 8}, {10, 0}, {10, 33}} {
		if got := SizeBytes(tc.n, tc.r); got != 0 {
			t.Errorf("SizeBytes(%d, %d) = %d, want 0", tc.n, tc.r, got)
		}
		if got := BitsPerKey(tc.r, tc.n); got != 0 {
			t.Errorf("BitsPerKey(%d, %d) = %v, want 0", tc.r, tc.n, got)
		}
	}
	if FalsePositiveRate(0) != 1 || FalsePositiveRate(33) != 1 || FalsePositiveRate(32) != math.Ldexp(1, -32) {
		t.Fatal("FalsePositiveRate out of range is not 1, or 2^-32 is wrong")
	}
}

func TestMayContainHashAllocatesNothing(t *testing.T) {
	f, hashes := builtFilter(t, 10_000, 12)
	i := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		if !f.MayContainHash(hashes[i%len(hashes)]) {
			panic(fmt.Sprint("false negative at ", i))
		}
		i++
	}); allocs != 0 {
		t.Fatalf("MayContainHash allocates %v times per call", allocs)
	}
}

// TestRowCoefficients checks the row a hash gives: its start leaves room
// for 128 coefficients, the first of which is set.
func TestRowCoefficients(t *testing.T) {
	for _, m := range []uint64{128, 192, 1 << 20} {
		probes(10_000, 17, func(x uint64) {
			s, lo, _, _ := row(x, m)
			if s > m-128 || lo&1 != 1 {
				t.Fatalf("m = %d, x = %#x: start %d, first coefficient %d", m, x, s, lo&1)
			}
		})
		if s, _, _, _ := row(math.MaxUint64, m); s != m-128 {
			t.Fatalf("m = %d: the largest hash starts at %d, want %d", m, s, m-128)
		}
	}
	// The coefficients are balanced: about half of them are set.
	ones := 0
	probes(10_000, 18, func(x uint64) {
		_, lo, hi, _ := row(x, 1<<20)
		ones += bits.OnesCount64(lo) + bits.OnesCount64(hi)
	})
	if mean := float64(ones) / 10_000; mean < 63.5 || mean > 65.5 {
		t.Fatalf("%.2f coefficients set per row, want about 64.5", mean)
	}
}

// TestAttemptFailureRate measures how often one attempt at SlotsFor(n)
// slots has no solution, over random sets, against the rates the package
// doc gives (none of 400 at these sizes): more than 5% means ε is too
// small for retries to be rare.
func TestAttemptFailureRate(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("builds 400 filters")
	}
	for _, n := range []int{1000, 10_000} {
		const sets = 200
		b := new(buffers)
		failures := 0
		for i := range sets {
			keys := randomHashes(n, uint64(1000+i))
			for j, h := range keys {
				keys[j] = mix(h, firstSeed)
			}
			if _, ok := b.try(radix.Distinct(keys, make([]uint64, n)), 8, SlotsFor(n), firstSeed); !ok {
				failures++
			}
		}
		if failures > sets*5/100 {
			t.Errorf("n = %d: %d of %d attempts failed, want at most 5%%", n, failures, sets)
		}
		t.Logf("n = %d: %d of %d attempts failed", n, failures, sets)
	}
}

package fuse

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/FastFilter/xorfilter"
	"github.com/bloomkv/bloomkv/internal/race"
)

// bigWidths returns the widths tested at a million keys: a build then takes
// about 0.15 s, and ten times that under the race detector.
func bigWidths() []int {
	if race.Enabled || testing.Short() {
		return []int{8}
	}
	return []int{1, 7, 8, 12, 16}
}

// TestBuildNoFalseNegatives checks the defining property at every size:
// every hash a filter was built from is found, at every width.
func TestBuildNoFalseNegatives(t *testing.T) {
	allWidths := make([]int, 0, MaxBits)
	for w := MinBits; w <= MaxBits; w++ {
		allWidths = append(allWidths, w)
	}
	for _, tc := range []struct {
		n      int
		widths []int
	}{
		{1, allWidths},
		{2, allWidths},
		{3, allWidths},
		{10, allWidths},
		{100, allWidths},
		{10_000, allWidths},
		{1_000_000, bigWidths()},
	} {
		for _, w := range tc.widths {
			f, hashes := builtFilter(t, tc.n, w)
			if f.Keys() != uint64(tc.n) || f.Bits() != w {
				t.Fatalf("n = %d, w = %d: Keys %d, Bits %d", tc.n, w, f.Keys(), f.Bits())
			}
			for i, h := range hashes {
				if !f.MayContainHash(h) {
					t.Fatalf("n = %d, w = %d: hash %d of the set (%#x) not found", tc.n, w, i, h)
				}
			}
		}
	}
}

// libraryFilter is the library's own filter of some keys, as an oracle.
type libraryFilter struct {
	w                int
	contains         func(uint64) bool
	seed             uint64
	segLen, segCount uint32
}

func newLibraryFilter[T uint8 | uint16](t *testing.T, w int, keys []uint64) libraryFilter {
	lib, err := xorfilter.NewBinaryFuse[T](slices.Clone(keys)) // it may reorder its argument
	must(t, err)
	return libraryFilter{w, lib.Contains, lib.Seed, lib.SegmentLength, lib.SegmentCount}
}

// TestMatchesLibrary uses the library as the oracle of the hashing and
// slot layout: at 8 and 16 bits, where the library has filters of its own,
// the library's filter of the same keys answers every query exactly as
// ours does.
func TestMatchesLibrary(t *testing.T) {
	const n, queries = 20_000, 100_000
	hashes := randomHashes(n, 7)
	keys := slices.Clone(hashes)
	slices.Sort(keys) // what Build gives the library
	for _, lib := range []libraryFilter{
		newLibraryFilter[uint8](t, 8, keys),
		newLibraryFilter[uint16](t, 16, keys),
	} {
		f, err := Build(hashes, lib.w)
		must(t, err)
		if f.seed != lib.seed || f.segLen != uint64(lib.segLen) || f.segCountLen != uint64(lib.segCount)*uint64(lib.segLen) {
			t.Fatalf("w = %d: seed %#x, L %d, S·L %d; the library's %#x, %d, %d·%d",
				lib.w, f.seed, f.segLen, f.segCountLen, lib.seed, lib.segLen, lib.segCount, lib.segLen)
		}
		positives := 0
		probes(queries, 3, func(h uint64) {
			got, want := f.MayContainHash(h), lib.contains(h)
			if got != want {
				t.Fatalf("w = %d: hash %#x: MayContainHash %v, the library's Contains %v", lib.w, h, got, want)
			}
			if got {
				positives++
			}
		})
		for _, h := range hashes {
			if !lib.contains(h) || !f.MayContainHash(h) {
				t.Fatalf("w = %d: member %#x: the library says %v, ours %v", lib.w, h, lib.contains(h), f.MayContainHash(h))
			}
		}
		t.Logf("w = %d: %d probes agree, %d of them positive", lib.w, queries, positives)
	}
}

// TestSlotsAreLibrarySlots checks the packing against the library at every
// width: slot i, read by the query's own slot function and also bit by bit
// from the payload, is the low w bits of the library's fingerprint i, in a
// library filter of the same keys.
func TestSlotsAreLibrarySlots(t *testing.T) {
	const n = 1000
	hashes := randomHashes(n, 8)
	keys := slices.Clone(hashes)
	slices.Sort(keys)
	lib8, err := xorfilter.NewBinaryFuse[uint8](slices.Clone(keys))
	must(t, err)
	lib16, err := xorfilter.NewBinaryFuse[uint16](slices.Clone(keys))
	must(t, err)
	for w := MinBits; w <= MaxBits; w++ {
		f, err := Build(hashes, w)
		must(t, err)
		libSlot := func(i int) uint64 { return uint64(lib16.Fingerprints[i]) }
		if w <= 8 {
			libSlot = func(i int) uint64 { return uint64(lib8.Fingerprints[i]) }
		}
		payload := wordBytes(f.words)
		p := unsafe.Pointer(unsafe.SliceData(f.words))
		for i := range int(f.Slots()) {
			var bitwise uint64
			for b := range w {
				bit := i*w + b
				bitwise |= uint64(payload[bit/8]>>(bit%8)&1) << b
			}
			want := libSlot(i) & f.mask
			if got := f.slot(p, uint64(i)) & f.mask; got != want || bitwise != want {
				t.Fatalf("w = %d: slot %d is %#x (bit by bit %#x), the library's fingerprint masked %#x", w, i, got, bitwise, want)
			}
		}
		// Every bit after the last slot is 0.
		for bit := int(f.Slots()) * w; bit < 8*len(payload); bit++ {
			if payload[bit/8]>>(bit%8)&1 != 0 {
				t.Fatalf("w = %d: bit %d, after the last slot, is set", w, bit)
			}
		}
	}
}

// TestFastPathsMatchPackedPath checks MayContainHash's byte and two-byte
// loads at 8 and 16 bits against the general packed path they replace.
func TestFastPathsMatchPackedPath(t *testing.T) {
	for _, w := range []int{8, 16} {
		f, hashes := builtFilter(t, 10_000, w)
		p := unsafe.Pointer(unsafe.SliceData(f.words))
		packed := func(h uint64) bool {
			fp, h0, h1, h2 := f.locate(h)
			return (fp^f.slot(p, h0)^f.slot(p, h1)^f.slot(p, h2))&f.mask == 0
		}
		check := func(h uint64) {
			if got, want := f.MayContainHash(h), packed(h); got != want {
				t.Fatalf("w = %d: %#x: MayContainHash %v, the packed path %v", w, h, got, want)
			}
		}
		for _, h := range hashes {
			check(h)
		}
		probes(100_000, 13, check)
	}
}

// TestFalsePositiveRate measures each width's rate on probes not in the
// set and requires the count of false positives within mean ± 5σ of
// Binomial(probes, 2^−w), an interval a correct filter misses with
// probability below 10^−6. At 16 bits 2^23 probes expect 128 positives, so
// the test tells 2^−16 from half or twice that. The race detector makes a
// query some 50 times slower: it then probes a sixteenth as often, and at
// 16 bits, where the interval then starts below 0, only the upper tail is
// tested.
func TestFalsePositiveRate(t *testing.T) {
	const n = 10_000 // the rate does not depend on n; a small filter is fast to probe
	scale := 1
	if race.Enabled {
		scale = 16
	}
	for _, tc := range []struct{ w, probes int }{
		{1, 1 << 20},
		{4, 1 << 20},
		{8, 1 << 20},
		{10, 1 << 21},
		{12, 1 << 22},
		{16, 1 << 23},
	} {
		f, _ := builtFilter(t, n, tc.w)
		tc.probes /= scale
		positives := 0
		probes(tc.probes, 11, func(h uint64) {
			if f.MayContainHash(h) {
				positives++
			}
		})
		p := f.ExpectedFalsePositiveRate()
		if p != math.Ldexp(1, -tc.w) {
			t.Fatalf("w = %d: ExpectedFalsePositiveRate %v, want 2^-%d", tc.w, p, tc.w)
		}
		lo, hi := binomialBounds(tc.probes, p, 5)
		if float64(positives) < lo || float64(positives) > hi {
			t.Errorf("w = %d: %d false positives in %d probes, want %.0f to %.0f (rate %.3g, expected %.3g)",
				tc.w, positives, tc.probes, lo, hi, float64(positives)/float64(tc.probes), p)
		}
		t.Logf("w = %d: %d false positives in %d probes (%.4g; 2^-w = %.4g; bounds %.0f–%.0f)",
			tc.w, positives, tc.probes, float64(positives)/float64(tc.probes), p, lo, hi)
	}
}

func TestDuplicates(t *testing.T) {
	distinct := randomHashes(5000, 21)
	halfRepeated := append(slices.Clone(distinct), distinct[:2500]...)
	// Shuffle the repeats in, deterministically: interleave from the back.
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
		for _, w := range []int{3, 8, 16} {
			before := slices.Clone(tc.hashes)
			f, err := Build(tc.hashes, w)
			if err != nil {
				t.Fatalf("%s, w = %d: %v", tc.name, w, err)
			}
			if !slices.Equal(before, tc.hashes) {
				t.Fatalf("%s, w = %d: Build modified the caller's hashes", tc.name, w)
			}
			if f.Keys() != tc.distinct {
				t.Fatalf("%s, w = %d: Keys %d, want %d distinct", tc.name, w, f.Keys(), tc.distinct)
			}
			if want := SizeBytes(int(tc.distinct), w); headerLen+f.SizeBytes()+checksumLen != want {
				t.Fatalf("%s, w = %d: payload %d bytes, SizeBytes(%d) %d", tc.name, w, f.SizeBytes(), tc.distinct, want)
			}
			for _, h := range tc.hashes {
				if !f.MayContainHash(h) {
					t.Fatalf("%s, w = %d: %#x not found", tc.name, w, h)
				}
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	hashes := randomHashes(100, 2)
	for _, bits := range []int{-1, 0, 17, 32, math.MaxInt} {
		_, err := Build(hashes, bits)
		var e *ArgumentError
		if !errors.As(err, &e) || e.Arg != "bits" || e.Value != bits || !strings.Contains(err.Error(), "[1, 16]") {
			t.Fatalf("Build(bits = %d): %v, want an *ArgumentError naming bits and [1, 16]", bits, err)
		}
	}
	for _, empty := range [][]uint64{nil, {}} {
		if f, err := Build(empty, 8); err != ErrEmpty || f != nil {
			t.Fatalf("Build(%#v): %v, %v; want ErrEmpty", empty, f, err)
		}
	}
	// A width out of range is reported before emptiness.
	if _, err := Build(nil, 0); errors.Is(err, ErrEmpty) {
		t.Fatalf("Build(nil, 0): %v, want the argument error", err)
	}
}

// TestBuildFailureWrapsErrBuild makes every library attempt fail by
// allowing it none. It sets the library's global limit, so it must not run
// in parallel with a test that builds.
func TestBuildFailureWrapsErrBuild(t *testing.T) {
	saved := xorfilter.MaxIterations
	defer func() { xorfilter.MaxIterations = saved }()
	xorfilter.MaxIterations = 0
	for _, w := range []int{5, 8, 9, 16} {
		f, err := Build(randomHashes(1000, 3), w)
		if !errors.Is(err, ErrBuild) || f != nil {
			t.Fatalf("w = %d: %v, %v; want an error wrapping ErrBuild", w, f, err)
		}
		if !strings.Contains(err.Error(), "1000 distinct hashes") {
			t.Fatalf("w = %d: %q does not say what failed", w, err)
		}
	}
}

func TestAccessors(t *testing.T) {
	for _, tc := range []struct{ n, w int }{{1, 1}, {3, 5}, {100, 8}, {1000, 11}, {10_000, 16}} {
		f, _ := builtFilter(t, tc.n, tc.w)
		slots := slotsFor(uint32(tc.n))
		words := (slots*uint64(tc.w)+63)/64 + 1
		size := SizeBytes(tc.n, tc.w)
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"Bits", f.Bits(), tc.w},
			{"Keys", f.Keys(), uint64(tc.n)},
			{"Slots", f.Slots(), slots},
			{"SizeBytes", f.SizeBytes(), int(8 * words)},
			{"SizeBytes(n, w)", size, 48 + int(8*words) + 4},
			{"BitsPerKey", f.BitsPerKey(), 8 * float64(size) / float64(tc.n)},
			{"ExpectedFalsePositiveRate", f.ExpectedFalsePositiveRate(), math.Pow(2, -float64(tc.w))},
			{"FalsePositiveRate", FalsePositiveRate(tc.w), math.Pow(2, -float64(tc.w))},
		} {
			if c.got != c.want {
				t.Errorf("n = %d, w = %d: %s = %v, want %v", tc.n, tc.w, c.name, c.got, c.want)
			}
		}
	}
	for _, bits := range []int{-1, 0, 17} {
		if FalsePositiveRate(bits) != 1 {
			t.Errorf("FalsePositiveRate(%d) = %v, want 1", bits, FalsePositiveRate(bits))
		}
	}
}

// TestSizeBytes checks SizeBytes, computed from the library's size rule,
// against the encodings of filters actually built.
func TestSizeBytes(t *testing.T) {
	sizes := []int{1, 2, 3, 10, 100, 1000, 10_000, 100_000, 1_000_000}
	for _, n := range sizes {
		// The slots do not depend on the width: the large sets, slow to
		// build, are checked at fewer widths.
		widths := []int{1, 3, 8, 9, 13, 16}
		switch {
		case n == 1_000_000:
			widths = bigWidths() // the filters TestBuildNoFalseNegatives built
		case n == 100_000:
			widths = []int{3, 16}
		}
		for _, w := range widths {
			f, _ := builtFilter(t, n, w)
			data, err := f.MarshalBinary()
			must(t, err)
			if got := SizeBytes(n, w); got != len(data) {
				t.Errorf("SizeBytes(%d, %d) = %d, but the encoding has %d bytes", n, w, got, len(data))
			}
		}
	}
	for _, tc := range []struct{ n, bits int }{{0, 8}, {-1, 8}, {10, 0}, {10, 17}, {maxKeys + 1, 8}} {
		if got := SizeBytes(tc.n, tc.bits); got != 0 {
			t.Errorf("SizeBytes(%d, %d) = %d, want 0", tc.n, tc.bits, got)
		}
	}
}

// TestShapeMatchesLibrary checks the copied size rule against the library's
// filters for every n up to 300 and a spread of larger ones: the slots the
// rule predicts are the library's.
func TestShapeMatchesLibrary(t *testing.T) {
	sizes := []int{}
	for n := 1; n <= 300; n++ {
		sizes = append(sizes, n)
	}
	for n := 301; n < 100_000; n = n*3/2 + 1 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		lib, err := xorfilter.NewBinaryFuse[uint8](randomHashes(n, uint64(n)))
		must(t, err)
		if got := slotsFor(uint32(n)); got != uint64(len(lib.Fingerprints)) {
			segLen, segCount := shape(uint32(n))
			t.Fatalf("n = %d: the rule gives %d slots (L %d, S %d), the library %d (L %d, S %d)",
				n, got, segLen, segCount, len(lib.Fingerprints), lib.SegmentLength, lib.SegmentCount)
		}
	}
}

// TestBitsPerKeyAtOneMillion checks the space claim: at 10^6 keys the size
// factor is at its floor of 1.125, and a filter costs 1.125·w bits per key
// plus the rounding of its slots to whole segments and the fixed bytes of
// its encoding, no more.
func TestBitsPerKeyAtOneMillion(t *testing.T) {
	const n = 1_000_000
	for _, w := range bigWidths() {
		f, _ := builtFilter(t, n, w)
		segLen, _ := shape(n)
		// Slots: 1.125·n rounded up to whole segments, and then at most one
		// segment more; encoding: header, checksum, padding word and up to
		// 63 bits of rounding to whole words.
		roundingBits := float64(w) * float64(segLen) / n
		fixedBits := float64(8*(headerLen+checksumLen+8)+63) / n
		lo, hi := 1.125*float64(w), 1.125*float64(w)+roundingBits+fixedBits
		if got := f.BitsPerKey(); got < lo || got > hi {
			t.Errorf("w = %d: %.4f bits per key, want %.4f to %.4f", w, got, lo, hi)
		}
		if got, want := f.BitsPerKey(), 8*float64(SizeBytes(n, w))/n; got != want {
			t.Errorf("w = %d: BitsPerKey %v, but SizeBytes says %v", w, got, want)
		}
		t.Logf("w = %d: %.4f bits per key (1.125·w = %.4f)", w, f.BitsPerKey(), 1.125*float64(w))
	}
}

func TestMayContainHashAllocatesNothing(t *testing.T) {
	f, hashes := builtFilter(t, 10_000, 12)
	data, _ := f.MarshalBinary()
	arena := make([]uint64, f.SizeBytes()/8)
	var g Filter
	must(t, g.UnmarshalBinaryInto(data, func(int) []uint64 { return arena }))
	i := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		if !g.MayContainHash(hashes[i%len(hashes)]) {
			panic(fmt.Sprint("false negative at ", i))
		}
		i++
	}); allocs != 0 {
		t.Fatalf("MayContainHash allocates %v times per call", allocs)
	}
}

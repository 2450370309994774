package bloom

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"testing"
)

// fitsOracle reports whether a filter of words 64-bit words fits a platform
// whose largest int is maxInt, worked out in exact arithmetic from what the
// package allocates: words+7 words (alignment slack) and an encoding of a
// 36-byte header, the payload and a 4-byte checksum, each counted in bytes
// by an int.
func fitsOracle(words, maxInt uint64) bool {
	limit := new(big.Int).SetUint64(maxInt)
	w := new(big.Int).SetUint64(words)
	alloc := new(big.Int).Mul(new(big.Int).Add(w, big.NewInt(7)), big.NewInt(8))
	encoded := new(big.Int).Add(new(big.Int).Mul(w, big.NewInt(8)), big.NewInt(40))
	return alloc.Cmp(limit) <= 0 && encoded.Cmp(limit) <= 0
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// TestSizesFitThePlatform runs the sizing of every constructor and of the
// decoders' header check as a 32-bit and as a 64-bit platform would: on a
// 32-bit build, sizing without the check makes NewClassicSize(1<<38, 3) a
// filter of 0 words (2^32 words convert to an int of 0) whose first Add
// panics. A size
// must be refused, naming the argument, exactly when the oracle says the
// filter does not fit.
func TestSizesFitThePlatform(t *testing.T) {
	const max32, max64 = math.MaxInt32, math.MaxInt64
	// The largest classic filter a 32-bit platform holds, by the oracle's
	// formula solved by hand: min(⌊(2^31−1)/8⌋−7, ⌊(2^31−1−40)/8⌋) words.
	const words32 = 268_435_448
	if !fitsOracle(words32, max32) || fitsOracle(words32+1, max32) {
		t.Fatalf("the oracle's 32-bit limit is not %d words", words32)
	}
	classicN, classicP := math.MaxInt32, 0.01 // NewClassic's largest n on a 32-bit platform
	classicM, _, err := ClassicParams(classicN, classicP)
	if err != nil {
		t.Fatal(err)
	}
	type sizing struct {
		name  string
		arg   string // the argument the error must name
		words uint64 // the filter's words, worked out by the test
		check func(maxInt uint64) error
	}
	var cases []sizing
	for _, m := range []uint64{64, 1 << 32, words32 * 64, words32*64 + 1, 1 << 38, MaxBits} {
		cases = append(cases,
			sizing{"classic m=" + strconv.FormatUint(m, 10), "m", ceilDiv(m, 64),
				func(maxInt uint64) error { return checkSize(KindClassic, m, 3, 0, maxInt) }},
		)
		for _, width := range []int{4, 8, 16} {
			cases = append(cases, sizing{fmt.Sprintf("counting m=%d width=%d", m, width), "m", ceilDiv(m, uint64(64/width)),
				func(maxInt uint64) error { return checkSize(KindCounting, m, 3, width, maxInt) }})
		}
	}
	cases = append(cases,
		sizing{"classic n=MaxInt32", "n", ceilDiv(classicM, 64), func(maxInt uint64) error {
			_, _, err := sizeFor(KindClassic, classicN, classicP, 0, maxInt)
			return err
		}},
		sizing{"counting n=MaxInt32", "n", ceilDiv(classicM, 16), func(maxInt uint64) error {
			_, _, err := sizeFor(KindCounting, classicN, classicP, 4, maxInt)
			return err
		}},
		sizing{"counting n=1e6", "n", ceilDiv(9_585_059, 16), func(maxInt uint64) error {
			_, _, err := sizeFor(KindCounting, 1_000_000, 0.01, 4, maxInt)
			return err
		}},
		// 2^28 items at 1%: 2^28·ln(100)/(ln 2)² counters, 16 bits each.
		sizing{"counting n=2^28 width=16", "n", ceilDiv(uint64(math.Ceil(1<<28*math.Log(100)/(math.Ln2*math.Ln2))), 4), func(maxInt uint64) error {
			_, _, err := sizeFor(KindCounting, 1<<28, 0.01, 16, maxInt)
			return err
		}},
		// n·bitsPerKey/512 blocks of 8 words.
		sizing{"blocked n=2^30 at 64", "n", 8 * (1 << 30 * 64 / 512), func(maxInt uint64) error {
			_, err := blockedSize(1<<30, 64, maxInt)
			return err
		}},
		sizing{"blocked n=2^28 at 10", "n", 8 * ceilDiv(1<<28*10, 512), func(maxInt uint64) error {
			_, err := blockedSize(1<<28, 10, maxInt)
			return err
		}},
	)
	for _, tc := range cases {
		for _, maxInt := range []uint64{max32, max64} {
			t.Run(tc.name+"/int"+strconv.Itoa(bits.Len64(maxInt)+1), func(t *testing.T) {
				err := tc.check(maxInt)
				if want := fitsOracle(tc.words, maxInt); want != (err == nil) {
					t.Fatalf("%d words: err %v, want fits = %v", tc.words, err, want)
				}
				if err == nil {
					return
				}
				var ae *ArgumentError
				if !errors.As(err, &ae) || ae.Arg != tc.arg {
					t.Fatalf("got %v, want an *ArgumentError naming %q", err, tc.arg)
				}
			})
		}
	}

	// The decoders check the header's size the same way, before they
	// allocate: a filter encoded on a 64-bit platform may be too large for
	// a 32-bit one, and is refused as corrupt there, never truncated.
	for _, h := range []header{
		{kind: KindClassic, k: 3, m: 1 << 38},
		{kind: KindClassic, k: 3, m: words32 * 64},
		{kind: KindClassic, k: 3, m: words32*64 + 1},
		{kind: KindBlocked, k: 3, m: 1 << 38},
		{kind: KindCounting, k: 3, m: 1 << 32, counterBits: 4},
		{kind: KindCounting, k: 3, m: 1 << 33, counterBits: 4},
		{kind: KindCounting, k: 3, m: 1 << 30, counterBits: 16},
		{kind: KindCounting, k: 3, m: 1 << 31, counterBits: 16},
		{kind: KindCounting, k: 3, m: 1 << 31, counterBits: 8},
		{kind: KindClassic, k: 3, m: MaxBits},
	} {
		words := ceilDiv(h.m, 64)
		if h.kind == KindCounting {
			words = ceilDiv(h.m, uint64(64/h.counterBits))
		}
		for _, maxInt := range []uint64{max32, max64} {
			_, err := parseHeader(h.appendTo(nil), h.kind, maxInt)
			if want := fitsOracle(words, maxInt); want != (err == nil) || (err != nil && !errors.Is(err, ErrCorrupt)) {
				t.Errorf("%v header of size %d, max int %d: %v; want fits = %v, else ErrCorrupt", h.kind, h.m, maxInt, err, want)
			}
		}
	}
}

// TestHugeSizesOnThisPlatform calls the exported constructors and decoders
// with sizes no 32-bit platform can hold. On a 32-bit build (GOARCH=386 go
// test ./bloom runs it on an amd64 Linux machine) each must return an error
// instead of a filter that panics on its first Add; a 64-bit platform
// holds these sizes, and allocating them would take gigabytes, so there
// the test is skipped and TestSizesFitThePlatform covers the logic.
func TestHugeSizesOnThisPlatform(t *testing.T) {
	if strconv.IntSize != 32 {
		t.Skip("64-bit int: these sizes fit; TestSizesFitThePlatform checks the 32-bit limit")
	}
	for _, tc := range []struct {
		name, arg string
		call      func() error
	}{
		{"NewClassicSize", "m", func() error { _, err := NewClassicSize(1<<38, 3); return err }},
		{"NewClassicFromBitmap", "m", func() error { _, err := NewClassicFromBitmap(1<<38, 3, nil); return err }},
		{"NewCountingSize", "m", func() error { _, err := NewCountingSize(1<<34, 3); return err }},
		{"NewCountingSize 16-bit", "m", func() error { _, err := NewCountingSize(1<<31, 3, CounterBits(16)); return err }},
		{"NewClassic", "n", func() error { _, err := NewClassic(math.MaxInt, 0.01); return err }},
		{"NewCounting", "n", func() error { _, err := NewCounting(math.MaxInt/2, 0.01); return err }},
		{"NewBlocked", "n", func() error { _, err := NewBlocked(math.MaxInt, 64); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ae *ArgumentError
			if !errors.As(err, &ae) || ae.Arg != tc.arg {
				t.Fatalf("got %v, want an *ArgumentError naming %q", err, tc.arg)
			}
		})
	}
	data := header{kind: KindClassic, k: 3, m: 1 << 38}.appendTo(nil)
	if err := new(Classic).UnmarshalBinary(data); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("UnmarshalBinary of a 2^38-bit header: %v, want ErrCorrupt", err)
	}
}

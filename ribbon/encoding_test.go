package ribbon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/filterframe"
)

// smallFilters returns filters small enough that every bit of their
// encodings can be flipped in a test: 128 slots at several widths, and 192.
func smallFilters(t testing.TB) []*Filter {
	var filters []*Filter
	for _, tc := range []struct{ n, w int }{{1, 1}, {10, 5}, {10, 8}, {100, 13}, {150, 3}, {10, 32}} {
		f, _ := builtFilter(t, tc.n, tc.w)
		filters = append(filters, f)
	}
	return filters
}

// decoders are the ways an encoding is decoded.
var decoders = map[string]func(data []byte) error{
	"UnmarshalBinary": func(data []byte) error { return new(Filter).UnmarshalBinary(data) },
	"UnmarshalBinaryInto": func(data []byte) error {
		return new(Filter).UnmarshalBinaryInto(data, func(n int) []uint64 { return make([]uint64, n) })
	},
}

func TestRoundTrip(t *testing.T) {
	for w := MinBits; w <= MaxBits; w++ {
		for _, n := range []int{1, 3, 100, 2000} {
			f, hashes := builtFilter(t, n, w)
			data, err := f.MarshalBinary()
			must(t, err)
			var g Filter
			if err := g.UnmarshalBinary(data); err != nil {
				t.Fatalf("n = %d, w = %d: %v", n, w, err)
			}
			if g.seed != f.seed || g.slots != f.slots || g.r != f.r || g.keys != f.keys || !slices.Equal(g.words, f.words) {
				t.Fatalf("n = %d, w = %d: decoded %+v, encoded %+v", n, w, g, *f)
			}
			again, _ := g.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Fatalf("n = %d, w = %d: re-encoding after a round trip differs", n, w)
			}
			prefix := []byte("prefix")
			appended, err := f.AppendBinary(bytes.Clone(prefix))
			must(t, err)
			if !bytes.Equal(appended, append(prefix, data...)) {
				t.Fatalf("n = %d, w = %d: AppendBinary differs from MarshalBinary", n, w)
			}
			for _, h := range hashes {
				if !g.MayContainHash(h) {
					t.Fatalf("n = %d, w = %d: decoded filter lost %#x", n, w, h)
				}
			}
			probes(1000, 5, func(h uint64) {
				if g.MayContainHash(h) != f.MayContainHash(h) {
					t.Fatalf("n = %d, w = %d: %#x: decoded %v, built %v", n, w, h, g.MayContainHash(h), f.MayContainHash(h))
				}
			})
		}
	}
}

// TestEveryBitFlipDetected flips each bit of each small filter's encoding
// in turn: every decoder must refuse every damaged encoding.
func TestEveryBitFlipDetected(t *testing.T) {
	for _, f := range smallFilters(t) {
		data, _ := f.MarshalBinary()
		for name, decode := range decoders {
			for bit := range len(data) * 8 {
				damaged := bytes.Clone(data)
				damaged[bit/8] ^= 1 << (bit % 8)
				if err := decode(damaged); !errors.Is(err, ErrCorruption) {
					t.Fatalf("w = %d, %s: flipping bit %d of %d: %v, want ErrCorruption", f.Bits(), name, bit, 8*len(data), err)
				}
			}
		}
	}
}

func TestEveryTruncationDetected(t *testing.T) {
	for _, f := range smallFilters(t) {
		data, _ := f.MarshalBinary()
		for name, decode := range decoders {
			for n := range len(data) {
				if err := decode(data[:n]); !errors.Is(err, ErrCorruption) {
					t.Fatalf("w = %d, %s: truncated to %d of %d bytes: %v, want ErrCorruption", f.Bits(), name, n, len(data), err)
				}
			}
			for _, tail := range []string{"\x00", "\x00\x00\x00\x00\x00\x00\x00\x00", "x"} {
				if err := decode(append(bytes.Clone(data), tail...)); !errors.Is(err, ErrCorruption) {
					t.Fatalf("w = %d, %s: %d trailing bytes accepted: %v", f.Bits(), name, len(tail), err)
				}
			}
		}
	}
}

// resign recomputes the checksums of an encoding whose fields a test
// changed, so that decoding gets past them to the fields' checks.
func resign(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[offHeaderCRC:], filterframe.Checksum(b[:offHeaderCRC]))
	if len(b) >= headerLen+checksumLen {
		end := len(b) - checksumLen
		binary.LittleEndian.PutUint32(b[end:], filterframe.Checksum(b[headerLen:end]))
	}
	return b
}

// TestDamagedEncodings changes one field at a time, with valid checksums:
// each must be refused with ErrCorruption, naming the byte at fault, before
// anything is allocated. The "huge" case claims the largest filter the
// format allows, 2^32 slots of 32 bits (16 GiB), in a few bytes.
func TestDamagedEncodings(t *testing.T) {
	f, _ := builtFilter(t, 150, 13) // 192 slots
	data, _ := f.MarshalBinary()
	le := binary.LittleEndian
	payloadEnd := len(data) - checksumLen
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string // in the error
	}{
		{"short", func(b []byte) []byte { return b[:headerLen-1] }, "47 bytes, shorter than the 48-byte header"},
		{"magic", func(b []byte) []byte { b[0] = 'B'; return b }, `at byte 0: magic "BIBF"`},
		{"header checksum", func(b []byte) []byte { b[offHeaderCRC] ^= 1; return b }, "at byte 44: header checksum"},
		{"version", func(b []byte) []byte { b[filterframe.OffVersion] = 2; return resign(b) }, "at byte 4: format version 2"},
		{"kind", func(b []byte) []byte { b[filterframe.OffKind] = 2; return resign(b) }, "at byte 5: kind 2"},
		{"bits 0", func(b []byte) []byte { b[filterframe.OffBits] = 0; return resign(b) }, "at byte 6: result width 0"},
		{"bits 33", func(b []byte) []byte { b[filterframe.OffBits] = 33; return resign(b) }, "at byte 6: result width 33"},
		{"reserved byte", func(b []byte) []byte { b[filterframe.OffReserved1] = 1; return resign(b) }, "at byte 7: reserved byte is 0x1"},
		{"slots 0", func(b []byte) []byte { le.PutUint64(b[offSlots:], 0); return resign(b) }, "at byte 16: 0 slots"},
		{"slots 64", func(b []byte) []byte { le.PutUint64(b[offSlots:], 64); return resign(b) }, "at byte 16: 64 slots"},
		{"slots 200", func(b []byte) []byte { le.PutUint64(b[offSlots:], 200); return resign(b) }, "at byte 16: 200 slots, not a multiple of 64"},
		{"slots past 2^32", func(b []byte) []byte { le.PutUint64(b[offSlots:], 1<<32+64); return resign(b) }, "at byte 16: 4294967360 slots"},
		{"slots 2^64-64", func(b []byte) []byte { le.PutUint64(b[offSlots:], math.MaxUint64-63); return resign(b) }, "at byte 16: 18446744073709551552 slots"},
		{"keys 0", func(b []byte) []byte { le.PutUint64(b[offKeys:], 0); return resign(b) }, "at byte 24: 0 keys"},
		{"keys above slots", func(b []byte) []byte { le.PutUint64(b[offKeys:], f.Slots()+1); return resign(b) }, fmt.Sprintf("at byte 24: %d keys in %d slots", f.Slots()+1, f.Slots())},
		{"payload length", func(b []byte) []byte { le.PutUint64(b[offPayloadLength:], uint64(f.SizeBytes()+8)); return resign(b) }, fmt.Sprintf("at byte 32: payload length %d, want %d", f.SizeBytes()+8, f.SizeBytes())},
		{"reserved word", func(b []byte) []byte { b[filterframe.OffReserved2+3] = 0x80; return resign(b) }, "at byte 40: reserved bytes are 0x80000000"},
		{"slots without payload", func(b []byte) []byte {
			le.PutUint64(b[offSlots:], f.Slots()+64)
			le.PutUint64(b[offPayloadLength:], 8*payloadWords(f.Slots()+64, f.r))
			return resign(b)
		}, "bytes, want"},
		{"huge", func(b []byte) []byte {
			b = b[:headerLen+checksumLen]
			b[filterframe.OffBits] = 32
			le.PutUint64(b[offSlots:], maxSlots)
			le.PutUint64(b[offPayloadLength:], 8*payloadWords(maxSlots, 32))
			return resign(b)
		}, "52 bytes, want 17179869236 for 4294967296 slots of 32 bits"},
		{"payload checksum", func(b []byte) []byte { b[payloadEnd] ^= 0x10; return b }, fmt.Sprintf("at byte %d: payload checksum", payloadEnd)},
	} {
		damaged := tc.damage(bytes.Clone(data))
		var g Filter
		err := g.UnmarshalBinaryInto(damaged, func(n int) []uint64 {
			t.Fatalf("%s: alloc(%d) called for a damaged encoding", tc.name, n)
			return nil
		})
		if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCorruption and %q", tc.name, err, tc.want)
		}
	}
}

// TestUnmarshalBinaryInto checks that a filter decoded into the caller's
// memory asks for it once, with the payload's word count, overwrites it,
// lives in it, allocates nothing else, and answers as the original.
func TestUnmarshalBinaryInto(t *testing.T) {
	f, hashes := builtFilter(t, 10_000, 12)
	data, _ := f.MarshalBinary()
	arena := make([]uint64, f.SizeBytes()/8)
	for i := range arena {
		arena[i] = ^uint64(0) // memory the caller reuses is not zero
	}
	calls := 0
	var g Filter
	must(t, g.UnmarshalBinaryInto(data, func(n int) []uint64 {
		calls++
		if n != len(arena) {
			t.Fatalf("alloc(%d), want %d words", n, len(arena))
		}
		return arena
	}))
	if calls != 1 || &g.words[0] != &arena[0] {
		t.Fatalf("alloc called %d times; the filter uses the arena: %v", calls, &g.words[0] == &arena[0])
	}
	for _, h := range hashes {
		if !g.MayContainHash(h) {
			t.Fatalf("%#x lost", h)
		}
	}
	probes(20_000, 9, func(h uint64) {
		if g.MayContainHash(h) != f.MayContainHash(h) {
			t.Fatalf("%#x: decoded %v, original %v", h, g.MayContainHash(h), f.MayContainHash(h))
		}
	})
	if allocs := testing.AllocsPerRun(10, func() {
		if err := g.UnmarshalBinaryInto(data, func(int) []uint64 { return arena }); err != nil {
			panic(err)
		}
	}); allocs != 0 {
		t.Fatalf("UnmarshalBinaryInto allocates %v times besides alloc", allocs)
	}

	var e *ArgumentError
	for _, words := range []int{len(arena) - 1, len(arena) + 1, 0} {
		err := g.UnmarshalBinaryInto(data, func(n int) []uint64 { return make([]uint64, words) })
		if !errors.As(err, &e) || e.Arg != "alloc" || e.Value != words {
			t.Fatalf("alloc returning %d of %d words: %v, want an *ArgumentError naming alloc", words, len(arena), err)
		}
	}
	if &g.words[0] != &arena[0] {
		t.Fatal("a refused allocation replaced the filter")
	}
}

// TestFailedDecodeKeepsFilter checks that a refused encoding leaves the
// filter decoded into as it was.
func TestFailedDecodeKeepsFilter(t *testing.T) {
	f, _ := builtFilter(t, 100, 9)
	data, _ := f.MarshalBinary()
	var g Filter
	must(t, g.UnmarshalBinary(data))
	for _, bad := range [][]byte{nil, data[:len(data)-1], append(bytes.Clone(data[:len(data)-1]), ^data[len(data)-1])} {
		if err := g.UnmarshalBinary(bad); !errors.Is(err, ErrCorruption) {
			t.Fatalf("%d bytes: %v", len(bad), err)
		}
		if again, _ := g.MarshalBinary(); !bytes.Equal(again, data) {
			t.Fatal("a failed decode changed the filter")
		}
	}
}

func TestZeroFilter(t *testing.T) {
	var f Filter
	func() {
		defer func() {
			if recover() == nil {
				t.Error("MayContainHash on a zero Filter did not panic")
			}
		}()
		f.MayContainHash(1)
	}()
	if _, err := f.MarshalBinary(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("MarshalBinary of a zero Filter: %v, want ErrEmpty", err)
	}
	if dst, err := f.AppendBinary([]byte("x")); !errors.Is(err, ErrEmpty) || string(dst) != "x" {
		t.Fatalf("AppendBinary of a zero Filter: %q, %v", dst, err)
	}
	if f.Bits() != 0 || f.Keys() != 0 || f.Slots() != 0 || f.SizeBytes() != 0 ||
		!math.IsInf(f.BitsPerKey(), 1) || f.ExpectedFalsePositiveRate() != 1 {
		t.Fatalf("zero Filter: bits %d, keys %d, slots %d, size %d, bits/key %v, rate %v",
			f.Bits(), f.Keys(), f.Slots(), f.SizeBytes(), f.BitsPerKey(), f.ExpectedFalsePositiveRate())
	}
}

// FuzzUnmarshal feeds arbitrary bytes to the decoders, seeded with
// encodings of several widths: as they are, and with their checksums
// recomputed, so that the fuzzer's changes reach the checks of the fields
// and the queries of whatever decodes. Nothing may panic; an error must
// wrap ErrCorruption; alloc is asked for exactly the payload's words; and a
// filter that decodes must re-encode to exactly its input, because the
// format has one encoding per filter.
func FuzzUnmarshal(f *testing.F) {
	for _, flt := range smallFilters(f) {
		data, _ := flt.MarshalBinary()
		f.Add(data)
	}
	big, _ := builtFilter(f, 1000, 12)
	data, _ := big.MarshalBinary()
	f.Add(data)
	f.Add(data[:headerLen])
	f.Add([]byte(magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		if len(data) >= headerLen {
			checkDecode(t, resign(bytes.Clone(data)))
		}
	})
}

func checkDecode(t *testing.T, data []byte) {
	var g Filter
	err := g.UnmarshalBinaryInto(data, func(n int) []uint64 {
		if 8*n != len(data)-headerLen-checksumLen {
			t.Fatalf("alloc(%d) for %d bytes", n, len(data))
		}
		return make([]uint64, n)
	})
	if err2 := new(Filter).UnmarshalBinary(data); (err == nil) != (err2 == nil) {
		t.Fatalf("UnmarshalBinaryInto: %v; UnmarshalBinary: %v", err, err2)
	}
	if err != nil {
		if !errors.Is(err, ErrCorruption) {
			t.Fatalf("error %v does not wrap ErrCorruption", err)
		}
		return
	}
	again, err := g.MarshalBinary()
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("decoded filter re-encodes differently (%v)", err)
	}
	probes(100, 1, func(h uint64) { g.MayContainHash(h) }) // must stay inside the payload
}

package rangefilter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// smallEncodings returns encodings small enough to flip every bit of: one
// key, exact filters, hashed ones with 0 and many low bits, a long common
// prefix, keys that end inside one another.
func smallEncodings(t testing.TB) map[string][]byte {
	r := rand.New(rand.NewPCG(3, 4))
	sets := map[string][][]byte{
		"one key":       {[]byte("k")},
		"empty key":     {{}, []byte("a")},
		"dense decimal": {},
		"sparse be":     {},
		"prefix/suffix": {},
		"ragged":        newSortedKeys([][]byte{[]byte("ab"), []byte("ab\x00"), []byte("abc"), []byte("b"), []byte("b\xff\xff")}),
	}
	for x := uint64(100); x < 140; x++ {
		sets["dense decimal"] = append(sets["dense decimal"], decimal.key(nil, x))
	}
	sets["sparse be"], _ = shapeKeys(r, bigEndian, 30, 0, bigEndian.max)
	sets["prefix/suffix"], _ = shapeKeys(r, prefixSuffix, 30, 0, prefixSuffix.max)
	out := map[string][]byte{}
	for name, keys := range sets {
		for _, bpk := range []float64{3, 17} {
			out[name+"/"+string(rune('0'+int(bpk)%10))] = encode(t, keys, bpk)
		}
	}
	return out
}

func TestEveryBitFlipDetected(t *testing.T) {
	for name, data := range smallEncodings(t) {
		for bit := range 8 * len(data) {
			damaged := bytes.Clone(data)
			damaged[bit/8] ^= 1 << (bit % 8)
			if _, err := Decode(damaged); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: flipping bit %d of %d: %v, want ErrCorrupt", name, bit, 8*len(data), err)
			}
		}
	}
}

func TestEveryTruncationDetected(t *testing.T) {
	for name, data := range smallEncodings(t) {
		for n := range len(data) {
			if _, err := Decode(data[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: truncated to %d of %d bytes: %v, want ErrCorrupt", name, n, len(data), err)
			}
		}
		for _, tail := range []string{"\x00", "\x00\x00\x00\x00\x00\x00\x00\x00", "x"} {
			if _, err := Decode(append(bytes.Clone(data), tail...)); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %d trailing bytes accepted: %v", name, len(tail), err)
			}
		}
	}
}

// resign recomputes both checksums of an encoding a test changed, so that
// decoding gets past them to the fields' and sections' checks.
func resign(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[offHeaderCRC:], crc32.Checksum(b[:offHeaderCRC], castagnoli))
	if len(b) >= headerLen+checksumLen {
		end := len(b) - checksumLen
		binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[headerLen:end], castagnoli))
	}
	return b
}

// TestForgedEncodings changes fields and sections with valid checksums —
// what a checksum does not catch: encodings of another writer, or damage
// that happens to keep the sums. Each must be refused with ErrCorrupt.
func TestForgedEncodings(t *testing.T) {
	data := smallEncodings(t)["prefix/suffix/7"]
	h, err := parseHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	put64 := func(off int, v uint64) func(b []byte) {
		return func(b []byte) { binary.LittleEndian.PutUint64(b[off:], v) }
	}
	bodyOff := headerLen + int(h.prefixSection())
	eliasFanoOff := bodyOff + int(h.alphaSection()+h.endsSection())
	highOff := eliasFanoOff + int(lowLen(h.elements, h.lowBits))
	for _, tc := range []struct {
		name   string
		change func(b []byte)
	}{
		{"version", func(b []byte) { b[offVersion] = 2 }},
		{"low bits", func(b []byte) { b[offLowBits]++ }},
		{"positions", func(b []byte) { binary.LittleEndian.PutUint16(b[offPositions:], maxPositions+1) }},
		{"no keys", put64(offKeys, 0)},
		{"too many keys", put64(offKeys, MaxKeys+1)},
		{"values above keys", put64(offValues, h.keys+1)},
		{"no hashes", put64(offElements, 0)},
		{"hashes above values", put64(offElements, h.values+1)},
		{"universe below values", put64(offUniverse, h.values-1)},
		{"universe above span", put64(offUniverse, h.span+2)},
		{"span past 2^63", put64(offSpan, 1<<63)},
		{"min past the mapping", put64(offMin, h.min+1<<62)},
		{"prefix longer by a word", func(b []byte) { binary.LittleEndian.PutUint32(b[offPrefixLen:], uint32(h.prefixLen+8)) }},
		{"prefix padding", func(b []byte) { b[headerLen+int(h.prefixLen)] = 1 }},
		{"alphabet emptied", func(b []byte) { clear(b[bodyOff : bodyOff+32]) }},
		{"alphabet filled", func(b []byte) {
			for i := range 32 * int(h.positions) {
				b[bodyOff+i] = 0xff
			}
		}},
		{"end mark past positions", func(b []byte) {
			off := bodyOff + int(h.alphaSection())
			binary.LittleEndian.PutUint64(b[off:], binary.LittleEndian.Uint64(b[off:])|1<<63)
		}},
		{"low padding", func(b []byte) { b[highOff-1] = 1 }},
		{"high bit added", func(b []byte) { b[highOff] ^= 1 }},
		{"high bits' last bit", func(b []byte) {
			n := h.elements + h.buckets() - 1
			b[highOff+int(n/8)] |= 1 << (n % 8)
		}},
		{"sample", func(b []byte) { b[highOff+int(highLen(h.elements, h.buckets()))]++ }},
	} {
		damaged := tc.change
		b := bytes.Clone(data)
		damaged(b)
		if _, err := Decode(resign(b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

func TestRoundTripBytes(t *testing.T) {
	for name, data := range smallEncodings(t) {
		f, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.SizeBytes() != len(data) {
			t.Errorf("%s: SizeBytes %d, encoding %d bytes", name, f.SizeBytes(), len(data))
		}
	}
}

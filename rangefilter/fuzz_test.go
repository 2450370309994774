package rangefilter

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// FuzzDecode: no input makes Decode, or a query of a filter it accepts,
// panic or read outside the input; Decode returns a filter or an error,
// never both. The seeds are builders' encodings, which it accepts.
func FuzzDecode(f *testing.F) {
	for _, data := range smallEncodings(f) {
		f.Add(data, []byte("user0001/event"), []byte("user9"))
	}
	f.Add([]byte("RNGF"), []byte{}, []byte{0xff})
	f.Fuzz(func(t *testing.T, data, lo, hi []byte) {
		flt, err := Decode(data)
		if err != nil {
			if flt != nil {
				t.Fatalf("Decode returned a filter and %v", err)
			}
			return
		}
		flt.MayContainRange(lo, hi)
		flt.MayContainRange(hi, lo)
		flt.MayContainRange(nil, hi)
		flt.MayContainRange(lo, append(slices.Clone(lo), 0))
	})
}

// FuzzNoFalseNegatives builds a filter of the keys the input splits into
// (at 0x0a bytes) and queries ranges between the input's bounds and the
// keys against a sorted-slice oracle.
func FuzzNoFalseNegatives(f *testing.F) {
	f.Add([]byte("apple\nbanana\ncherry"), []byte("b"), []byte("c"), uint8(10))
	f.Add([]byte("0000000100\n0000000102\n0000000250"), []byte("0000000101"), []byte("0000000102"), uint8(3))
	f.Add([]byte("user0001/event0000000007\nuser0002/event0000000001"), []byte("user0001/f"), []byte("user0002/event00000000010"), uint8(16))
	f.Add(binary.BigEndian.AppendUint64(append(binary.BigEndian.AppendUint64(nil, 77), '\n'), 1<<40), []byte{0, 0, 0, 0, 0, 0, 0, 78}, []byte{1}, uint8(40))
	f.Add([]byte("\n\x00\n\x00\x00\nab\nab\x00\nab\xff"), []byte("ab"), []byte("ab\x00"), uint8(4))
	f.Fuzz(func(t *testing.T, keyBytes, lo, hi []byte, bits uint8) {
		keys := newSortedKeys(bytes.Split(keyBytes, []byte("\n")))
		flt := build(t, keys, float64(MinBitsPerKey+int(bits)%(MaxBitsPerKey-MinBitsPerKey+1)))
		bounds := [][]byte{lo, hi, nil}
		for _, k := range keys {
			bounds = append(bounds, k, append(slices.Clone(k), 0))
		}
		if len(bounds) > 40 {
			bounds = bounds[:40]
		}
		checkNoFalseNegatives(t, flt, keys, bounds)
	})
}

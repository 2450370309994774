package blob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

var compressions = []compress.Codec{compress.None, compress.Snappy, compress.Zstd}

// writeFile writes values to a blob file in memory, compressed with c,
// and returns its bytes and each value's handle (file number 7).
func writeFile(t *testing.T, values [][]byte, c compress.Codec) ([]byte, []Handle) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, c)
	var handles []Handle
	for _, v := range values {
		off, n, err := w.Add(v)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, Handle{FileNum: 7, Offset: off, Length: n})
	}
	p, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// Version 3 if the records and their headers do not fill the file:
	// it has padding.
	want := Properties{Size: uint64(buf.Len()), Version: formatVersion2}
	records := uint64(FooterLen)
	for _, h := range handles {
		want.Values++
		want.ValueBytes += h.Length
		records += uint64(recordHeaderLen(formatVersion2, h.Length)) + h.Length
	}
	if records != want.Size {
		want.Version = formatVersion3
	}
	if p != want {
		t.Fatalf("Finish = %+v, want %+v", p, want)
	}
	return buf.Bytes(), handles
}

// randomValues returns n values of up to maxLen bytes, each a random share
// of its bytes random and the rest a repeating pattern: values that
// compress to anything from a sliver to nothing.
func randomValues(rng *rand.Rand, n, maxLen int) [][]byte {
	values := make([][]byte, n)
	for i := range values {
		v := make([]byte, rng.IntN(maxLen+1))
		share := rng.Float64()
		for j := range v {
			if rng.Float64() < share {
				v[j] = byte(rng.Uint32())
			} else {
				v[j] = 'a' + byte(j%7)
			}
		}
		values[i] = v
	}
	return values
}

// oracleZstd is the oracle's zstd encoder, an encoder of its own with
// the package's options.
var oracleZstd = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	if err != nil {
		panic(err)
	}
	return e
})

// storedLen is the oracle of how a value is stored under c: the
// compressor's output when it saves at least len/8 (rounded down) of a
// value not empty, the value otherwise.
func storedLen(t *testing.T, c compress.Codec, v []byte) (uint64, compress.Codec) {
	var n int
	switch c {
	case compress.Snappy:
		n = len(s2.EncodeSnappy(nil, v))
	case compress.Zstd:
		n = len(oracleZstd().EncodeAll(v, nil))
	default:
		return uint64(len(v)), compress.None
	}
	if len(v) == 0 || n > len(v)-len(v)/8 {
		return uint64(len(v)), compress.None
	}
	return uint64(n), c
}

// TestRoundTrip writes values of random sizes and compressibility with
// each compression and reads them back every way — ReadValue,
// ReadValueAhead, Scan, and ReadStored copied to a second file by
// AddStored — against the values written, and checks each record's
// compression against the oracle's: compressed exactly when that saves an
// eighth.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range compressions {
		for _, tc := range []struct {
			name   string
			values [][]byte
		}{
			{"empty file", nil},
			{"one empty value", [][]byte{{}}},
			{"small", randomValues(rng, 50, 40)},
			{"medium", randomValues(rng, 200, 4000)},
			{"large", randomValues(rng, 20, 70000)}, // lengths of 3-byte uvarints, values past the write buffer
		} {
			t.Run(fmt.Sprintf("%s/%s", c, tc.name), func(t *testing.T) {
				file, handles := writeFile(t, tc.values, c)
				r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
				if err != nil {
					t.Fatal(err)
				}
				var ra Readahead
				var copied bytes.Buffer
				cw := NewWriter(&copied, compress.None)
				for i, h := range handles {
					if n, _ := storedLen(t, c, tc.values[i]); h.Length != n {
						t.Fatalf("value %d of %d bytes stored in %d, want %d", i, len(tc.values[i]), h.Length, n)
					}
					got, err := r.ReadValue([]byte("prefix"), h.Offset, h.Length)
					if err != nil {
						t.Fatalf("value %d: %v", i, err)
					}
					if !bytes.Equal(got, append([]byte("prefix"), tc.values[i]...)) {
						t.Fatalf("value %d differs", i)
					}
					if got, err := r.ReadValueAhead(h.Offset, h.Length, &ra); err != nil || !bytes.Equal(got, tc.values[i]) {
						t.Fatalf("value %d read ahead: %v (differs: %v)", i, err, err == nil)
					}
					if want := uint64(crcLen+len(binaryUvarint(h.Length))+1) + h.Length; r.RecordLen(h.Length) != want {
						t.Fatalf("RecordLen(%d) = %d, want %d", h.Length, r.RecordLen(h.Length), want)
					}
					stored, sc, err := r.ReadStored(nil, h.Offset, h.Length)
					if err != nil || uint64(len(stored)) != h.Length {
						t.Fatalf("value %d stored: %d bytes, %v", i, len(stored), err)
					}
					if _, err := cw.AddStored(stored, sc); err != nil {
						t.Fatal(err)
					}
				}
				var i int
				err = r.Scan(func(rec Record) error {
					n, wc := storedLen(t, c, tc.values[i])
					if rec.Offset != handles[i].Offset || rec.Length != n || rec.Compression != wc || !bytes.Equal(rec.Value, tc.values[i]) {
						t.Fatalf("Scan record %d at %d: %d bytes %s, want %d at %d %s, with its value",
							i, rec.Offset, rec.Length, rec.Compression, n, handles[i].Offset, wc)
					}
					i++
					return nil
				})
				if err != nil || i != len(tc.values) {
					t.Fatalf("Scan: %d records, %v; want %d", i, err, len(tc.values))
				}
				// The copy, made of the stored records, holds the same
				// records at the same offsets.
				if _, err := cw.Finish(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(copied.Bytes(), file) {
					t.Fatal("the copy of the stored records differs from the file")
				}
			})
		}
	}
}

func binaryUvarint(x uint64) []byte {
	var b []byte
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// fixtureValue is value i, of n bytes, of testdata/v1.blob: a third of
// its bytes from a xorshift generator seeded by i, the rest a pattern.
func fixtureValue(i, n int) []byte {
	v := make([]byte, n)
	x := uint32(i*2654435761 + 1)
	for j := range v {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v[j] = byte(x)
		if j%3 != 0 {
			v[j] = 'a' + byte(j%7)
		}
	}
	return v
}

// fixtureLens are the lengths of testdata/v1.blob's values, in order.
var fixtureLens = []int{0, 1, 100, 127, 128, 1000, 5000, 20000}

// TestReadVersion1 reads testdata/v1.blob, written by the Writer of
// format version 1, every way, against the values it was written with,
// at the offsets that version's layout gives; and copies its records into
// a file of the current version, read back the same.
func TestReadVersion1(t *testing.T) {
	file, err := os.ReadFile("testdata/v1.blob")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(bytes.NewReader(file), int64(len(file)), "000001.blob")
	if err != nil {
		t.Fatal(err)
	}
	p := r.Properties()
	want := Properties{Values: uint64(len(fixtureLens)), Size: uint64(len(file)), Version: 1}
	var handles []Handle
	var off uint64
	for _, n := range fixtureLens {
		want.ValueBytes += uint64(n)
		handles = append(handles, Handle{FileNum: 1, Offset: off, Length: uint64(n)})
		off += uint64(crcLen+len(binaryUvarint(uint64(n)))) + uint64(n) // version 1: no compression byte
	}
	if p != want || off+FooterLen != uint64(len(file)) {
		t.Fatalf("Properties = %+v, want %+v; records end at %d of %d", p, want, off, len(file))
	}
	var copied bytes.Buffer
	cw := NewWriter(&copied, compress.Snappy)
	var ra Readahead
	for i, h := range handles {
		v := fixtureValue(i, fixtureLens[i])
		if got, err := r.ReadValue(nil, h.Offset, h.Length); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("value %d: %v (differs: %v)", i, err, err == nil)
		}
		if got, err := r.ReadValueAhead(h.Offset, h.Length, &ra); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("value %d read ahead: %v (differs: %v)", i, err, err == nil)
		}
		stored, c, err := r.ReadStored(nil, h.Offset, h.Length)
		if err != nil || c != compress.None || !bytes.Equal(stored, v) {
			t.Fatalf("value %d stored: %s, %v", i, c, err)
		}
		noff, err := cw.AddStored(stored, c)
		if err != nil {
			t.Fatal(err)
		}
		handles[i].Offset = noff
	}
	i := 0
	if err := r.Scan(func(rec Record) error {
		if !bytes.Equal(rec.Value, fixtureValue(i, fixtureLens[i])) || rec.Compression != compress.None {
			t.Fatalf("Scan: value %d differs", i)
		}
		i++
		return nil
	}); err != nil || i != len(fixtureLens) {
		t.Fatalf("Scan: %d values, %v", i, err)
	}
	if _, err := cw.Finish(); err != nil {
		t.Fatal(err)
	}
	cr, err := Open(bytes.NewReader(copied.Bytes()), int64(copied.Len()), "000002.blob")
	if err != nil || cr.Properties().Version < formatVersion2 {
		t.Fatalf("copy: %v, %+v", err, cr.Properties())
	}
	for i, h := range handles {
		if got, err := cr.ReadValue(nil, h.Offset, h.Length); err != nil || !bytes.Equal(got, fixtureValue(i, fixtureLens[i])) {
			t.Fatalf("copy's value %d: %v (differs: %v)", i, err, err == nil)
		}
	}
	// The bit flips: every byte of each record's header and of the
	// footer, and every 13th of the values (20,000 bytes of them would
	// take each flip through every value; the value bytes are all alike
	// to the checksum).
	var positions []int
	off = 0
	for _, n := range fixtureLens {
		hdr := crcLen + len(binaryUvarint(uint64(n)))
		for p := int(off); p < int(off)+hdr; p++ {
			positions = append(positions, p)
		}
		for p := int(off) + hdr; p < int(off)+hdr+n; p += 13 {
			positions = append(positions, p)
		}
		off += uint64(hdr + n)
	}
	for p := int(off); p < len(file); p++ {
		positions = append(positions, p)
	}
	t.Run("bit flips", func(t *testing.T) { checkBitFlips(t, file, nil, nil, positions) })
}

func TestHandleEncoding(t *testing.T) {
	for _, h := range []Handle{{1, 0, 0}, {12, 4096, 1024}, {1 << 60, 1 << 62, 1 << 40}} {
		enc := AppendHandle(nil, h)
		got, ok := DecodeHandle(enc)
		if !ok || got != h {
			t.Fatalf("DecodeHandle(AppendHandle(%v)) = %v, %v", h, got, ok)
		}
		for n := range len(enc) {
			if _, ok := DecodeHandle(enc[:n]); ok {
				t.Fatalf("DecodeHandle accepts %v truncated to %d bytes", h, n)
			}
		}
		if _, ok := DecodeHandle(append(enc, 0)); ok {
			t.Fatalf("DecodeHandle accepts %v with a trailing byte", h)
		}
	}
	if _, ok := DecodeHandle(AppendHandle(nil, Handle{0, 1, 1})); ok {
		t.Fatal("DecodeHandle accepts file number 0")
	}
}

// TestBitFlips flips one bit of every byte of a small file of each
// compression in turn, its values some compressed and some not, and of
// testdata/v1.blob (TestReadVersion1): see checkBitFlips.
func TestBitFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := randomValues(rng, 8, 200)
	values = append(values, []byte{}, bytes.Repeat([]byte{'x'}, 300), bytes.Repeat([]byte("abcdefgh"), 40))
	for _, c := range compressions {
		t.Run(c.String(), func(t *testing.T) {
			file, handles := writeFile(t, values, c)
			compressed := 0
			for i, v := range values {
				if _, wc := storedLen(t, c, v); wc != compress.None {
					compressed++
				} else if handles[i].Length != uint64(len(v)) {
					t.Fatalf("value %d stored in %d bytes, want it as given", i, handles[i].Length)
				}
			}
			if c != compress.None && compressed < 3 {
				t.Fatalf("%d compressed values, want some to flip bits in", compressed)
			}
			checkBitFlips(t, file, handles, values, nil)
		})
	}
}

// checkBitFlips flips one bit of each byte of file at positions (nil:
// every byte) in turn: Open, a read of some value (ReadValue,
// ReadValueAhead, ReadStored) or the scan must fail with a CorruptionError
// naming the file, and no read may return a value other than the one
// written (values[i] at handles[i]; with nil handles, the scan's values
// against the unflipped file's).
func checkBitFlips(t *testing.T, file []byte, handles []Handle, values [][]byte, positions []int) {
	t.Helper()
	if handles == nil {
		r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Scan(func(rec Record) error {
			handles = append(handles, Handle{FileNum: 7, Offset: rec.Offset, Length: rec.Length})
			values = append(values, bytes.Clone(rec.Value))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if positions == nil {
		for pos := range file {
			positions = append(positions, pos)
		}
	}
	for _, pos := range positions {
		bad := bytes.Clone(file)
		bad[pos] ^= 1 << (pos % 8)
		failed := false
		check := func(err error) {
			if err == nil {
				return
			}
			var ce *base.CorruptionError
			if !errors.Is(err, base.ErrCorruption) || !errors.As(err, &ce) || ce.File != "000007.blob" {
				t.Fatalf("flip at %d: %v, want a CorruptionError of 000007.blob", pos, err)
			}
			failed = true
		}
		r, err := Open(bytes.NewReader(bad), int64(len(bad)), "000007.blob")
		check(err)
		if err == nil {
			var ra Readahead
			for i, h := range handles {
				got, err := r.ReadValue(nil, h.Offset, h.Length)
				check(err)
				if err == nil && !bytes.Equal(got, values[i]) {
					t.Fatalf("flip at %d: value %d read wrong", pos, i)
				}
				got, err = r.ReadValueAhead(h.Offset, h.Length, &ra)
				check(err)
				if err == nil && !bytes.Equal(got, values[i]) {
					t.Fatalf("flip at %d: value %d read ahead wrong", pos, i)
				}
				stored, c, err := r.ReadStored(nil, h.Offset, h.Length)
				check(err)
				if err == nil {
					if got, err := valueDecoder.Decode(nil, stored, c); err != nil || !bytes.Equal(got, values[i]) {
						t.Fatalf("flip at %d: value %d's stored bytes wrong (%v)", pos, i, err)
					}
				}
			}
			i := 0
			check(r.Scan(func(rec Record) error {
				if i < len(values) && !bytes.Equal(rec.Value, values[i]) {
					t.Fatalf("flip at %d: scan's value %d wrong", pos, i)
				}
				i++
				return nil
			}))
		}
		if !failed {
			t.Fatalf("flip at %d went unnoticed", pos)
		}
	}
}

// TestCorruptCompressedRecords writes records whose checksums hold but
// whose stored bytes do not decode, or claim more than MaxValueLen: a
// read is corruption at the record, not a panic or an allocation.
func TestCorruptCompressedRecords(t *testing.T) {
	huge := binaryUvarint(MaxValueLen + 1) // a snappy header claiming that many bytes
	// A zstd frame header claiming MaxValueLen+1 bytes (single segment,
	// an 8-byte content size), and an empty last raw block.
	bigZstd := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	bigZstd = binary.LittleEndian.AppendUint64(append(bigZstd, 0xE0), MaxValueLen+1)
	bigZstd = append(bigZstd, 0x01, 0x00, 0x00)
	for _, tc := range []struct {
		name   string
		c      compress.Codec
		stored []byte
		reason string // in the error
	}{
		{"snappy garbage", compress.Snappy, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "does not decode"},
		{"snappy claims too much", compress.Snappy, append(huge, 0), "claims 67108865 bytes"},
		{"zstd garbage", compress.Zstd, []byte("not a zstd frame"), "does not decode"},
		{"zstd claims too much", compress.Zstd, bigZstd, "claims 67108865 bytes"},
		{"unknown compression", compress.Codec(3), []byte("abc"), "unknown compression 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, compress.None)
			if _, _, err := w.Add([]byte("first")); err != nil {
				t.Fatal(err)
			}
			off, err := w.AddStored(tc.stored, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Finish(); err != nil {
				t.Fatal(err)
			}
			r, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "000009.blob")
			if err != nil {
				t.Fatal(err)
			}
			var ra Readahead
			n := uint64(len(tc.stored))
			_, errAhead := r.ReadValueAhead(off, n, &ra)
			_, errRead := r.ReadValue(nil, off, n)
			for _, err := range []error{errRead, errAhead, r.Scan(func(Record) error { return nil })} {
				var ce *base.CorruptionError
				if !errors.As(err, &ce) || ce.File != "000009.blob" || ce.Offset != int64(off) || !strings.Contains(ce.Reason, tc.reason) {
					t.Fatalf("read = %v, want corruption of 000009.blob at %d: %s", err, off, tc.reason)
				}
			}
		})
	}
}

func TestDamagedFiles(t *testing.T) {
	file, handles := writeFile(t, [][]byte{[]byte("hello"), []byte("world")}, compress.Snappy)
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"truncated footer", file[:len(file)-1]},
		{"records cut", append(bytes.Clone(file[:3]), file[len(file)-FooterLen:]...)},
	} {
		if _, err := Open(bytes.NewReader(tc.file), int64(len(tc.file)), "x.blob"); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Open = %v, want corruption", tc.name, err)
		}
	}
	r, err := Open(bytes.NewReader(file), int64(len(file)), "x.blob")
	if err != nil {
		t.Fatal(err)
	}
	h := handles[1]
	for _, bad := range []Handle{
		{Offset: h.Offset, Length: h.Length + 1},                   // the record's length disagrees
		{Offset: h.Offset + 1, Length: h.Length},                   // not a record's start
		{Offset: uint64(len(file)), Length: 0},                     // past the records
		{Offset: 0, Length: uint64(len(file))},                     // longer than the records
		{Offset: 1 << 63, Length: 1 << 63},                         // overflowing
		{Offset: handles[0].Offset, Length: handles[1].Length + 3}, // across two records
	} {
		if _, err := r.ReadValue(nil, bad.Offset, bad.Length); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("ReadValue(%d, %d) = %v, want corruption", bad.Offset, bad.Length, err)
		}
	}
}

func TestWriterFinished(t *testing.T) {
	w := NewWriter(&bytes.Buffer{}, compress.None)
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Add([]byte("x")); !errors.Is(err, errFinished) {
		t.Fatalf("Add after Finish = %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, errFinished) {
		t.Fatalf("Finish twice = %v", err)
	}
}

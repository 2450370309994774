package blob

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// writeFile writes values to a blob file in memory and returns its bytes
// and each value's handle (file number 7).
func writeFile(t *testing.T, values [][]byte) ([]byte, []Handle) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var handles []Handle
	for _, v := range values {
		off, err := w.Add(v)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, Handle{FileNum: 7, Offset: off, Length: uint64(len(v))})
	}
	p, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var want Properties
	for _, v := range values {
		want.Values++
		want.ValueBytes += uint64(len(v))
	}
	want.Size = uint64(buf.Len())
	if p != want {
		t.Fatalf("Finish = %+v, want %+v", p, want)
	}
	return buf.Bytes(), handles
}

func randomValues(rng *rand.Rand, n, maxLen int) [][]byte {
	values := make([][]byte, n)
	for i := range values {
		v := make([]byte, rng.IntN(maxLen+1))
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		values[i] = v
	}
	return values
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		values [][]byte
	}{
		{"empty file", nil},
		{"one empty value", [][]byte{{}}},
		{"small", randomValues(rng, 50, 40)},
		{"large", randomValues(rng, 20, 70000)}, // lengths of 3-byte uvarints, values past the write buffer
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, handles := writeFile(t, tc.values)
			r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range handles {
				got, err := r.ReadValue([]byte("prefix"), h.Offset, h.Length)
				if err != nil {
					t.Fatalf("value %d: %v", i, err)
				}
				if !bytes.Equal(got, append([]byte("prefix"), tc.values[i]...)) {
					t.Fatalf("value %d differs", i)
				}
				if uint64(recordHeaderLen(h.Length))+h.Length != RecordLen(h) {
					t.Fatalf("RecordLen(%v) = %d", h, RecordLen(h))
				}
			}
			var i int
			err = r.Scan(func(off uint64, v []byte) error {
				if off != handles[i].Offset || !bytes.Equal(v, tc.values[i]) {
					t.Fatalf("Scan record %d at %d, want %d with its value", i, off, handles[i].Offset)
				}
				i++
				return nil
			})
			if err != nil || i != len(tc.values) {
				t.Fatalf("Scan: %d records, %v; want %d", i, err, len(tc.values))
			}
		})
	}
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

// TestBitFlips flips one bit of every byte of a small file in turn: Open,
// a read of some value or the scan must fail with a CorruptionError, and
// no read may return a value other than the one written.
func TestBitFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := randomValues(rng, 8, 200)
	values = append(values, []byte{}, bytes.Repeat([]byte{'x'}, 300))
	file, handles := writeFile(t, values)
	for pos := range file {
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
			for i, h := range handles {
				got, err := r.ReadValue(nil, h.Offset, h.Length)
				check(err)
				if err == nil && !bytes.Equal(got, values[i]) {
					t.Fatalf("flip at %d: value %d read wrong", pos, i)
				}
			}
			check(r.Scan(func(uint64, []byte) error { return nil }))
		}
		if !failed {
			t.Fatalf("flip at %d went unnoticed", pos)
		}
	}
}

func TestDamagedFiles(t *testing.T) {
	file, handles := writeFile(t, [][]byte{[]byte("hello"), []byte("world")})
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
	w := NewWriter(&bytes.Buffer{})
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add([]byte("x")); !errors.Is(err, errFinished) {
		t.Fatalf("Add after Finish = %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, errFinished) {
		t.Fatalf("Finish twice = %v", err)
	}
}

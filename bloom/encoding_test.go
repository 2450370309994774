package bloom

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// smallFilters returns one filled filter of each kind — classic, blocked,
// counting — then counting filters of 8- and 16-bit counters, all small
// enough that every bit of their encodings can be flipped in a test.
func smallFilters(t testing.TB) []Filter {
	keys := keySet('P', 40, 20)
	classic, err := NewClassic(40, 0.01)
	must(t, err)
	counting, err := NewCounting(40, 0.05)
	must(t, err)
	counting8, err := NewCounting(40, 0.05, CounterBits(8))
	must(t, err)
	counting16, err := NewCounting(40, 0.05, CounterBits(16))
	must(t, err)
	hashes := make([]uint64, len(keys))
	for i, k := range keys {
		classic.Add(k)
		counting.Add(k)
		counting8.Add(k)
		counting16.Add(k)
		hashes[i] = Hash(k)
	}
	blocked, err := BuildBlocked(hashes, 10)
	must(t, err)
	return []Filter{classic, blocked, counting, counting8, counting16}
}

// decoders returns, for a filter's kind, the ways an encoding is decoded.
func decoders(f Filter) map[string]func([]byte) error {
	unmarshal := func(data []byte) error {
		switch f.(type) {
		case *Classic:
			return new(Classic).UnmarshalBinary(data)
		case *Blocked:
			return new(Blocked).UnmarshalBinary(data)
		default:
			return new(Counting).UnmarshalBinary(data)
		}
	}
	readFrom := func(data []byte) error {
		var r io.ReaderFrom
		switch f.(type) {
		case *Classic:
			r = new(Classic)
		case *Blocked:
			r = new(Blocked)
		default:
			r = new(Counting)
		}
		_, err := r.ReadFrom(iotest.OneByteReader(bytes.NewReader(data)))
		return err
	}
	return map[string]func([]byte) error{
		"UnmarshalBinary": unmarshal,
		"ReadFrom":        readFrom,
		"Unmarshal":       func(data []byte) error { _, err := Unmarshal(data); return err },
	}
}

func TestRoundTrip(t *testing.T) {
	for _, f := range smallFilters(t) {
		data, err := f.MarshalBinary()
		must(t, err)
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		must(t, err)
		if n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("%T: WriteTo wrote %d bytes, MarshalBinary %d", f, n, len(data))
		}
		for name, decode := range decoders(f) {
			if err := decode(data); err != nil {
				t.Fatalf("%T %s: %v", f, name, err)
			}
		}
		g, _ := Unmarshal(data)
		if n, err := g.(io.ReaderFrom).ReadFrom(bytes.NewReader(data)); err != nil || n != int64(len(data)) {
			t.Fatalf("%T: ReadFrom read %d of %d bytes: %v", f, n, len(data), err)
		}
		again, _ := g.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("%T: re-encoding after a round trip differs", f)
		}
	}
}

// TestEveryBitFlipDetected flips each bit of each kind's encoding in turn:
// every decoder must refuse every damaged encoding with ErrCorrupt.
func TestEveryBitFlipDetected(t *testing.T) {
	for _, f := range smallFilters(t) {
		data, _ := f.MarshalBinary()
		for name, decode := range decoders(f) {
			for bit := range len(data) * 8 {
				damaged := bytes.Clone(data)
				damaged[bit/8] ^= 1 << (bit % 8)
				if err := decode(damaged); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%T %s: flipping bit %d: %v, want ErrCorrupt", f, name, bit, err)
				}
			}
		}
	}
}

func TestEveryTruncationDetected(t *testing.T) {
	for _, f := range smallFilters(t) {
		data, _ := f.MarshalBinary()
		for name, decode := range decoders(f) {
			for n := range len(data) {
				if err := decode(data[:n]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%T %s: truncated to %d of %d bytes: %v, want ErrCorrupt", f, name, n, len(data), err)
				}
			}
			if err := decode(append(bytes.Clone(data), 0)); name != "ReadFrom" && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%T %s: trailing byte accepted: %v", f, name, err)
			}
		}
	}
}

func TestWrongKindRefused(t *testing.T) {
	filters := smallFilters(t)
	for i, f := range filters {
		data, _ := f.MarshalBinary()
		for j, g := range filters {
			if i == j || fmt.Sprintf("%T", f) == fmt.Sprintf("%T", g) {
				continue
			}
			err := decoders(g)["UnmarshalBinary"](data)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decoding a %T as a %T: %v, want ErrCorrupt", f, g, err)
			}
		}
	}
}

// TestDamagedHeaderAllocatesNothingLarge re-signs headers that claim huge
// sizes: the decoders must refuse them without trying to allocate.
func TestDamagedHeaderAllocatesNothingLarge(t *testing.T) {
	for _, h := range []header{
		{kind: KindClassic, k: 3, m: MaxBits + 1},
		{kind: KindBlocked, k: 3, m: 513},
		{kind: KindCounting, k: 65, m: 100, counterBits: 4},
		{kind: KindClassic, k: 0, m: 100},
	} {
		data := h.appendTo(nil)
		if err := decoders(&Classic{})["Unmarshal"](data); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("header %+v: %v, want ErrCorrupt", h, err)
		}
	}
	// A valid header for the largest filter, followed by nothing: ReadFrom
	// must fail on the missing payload after reading what there is.
	data := header{kind: KindClassic, k: 3, m: MaxBits}.appendTo(nil)
	if _, err := new(Classic).ReadFrom(bytes.NewReader(data)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge header without payload: %v", err)
	}
}

func TestReadFromStopsAtEnd(t *testing.T) {
	filters := smallFilters(t)
	var stream bytes.Buffer
	for _, f := range filters {
		f.WriteTo(&stream)
	}
	stream.WriteString("tail")
	for _, f := range filters {
		data, _ := f.MarshalBinary()
		g, _ := Unmarshal(data) // a fresh value of the same kind
		if _, err := g.(io.ReaderFrom).ReadFrom(&stream); err != nil {
			t.Fatalf("%T: %v", f, err)
		}
		again, _ := g.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("%T read back differently", f)
		}
	}
	if stream.String() != "tail" {
		t.Fatalf("ReadFrom read past its filters: %q left", stream.String())
	}
}

// The fuzz targets feed arbitrary bytes to each kind's decoders, seeded
// with that kind's encodings (for counting, of every counter width, so
// both format versions). Nothing may panic, errors must wrap ErrCorrupt,
// and whatever decodes must re-encode to exactly the input, because the
// format has one encoding per filter.
func FuzzClassic(f *testing.F)  { fuzzDecoders(f, 0) }
func FuzzBlocked(f *testing.F)  { fuzzDecoders(f, 1) }
func FuzzCounting(f *testing.F) { fuzzDecoders(f, 2) }

func fuzzDecoders(f *testing.F, which int) {
	filters := smallFilters(f)
	flt := filters[which]
	for _, g := range filters {
		if fmt.Sprintf("%T", g) != fmt.Sprintf("%T", flt) {
			continue
		}
		data, _ := g.MarshalBinary()
		f.Add(data)
		f.Add(data[:headerLen])
	}
	f.Add([]byte("BLMF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, decode := range decoders(flt) {
			if err := decode(data); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: error %v does not wrap ErrCorrupt", name, err)
			}
		}
		g, err := Unmarshal(data)
		if err != nil {
			return
		}
		again, _ := g.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("decoded %T re-encodes differently", g)
		}
	})
}

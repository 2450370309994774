package blob

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
)

// countingReaderAt counts its reads.
type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestReadValueAhead reads the values of a file through one Readahead in
// file order, every value and every third, in random order and in file
// order with another file's reads in between: each value is the one
// written (the oracle), and reading in order takes the reads the
// read-ahead sizes make, where random order takes one a value.
func TestReadValueAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	values := make([][]byte, 600)
	for i := range values {
		values[i] = make([]byte, 1000)
		for j := range values[i] {
			values[i][j] = byte(rng.Uint32())
		}
	}
	file, handles := writeFile(t, values, compress.None)
	other, otherHandles := writeFile(t, values[:10], compress.None)
	const recLen = 4 + 2 + 1 + 1000 // checksum, 2-byte uvarint, compression, value
	// reads is the model of the reads of records asked for in order, all
	// of recLen bytes: a record not held by the last read is read with
	// those after it that the read holds whole, the read 4 KiB long, or,
	// for a record after the last one asked for and at most the last
	// read's length after it, twice that, up to limit.
	reads := func(order []int, limit int) int {
		n, size, last, start, end := 0, 0, -1, 0, 0
		for _, i := range order {
			near := size > 0 && i > last && (i-last-1)*recLen < size
			last = i
			if i >= start && i < end {
				continue
			}
			n++
			if near {
				size = min(2*size, limit)
			} else {
				size = minReadahead
			}
			start, end = i, min(i+size/recLen, len(values))
		}
		return n
	}
	perm := rng.Perm(len(values))
	for _, tc := range []struct {
		name      string
		order     []int
		interpose bool // a read of the other file before each
		max       int  // Readahead.SetMax's bound
		reads     int
	}{
		{"every value", seq(0, len(values), 1), false, 0, reads(seq(0, len(values), 1), maxReadahead)},
		{"every value, bound 12 KiB", seq(0, len(values), 1), false, 12 << 10, reads(seq(0, len(values), 1), 12<<10)},
		{"every value, bound below 4 KiB", seq(0, len(values), 1), false, 1 << 10, reads(seq(0, len(values), 1), minReadahead)},
		{"every third", seq(0, len(values), 3), false, 0, reads(seq(0, len(values), 3), maxReadahead)},
		{"every tenth", seq(0, len(values), 10), false, 0, reads(seq(0, len(values), 10), maxReadahead)},
		{"random order", perm, false, 0, reads(perm, maxReadahead)},
		{"interleaved", seq(0, len(values), 1), true, 0, reads(seq(0, len(values), 1), maxReadahead)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := &countingReaderAt{r: bytes.NewReader(file)}
			r, err := Open(cr, int64(len(file)), "000007.blob")
			if err != nil {
				t.Fatal(err)
			}
			o, err := Open(bytes.NewReader(other), int64(len(other)), "000008.blob")
			if err != nil {
				t.Fatal(err)
			}
			cr.reads = 0
			var ra, ora Readahead
			ra.SetMax(tc.max)
			for j, i := range tc.order {
				if tc.interpose {
					h := otherHandles[j%len(otherHandles)]
					if got, err := o.ReadValueAhead(h.Offset, h.Length, &ora); err != nil || !bytes.Equal(got, values[j%len(otherHandles)]) {
						t.Fatalf("other file's value %d: %v", j%len(otherHandles), err)
					}
				}
				h := handles[i]
				got, err := r.ReadValueAhead(h.Offset, h.Length, &ra)
				if err != nil || !bytes.Equal(got, values[i]) {
					t.Fatalf("value %d: %v (differs: %v)", i, err, err == nil)
				}
			}
			if tc.name == "every value" && tc.reads > len(values)/20 {
				t.Fatalf("the model makes %d reads of %d values read in order", tc.reads, len(values))
			}
			if cr.reads != tc.reads {
				t.Fatalf("%d reads of %d values, want %d", cr.reads, len(tc.order), tc.reads)
			}
			t.Logf("%d reads of %d values", cr.reads, len(tc.order))
		})
	}
}

func seq(from, to, step int) []int {
	var s []int
	for i := from; i < to; i += step {
		s = append(s, i)
	}
	return s
}

// TestReadValueAheadCorruption flips a bit in a record that a read ahead
// brings in before it is asked for: its read, not the read ahead, fails,
// with ErrCorruption at the record's offset, and the records before it
// read right.
func TestReadValueAheadCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	values := randomValues(rng, 40, 500)
	file, handles := writeFile(t, values, compress.Snappy)
	const bad = 5
	file[handles[bad].Offset+uint64(recordHeaderLen(FormatVersion, handles[bad].Length))+handles[bad].Length-1] ^= 0x10
	r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
	if err != nil {
		t.Fatal(err)
	}
	var ra Readahead
	for i, h := range handles[:bad+1] {
		got, err := r.ReadValueAhead(h.Offset, h.Length, &ra)
		if i < bad {
			if err != nil || !bytes.Equal(got, values[i]) {
				t.Fatalf("value %d: %v", i, err)
			}
			continue
		}
		var ce *base.CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, base.ErrCorruption) || ce.Offset != int64(h.Offset) || ce.File != "000007.blob" {
			t.Fatalf("flipped value: %v, want ErrCorruption in 000007.blob at %d", err, h.Offset)
		}
	}
}

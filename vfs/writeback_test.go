package vfs

import (
	"fmt"
	"testing"
)

// writebackRecorder is a File that records the writeback ranges asked of
// it.
type writebackRecorder struct {
	File
	ranges [][2]int64
}

func (r *writebackRecorder) StartWriteback(off, n int64) error {
	r.ranges = append(r.ranges, [2]int64{off, n})
	return nil
}

// TestWritebackFileRanges writes runs of writes of several sizes through
// a WritebackFile and checks the writeback ranges it asked for: from 0,
// each starting where the one before ended, each of at least Chunk bytes
// and within the bytes written, and what is left unasked less than
// Chunk; with Chunk 0, none.
func TestWritebackFileRanges(t *testing.T) {
	cases := []struct {
		chunk  int64
		writes []int
	}{
		{0, []int{100, 1 << 20}},
		{4096, []int{1000, 1000, 1000, 1000, 1000}},
		{4096, []int{4096, 4096, 1, 4095}},
		{4096, []int{10000, 3, 50000}},
		{1 << 20, []int{64 << 10, 64 << 10, 3 << 20, 100}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("chunk=%d/%v", c.chunk, c.writes), func(t *testing.T) {
			fs := NewMem()
			f, err := fs.Create("f")
			if err != nil {
				t.Fatal(err)
			}
			rec := &writebackRecorder{File: f}
			w := &WritebackFile{File: rec, Chunk: c.chunk}
			var total int64
			for _, n := range c.writes {
				if got, err := w.Write(make([]byte, n)); got != n || err != nil {
					t.Fatalf("Write of %d bytes: %d, %v", n, got, err)
				}
				total += int64(n)
			}
			if info, err := f.Stat(); err != nil || info.Size() != total {
				t.Fatalf("file of %v bytes (%v), want %d", info, err, total)
			}
			var end int64
			for _, r := range rec.ranges {
				if r[0] != end || r[1] < c.chunk || r[0]+r[1] > total {
					t.Fatalf("ranges %v of %d bytes written: %v does not follow at %d, or is under %d bytes, or past the end", rec.ranges, total, r, end, c.chunk)
				}
				end = r[0] + r[1]
			}
			switch {
			case c.chunk <= 0 && len(rec.ranges) > 0:
				t.Errorf("Chunk %d: ranges %v, want none", c.chunk, rec.ranges)
			case c.chunk > 0 && total-end >= c.chunk:
				t.Errorf("ranges %v end at %d of %d bytes written: %d left, a Chunk of %d or more", rec.ranges, end, total, total-end, c.chunk)
			}
		})
	}
}

package blob

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadValue reads 1 KiB values (half random, half a pattern, as
// the DB's BenchmarkBlobReads writes, so that snappy and zstd keep them
// compressed) from a file in memory under each compression: ReadValue of
// a random one into a reused buffer, and ReadValueAhead of each in turn
// (ns/op per value, MB/s of values).
func BenchmarkReadValue(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	values := make([][]byte, 4096)
	for i := range values {
		v := make([]byte, 1024)
		for j := range v[:512] {
			v[j] = byte(rng.Uint32())
		}
		values[i] = v
	}
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = rng.IntN(len(values))
	}
	for _, c := range compressions {
		var buf bytes.Buffer
		w := NewWriter(&buf, c)
		handles := make([]Handle, len(values))
		for i, v := range values {
			off, n, err := w.Add(v)
			if err != nil {
				b.Fatal(err)
			}
			handles[i] = Handle{FileNum: 7, Offset: off, Length: n}
		}
		if _, err := w.Finish(); err != nil {
			b.Fatal(err)
		}
		r, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "000007.blob")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.String()+"/ReadValue", func(b *testing.B) {
			b.SetBytes(1024)
			var dst []byte
			for i := 0; b.Loop(); i++ {
				h := handles[order[i%len(order)]]
				if dst, err = r.ReadValue(dst[:0], h.Offset, h.Length); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.String()+"/ReadValueAhead", func(b *testing.B) {
			b.SetBytes(1024)
			var ra Readahead
			for i := 0; b.Loop(); i++ {
				h := handles[i%len(handles)]
				if _, err := r.ReadValueAhead(h.Offset, h.Length, &ra); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package record

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

var benchSizes = []int{100, 4 << 10}

func BenchmarkWrite(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("record=%d", size), func(b *testing.B) {
			rec := bytes.Repeat([]byte{0x5a}, size)
			w := NewWriter(io.Discard)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := w.WriteRecord(rec); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkRead(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("record=%d", size), func(b *testing.B) {
			// A log of about 8 MiB, read again from the start when exhausted.
			rec := bytes.Repeat([]byte{0x5a}, size)
			var buf bytes.Buffer
			w := NewWriter(&buf)
			for w.Size() < 8<<20 {
				w.WriteRecord(rec)
			}
			w.Flush()
			log := buf.Bytes()
			br := bytes.NewReader(log)
			rd := NewReader(br, "bench.log")
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r, err := rd.Next()
				if err == io.EOF {
					br.Reset(log)
					rd = NewReader(br, "bench.log")
					r, err = rd.Next()
				}
				if err != nil || len(r) != size {
					b.Fatalf("read %d bytes, %v", len(r), err)
				}
			}
		})
	}
}

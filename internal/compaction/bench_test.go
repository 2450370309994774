package compaction

import (
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/sstable"
)

// benchCompaction builds an L0→L1 compaction of four L0 tables of 25,000
// entries each over an L1 of 100,000 entries in 2 MiB tables: 16-byte keys,
// 100-byte values of moderately compressible bytes, about 25 MB in all.
func benchCompaction(b *testing.B, compression sstable.Compression) (*tableStore, *Compaction) {
	rng := rand.New(rand.NewPCG(13, 13))
	s := newTableStore(b)
	s.wopts = sstable.WriterOptions{BlockSize: 4096, Compression: compression}
	var seq base.SeqNum
	gen := func(n int) []entry {
		out := make([]entry, n)
		for i := range out {
			k := make([]byte, 16)
			for j := range k {
				k[j] = byte('a' + rng.IntN(26))
			}
			v := make([]byte, 100)
			for j := range v {
				v[j] = byte('a' + rng.IntN(8))
			}
			seq++
			out[i] = entry{base.MakeInternalKey(k, seq, base.KindSet), v}
		}
		sortEntries(out)
		return out
	}
	c := &Compaction{Level: 0, OutputLevel: 1, Filter: sstable.Bloom(10), Bottommost: true}
	l1 := gen(100_000)
	for start, num := 0, uint64(1); start < len(l1); num++ {
		end := min(start+17_000, len(l1)) // about 2 MiB of raw entries
		c.Inputs[1] = append(c.Inputs[1], s.build(num, l1[start:end], 10))
		start = end
	}
	for num := uint64(100); num < 104; num++ {
		c.Inputs[0] = append(c.Inputs[0], s.build(num, gen(25_000), 10))
	}
	slices.Reverse(c.Inputs[0]) // newest first
	return s, c
}

// BenchmarkRun measures merge throughput: input bytes per second, outputs
// written to io.Discard.
func BenchmarkRun(b *testing.B) {
	for _, bc := range []struct {
		name        string
		compression sstable.Compression
		bitsPerKey  float64
	}{
		{"none", sstable.NoCompression, 10},
		{"none/nofilter", sstable.NoCompression, 0},
		{"snappy", sstable.SnappyCompression, 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, c := benchCompaction(b, bc.compression)
			c.Filter = bloomSpec(bc.bitsPerKey)
			env := s.env()
			env.Create = func() (*Output, error) {
				return &Output{FileNum: 1, W: io.Discard, Finish: func() error { return nil }}, nil
			}
			opts := with(defaultOptions(), func(o *Options) { o.TableOptions = s.wopts })
			b.SetBytes(int64(c.InputBytes()))
			b.ResetTimer()
			for range b.N {
				outputs, _, err := Run(context.Background(), c, env, nil, opts)
				if err != nil || len(outputs) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

package rangefilter

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
)

// benchKeys returns n sorted keys of sh, sparse, and n empty ranges of
// width 32 among them.
func benchKeys(sh shape, n int) (keys, los, his [][]byte) {
	r := rand.New(rand.NewPCG(5, 6))
	keys, xs := shapeKeys(r, sh, n, 0, sh.max)
	for _, x := range emptyRanges(r, xs, 0, sh.max, 32, n) {
		los, his = append(los, sh.key(nil, x)), append(his, sh.key(nil, x+32))
	}
	return keys, los, his
}

// BenchmarkBuild builds a range filter of 100,000 keys at 16 bits per key,
// and, beside it, the blocked Bloom filter a table carries at 10 (the
// hashing of the keys included): ns/op is per key.
func BenchmarkBuild(b *testing.B) {
	for _, sh := range shapes {
		keys, _, _ := benchKeys(sh, 100_000)
		b.Run(fmt.Sprintf("%s/range", sh.name), func(b *testing.B) {
			builder, _ := NewBuilder(16)
			for b.Loop() {
				builder.Reset()
				for _, k := range keys {
					_ = builder.Add(k)
				}
				if _, err := builder.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
		b.Run(fmt.Sprintf("%s/blocked-bloom", sh.name), func(b *testing.B) {
			hashes := make([]uint64, len(keys))
			for b.Loop() {
				for i, k := range keys {
					hashes[i] = bloom.Hash(k)
				}
				f, err := bloom.BuildBlocked(hashes, 10)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.MarshalBinary(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
	}
}

// BenchmarkMayContainRange queries empty ranges of width 32: ns/op is per
// range.
func BenchmarkMayContainRange(b *testing.B) {
	for _, sh := range shapes {
		keys, los, his := benchKeys(sh, 100_000)
		f := build(b, keys, 16)
		b.Run(sh.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.MayContainRange(los[i], his[i])
				if i++; i == len(los) {
					i = 0
				}
			}
		})
	}
}

package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
)

// benchEntries are 100,000 entries of 16-byte keys and 100-byte values of
// moderately compressible bytes, the default workload of `bloomkv bench`.
func benchEntries() []entry {
	rng := rand.New(rand.NewPCG(13, 13))
	out := make([]entry, 100_000)
	for i := range out {
		k := make([]byte, 16)
		for j := range k {
			k[j] = byte('a' + rng.IntN(26))
		}
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte('a' + rng.IntN(8)) // 3 bits of entropy a byte
		}
		out[i] = entry{base.MakeInternalKey(k, base.SeqNum(i+1), base.KindSet), v}
	}
	slices.SortFunc(out, func(a, b entry) int { return base.CompareInternal(a.key, b.key) })
	return out
}

func rawBytes(es []entry) int64 {
	var n int64
	for _, e := range es {
		n += int64(e.key.EncodedLen() + len(e.value))
	}
	return n
}

// BenchmarkWrite writes a table of benchEntries under each compression,
// its blocks aligned to pages or not (WriterOptions.BlockAlign).
func BenchmarkWrite(b *testing.B) {
	entries := benchEntries()
	for _, c := range compressions {
		for _, align := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/align=%v", c, align), func(b *testing.B) {
				b.SetBytes(rawBytes(entries))
				var size int
				for range b.N {
					size = len(buildTable(b, entries, WriterOptions{Compression: c, Filter: Bloom(10), BlockAlign: align}))
				}
				b.ReportMetric(float64(rawBytes(entries))/float64(size), "ratio")
			})
		}
	}
}

// BenchmarkGet looks up present and absent keys with a warm cache that
// holds the whole table.
func BenchmarkGet(b *testing.B) {
	entries := benchEntries()
	for _, c := range compressions {
		data := buildTable(b, entries, WriterOptions{Compression: c, Filter: Bloom(10)})
		r := openTable(b, data, cache.New(64<<20))
		for _, e := range entries {
			r.Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil) // warm
		}
		b.Run(c.String()+"/present", func(b *testing.B) {
			for i := range b.N {
				e := entries[i%len(entries)]
				if _, _, found, _ := r.Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil); !found {
					b.Fatal("lost a key")
				}
			}
		})
		b.Run(c.String()+"/absent", func(b *testing.B) {
			for i := range b.N {
				k := bytes.Clone(entries[i%len(entries)].key.UserKey)
				k[15] = '0' // digits never appear in the keys
				r.Get(MakeLookupKey(k, base.SeqNumMax), nil)
			}
		})
	}
}

func BenchmarkIterate(b *testing.B) {
	entries := benchEntries()
	for _, c := range compressions {
		r := openTable(b, buildTable(b, entries, WriterOptions{Compression: c}), cache.New(64<<20))
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(rawBytes(entries))
			for range b.N {
				it := r.NewIterator()
				for ok := it.First(); ok; ok = it.Next() {
				}
			}
		})
	}
}

// BenchmarkGetFilter is BenchmarkGet's lookups in uncompressed tables of
// each filter family, so that the families' costs compare in one run: an
// absent key is answered by the filter alone, a present one by the filter
// and a cached block.
func BenchmarkGetFilter(b *testing.B) {
	entries := benchEntries()
	for _, spec := range []FilterSpec{Bloom(10), Fuse(8), Fuse(12), Fuse(16), Ribbon(8), Ribbon(12), Ribbon(16)} {
		r := openTable(b, buildTable(b, entries, WriterOptions{Filter: spec}), cache.New(64<<20))
		if got := r.Properties().FilterFamily; got != spec.Family {
			b.Fatalf("%v: built %v", spec, got)
		}
		for _, e := range entries {
			r.Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil) // warm
		}
		name := fmt.Sprintf("%v%g", spec.Family, spec.Bits) // bloom10, fuse8, ribbon8
		b.Run(name+"/present", func(b *testing.B) {
			for i := range b.N {
				e := entries[i%len(entries)]
				if _, _, found, _ := r.Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil); !found {
					b.Fatal("lost a key")
				}
			}
		})
		b.Run(name+"/absent", func(b *testing.B) {
			k := make([]byte, 0, 64)
			for i := range b.N {
				k = append(k[:0], entries[i%len(entries)].key.UserKey...)
				k[15] = '0' // digits never appear in the keys
				r.Get(MakeLookupKey(k, base.SeqNumMax), nil)
			}
		})
	}
}

// BenchmarkIndexPartitions compares a table's index pinned whole with the
// same index in partitions of 4 KiB (WriterOptions.IndexPartitionSize, the
// DB's default under a memory limit) read through a warm block cache that
// holds the whole table: a Get of a present key, a SeekGE and ten Nexts,
// and a full scan. The two tables take turns, 64 operations at a time
// (one scan at a time), each first in every other turn, in one loop, so
// that a busy machine's load falls on both alike, each timed by the CPU time of its thread (threadCPU:
// the time it ran, not the time it waited to): each op is one operation
// on each table, and the metrics are each table's CPU time per operation
// and their ratio, part/whole.
func BenchmarkIndexPartitions(b *testing.B) {
	entries := benchEntries()
	var readers [2]*Reader // whole, partitioned
	for i, size := range []int{0, 4096} {
		opts := WriterOptions{Compression: SnappyCompression, Filter: Bloom(10), BlockAlign: true, IndexPartitionSize: size}
		readers[i] = openTable(b, buildTable(b, entries, opts), cache.New(64<<20))
		for _, e := range entries {
			readers[i].Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil) // warm
		}
	}
	if readers[1].Properties().IndexPartitions == 0 {
		b.Fatal("the table is not partitioned")
	}
	alternate := func(b *testing.B, chunk int, op func(r *Reader, i int)) {
		defer lockThread()()
		var spent [2]time.Duration
		for start := 0; start < b.N; start += chunk {
			n := min(chunk, b.N-start)
			for k := range 2 {
				// Each table first in every other chunk: the second
				// finds the keys the first touched in the CPU's caches.
				t := k ^ (start / chunk & 1)
				began := threadCPU()
				for i := start; i < start+n; i++ {
					op(readers[t], i)
				}
				spent[t] += threadCPU() - began
			}
		}
		b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "whole-ns/op")
		b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "part-ns/op")
		b.ReportMetric(float64(spent[1])/float64(spent[0]), "part/whole")
	}
	b.Run("get", func(b *testing.B) {
		alternate(b, 64, func(r *Reader, i int) {
			e := entries[(i*7919)%len(entries)]
			if _, _, found, _ := r.Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil); !found {
				b.Fatal("lost a key")
			}
		})
	})
	b.Run("seek", func(b *testing.B) {
		its := [2]*Iterator{readers[0].NewIterator(), readers[1].NewIterator()}
		defer its[0].Close()
		defer its[1].Close()
		alternate(b, 64, func(r *Reader, i int) {
			it := its[0]
			if r == readers[1] {
				it = its[1]
			}
			ok := it.SeekGE(entries[(i*7919)%len(entries)].key.UserKey)
			for j := 0; ok && j < 10; j++ {
				ok = it.Next()
			}
		})
	})
	b.Run("scan", func(b *testing.B) {
		alternate(b, 1, func(r *Reader, _ int) {
			it := r.NewIterator()
			for ok := it.First(); ok; ok = it.Next() {
			}
			it.Close()
		})
	})
}

// BenchmarkReadBlock reads, checks and decompresses every data block of a
// table under each compression, one after another through one set of
// blockBuffers, as a lookup that misses the cache reads its block (ns/op
// per block, MB/s of decoded bytes, and the share of blocks stored
// compressed). The entries are benchEntries with the second half of each
// value a fixed text, so that snappy, which does not shrink benchEntries'
// blocks by an eighth, keeps them compressed as zstd does.
func BenchmarkReadBlock(b *testing.B) {
	entries := benchEntries()
	for _, e := range entries {
		copy(e.value[50:], "the second half of every value is this same text.")
	}
	for _, c := range compressions {
		r := openTable(b, buildTable(b, entries, WriterOptions{Compression: c}), nil)
		l, err := r.Layout()
		if err != nil {
			b.Fatal(err)
		}
		var raw uint64
		compressed := 0
		for _, h := range l.Data {
			raw += h.RawLength
			if h.Compression != NoCompression {
				compressed++
			}
		}
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(int64(raw) / int64(len(l.Data)))
			bufs := new(blockBuffers)
			for i := 0; b.Loop(); i++ {
				if _, err := r.readBlockInto(l.Data[i%len(l.Data)].BlockHandle, "data", bufs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(compressed)/float64(len(l.Data)), "compressed")
		})
	}
}

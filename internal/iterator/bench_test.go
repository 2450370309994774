package iterator_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
)

// benchIter is the cheapest Iterator over sorted versions, so that a
// benchmark of the merge measures the merge: its heap, its comparisons and
// its calls through the interface.
type benchIter struct {
	kvs []itertest.KV
	i   int
}

func (it *benchIter) First() bool { it.i = 0; return it.i < len(it.kvs) }
func (it *benchIter) Last() bool  { it.i = len(it.kvs) - 1; return it.i >= 0 }
func (it *benchIter) SeekGE(k []byte) bool {
	it.i = sort.Search(len(it.kvs), func(i int) bool { return bytes.Compare(it.kvs[i].Key.UserKey, k) >= 0 })
	return it.i < len(it.kvs)
}
func (it *benchIter) SeekLT(k []byte) bool {
	it.i = sort.Search(len(it.kvs), func(i int) bool { return bytes.Compare(it.kvs[i].Key.UserKey, k) >= 0 }) - 1
	return it.i >= 0
}
func (it *benchIter) Next() bool            { it.i++; return it.i < len(it.kvs) }
func (it *benchIter) Prev() bool            { it.i--; return it.i >= 0 }
func (it *benchIter) Key() base.InternalKey { return it.kvs[it.i].Key }
func (it *benchIter) Value() []byte         { return it.kvs[it.i].Value }
func (it *benchIter) Error() error          { return nil }
func (it *benchIter) Close() error          { return nil }

// benchChildren deals 1<<16 versions of random 16-byte keys out to n
// children at random, each sorted: the shape of a compaction's L0 inputs,
// or of a read's memtables and L0 tables.
func benchChildren(n int) [][]itertest.KV {
	rng := rand.New(rand.NewPCG(5, 6))
	parts := make([][]itertest.KV, n)
	for seq := base.SeqNum(1); seq <= 1<<16; seq++ {
		k := make([]byte, 16)
		for j := range k {
			k[j] = byte('a' + rng.IntN(26))
		}
		i := rng.IntN(n)
		parts[i] = append(parts[i], itertest.KV{Key: base.MakeInternalKey(k, seq, base.KindSet), Value: k})
	}
	for _, p := range parts {
		slices.SortFunc(p, itertest.Compare)
	}
	return parts
}

// BenchmarkMergingIter is a full scan of a merge of n children, forward
// (a compaction's walk, and a read's) or backward; ns/entry is the cost
// of one step.
func BenchmarkMergingIter(b *testing.B) {
	for _, n := range []int{4, 16} {
		parts := benchChildren(n)
		for _, dir := range []string{"forward", "backward"} {
			b.Run(fmt.Sprintf("children=%d/%s", n, dir), func(b *testing.B) {
				children := make([]iterator.Iterator, n)
				entries := 0
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					for i, p := range parts {
						children[i] = &benchIter{kvs: p}
					}
					m := iterator.NewMergingIter(children...)
					if dir == "forward" {
						for ok := m.First(); ok; ok = m.Next() {
							entries++
						}
					} else {
						for ok := m.Last(); ok; ok = m.Prev() {
							entries++
						}
					}
					m.Close()
				}
				if entries != b.N<<16 {
					b.Fatalf("merged %d entries in %d scans", entries, b.N)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(entries), "ns/entry")
			})
		}
	}
}

package bloomkv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// BenchmarkMultiGet compares, per key, a MultiGet of 64 keys with 64 Gets
// of the same keys, on a DB of 20 tables with the block cache warm: what a
// batch saves or costs when no read waits for the device. Present keys
// and absent ones (every table's filter rules them out, or its range).
// Compare the sub-benchmarks' ns/op: each op is one key.
func BenchmarkMultiGet(b *testing.B) {
	d, keys := benchTableCacheDB(b, vfs.NewMem(), "db", Options{BlockCacheSize: 64 << 20})
	absent := make([][]byte, len(keys))
	for i := range absent {
		absent[i] = fmt.Appendf(nil, "key%08d!", i) // between two present keys
	}
	const batch = 64
	for _, set := range []struct {
		name string
		keys [][]byte
	}{{"present", keys}, {"absent", absent}} {
		rng := rand.New(rand.NewPCG(7, 8))
		batches := make([][][]byte, 256)
		for i := range batches {
			for range batch {
				batches[i] = append(batches[i], set.keys[rng.IntN(len(set.keys))])
			}
		}
		if _, err := d.MultiGet(keys); err != nil { // warm the cache
			b.Fatal(err)
		}
		b.Run(set.name+"/Get", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := batches[i/batch%len(batches)][i%batch]
				if _, err := d.Get(k); err != nil && err != ErrNotFound {
					b.Fatal(err)
				}
			}
		})
		b.Run(set.name+"/MultiGet", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; b.Loop(); i++ {
				if i%batch == 0 {
					if _, err := d.MultiGet(batches[i/batch%len(batches)]); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
			_ = n
		})
	}
}

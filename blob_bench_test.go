package bloomkv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// blobBenchKeys is the number of keys of BenchmarkBlobReads's DBs.
const blobBenchKeys = 50_000

// openBlobBenchDB opens, in a temporary directory of the OS's file
// system, a DB of blobBenchKeys keys with 1 KiB values (half of each
// random, half zeros, so that snappy halves the tables of inline values),
// written in random order and compacted into the deepest level, with the
// default 8 MiB block cache; minSize is its ValueSeparation.MinSize.
func openBlobBenchDB(b *testing.B, minSize int) (*DB, [][]byte) {
	d, err := Open(b.TempDir(), &Options{FS: vfs.Default, ValueSeparation: ValueSeparation{MinSize: minSize}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([][]byte, blobBenchKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key%012d", i)
	}
	value := make([]byte, 1024)
	for _, i := range rng.Perm(len(keys)) {
		for j := range value[:512] {
			value[j] = byte(rng.Uint32())
		}
		if err := d.Put(keys[i], value, NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(nil, []byte("l")); err != nil {
		b.Fatal(err)
	}
	return d, keys
}

// BenchmarkBlobReads compares reads of 1 KiB values kept in the tables
// (inline) and in blob files (separated), on the same keys and values, the
// files in the OS's page cache: Get of a random present key, MultiGet of
// 64 of them (ns/op per key), a scan of 100 entries reading their values
// and one reading only their keys, and full scans of the DB from First,
// each with an Iterator of its own (ns/op per entry).
func BenchmarkBlobReads(b *testing.B) {
	for _, mode := range []struct {
		name    string
		minSize int
	}{{"inline", ValueSeparationOff}, {"separated", 1024}} {
		d, keys := openBlobBenchDB(b, mode.minSize)
		rng := rand.New(rand.NewPCG(5, 6))
		order := make([][]byte, 1<<16)
		for i := range order {
			order[i] = keys[rng.IntN(len(keys))]
		}
		b.Run(mode.name+"/Get", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := d.Get(order[i%len(order)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode.name+"/MultiGet", func(b *testing.B) {
			const batch = 64
			for i := 0; b.Loop(); i++ {
				if i%batch == 0 {
					start := i % len(order)
					if _, err := d.MultiGet(order[start : start+batch]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(mode.name+"/FullScan", func(b *testing.B) {
			var it *Iterator
			for b.Loop() {
				if it != nil && it.Next() {
					if it.Value() == nil {
						b.Fatal(it.Error())
					}
					continue
				}
				if it != nil {
					if err := it.Close(); err != nil {
						b.Fatal(err)
					}
				}
				var err error
				if it, err = d.NewIter(nil); err != nil {
					b.Fatal(err)
				}
				it.First()
			}
			if err := it.Close(); err != nil {
				b.Fatal(err)
			}
		})
		for _, values := range []bool{true, false} {
			name := "/Scan"
			if !values {
				name = "/ScanKeys"
			}
			b.Run(mode.name+name, func(b *testing.B) {
				it, err := d.NewIter(nil)
				if err != nil {
					b.Fatal(err)
				}
				defer it.Close()
				n := 0
				for i := 0; b.Loop(); i++ {
					if n == 0 {
						it.SeekGE(order[i%len(order)])
					} else {
						it.Next()
					}
					if !it.Valid() {
						n = 0
						continue
					}
					if values && it.Value() == nil {
						b.Fatal(it.Error())
					}
					n = (n + 1) % 100
				}
			})
		}
	}
}

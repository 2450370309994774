package bloomkv

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// benchTableCacheDB returns a DB in dir on fs of 20 disjoint L0 tables of
// 5,000 keys each, which no compaction touches, and its keys.
func benchTableCacheDB(b *testing.B, fs vfs.FS, dir string, opts Options) (*DB, [][]byte) {
	opts.FS, opts.L0CompactionTrigger = fs, noCompaction
	opts.L0SlowdownTrigger, opts.L0StopTrigger = noCompaction+1, noCompaction+2
	d, err := Open(dir, &opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	value := bytes.Repeat([]byte("v"), 64)
	var keys [][]byte
	for t := range 20 {
		for i := range 5000 {
			k := fmt.Appendf(nil, "key%08d", t*5000+i)
			keys = append(keys, k)
			if err := d.Put(k, value, NoSync); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	return d, keys
}

// BenchmarkTableCacheGet is a Get of a random key of 20 tables: with the
// block cache warm, so that the file is read only on a block-cache miss,
// and without a block cache, so that every Get reads a data block through
// the table's file handle — the hot path the table cache adds to.
func BenchmarkTableCacheGet(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int64
	}{{"blockcache", 64 << 20}, {"noblockcache", -1}} {
		for _, fsName := range []string{"mem", "os"} {
			b.Run(bc.name+"/"+fsName, func(b *testing.B) {
				var fs vfs.FS = vfs.NewMem()
				dir := "db"
				if fsName == "os" {
					fs, dir = vfs.Default, b.TempDir()
				}
				d, keys := benchTableCacheDB(b, fs, dir, Options{BlockCacheSize: bc.size})
				rng := rand.New(rand.NewPCG(5, 6))
				for _, k := range keys {
					if _, err := d.Get(k); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := d.Get(keys[rng.IntN(len(keys))]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTableFileReadAt is one 4 KiB ReadAt of an in-memory file:
// straight from its handle (the cost before the table cache), through a
// tableFile whose handle is cached (the hit path: the LRU touch and the
// reference), and through tableFiles of two files sharing a cache of one
// handle, so that every read reopens its file and evicts the other's.
func BenchmarkTableFileReadAt(b *testing.B) {
	mem := vfs.NewMem()
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for _, name := range []string{"/000001.sst", "/000002.sst"} {
		f, err := mem.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(content)
		f.Close()
	}
	buf := make([]byte, 4<<10)
	run := func(b *testing.B, readers []io.ReaderAt) {
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for i := range b.N {
			off := int64(i*4099) % int64(len(content)-len(buf))
			if _, err := readers[i%len(readers)].ReadAt(buf, off); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		f, err := mem.Open("/000001.sst")
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		run(b, []io.ReaderAt{f})
	})
	b.Run("hit", func(b *testing.B) {
		c := newTableCache(mem, 8)
		f := c.newFile("/000001.sst")
		defer f.close()
		run(b, []io.ReaderAt{f})
	})
	b.Run("reopen", func(b *testing.B) {
		c := newTableCache(mem, 1)
		f1, f2 := c.newFile("/000001.sst"), c.newFile("/000002.sst")
		defer f1.close()
		defer f2.close()
		run(b, []io.ReaderAt{f1, f2})
	})
}

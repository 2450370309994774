package bloomkv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// benchKeys is the number of distinct keys of the benchmark DB.
const benchKeys = 100_000

// benchDB is the shape of a DB at rest: an L1 of 20 tables holding every
// key, two L0 tables and a memtable each overwriting 10% of the keys at
// random; 130,000 entries, 100,000 keys. Blocks come from a warm cache.
type benchDB struct {
	mem    *memtable.Memtable
	l0     []*sstable.Reader
	l1     itertest.Level
	l1Open iterator.OpenFunc // l1.Open, made once as a DB makes it once per level
	maxSeq base.SeqNum
}

var (
	benchOnce sync.Once
	benchData *benchDB
)

func benchKey(i int) []byte { return fmt.Appendf(nil, "key%08d", i) }

func getBenchDB(b *testing.B) *benchDB {
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		c := cache.New(256 << 20)
		value := bytes.Repeat([]byte("v"), 64)
		d := &benchDB{}
		seq := base.SeqNum(0)
		version := func(i int) itertest.KV {
			seq++
			return itertest.KV{Key: base.MakeInternalKey(benchKey(i), seq, base.KindSet), Value: value}
		}
		fileNum := uint64(0)
		table := func(entries []itertest.KV) *sstable.Reader {
			fileNum++
			var buf bytes.Buffer
			w, err := sstable.NewWriter(&buf, sstable.WriterOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				if err := w.Add(e.Key, e.Value); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
			r, err := sstable.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), sstable.ReaderOptions{FileNum: fileNum, Cache: c})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}
		const perTable = benchKeys / 20
		for t := 0; t < benchKeys; t += perTable {
			var entries []itertest.KV
			for i := t; i < t+perTable; i++ {
				entries = append(entries, version(i))
			}
			d.l1.Tables = append(d.l1.Tables, table(entries))
			d.l1.Files = append(d.l1.Files, &manifest.FileMetadata{
				FileNum:  fileNum,
				Smallest: entries[0].Key,
				Largest:  entries[len(entries)-1].Key,
			})
		}
		d.l1Open = d.l1.Open
		overwrites := func() []int {
			return rng.Perm(benchKeys)[:benchKeys/10]
		}
		for range 2 {
			keys := overwrites()
			slices.Sort(keys)
			var entries []itertest.KV
			for _, i := range keys {
				entries = append(entries, version(i))
			}
			d.l0 = append(d.l0, table(entries))
		}
		d.mem = memtable.New(0)
		for _, i := range overwrites() {
			e := version(i)
			d.mem.Add(e.Key.SeqNum(), e.Key.Kind(), e.Key.UserKey, e.Value)
		}
		d.maxSeq = seq
		benchData = d
	})
	return benchData
}

func (d *benchDB) iterator() *Iterator {
	inner := iterator.NewMergingIter(d.mem.NewIter(), d.l0[0].NewIterator(), d.l0[1].NewIterator(), iterator.NewLevelIter(d.l1.Files, d.l1Open, nil, nil))
	return newIterator(inner, d.maxSeq, IterOptions{}, nil)
}

func (d *benchDB) warm(b *testing.B) {
	it := d.iterator()
	for ok := it.First(); ok; ok = it.Next() {
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkIterScan is a full scan of the benchmark DB, forward or
// backward; ns/key is the cost of one step.
func BenchmarkIterScan(b *testing.B) {
	d := getBenchDB(b)
	d.warm(b)
	for _, dir := range []string{"forward", "backward"} {
		b.Run(dir, func(b *testing.B) {
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				it := d.iterator()
				if dir == "forward" {
					for ok := it.First(); ok; ok = it.Next() {
						n++
					}
				} else {
					for ok := it.Last(); ok; ok = it.Prev() {
						n++
					}
				}
				if err := it.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if n != b.N*benchKeys {
				b.Fatalf("scanned %d keys in %d scans", n, b.N)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/key")
		})
	}
}

// BenchmarkIterSeekGENext is a short range read: SeekGE to a random key
// and 10 Nexts, on one open iterator.
func BenchmarkIterSeekGENext(b *testing.B) {
	d := getBenchDB(b)
	d.warm(b)
	rng := rand.New(rand.NewPCG(3, 4))
	targets := make([][]byte, 4096)
	for i := range targets {
		targets[i] = benchKey(rng.IntN(benchKeys - 10))
	}
	it := d.iterator()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ok := it.SeekGE(targets[i%len(targets)])
		for range 10 {
			ok = ok && it.Next()
		}
		if !ok {
			b.Fatal("short scan ran out", it.Error())
		}
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
}

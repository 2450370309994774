package memtable_test

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

const (
	benchEntries  = 100_000
	benchValueLen = 100
)

// benchKey writes a 16-byte key for i into buf: a hashed prefix so inserts
// land all over the tree, as random user keys do.
func benchKey(buf []byte, i uint64) []byte {
	buf = binary.BigEndian.AppendUint64(buf[:0], i*0x9E3779B97F4A7C15)
	return binary.BigEndian.AppendUint64(buf, i)
}

// prefixedKey is benchKey behind a shared 8-byte prefix, the worst case for
// the tree's inline key prefix: every comparison reads the arena.
func prefixedKey(buf []byte, i uint64) []byte {
	buf = append(buf[:0], "bloomkv:"...)
	buf = binary.BigEndian.AppendUint64(buf, i*0x9E3779B97F4A7C15)
	return binary.BigEndian.AppendUint64(buf, i)
}

func filled(b *testing.B, n int) *memtable.Memtable {
	return filledWith(b, n, benchKey)
}

func filledWith(b *testing.B, n int, key func([]byte, uint64) []byte) *memtable.Memtable {
	b.Helper()
	mt := memtable.New(int64(n) * 200)
	var kbuf []byte
	value := make([]byte, benchValueLen)
	for i := range n {
		kbuf = key(kbuf, uint64(i))
		mt.Add(base.SeqNum(i+1), base.KindSet, kbuf, value)
	}
	b.ResetTimer()
	return mt
}

// BenchmarkAdd inserts into a memtable growing to benchEntries entries, then
// starts a new one, as a DB does at each flush.
func BenchmarkAdd(b *testing.B) {
	var kbuf []byte
	value := make([]byte, benchValueLen)
	mt := memtable.New(benchEntries * 200)
	b.SetBytes(16 + benchValueLen)
	b.ReportAllocs()
	for i := range b.N {
		if i%benchEntries == 0 && i > 0 {
			mt = memtable.New(benchEntries * 200)
		}
		kbuf = benchKey(kbuf, uint64(i))
		mt.Add(base.SeqNum(i+1), base.KindSet, kbuf, value)
	}
}

func BenchmarkGet(b *testing.B) {
	for _, tc := range []struct {
		name string
		key  func([]byte, uint64) []byte
		off  uint64 // key(i+off) exists iff i+off < benchEntries
	}{
		{"hit", benchKey, 0},
		{"miss", benchKey, benchEntries},
		{"hit-shared-prefix", prefixedKey, 0},
		{"miss-shared-prefix", prefixedKey, benchEntries},
	} {
		b.Run(tc.name, func(b *testing.B) {
			mt := filledWith(b, benchEntries, tc.key)
			rng := rand.New(rand.NewPCG(1, 2))
			var kbuf []byte
			b.ReportAllocs()
			for range b.N {
				kbuf = tc.key(kbuf, rng.Uint64N(benchEntries)+tc.off)
				_, _, _, found := mt.Get(kbuf, base.SeqNumMax)
				if found != (tc.off == 0) {
					b.Fatal("wrong answer")
				}
			}
		})
	}
}

// BenchmarkGetWithWriter measures Gets from parallel readers while one
// goroutine keeps adding: the cost of the read lock under contention.
func BenchmarkGetWithWriter(b *testing.B) {
	mt := filled(b, benchEntries)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var kbuf []byte
		value := make([]byte, benchValueLen)
		for i := uint64(benchEntries); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			kbuf = benchKey(kbuf, i)
			mt.Add(base.SeqNum(i+1), base.KindSet, kbuf, value)
		}
	}()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
		var kbuf []byte
		for pb.Next() {
			kbuf = benchKey(kbuf, rng.Uint64N(benchEntries))
			mt.Get(kbuf, base.SeqNumMax)
		}
	})
	b.StopTimer()
	close(stop)
	wg.Wait()
}

// BenchmarkIter reports the cost per entry of full scans.
func BenchmarkIter(b *testing.B) {
	mt := filled(b, benchEntries)
	for _, tc := range []struct {
		name string
		fwd  bool
	}{{"forward", true}, {"reverse", false}} {
		b.Run(tc.name, func(b *testing.B) {
			it := mt.NewIter()
			b.ReportAllocs()
			n := 0
			for n < b.N {
				ok := it.Last()
				if tc.fwd {
					ok = it.First()
				}
				for ; ok && n < b.N; n++ {
					if tc.fwd {
						ok = it.Next()
					} else {
						ok = it.Prev()
					}
				}
			}
		})
	}
}

// BenchmarkSeekGE measures a seek plus one step, the merging iterator's
// typical use of a memtable it is positioning.
func BenchmarkSeekGE(b *testing.B) {
	mt := filled(b, benchEntries)
	it := mt.NewIter()
	rng := rand.New(rand.NewPCG(3, 4))
	var kbuf []byte
	b.ReportAllocs()
	for range b.N {
		kbuf = benchKey(kbuf, rng.Uint64N(benchEntries))
		if it.SeekGE(kbuf) {
			it.Next()
		}
	}
}

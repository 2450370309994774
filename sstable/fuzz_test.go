package sstable

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// FuzzBlockDecoder feeds arbitrary bytes to the block decoder and walks them
// every way: it may report a malformed block, never panic or loop.
func FuzzBlockDecoder(f *testing.F) {
	w := blockWriter{restartInterval: 3}
	for _, k := range []string{"apple", "applesauce", "apricot", "banana", "band"} {
		w.add([]byte(k), []byte("v-"+k))
	}
	f.Add(bytes.Clone(w.finish()))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, block []byte) {
		var it blockIter
		if it.init(block, bytes.Compare) != nil {
			return
		}
		n := 0
		for ok := it.first(); ok; ok = it.nextEntry() {
			if n++; n > len(block) {
				t.Fatal("more entries than bytes")
			}
		}
		for ok := it.last(); ok; ok = it.prev() {
			if n--; n < -len(block) {
				t.Fatal("more entries backward than bytes")
			}
		}
		it.seekGE([]byte("apricot"))
		it.seekGE(nil)
	})
}

// FuzzTableReader feeds arbitrary bytes to Open and reads whatever opens:
// errors must wrap base.ErrCorruption, and nothing may panic.
func FuzzTableReader(f *testing.F) {
	entries := randomEntries(rand.New(rand.NewPCG(12, 12)), 20, 6, 8)
	for _, c := range compressions {
		f.Add(buildTable(f, entries, WriterOptions{BlockSize: 64, Compression: c, Filter: Bloom(10)}))
	}
	f.Add(buildTable(f, distinctEntries(1000), WriterOptions{BlockSize: 512, Filter: Fuse(8), Prefix: slashPrefix}))
	f.Add(buildTable(f, distinctEntries(1000), WriterOptions{BlockSize: 512, Filter: Ribbon(8), Prefix: slashPrefix}))
	f.Add(buildTable(f, nil, WriterOptions{}))
	for _, c := range compressions {
		f.Add(buildTable(f, benchLikeEntries(100), WriterOptions{Compression: c, Filter: Bloom(10), BlockAlign: true}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Open(bytes.NewReader(data), int64(len(data)), ReaderOptions{FileName: "fuzz.sst"})
		if err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("Open: %v does not wrap ErrCorruption", err)
			}
			return
		}
		it := r.NewIterator()
		for ok := it.First(); ok; ok = it.Next() {
			r.Get(MakeLookupKey(it.Key().UserKey, base.SeqNumMax), nil)
		}
		for ok := it.Last(); ok; ok = it.Prev() {
		}
		if err := it.Error(); err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("iterator: %v does not wrap ErrCorruption", err)
		}
	})
}

package sstable

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestReadsPerLookup proves the filter's promise with a counting file
// system: a Get the filter rules out reads nothing from the table file; a
// present key reads exactly one data block when the cache is cold and
// nothing when it is warm.
func TestReadsPerLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	entries := randomEntries(rng, 20_000, 16, 100)
	mem := vfs.NewMem()
	writeTableFile(t, mem, "000007.sst", entries, WriterOptions{Filter: Bloom(10), Compression: SnappyCompression})

	fs := vfs.NewCounting(mem, nil)
	file, err := fs.Open("000007.sst")
	must(t, err)
	info, err := file.Stat()
	must(t, err)
	r, err := Open(file, info.Size(), ReaderOptions{FileName: "000007.sst", FileNum: 7, Cache: cache.New(64 << 20)})
	must(t, err)
	reads := func() int64 { return fs.Kind(vfs.KindTable).ReadCalls() }

	// Absent keys: the filter says no for about 99%; each of those reads
	// nothing. The rest (false positives) read at most one block.
	negatives, before := 0, reads()
	for i := range 10_000 {
		k := MakeLookupKey([]byte{'#', byte(i), byte(i >> 8)}, base.SeqNumMax) // '#' sorts before 'a'..'d' keys
		var stats LookupStats
		prev := reads()
		_, _, found, err := r.Get(k, &stats)
		if err != nil || found {
			t.Fatalf("absent key %q: found %v, %v", k.UserKey, found, err)
		}
		if stats.FilterNegative {
			negatives++
			if reads() != prev || stats.BlocksRead != 0 || stats.BytesRead != 0 {
				t.Fatalf("filter negative for %q still read the file", k.UserKey)
			}
		}
	}
	if negatives < 9800 { // expected 9904 at 0.96% FPR; 9800 is 10 sd below
		t.Fatalf("only %d of 10000 absent keys were filter negatives", negatives)
	}
	t.Logf("absent keys: %d filter negatives, %d reads for the rest", negatives, reads()-before)

	// Present keys, each with a fresh (cold) cache: one read, then none.
	for range 100 {
		r, err := Open(file, info.Size(), ReaderOptions{FileName: "000007.sst", FileNum: 7, Cache: cache.New(64 << 20)})
		must(t, err)
		e := entries[rng.IntN(len(entries))]
		k := MakeLookupKey(e.key.UserKey, e.key.SeqNum())
		for pass, want := range []int64{1, 0} {
			var stats LookupStats
			prev := reads()
			if _, _, found, err := r.Get(k, &stats); !found || err != nil {
				t.Fatalf("present key %v: %v, %v", e.key, found, err)
			}
			if got := reads() - prev; got != want || int64(stats.BlocksRead) != want || int64(stats.BlocksCached) != 1-want {
				t.Fatalf("present key, pass %d: %d read calls (stats %+v), want %d", pass, got, stats, want)
			}
		}
	}
}

// TestIteratorReadsAhead counts the file reads of scans through the block
// cache: forward, after seqReadsBeforeAhead blocks read one at a time, one
// read per scanReadAhead bytes, and a second forward scan none, every block
// having been copied into the cache; backward, one read per block. Every
// forward scan sees exactly the entries written.
func TestIteratorReadsAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	entries := randomEntries(rng, 30_000, 16, 100)
	mem := vfs.NewMem()
	props := writeTableFile(t, mem, "000009.sst", entries, WriterOptions{Compression: SnappyCompression})
	fs := vfs.NewCounting(mem, nil)
	open := func() *Reader {
		file, err := fs.Open("000009.sst")
		must(t, err)
		info, err := file.Stat()
		must(t, err)
		r, err := Open(file, info.Size(), ReaderOptions{FileName: "000009.sst", FileNum: 9, Cache: cache.New(64 << 20)})
		must(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	reads := func() int64 { return fs.Kind(vfs.KindTable).ReadCalls() }
	scan := func(r *Reader) int64 {
		t.Helper()
		before := reads()
		it := r.NewIterator()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if e := entries[n]; base.CompareInternal(it.Key(), e.key) != 0 || string(it.Value()) != string(e.value) {
				t.Fatalf("entry %d: %v, want %v", n, it.Key(), e.key)
			}
			n++
		}
		must(t, it.Close())
		if n != len(entries) {
			t.Fatalf("scan saw %d entries, want %d", n, len(entries))
		}
		return reads() - before
	}
	blocks := int64(props.DataBlocks)
	if blocks < 100 {
		t.Fatalf("the table has %d data blocks; the test needs many", blocks)
	}

	r := open()
	windows := (int64(props.DataBytes) + scanReadAhead - 1) / scanReadAhead
	if got, most := scan(r), int64(seqReadsBeforeAhead)+windows+1; got > most {
		t.Errorf("forward scan of %d blocks (%d bytes): %d reads, want at most %d", blocks, props.DataBytes, got, most)
	}
	if got := scan(r); got != 0 {
		t.Errorf("second forward scan: %d reads, want 0 (every block cached)", got)
	}
	// Backward on a cold cache: no read-ahead, one read per block.
	r = open()
	before := reads()
	it := r.NewIterator()
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	must(t, it.Close())
	if got := reads() - before; got != blocks {
		t.Errorf("backward scan: %d reads, want one per block, %d", got, blocks)
	}
}

// writeTableFile writes entries to a table file named name on fs.
func writeTableFile(t *testing.T, fs vfs.FS, name string, entries []entry, opts WriterOptions) Properties {
	t.Helper()
	f, err := fs.Create(name)
	must(t, err)
	w, err := NewWriter(f, opts)
	must(t, err)
	for _, e := range entries {
		must(t, w.Add(e.key, e.value))
	}
	props, err := w.Finish()
	must(t, err)
	must(t, f.Close())
	return props
}

// prefetchFile is a table in memory that records its Prefetch calls.
type prefetchFile struct {
	*bytes.Reader
	calls [][2]int64
}

func (f *prefetchFile) Prefetch(off, n int64) error {
	f.calls = append(f.calls, [2]int64{off, n})
	return nil
}

// TestPrefetchBlock checks that PrefetchBlock asks the file for exactly
// the bytes LoadBlock reads for the key's block — the block and its
// trailer, as Layout finds them — for every key of a table of many blocks,
// and for nothing past the last block; and that a file without Prefetch
// is left alone.
func TestPrefetchBlock(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(5, 5)), 2000, 16, 200)
	data := buildTable(t, entries, WriterOptions{BlockSize: 1024, Filter: Bloom(10)})
	f := &prefetchFile{Reader: bytes.NewReader(data)}
	r, err := Open(f, int64(len(data)), ReaderOptions{FileName: "000001.sst", FileNum: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	layout, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	if len(layout.Data) < 10 {
		t.Fatalf("%d data blocks: the case needs many", len(layout.Data))
	}
	for i, e := range entries {
		var stats LookupStats
		loc, ok, err := r.Locate(MakeLookupKey(e.key.UserKey, base.SeqNumMax), &stats)
		if err != nil || !ok {
			t.Fatalf("entry %d: Locate ruled out a present key", i)
		}
		f.calls = f.calls[:0]
		r.PrefetchBlock(loc)
		if loc.Block == len(layout.Data) {
			if len(f.calls) != 0 {
				t.Fatalf("entry %d: past the last block, Prefetch%v", i, f.calls)
			}
			continue
		}
		b := layout.Data[loc.Block]
		want := [2]int64{int64(b.Offset), int64(b.Length + blockTrailerLen)}
		if len(f.calls) != 1 || f.calls[0] != want {
			t.Fatalf("entry %d, block %d: Prefetch%v, want one of %v", i, loc.Block, f.calls, want)
		}
	}
	plain := openTable(t, data, nil) // a bytes.Reader: no Prefetch to call
	var stats LookupStats
	loc, _, _ := plain.Locate(MakeLookupKey(entries[0].key.UserKey, base.SeqNumMax), &stats)
	plain.PrefetchBlock(loc)
}

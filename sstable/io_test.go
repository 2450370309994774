package sstable

import (
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
	f, err := mem.Create("000007.sst")
	must(t, err)
	w, err := NewWriter(f, WriterOptions{Filter: Bloom(10), Compression: SnappyCompression})
	must(t, err)
	for _, e := range entries {
		must(t, w.Add(e.key, e.value))
	}
	_, err = w.Finish()
	must(t, err)
	must(t, f.Close())

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

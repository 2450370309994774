package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/race"
)

var compressions = []Compression{NoCompression, SnappyCompression, ZstdCompression}

// TestRoundTrip writes 1,000,000 random entries — empty keys and values,
// keys up to 64 KiB, several versions per key — in every compression, and
// reads every one back by Get and by iteration in both directions. Under
// -race (one goroutine: the detector checks the unsafe reads' pointer
// rules) and -short, 20,000.
func TestRoundTrip(t *testing.T) {
	n := 1_000_000
	if testing.Short() || race.Enabled {
		n = 20_000
	}
	entries := randomEntries(rand.New(rand.NewPCG(1, 2)), n, 64<<10, 16<<10)
	for _, c := range compressions {
		t.Run(c.String(), func(t *testing.T) {
			data := buildTable(t, entries, WriterOptions{Compression: c, Filter: Bloom(10)})
			r := openTable(t, data, cache.New(8<<20))
			p := r.Properties()
			if p.Entries != uint64(len(entries)) || !bytes.Equal(p.Smallest.UserKey, entries[0].key.UserKey) || p.Largest.Trailer != entries[len(entries)-1].key.Trailer {
				t.Fatalf("properties %+v", p)
			}
			for i, e := range entries {
				v, kind, found, err := r.Get(MakeLookupKey(e.key.UserKey, e.key.SeqNum()), nil)
				if err != nil || !found || kind != e.key.Kind() || !bytes.Equal(v, e.value) {
					t.Fatalf("entry %d %v: got %d bytes, %v, %v, %v", i, e.key, len(v), kind, found, err)
				}
			}
			it := r.NewIterator()
			i := 0
			for ok := it.First(); ok; ok = it.Next() {
				if base.CompareInternal(it.Key(), entries[i].key) != 0 || !bytes.Equal(it.Value(), entries[i].value) {
					t.Fatalf("forward entry %d: %v, want %v", i, it.Key(), entries[i].key)
				}
				i++
			}
			if it.Error() != nil || i != len(entries) {
				t.Fatalf("forward iteration saw %d of %d entries: %v", i, len(entries), it.Error())
			}
			for ok := it.Last(); ok; ok = it.Prev() {
				i--
				if base.CompareInternal(it.Key(), entries[i].key) != 0 {
					t.Fatalf("backward entry %d: %v, want %v", i, it.Key(), entries[i].key)
				}
			}
			if it.Error() != nil || i != 0 {
				t.Fatalf("backward iteration stopped at %d: %v", i, it.Error())
			}
		})
	}
}

// TestGetVisibility checks Get at every sequence number against the model:
// the newest version ≤ seq, tombstones reported as such, absent keys absent.
func TestGetVisibility(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	entries := randomEntries(rng, 3000, 6, 20)
	r := openTable(t, buildTable(t, entries, WriterOptions{BlockSize: 256, Filter: Bloom(10)}), nil)
	maxSeq := base.SeqNum(len(entries) + 2)
	for q := range 20_000 {
		var uk []byte
		if q%2 == 0 {
			uk = entries[rng.IntN(len(entries))].key.UserKey
		} else {
			uk = []byte(fmt.Sprintf("%c%d", 'a'+rng.IntN(5), rng.IntN(50)))
		}
		seq := base.SeqNum(rng.IntN(int(maxSeq)))
		want, wantFound := modelGet(entries, uk, seq)
		v, kind, found, err := r.Get(MakeLookupKey(uk, seq), nil)
		if err != nil || found != wantFound || (found && (kind != want.key.Kind() || !bytes.Equal(v, want.value))) {
			t.Fatalf("Get(%q, %d) = %q, %v, %v, %v; model %v, %v", uk, seq, v, kind, found, err, want.key, wantFound)
		}
	}
}

// TestIteratorSeeks compares SeekGE, SeekLT, Next and Prev with the model at
// random user keys, across block boundaries.
func TestIteratorSeeks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	entries := randomEntries(rng, 2000, 5, 10)
	r := openTable(t, buildTable(t, entries, WriterOptions{BlockSize: 128, RestartInterval: 4}), nil)
	find := func(k base.InternalKey) int { // first index ≥ k
		lo, hi := 0, len(entries)
		for lo < hi {
			mid := (lo + hi) / 2
			if base.CompareInternal(entries[mid].key, k) < 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return lo
	}
	it := r.NewIterator()
	for range 3000 {
		var uk []byte
		if rng.IntN(2) == 0 {
			uk = entries[rng.IntN(len(entries))].key.UserKey
		} else {
			uk = make([]byte, rng.IntN(6))
			for i := range uk {
				uk[i] = byte('a' + rng.IntN(5))
			}
		}
		target := base.MakeInternalKey(uk, base.SeqNumMax, base.KindMax)
		i := find(target)
		ok := it.SeekGE(uk)
		if ok != (i < len(entries)) || (ok && base.CompareInternal(it.Key(), entries[i].key) != 0) {
			t.Fatalf("SeekGE(%q) = %v at %v; model index %d", uk, ok, it.Key(), i)
		}
		for step := 0; ok && step < 5; step++ {
			if rng.IntN(2) == 0 {
				ok, i = it.Next(), i+1
			} else {
				ok, i = it.Prev(), i-1
			}
			if ok != (i >= 0 && i < len(entries)) || (ok && base.CompareInternal(it.Key(), entries[i].key) != 0) {
				t.Fatalf("step %d after SeekGE(%q): %v at %v, model index %d", step, uk, ok, it.Key(), i)
			}
		}
		j := find(target) - 1
		ok = it.SeekLT(uk)
		if ok != (j >= 0) || (ok && base.CompareInternal(it.Key(), entries[j].key) != 0) {
			t.Fatalf("SeekLT(%q) = %v at %v; model index %d", uk, ok, it.Key(), j)
		}
	}
	if it.Error() != nil {
		t.Fatal(it.Error())
	}
}

func TestEmptyTable(t *testing.T) {
	r := openTable(t, buildTable(t, nil, WriterOptions{Filter: Bloom(10)}), nil)
	if _, _, found, err := r.Get(MakeLookupKey([]byte("a"), base.SeqNumMax), nil); found || err != nil {
		t.Fatalf("Get in an empty table: %v, %v", found, err)
	}
	it := r.NewIterator()
	if it.First() || it.Last() || it.SeekGE(nil) || it.SeekLT([]byte("z")) || it.Error() != nil {
		t.Fatal("an empty table iterated")
	}
}

func TestWriterErrors(t *testing.T) {
	w, _ := NewWriter(&bytes.Buffer{}, WriterOptions{})
	must(t, w.Add(base.MakeInternalKey([]byte("b"), 5, base.KindSet), nil))
	for _, k := range []base.InternalKey{
		base.MakeInternalKey([]byte("a"), 9, base.KindSet), // smaller user key
		base.MakeInternalKey([]byte("b"), 5, base.KindSet), // the same key
		base.MakeInternalKey([]byte("b"), 6, base.KindSet), // newer version after older
	} {
		if err := w.Add(k, nil); !errors.Is(err, ErrKeyOrder) {
			t.Fatalf("Add(%v) after b#5: %v, want ErrKeyOrder", k, err)
		}
	}
	for _, kind := range []Kind{KindSetTTL, KindSetBlobTTL} {
		if err := w.Add(base.MakeInternalKey([]byte("c"), 5, kind), make([]byte, ExpiryLen-1)); err == nil {
			t.Fatalf("Add of a %v entry whose value is shorter than an expiry: no error", kind)
		}
	}
	must(t, w.Add(base.MakeInternalKey([]byte("c"), 5, KindSetTTL), AppendExpiry(nil, 1))) // refused entries added nothing
	for _, opts := range []WriterOptions{{Filter: Bloom(0.5)}, {Filter: Bloom(65)}, {Compression: 9}} {
		if _, err := NewWriter(&bytes.Buffer{}, opts); err == nil {
			t.Fatalf("NewWriter(%+v) accepted", opts)
		}
	}
	failing, _ := NewWriter(failingWriter{}, WriterOptions{})
	failing.Add(base.MakeInternalKey([]byte("a"), 1, base.KindSet), make([]byte, 100<<10))
	if _, err := failing.Finish(); err == nil {
		t.Fatal("Finish on a failing writer succeeded")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestScanIterator reads a table with the scan iterator, which reuses its
// buffers and bypasses the cache: the same entries as the model, in every
// compression, and the cache untouched.
func TestScanIterator(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(14, 14)), 5000, 12, 300)
	for _, c := range compressions {
		bc := cache.New(1 << 20)
		r := openTable(t, buildTable(t, entries, WriterOptions{BlockSize: 512, Compression: c}), bc)
		it := r.NewScanIterator()
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if base.CompareInternal(it.Key(), entries[i].key) != 0 || !bytes.Equal(it.Value(), entries[i].value) {
				t.Fatalf("%v: entry %d is %v, want %v", c, i, it.Key(), entries[i].key)
			}
			i++
		}
		if it.Error() != nil || i != len(entries) {
			t.Fatalf("%v: %d of %d entries: %v", c, i, len(entries), it.Error())
		}
		if m := bc.Metrics(); m.Hits+m.Misses != 0 || m.Blocks != 0 {
			t.Fatalf("%v: the scan used the cache: %+v", c, m)
		}
	}
}

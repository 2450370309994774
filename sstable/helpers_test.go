package sstable

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/offheap"
	"github.com/bloomkv/bloomkv/internal/race"
)

// entry is one key/value of the test model.
type entry struct {
	key   base.InternalKey
	value []byte
}

// randomEntries returns n entries with unique internal keys, sorted. User
// keys repeat (several versions of a key) and range from empty to maxKey
// bytes, mostly short; values likewise up to maxValue bytes.
func randomEntries(rng *rand.Rand, n, maxKey, maxValue int) []entry {
	size := func(limit int) int {
		switch r := rng.IntN(10_000); {
		case r == 0:
			return limit // the largest, now and then
		case r < 10:
			return rng.IntN(limit + 1)
		case r < 500:
			return rng.IntN(min(limit, 1024) + 1)
		default:
			return rng.IntN(min(limit, 24) + 1)
		}
	}
	var out []entry
	seq := base.SeqNum(1)
	for len(out) < n {
		uk := make([]byte, size(maxKey))
		for i := range uk {
			uk[i] = byte('a' + rng.IntN(4)) // small alphabet: shared prefixes
		}
		versions := 1 + rng.IntN(3)
		for range min(versions, n-len(out)) {
			kind := base.KindSet
			if rng.IntN(8) == 0 {
				kind = base.KindDelete
			}
			v := make([]byte, size(maxValue))
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			out = append(out, entry{base.MakeInternalKey(uk, seq, kind), v})
			seq++
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return base.CompareInternal(a.key, b.key) })
	// Random user keys can repeat across draws with other seqnums; that is
	// fine, but an identical internal key cannot (seqnums are unique).
	return out
}

// buildTable writes entries to a table in memory.
func buildTable(t testing.TB, entries []entry, opts WriterOptions) []byte {
	t.Helper()
	data, _ := buildTableWithRangeDels(t, entries, nil, opts)
	return data
}

// openTable opens data with its filter and index off the heap, as the DB
// does, and closes it when the test ends, checking that everything pinned
// was given back.
func openTable(t testing.TB, data []byte, c *cache.Cache) *Reader {
	t.Helper()
	r, _ := openWith(t, data, ReaderOptions{Cache: c})
	return r
}

// openWith is openTable with the given options, their memory off the heap
// and counted.
func openWith(t testing.TB, data []byte, opts ReaderOptions) (*Reader, *trackingMemory) {
	t.Helper()
	mem := new(trackingMemory)
	opts.FileName, opts.FileNum, opts.Memory = "000001.sst", 1, mem
	r, err := Open(bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		if mem.live != 0 {
			t.Errorf("Close left %d allocations", mem.live)
		}
		mem.Release()
	})
	return r, mem
}

// trackingMemory is an off-heap ReaderOptions.Memory that counts the
// allocations not yet freed, and the bytes they asked for.
type trackingMemory struct {
	offheap.Allocator
	live, bytes int
}

func (m *trackingMemory) Alloc(n int) []byte {
	m.live++
	m.bytes += n
	return m.Allocator.Alloc(n)
}

func (m *trackingMemory) Free(b []byte) {
	m.live--
	m.bytes -= len(b)
	m.Allocator.Free(b)
}

// modelGet is the oracle for Get: the newest version of userKey with a
// sequence number ≤ seq among sorted entries.
func modelGet(entries []entry, userKey []byte, seq base.SeqNum) (entry, bool) {
	seek := base.MakeInternalKey(userKey, seq, base.KindMax)
	i, _ := slices.BinarySearchFunc(entries, seek, func(e entry, k base.InternalKey) int { return base.CompareInternal(e.key, k) })
	if i < len(entries) && bytes.Equal(entries[i].key.UserKey, userKey) {
		return entries[i], true
	}
	return entry{}, false
}

// sizeFor returns normal, or underRace under -race (race.Enabled), which
// slows the biggest tests tenfold.
func sizeFor(normal, underRace int) int {
	if race.Enabled {
		return underRace
	}
	return normal
}

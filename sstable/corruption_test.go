package sstable

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
)

// readAll opens a table and reads everything through every path — Get of
// every model entry and a full scan in both directions — and reports the
// first error. A returned value that differs from the model fails the test
// at once: damage may cause errors, never wrong answers.
func readAll(t *testing.T, data []byte, entries []entry, what string) error {
	t.Helper()
	return readAllWith(t, data, entries, what, false)
}

// readAllWith is readAll opening the table with PinIndexPartitions as pin.
func readAllWith(t *testing.T, data []byte, entries []entry, what string, pin bool) error {
	t.Helper()
	// The pinned filter and index come off the heap, as in the DB, and a
	// damaged table must give back all it took, opened or not.
	mem := new(trackingMemory)
	defer mem.Release()
	r, err := Open(bytes.NewReader(data), int64(len(data)), ReaderOptions{FileName: "000001.sst", FileNum: 1, Memory: mem, PinIndexPartitions: pin})
	if err != nil {
		if mem.live != 0 {
			t.Fatalf("%s: a failed Open kept %d allocations", what, mem.live)
		}
		return err
	}
	defer func() {
		r.Close()
		if mem.live != 0 {
			t.Fatalf("%s: Close left %d allocations", what, mem.live)
		}
	}()
	for _, e := range entries {
		v, kind, found, err := r.Get(MakeLookupKey(e.key.UserKey, e.key.SeqNum()), nil)
		if err != nil {
			return err
		}
		// A damaged filter may only make the table look smaller, which
		// reads catch by checksum; a found entry must be right.
		if found && (kind != e.key.Kind() || !bytes.Equal(v, e.value)) {
			t.Fatalf("%s: Get(%v) returned a wrong value", what, e.key)
		}
		if !found {
			t.Fatalf("%s: Get(%v) lost an entry without an error", what, e.key)
		}
	}
	it := r.NewIterator()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(entries) || base.CompareInternal(it.Key(), entries[i].key) != 0 || !bytes.Equal(it.Value(), entries[i].value) {
			t.Fatalf("%s: scan entry %d is wrong", what, i)
		}
		i++
	}
	if it.Error() != nil {
		return it.Error()
	}
	if i != len(entries) {
		t.Fatalf("%s: scan ended after %d of %d entries without an error", what, i, len(entries))
	}
	return nil
}

func checkCorruption(t *testing.T, err error, what string) {
	t.Helper()
	var ce *base.CorruptionError
	if !errors.Is(err, base.ErrCorruption) || !errors.As(err, &ce) || ce.File != "000001.sst" {
		t.Fatalf("%s: %v, want a corruption error naming 000001.sst", what, err)
	}
}

// TestEveryByteFlipDetected damages each byte of a small table in turn.
func TestEveryByteFlipDetected(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(9, 9)), 60, 8, 16)
	for _, c := range compressions {
		// With a range filter: its block is damaged too.
		data := buildTable(t, entries, WriterOptions{BlockSize: 200, Compression: c, Filter: Bloom(10), RangeFilterBits: 10})
		if err := readAll(t, data, entries, "intact"); err != nil {
			t.Fatal(err)
		}
		for i := range data {
			damaged := bytes.Clone(data)
			damaged[i] ^= 0x5a
			checkCorruption(t, readAll(t, damaged, entries, "flip"), c.String()+" flip of byte "+itoa(i))
		}
	}
}

// familyTables are tables with each family's filter block, a fuse and a
// ribbon one holding prefixes too: a thousand keys, so that no fuse or
// Ribbon filter falls back to Bloom (checked).
func familyTables(t *testing.T) map[string][]byte {
	entries := distinctEntries(1000)
	tables := map[string][]byte{}
	for _, opts := range []WriterOptions{
		{BlockSize: 512, Filter: Bloom(10)},
		{BlockSize: 512, Filter: Fuse(8)},
		{BlockSize: 512, Filter: Fuse(12), Prefix: slashPrefix},
		{BlockSize: 512, Filter: Ribbon(7)},
		{BlockSize: 512, Filter: Ribbon(12), Prefix: slashPrefix},
	} {
		data := buildTable(t, entries, opts)
		r := openTable(t, data, nil)
		if got := r.Properties().FilterFamily; got != opts.Filter.Family {
			t.Fatalf("%v: the table's filter is %v", opts.Filter, got)
		}
		tables[opts.Filter.String()] = data
	}
	return tables
}

// TestEveryFilterByteFlipDetected damages each byte of each family's
// filter block and its trailer: Open must fail with a corruption error,
// never decode a wrong filter (whose negatives would be wrong).
func TestEveryFilterByteFlipDetected(t *testing.T) {
	for name, data := range familyTables(t) {
		r := openTable(t, data, nil)
		l, err := r.Layout()
		if err != nil {
			t.Fatal(err)
		}
		start, end := l.Filter.Offset, l.Filter.Offset+l.Filter.Length+blockTrailerLen
		for i := start; i < end; i++ {
			damaged := bytes.Clone(data)
			damaged[i] ^= 0x5a
			_, err := Open(bytes.NewReader(damaged), int64(len(damaged)), ReaderOptions{FileName: "000001.sst"})
			checkCorruption(t, err, name+" filter flip of byte "+itoa(int(i)))
		}
	}
}

func TestEveryTruncationDetected(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(10, 10)), 60, 8, 16)
	tables := familyTables(t)
	tables["random entries"] = buildTable(t, entries, WriterOptions{BlockSize: 200, Filter: Bloom(10)})
	for name, data := range rangeFilterTables(t) {
		tables[name] = data
	}
	for name, data := range tables {
		for n := range len(data) {
			_, err := Open(bytes.NewReader(data[:n]), int64(n), ReaderOptions{FileName: "000001.sst"})
			checkCorruption(t, err, name+" truncated to "+itoa(n))
		}
	}
}

// TestRandomBitFlipsLargeTable flips 10,000 random single bits, one at a
// time, in a table of about a megabyte; 2,000 under -race (one goroutine:
// the detector checks the unsafe reads' pointer rules), 500 with -short.
// Then a fifth as many in the same entries written with an index in a
// hundred partitions, read through a block cache.
func TestRandomBitFlipsLargeTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	entries := randomEntries(rng, 8000, 16, 100)
	flips := sizeFor(10_000, 2_000)
	if testing.Short() {
		flips = 500
	}
	for _, tc := range []struct {
		name  string
		opts  WriterOptions
		cache bool
		flips int
	}{
		{"whole index", WriterOptions{Compression: SnappyCompression, Filter: Bloom(10)}, false, flips},
		{"index in partitions", WriterOptions{Compression: SnappyCompression, Filter: Bloom(10), IndexPartitionSize: 256}, true, flips / 5},
	} {
		data := buildTable(t, entries, tc.opts)
		// Get of the last key of each block touches every block; cheaper
		// than readAll, and as thorough for damage that sits in one block.
		l, err := openTable(t, data, nil).Layout()
		if err != nil {
			t.Fatal(err)
		}
		var probes []entry
		for _, b := range l.Data {
			e, _ := modelGet(entries, b.LastKey.UserKey, b.LastKey.SeqNum())
			probes = append(probes, e)
		}
		// One copy of the table, each flip undone after its reads (the
		// reader copies what it reads, and is done with the bytes by then):
		// a fresh megabyte per flip cost most of the test's time under
		// -race.
		damaged := bytes.Clone(data)
		for f := range tc.flips {
			bit := rng.IntN(len(data) * 8)
			damaged[bit/8] ^= 1 << (bit % 8)
			opts := ReaderOptions{FileName: "000001.sst", FileNum: 1}
			if tc.cache {
				opts.Cache = cache.New(1 << 20)
			}
			r, err := Open(bytes.NewReader(damaged), int64(len(damaged)), opts)
			if err == nil {
				for _, e := range probes {
					v, kind, found, gerr := r.Get(MakeLookupKey(e.key.UserKey, e.key.SeqNum()), nil)
					if gerr != nil {
						err = gerr
						break
					}
					if !found || kind != e.key.Kind() || !bytes.Equal(v, e.value) {
						t.Fatalf("%s: flip %d (bit %d): Get(%v) answered wrongly without an error", tc.name, f, bit, e.key)
					}
				}
			}
			checkCorruption(t, err, tc.name+": bit flip "+itoa(bit))
			damaged[bit/8] ^= 1 << (bit % 8)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

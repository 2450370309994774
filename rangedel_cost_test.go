package bloomkv

import (
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

var rangeDelKeys = flag.Int("rangedel.keys", 20_000, "keys TestDeleteRangeCost deletes with one DeleteRange (the issue's figure: 1000000)")

// TestDeleteRangeCost measures what deleting a range of many keys costs,
// in counts rather than time: the DeleteRange is one WAL record of a few
// dozen bytes, whatever the number of keys; Gets of the covered keys read
// no data block, with the tombstone in the memtable and then in L0 above
// the keys; and a compaction to the bottom returns all the range's space.
//
// Long form (the million keys):
//
//	go test -count=1 -run TestDeleteRangeCost -rangedel.keys=1000000 -v .
func TestDeleteRangeCost(t *testing.T) {
	n := *rangeDelKeys
	db, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "key%09d", i) }
	fillBatches(t, db, n, func(b *Batch, i int) error { return b.Set(key(i), fmt.Appendf(nil, "value-%027d", i)) })
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	bytesBefore := tableBytes(db)

	m0 := db.Metrics()
	if err := db.DeleteRange(key(0), key(n), nil); err != nil {
		t.Fatal(err)
	}
	m1 := db.Metrics()
	walBytes, records := m1.WALBytes-m0.WALBytes, m1.Writes-m0.Writes
	t.Logf("DeleteRange of %d keys: %d WAL bytes, %d record(s), %d batch(es)", n, walBytes, records, m1.Batches-m0.Batches)
	if records != 1 || walBytes > 64 {
		t.Errorf("DeleteRange of %d keys wrote %d records, %d WAL bytes; want 1 record of at most 64 bytes", n, records, walBytes)
	}

	// Gets of covered keys: every thousandth, and the two ends.
	probes := [][]byte{key(0), key(n - 1)}
	for i := 0; i < n; i += 1000 {
		probes = append(probes, key(i))
	}
	readCovered := func(where string) {
		t.Helper()
		before := db.Metrics()
		for _, k := range probes {
			if _, err := db.Get(k); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%s): %v, want ErrNotFound", where, k, err)
			}
		}
		after := db.Metrics()
		var blocks uint64
		for level := range after.Levels {
			blocks += blockReads(after.Levels[level]) - blockReads(before.Levels[level])
		}
		t.Logf("%s: %d Gets of covered keys read %d data blocks", where, len(probes), blocks)
		if blocks != 0 {
			t.Errorf("%s: %d Gets of covered keys read %d data blocks, want 0", where, len(probes), blocks)
		}
	}
	readCovered("tombstone in the memtable")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	readCovered("tombstone in L0")

	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	bytesAfter := tableBytes(db)
	m2 := db.Metrics()
	t.Logf("tables: %d bytes before the deletion, %d after its compaction", bytesBefore, bytesAfter)
	// Every key was covered and no snapshot holds one, so a compaction to
	// the bottom drops every version and then the tombstone: no table is
	// left.
	var tablesAfter int
	for _, l := range m2.Levels {
		tablesAfter += l.Tables
	}
	if bytesAfter != 0 || tablesAfter != 0 {
		t.Errorf("after the compaction %d tables hold %d bytes of %d; want none: the range's space was not all returned", tablesAfter, bytesAfter, bytesBefore)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if it.First() {
		t.Errorf("a key survived: %q", it.Key())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

// compactedTree returns a DB on a MemFS holding n keys, key(0) … key(n−1)
// with 64-byte values, compacted to the bottom level; it is closed at the
// benchmark's end.
func compactedTree(b *testing.B, n int) (*DB, func(int) []byte) {
	b.Helper()
	d, err := Open("/db", &Options{FS: vfs.NewMem(), BlockCacheSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	key := func(i int) []byte { return fmt.Appendf(nil, "key%08d", i) }
	batch := NewBatch()
	for i := range n {
		batch.Set(key(i), fmt.Appendf(nil, "value-%058d", i))
		if batch.Len() == 1000 {
			if err := d.Apply(batch, NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	return d, key
}

// BenchmarkGetRangeDeleted is a Get of a random key of a 100,000-key tree
// compacted to the bottom level: "live" before any deletion, "covered"
// once a DeleteRange over every key sits in an L0 table above them. It
// reports the data blocks each Get read (from the file or the block
// cache), from Metrics: a covered key costs none.
func BenchmarkGetRangeDeleted(b *testing.B) {
	const n = 100_000
	d, key := compactedTree(b, n)
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = key(i * 24 % n)
	}
	run := func(name string, want error) {
		b.Run(name, func(b *testing.B) {
			before := d.Metrics()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := d.Get(keys[i%len(keys)]); err != want {
					b.Fatalf("Get: %v, want %v", err, want)
				}
			}
			after := d.Metrics()
			var blocks uint64
			for level := range after.Levels {
				blocks += blockReads(after.Levels[level]) - blockReads(before.Levels[level])
			}
			b.ReportMetric(float64(blocks)/float64(b.N), "blocks/op")
		})
	}
	run("live", nil)
	if err := d.DeleteRange(key(0), key(n), nil); err != nil {
		b.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	run("covered", ErrNotFound)
}

// BenchmarkSeekRangeDeleted is an iterator's SeekGE into the start of a
// deleted range of 80,000 keys of a 100,000-key tree, the tombstone in L0
// above the keys in the bottom level: it lands past the range. "skip" is
// the Iterator as it is, seeking the older sources past the tombstone's
// range (MergingIter.SkipForward); "step" the same with the skip turned
// off, stepping over every deleted version.
func BenchmarkSeekRangeDeleted(b *testing.B) {
	const n = 100_000
	d, key := compactedTree(b, n)
	if err := d.DeleteRange(key(10_000), key(90_000), nil); err != nil {
		b.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	for _, skip := range []bool{true, false} {
		name := "step"
		if skip {
			name = "skip"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				it, err := d.NewIter(nil)
				if err != nil {
					b.Fatal(err)
				}
				if !skip {
					it.merging = nil
				}
				if !it.SeekGE(key(10_000)) || string(it.Key()) != string(key(90_000)) {
					b.Fatalf("SeekGE landed at %q", it.Key())
				}
				if !it.Prev() || string(it.Key()) != string(key(9_999)) {
					b.Fatalf("Prev landed at %q", it.Key())
				}
				it.Close()
			}
		})
	}
}

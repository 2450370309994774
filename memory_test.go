package bloomkv

import (
	"fmt"
	"math"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestIteratorOutlivesClose checks the lifetime rule of the off-heap
// memory: an iterator left open across DB.Close keeps the memtable and the
// tables it reads — their files, pinned indexes and blocks — so what it
// returns stays right until it is closed, and closing it then releases
// them. (Freed at Close, the memtable's arena or a table's index would
// fault here instead.)
func TestIteratorOutlivesClose(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, BlockSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	key := func(i int) []byte { return fmt.Appendf(nil, "key%05d", i) }
	value := func(i int) []byte { return fmt.Appendf(nil, "value %d", i) }
	put := func(from, to int) {
		for i := from; i < to; i++ {
			if err := d.Put(key(i), value(i), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, n/2)
	if err := d.Flush(); err != nil { // the first half in tables,
		t.Fatal(err)
	}
	put(n/2, n) // the second mostly in the memtable
	m := d.Metrics()
	tables := 0 // in L0, or wherever compaction moved them (L6, a new tree's base level)
	for _, l := range m.Levels {
		tables += l.Tables
	}
	if tables == 0 || m.MemtableBytes == 0 {
		t.Fatalf("want data in tables and in the memtable:\n%v", m)
	}
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatalf("First: %v", it.Error())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	i := 0
	for ok := true; ok; ok = it.Next() {
		if string(it.Key()) != string(key(i)) || string(it.Value()) != string(value(i)) {
			t.Fatalf("entry %d after Close: %q = %q", i, it.Key(), it.Value())
		}
		i++
	}
	if err := it.Close(); err != nil || i != n {
		t.Fatalf("read %d of %d entries after Close, then Close: %v", i, n, err)
	}
	d.mu.Lock()
	open := len(d.mu.tables)
	d.mu.Unlock()
	if open != 0 {
		t.Fatalf("%d tables still open after the last iterator closed", open)
	}
}

// TestExpectedFalsePositiveReads checks Metrics.ExpectedFalsePositiveReads
// against the formula: with one fuse filter of 8-bit fingerprints in
// every table (LevelFilters), it is the runs an absent key probes — each
// L0 table, one table of each deeper level with data — times that
// filter's expected rate: four L0 tables, then one level.
func TestExpectedFalsePositiveReads(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{FS: vfs.NewMem(), MemtableSize: 1 << 20, L0CompactionTrigger: 100, LevelFilters: []FilterSpec{Fuse(8)}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 4 {
		for j := range 2000 {
			if err := d.Put(fmt.Appendf(nil, "%08d", j*4+i), make([]byte, 20), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, wantRuns int) {
		t.Helper()
		m := d.Metrics()
		runs := m.Levels[0].Tables
		for _, l := range m.Levels[1:] {
			if l.Tables > 0 {
				runs++
			}
		}
		if want := float64(runs) * Fuse(8).ExpectedFalsePositiveRate(); runs != wantRuns || math.Abs(m.ExpectedFalsePositiveReads-want) > 1e-12 {
			t.Errorf("%s: ExpectedFalsePositiveReads %v over %d runs, want %v over %d", when, m.ExpectedFalsePositiveReads, runs, want, wantRuns)
		}
	}
	check("four L0 tables", 4)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("compacted into one level", 1)
}

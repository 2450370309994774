package bloomkv

import (
	"fmt"
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

package bloomkv

import (
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/vfs"
)

// TestIteratorOutlivesClose checks the lifetime rule of the off-heap
// memory: an iterator left open across DB.Close keeps the memtable it reads
// and its current block, so what it returns stays right until it is closed
// (freed at Close, the memtable's arena would fault here instead).
func TestIteratorOutlivesClose(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	key := func(i int) []byte { return fmt.Appendf(nil, "key%05d", i) }
	value := func(i int) []byte { return fmt.Appendf(nil, "value %d of the memtable", i) }
	for i := range n {
		if err := d.Put(key(i), value(i), NoSync); err != nil {
			t.Fatal(err)
		}
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
}

package bloomkv

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestFlushForgetsMemtable checks that a flushed memtable becomes garbage
// once the flush is done: nothing of the DB's, such as the backing array
// of its queue of immutable memtables, keeps a pointer to it, which would
// keep its tree, 40 bytes an entry, live on the heap.
func TestFlushForgetsMemtable(t *testing.T) {
	d, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var flushed []weak.Pointer[memtable.Memtable]
	for round := range 3 {
		for i := range 100 {
			if err := d.Put([]byte(fmt.Sprintf("k%d.%03d", round, i)), make([]byte, 100), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		d.mu.Lock()
		flushed = append(flushed, weak.Make(d.mu.mem))
		d.mu.Unlock()
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	for i, w := range flushed {
		if w.Value() != nil {
			t.Errorf("memtable %d is still reachable after its flush", i)
		}
	}
}

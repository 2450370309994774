package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestTables checks DB.Tables against the manifest's own view of the
// current version: the same tables at the same levels, in order, with
// their sizes, bounds, entries and filters; and that the bounds are copies.
func TestTables(t *testing.T) {
	opts := Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, LevelFilters: []FilterSpec{Fuse(8)}}
	d, err := Open("db", &opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4000 {
		if err := d.Put(fmt.Appendf(nil, "k%05d", i), make([]byte, 50), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	v := d.mu.current
	var want []LiveTable
	for level, files := range v.Levels {
		for _, m := range files {
			family, param := m.Filter()
			want = append(want, LiveTable{
				TableInfo: TableInfo{FileNum: m.FileNum, Level: level, Size: m.Size,
					Smallest: m.Smallest.UserKey, Largest: m.Largest.UserKey},
				Entries: m.Entries, SmallestSeqNum: uint64(m.SmallestSeqNum), LargestSeqNum: uint64(m.LargestSeqNum),
				Filter: FilterSpec{Family: FilterFamily(family), Bits: param}, FilterBitsPerKey: m.FilterBitsPerKey,
				Compression: Compression(m.Compression),
			})
		}
	}
	d.mu.Unlock()
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("Tables: %d tables, want %d (> 0)", len(got), len(want))
	}
	var entries uint64
	for i := range want {
		g, w := got[i], want[i]
		if g.FileNum != w.FileNum || g.Level != w.Level || g.Size != w.Size || g.Entries != w.Entries ||
			!bytes.Equal(g.Smallest, w.Smallest) || !bytes.Equal(g.Largest, w.Largest) ||
			g.SmallestSeqNum != w.SmallestSeqNum || g.LargestSeqNum != w.LargestSeqNum ||
			g.Filter != w.Filter || g.FilterBitsPerKey != w.FilterBitsPerKey || g.Compression != w.Compression {
			t.Errorf("table %d: %+v, want %+v", i, g, w)
		}
		if len(g.Smallest) > 0 && &g.Smallest[0] == &w.Smallest[0] {
			t.Errorf("table %d: Smallest shares the DB's memory", i)
		}
		if g.Filter.Family == sstable.NoFilter {
			t.Errorf("table %d: no filter, want the fuse:8 asked for or the Bloom filter a small table falls back to", i)
		}
		entries += g.Entries
	}
	if entries != 4000 {
		t.Errorf("tables hold %d entries, want the 4000 written", entries)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Tables(); !errors.Is(err, ErrClosed) {
		t.Errorf("Tables after Close: %v, want ErrClosed", err)
	}
}

package bloomkv

import (
	"bytes"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestIterEmptyKeyAndValue positions an iterator on the empty key, and on
// keys with empty values, by every method, with the data in the memtable
// and in a table. Key and Value are nil only when the iterator is not
// Valid, so while it is they must be non-nil, empty slices. After Last,
// SeekLT and Prev they used to be nil: the backward direction copies the
// key into a buffer by appending to a nil slice.
func TestIterEmptyKeyAndValue(t *testing.T) {
	// The empty key holds an empty value, "b" a non-empty one and "c" an
	// empty one: the oracle, in order.
	model := []struct{ key, value string }{{"", ""}, {"b", "x"}, {"c", ""}}
	for _, where := range []string{"memtable", "table", "table and memtable"} {
		t.Run(where, func(t *testing.T) {
			d, err := Open("/db", &Options{FS: vfs.NewMem()})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for i, kv := range model {
				if where == "table and memtable" && i == 1 {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				if err := d.Put([]byte(kv.key), []byte(kv.value), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if where == "table" {
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			// Each case starts from a fresh iterator, whose buffers are
			// nil, and lists its moves and the model index each lands on.
			type move struct {
				name string
				do   func(it *Iterator) bool
				want int
			}
			var (
				first  = move{"First", (*Iterator).First, 0}
				last   = move{"Last", (*Iterator).Last, 2}
				next   = func(want int) move { return move{"Next", (*Iterator).Next, want} }
				prev   = func(want int) move { return move{"Prev", (*Iterator).Prev, want} }
				seekGE = func(k string, want int) move {
					return move{"SeekGE " + k, func(it *Iterator) bool { return it.SeekGE([]byte(k)) }, want}
				}
				seekLT = func(k string, want int) move {
					return move{"SeekLT " + k, func(it *Iterator) bool { return it.SeekLT([]byte(k)) }, want}
				}
			)
			for _, moves := range [][]move{
				{first},
				{first, next(1), next(2)},
				{last},
				{last, prev(1), prev(0)},
				{last, prev(1), prev(0), next(1), next(2)},
				{seekGE("", 0)},
				{seekGE("a", 1), prev(0)},
				{seekGE("c", 2)},
				{seekLT("a", 0)},
				{seekLT("b", 0), next(1)},
				{seekLT("d", 2), prev(1), prev(0)},
				{first, next(1), prev(0), next(1), next(2), prev(1)},
			} {
				it, err := d.NewIter(nil)
				if err != nil {
					t.Fatal(err)
				}
				var path string
				for _, m := range moves {
					path += m.name + " "
					if !m.do(it) {
						t.Fatalf("%s: not valid (%v), want %q", path, it.Error(), model[m.want].key)
					}
					k, v := it.Key(), it.Value()
					want := model[m.want]
					if k == nil || v == nil || string(k) != want.key || string(v) != want.value {
						t.Fatalf("%s: Key %q (nil %v), Value %q (nil %v); want %q = %q, neither nil",
							path, k, k == nil, v, v == nil, want.key, want.value)
					}
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
			it, err := d.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			// Off either end, both are nil.
			it.First()
			if it.Prev() || it.Key() != nil || it.Value() != nil {
				t.Fatalf("before the start: Key %q, Value %q; want nil", it.Key(), it.Value())
			}
			// All yields the same.
			i := 0
			for k, v := range it.All() {
				if k == nil || v == nil || !bytes.Equal(k, []byte(model[i].key)) || !bytes.Equal(v, []byte(model[i].value)) {
					t.Fatalf("All %d: %q = %q (nil %v, %v); want %q = %q", i, k, v, k == nil, v == nil, model[i].key, model[i].value)
				}
				i++
			}
			if i != len(model) {
				t.Fatalf("All yielded %d keys, want %d", i, len(model))
			}
		})
	}
}

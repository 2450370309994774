package sstable

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
)

// TestCompressionOnDisk pins the format: whatever the numbering of the
// Compression option, a data block's trailer and the compression property
// hold the codec byte the package doc gives (0 none, 1 snappy, 2 zstd),
// and read back as the option written.
func TestCompressionOnDisk(t *testing.T) {
	var entries []entry
	for i := range 200 {
		// Repetitive values: every compression shrinks these blocks.
		entries = append(entries, entry{base.MakeInternalKey([]byte(fmt.Sprintf("key%05d", i)), base.SeqNum(i+1), base.KindSet),
			bytes.Repeat([]byte("value "), 20)})
	}
	for _, tc := range []struct {
		opt  Compression
		want Compression // the resolved option
		disk byte
	}{
		{DefaultCompression, NoCompression, 0},
		{NoCompression, NoCompression, 0},
		{SnappyCompression, SnappyCompression, 1},
		{ZstdCompression, ZstdCompression, 2},
	} {
		data := buildTable(t, entries, WriterOptions{Compression: tc.opt})
		r := openTable(t, data, nil)
		l, err := r.Layout()
		if err != nil {
			t.Fatal(err)
		}
		first := l.Data[0]
		if got := data[first.Offset+first.Length]; got != tc.disk {
			t.Errorf("%v: trailer byte %d, want %d", tc.opt, got, tc.disk)
		}
		if first.Compression != tc.want || r.Properties().Compression != tc.want {
			t.Errorf("%v: block read back as %v, property as %v; want %v", tc.opt, first.Compression, r.Properties().Compression, tc.want)
		}
		// The index and properties blocks are never compressed.
		if l.Index.Compression != NoCompression || data[l.Index.Offset+l.Index.Length] != 0 {
			t.Errorf("%v: index block stored as %v", tc.opt, l.Index.Compression)
		}
	}
	// The property's value is the codec byte too.
	for c, disk := range map[Compression]byte{NoCompression: 0, SnappyCompression: 1, ZstdCompression: 2} {
		var it blockIter
		if err := it.init(encodeProperties(&Properties{Compression: c}), bytes.Compare); err != nil {
			t.Fatal(err)
		}
		found := false
		for ok := it.first(); ok; ok = it.nextEntry() {
			if string(it.key) == "bloomkv.compression" {
				found = true
				if !bytes.Equal(it.value, []byte{disk}) {
					t.Errorf("%v: property value %v, want [%d]", c, it.value, disk)
				}
			}
		}
		if !found {
			t.Fatal("no bloomkv.compression property")
		}
	}
	for i, want := range []Compression{NoCompression, SnappyCompression, ZstdCompression} {
		if c := want.codec(); c != compress.Codec(i) || compressionOf(c) != want || c.String() != want.String() {
			t.Errorf("%v: codec %d (%v), back %v", want, c, c, compressionOf(c))
		}
	}
	// A byte from a newer writer is no compression this version knows.
	if c := compressionOf(3); c <= ZstdCompression || c.String() != "compression(4)" {
		t.Errorf("unknown codec 3 reads as %v", c)
	}
}

// TestHandleBlocksStoredAsGiven writes tables of blob handles, of inline
// values and of runs of each, aligned and not, with each compression, and
// checks every data block against the rule of WriterOptions.Compression:
// a block holding an entry with a value of its own is compressed; a block
// of handles and empty values alone is stored as given, unless the block
// before it held a value of its own (its entries carried over under
// BlockAlign make it so). Every entry reads back.
func TestHandleBlocksStoredAsGiven(t *testing.T) {
	handle := bytes.Repeat([]byte{7, 0, 0, 1}, 3) // a handle's size; compressible
	value := bytes.Repeat([]byte("value "), 20)
	// kinds draws entry i's kind: 'b' a handle, 'B' a handle with an
	// expiry, 'd' a deletion, 'v' an inline value, 'e' an empty one.
	for _, tc := range []struct {
		name  string
		kinds func(i int) byte
	}{
		{"handles", func(int) byte { return 'b' }},
		{"handles and deletions", func(i int) byte { return "bbBbdbe"[i%7] }},
		{"inline", func(int) byte { return 'v' }},
		{"runs", func(i int) byte { return "bv"[i/150%2] }},
		{"a value among handles", func(i int) byte { return "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbv"[i%50] }},
		{"short runs", func(i int) byte { return "bv"[i/23%2] }},
		{"values then handles", func(i int) byte { return "vb"[min(i/7%9, 1)] }},
	} {
		var entries []entry
		for i := range 1200 {
			key := []byte(fmt.Sprintf("key%05d", i))
			var e entry
			switch tc.kinds(i) {
			case 'b':
				e = entry{base.MakeInternalKey(key, base.SeqNum(i+1), base.KindSetBlob), handle}
			case 'B':
				e = entry{base.MakeInternalKey(key, base.SeqNum(i+1), base.KindSetBlobTTL), append(make([]byte, base.ExpiryLen), handle...)}
			case 'd':
				e = entry{base.MakeInternalKey(key, base.SeqNum(i+1), base.KindDelete), nil}
			case 'e':
				e = entry{base.MakeInternalKey(key, base.SeqNum(i+1), base.KindSet), nil}
			default:
				e = entry{base.MakeInternalKey(key, base.SeqNum(i+1), base.KindSet), value}
			}
			entries = append(entries, e)
		}
		ownValue := func(e entry) bool {
			k := e.key.Kind().WithoutExpiry()
			return len(e.value) > 0 && k != base.KindSetBlob
		}
		for _, c := range []Compression{SnappyCompression, ZstdCompression} {
			for _, align := range []bool{false, true} {
				name := fmt.Sprintf("%s/%v/align=%v", tc.name, c, align)
				data := buildTable(t, entries, WriterOptions{Compression: c, BlockAlign: align})
				r := openTable(t, data, nil)
				l, err := r.Layout()
				if err != nil {
					t.Fatal(err)
				}
				next, prevOwn := 0, false
				for b, info := range l.Data {
					own := false
					for ; next < len(entries) && base.CompareInternal(entries[next].key, info.LastKey) <= 0; next++ {
						own = own || ownValue(entries[next])
					}
					switch {
					case own && info.Compression != c:
						t.Errorf("%s: block %d holds a value of its own, stored %v", name, b, info.Compression)
					case !own && !prevOwn && info.Compression != NoCompression:
						t.Errorf("%s: block %d holds handles and empty values alone, stored %v", name, b, info.Compression)
					}
					prevOwn = own
				}
				if next != len(entries) {
					t.Fatalf("%s: blocks end at entry %d of %d", name, next, len(entries))
				}
				it := r.NewIterator()
				i := 0
				for ok := it.First(); ok; ok = it.Next() {
					if i >= len(entries) || base.CompareInternal(it.Key(), entries[i].key) != 0 || !bytes.Equal(it.Value(), entries[i].value) {
						t.Fatalf("%s: entry %d reads back as %v", name, i, it.Key())
					}
					i++
				}
				if err := it.Close(); err != nil || i != len(entries) {
					t.Fatalf("%s: read %d entries of %d, %v", name, i, len(entries), err)
				}
			}
		}
	}
}

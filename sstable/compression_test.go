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

package sstable

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/golden"
)

// goldenEntries are the entries of the golden tables: 240 of them, the
// first half with text values every compression shrinks, the second with
// random values none does, so that a compressing writer stores blocks both
// compressed and, falling back, as given.
func goldenEntries() []entry {
	rng := rand.New(rand.NewPCG(57, 57))
	var out []entry
	for i := range 240 {
		v := make([]byte, 40+rng.IntN(80))
		for j := range v {
			if i < 120 {
				v[j] = "bloomkv golden value "[(i+j)%21]
			} else {
				v[j] = byte(rng.Uint32())
			}
		}
		out = append(out, entry{base.MakeInternalKey([]byte(fmt.Sprintf("key%05d", i)), base.SeqNum(i+1), base.KindSet), v})
	}
	return out
}

// TestGoldenTables pins the bytes the writer produces: the same entries
// written with each compression, aligned or not, are byte for byte the
// tables in testdata/golden-*.sst, which read back every entry; one of
// them carries a paged filter. A zstd
// block is a frame with zstd's content checksum (the trailer's CRC covers
// it as well), and a block that does not shrink by an eighth is stored as
// given: each golden table has both kinds of block. A new version of the
// compression library that encodes differently fails here; rewrite the
// files (go test -run TestGoldenTables -update) only after checking that
// the old ones still read.
func TestGoldenTables(t *testing.T) {
	entries := goldenEntries()
	for _, tc := range []struct {
		name string
		opts WriterOptions
	}{
		{"none", WriterOptions{BlockSize: 512, Compression: NoCompression, Filter: Bloom(10)}},
		{"snappy", WriterOptions{BlockSize: 512, Compression: SnappyCompression, Filter: Bloom(10)}},
		{"zstd", WriterOptions{BlockSize: 512, Compression: ZstdCompression, Filter: Bloom(10)}},
		{"zstd-aligned", WriterOptions{BlockSize: 4096, Compression: ZstdCompression, Filter: Bloom(10), BlockAlign: true}},
		// A paged filter's page after the properties.
		{"snappy-paged", WriterOptions{BlockSize: 512, Compression: SnappyCompression, Filter: Bloom(2), PagedFilterBits: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := buildTable(t, entries, tc.opts)
			path := filepath.Join("testdata", "golden-"+tc.name+".sst")
			golden.Check(t, path, data)
			if err := readAll(t, data, entries, path); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			l, err := openTable(t, data, nil).Layout()
			if err != nil {
				t.Fatal(err)
			}
			stored := map[Compression]int{}
			for _, b := range l.Data {
				stored[b.Compression]++
				// The frame header descriptor's bit 2: zstd's checksum.
				if b.Compression == ZstdCompression && data[b.Offset+4]&0x04 == 0 {
					t.Fatalf("%s: the zstd block at %d has no content checksum", path, b.Offset)
				}
			}
			if tc.opts.Compression != NoCompression && (stored[tc.opts.Compression] == 0 || stored[NoCompression] == 0) {
				t.Fatalf("%s: data blocks stored as %v; want some %v and some none", path, stored, tc.opts.Compression)
			}
		})
	}
}

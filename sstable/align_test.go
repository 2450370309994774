package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// benchLikeEntries returns n entries shaped like the peers runner's: 16-byte
// decimal keys and 100-byte values cut from a buffer half random bytes
// below 0x80 and half repeats, so that they compress to about half.
func benchLikeEntries(n int) []entry {
	rng := rand.New(rand.NewPCG(21, 21))
	src := make([]byte, 1<<16)
	for i := range src {
		if i%100 < 50 {
			src[i] = byte(rng.IntN(0x80))
		} else {
			src[i] = src[i-50]
		}
	}
	out := make([]entry, n)
	for i := range out {
		off := rng.IntN(len(src) - 100)
		out[i] = entry{base.MakeInternalKey(fmt.Appendf(nil, "%016d", 2*i), base.SeqNum(i+1), base.KindSet), src[off : off+100]}
	}
	return out
}

// blockEntries counts the entries of data block i.
func blockEntries(t *testing.T, r *Reader, i int) int {
	t.Helper()
	raw, err := r.readBlock(r.index.handle(i), "data")
	if err != nil {
		t.Fatal(err)
	}
	var it blockIter
	must(t, it.init(raw, base.CompareEncoded))
	n := 0
	for ok := it.first(); ok; ok = it.nextEntry() {
		n++
	}
	return n
}

// TestAlignedBlocks writes tables under BlockAlign and checks, against the
// rule stated independently of alignedStart, that every block that fits in
// a page lies in one page, that padding appears only before such a block
// that would otherwise cross a boundary and reaches exactly that boundary,
// that a block of more than one entry fits in a page (the cut), and that
// every entry reads back through Get and scans.
func TestAlignedBlocks(t *testing.T) {
	// Under -race a quarter of the entries: still a dozen blocks a table or more.
	n := sizeFor(4, 1)
	random := randomEntries(rand.New(rand.NewPCG(20, 20)), 1000*n, 64, 9000)
	bench := benchLikeEntries(5_000 * n)
	for _, tc := range []struct {
		name      string
		entries   []entry
		blockSize int
	}{
		{"random/4096", random, 4096},
		{"random/1024", random, 1024},
		{"bench/4096", bench, 4096},
		{"bench/1500", bench, 1500},
	} {
		for _, c := range compressions {
			t.Run(tc.name+"/"+c.String(), func(t *testing.T) {
				data, props := buildTableWithRangeDels(t, tc.entries, nil, WriterOptions{BlockSize: tc.blockSize, Compression: c, Filter: Bloom(10), BlockAlign: true})
				if err := readAll(t, data, tc.entries, "aligned"); err != nil {
					t.Fatal(err)
				}
				r := openTable(t, data, nil)
				l, err := r.Layout()
				if err != nil {
					t.Fatal(err)
				}
				if l.FormatVersion != formatVersion3 || l.BlockAlign != 4096 || props.BlockAlign != 4096 {
					t.Fatalf("format version %d, alignment %d (properties %d); want 3, 4096", l.FormatVersion, l.BlockAlign, props.BlockAlign)
				}
				const page = 4096
				var end, padding uint64
				for i, b := range l.Data {
					n := b.Length + blockTrailerLen
					if b.Offset != end+b.Padding {
						t.Fatalf("block %d at %d, the previous ends at %d with padding %d", i, b.Offset, end, b.Padding)
					}
					crosses := end%page+n > page
					if b.Padding > 0 && (n > page || !crosses || b.Offset%page != 0 || 4*b.Padding > n) {
						t.Fatalf("block %d of %d bytes padded by %d from %d", i, n, b.Padding, end)
					}
					// Not padded though it fits: the padding would have
					// been more than a quarter of it.
					if n <= page && b.Offset/page != (b.Offset+n-1)/page && 4*(page-end%page) <= n {
						t.Fatalf("block %d [%d, +%d) fits in a page but crosses one", i, b.Offset, n)
					}
					if c != NoCompression && b.RawLength > uint64(tc.blockSize+tc.blockSize/4)+maxEntryLen(tc.entries) {
						t.Fatalf("block %d of %d raw bytes passes BlockSize %d by more than a quarter and an entry", i, b.RawLength, tc.blockSize)
					}
					if n > page && blockEntries(t, r, i) > 1 {
						t.Fatalf("block %d of %d entries takes %d bytes, more than a page", i, blockEntries(t, r, i), n)
					}
					if tc.blockSize < page && b.RawLength > uint64(tc.blockSize)+maxEntryLen(tc.entries) {
						t.Fatalf("block %d of %d raw bytes passes BlockSize %d by more than an entry", i, b.RawLength, tc.blockSize)
					}
					padding += b.Padding
					end = b.Offset + n
				}
				if padding != l.Padding || padding != props.DataPadding {
					t.Fatalf("padding %d, Layout says %d, the properties %d", padding, l.Padding, props.DataPadding)
				}
				t.Logf("%d blocks, mean %d stored bytes, padding %.2f%% of the data", len(l.Data), props.DataBytes/props.DataBlocks, 100*float64(padding)/float64(props.DataBytes))
			})
		}
	}
}

// maxEntryLen is the most bytes an entry of entries takes in a block.
func maxEntryLen(entries []entry) uint64 {
	var n int
	for _, e := range entries {
		n = max(n, e.key.EncodedLen()+len(e.value)+3*binary.MaxVarintLen32+4)
	}
	return uint64(n)
}

// TestAlignedFill checks how full aligned pages are where the entries are
// small: uncompressed, a block is cut only when the next entry would not
// fit, so each padding is less than an entry (and its restart), a few
// percent of the data; compressed, a block holds at most a quarter past
// BlockSize before compression and is padded only by up to a quarter of
// itself, so that padding is at most a quarter of the data.
func TestAlignedFill(t *testing.T) {
	entries := benchLikeEntries(sizeFor(50_000, 12_500))
	limit := maxEntryLen(entries)
	for _, c := range compressions {
		t.Run(c.String(), func(t *testing.T) {
			data, props := buildTableWithRangeDels(t, entries, nil, WriterOptions{Compression: c, BlockAlign: true})
			l, err := openTable(t, data, nil).Layout()
			if err != nil {
				t.Fatal(err)
			}
			share := float64(props.DataPadding) / float64(props.DataBytes)
			t.Logf("%d blocks of %d bytes on average; padding %.2f%%", props.DataBlocks, props.DataBytes/props.DataBlocks, 100*share)
			for i, b := range l.Data {
				if c == NoCompression && b.Padding > limit {
					t.Fatalf("block %d padded by %d bytes, more than an entry (%d)", i, b.Padding, limit)
				}
				if 4*b.Padding > b.Length+blockTrailerLen {
					t.Fatalf("block %d of %d bytes padded by %d, more than a quarter of it", i, b.Length, b.Padding)
				}
			}
			if c == NoCompression && share > 0.05 {
				t.Fatalf("padding %.2f%% of the data, want under 5%%", 100*share)
			}
		})
	}
}

// TestAlignedPaddingUnread flips bytes of a small aligned table: the first
// and last of each run of padding, every byte from the index on (which
// places the blocks), and every 64th byte elsewhere (TestEveryByteFlipDetected
// and TestEveryFilterByteFlipDetected flip each of those in unaligned
// tables). A flip in padding changes no answer (no read
// interprets padding: Gets and scans return every entry right) and Layout
// reports it as corruption at its offset; a flip anywhere else is
// corruption, as in every table.
func TestAlignedPaddingUnread(t *testing.T) {
	// Random values: blocks stored uncompressed under every compression,
	// filling their pages, so that the tables have padding.
	entries := benchLikeEntries(100)
	rng := rand.New(rand.NewPCG(22, 22))
	for i := range entries {
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		entries[i].value = v
	}
	for _, c := range compressions {
		data := buildTable(t, entries, WriterOptions{Compression: c, Filter: Bloom(10), BlockAlign: true})
		l, err := openTable(t, data, nil).Layout()
		if err != nil {
			t.Fatal(err)
		}
		if l.Padding == 0 {
			t.Fatalf("%v: no padding to test", c)
		}
		inPadding := make([]bool, len(data))
		flip := make([]bool, len(data))
		var end uint64
		for _, b := range l.Data {
			for i := end; i < b.Offset; i++ {
				inPadding[i] = true
			}
			if end < b.Offset {
				flip[end], flip[b.Offset-1] = true, true
			}
			end = b.Offset + b.Length + blockTrailerLen
		}
		for i := range data {
			flip[i] = flip[i] || uint64(i) >= l.Index.Offset || i%64 == 0
		}
		for i := range data {
			if !flip[i] {
				continue
			}
			damaged := bytes.Clone(data)
			damaged[i] ^= 0x5a
			what := c.String() + " flip of byte " + itoa(i)
			err := readAll(t, damaged, entries, what)
			if !inPadding[i] {
				checkCorruption(t, err, what)
				continue
			}
			if err != nil {
				t.Fatalf("%s, in padding: %v", what, err)
			}
			r, err := Open(bytes.NewReader(damaged), int64(len(damaged)), ReaderOptions{FileName: "000001.sst"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Layout()
			checkCorruption(t, err, what+" (Layout)")
			if ce := err.(*base.CorruptionError); ce.Offset != int64(i) {
				t.Fatalf("%s: Layout reports offset %d", what, ce.Offset)
			}
		}
	}
}

// TestAlignmentNeedsVersion3 checks that alignment and format version 3 go
// together: an aligned table relabelled version 1 or 2, or an unaligned
// one without a range filter relabelled 3, or one without index
// partitions relabelled 4, is refused as corrupt, and a version beyond 4
// is refused by name; a range filter makes a table
// version 3 aligned or not, and both kinds open.
func TestAlignmentNeedsVersion3(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(23, 23)), 200, 8, 300)
	aligned := buildTable(t, entries, WriterOptions{BlockAlign: true})
	plain := buildTable(t, entries, WriterOptions{})
	if footerVersion(plain) != formatVersion1 || footerVersion(aligned) != formatVersion3 {
		t.Fatalf("versions %d and %d, want 1 and 3", footerVersion(plain), footerVersion(aligned))
	}
	withRangeDels, _ := buildTableWithRangeDels(t, entries, testRangeDels(), WriterOptions{BlockAlign: true})
	if footerVersion(withRangeDels) != formatVersion3 {
		t.Fatalf("aligned table with range tombstones: version %d, want 3", footerVersion(withRangeDels))
	}
	if got := openTable(t, withRangeDels, nil).RangeDels().String(); got != testRangeDels().String() {
		t.Fatalf("RangeDels = %s, want %s", got, testRangeDels())
	}
	for _, align := range []bool{false, true} {
		data := buildTable(t, entries, WriterOptions{BlockAlign: align, RangeFilterBits: 16})
		if footerVersion(data) != formatVersion3 {
			t.Fatalf("range filter, aligned %v: version %d, want 3", align, footerVersion(data))
		}
		r := openTable(t, data, nil)
		if r.RangeFilter() == nil || (r.Properties().BlockAlign != 0) != align {
			t.Errorf("range filter, aligned %v: filter %v, properties' alignment %d", align, r.RangeFilter(), r.Properties().BlockAlign)
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"aligned as version 1", relabel(aligned, 1)},
		{"aligned as version 2", relabel(aligned, 2)},
		{"unaligned as version 3", relabel(plain, 3)},
		{"aligned, unpartitioned as version 4", relabel(aligned, 4)},
		{"version 5", relabel(aligned, 5)},
	} {
		_, err := Open(bytes.NewReader(tc.data), int64(len(tc.data)), ReaderOptions{FileName: "000001.sst"})
		checkCorruption(t, err, tc.name)
	}
}

// TestOldFormatsRead reads tables that the writer before alignment wrote
// (testdata: format versions 1 and 2, from randomEntries(seed 17, 300, 12,
// 300), 1 KiB snappy blocks and a Bloom filter, the second also with
// testRangeDels uncompressed), and one with the same entries and
// tombstones and an index in 64-byte partitions (format version 4): every
// entry and tombstone reads back.
func TestOldFormatsRead(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(17, 17)), 300, 12, 300)
	for _, tc := range []struct {
		file      string
		version   uint32
		rangeDels RangeTombstones
	}{
		{"testdata/format-v1.sst", 1, nil},
		{"testdata/format-v2.sst", 2, testRangeDels()},
		{"testdata/format-v4.sst", 4, testRangeDels()},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if v := footerVersion(data); v != tc.version {
			t.Fatalf("%s: version %d, want %d", tc.file, v, tc.version)
		}
		if err := readAll(t, data, entries, tc.file); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		r := openTable(t, data, nil)
		if got := r.RangeDels().String(); got != tc.rangeDels.String() {
			t.Fatalf("%s: RangeDels = %s, want %s", tc.file, got, tc.rangeDels)
		}
		if l, err := r.Layout(); err != nil || l.BlockAlign != 0 || l.Padding != 0 {
			t.Fatalf("%s: Layout alignment %d, padding %d, %v", tc.file, l.BlockAlign, l.Padding, err)
		}
	}
}

package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// buildTableWithRangeDels writes entries and the range tombstones rd to a
// table in memory and returns it with its properties.
func buildTableWithRangeDels(t testing.TB, entries []entry, rd RangeTombstones, opts WriterOptions) ([]byte, Properties) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetRangeDels(rd); err != nil {
		t.Fatal(err)
	}
	props, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), props
}

func footerVersion(data []byte) uint32 {
	return binary.LittleEndian.Uint32(data[len(data)-footerLen+48:])
}

func testRangeDels() RangeTombstones {
	return rangedel.Build([]rangedel.Tombstone{
		{Start: []byte("b"), End: []byte("f"), Seq: 900},
		{Start: []byte("d"), End: []byte("zz"), Seq: 950},
		{Start: []byte("\x00"), End: []byte("\x01"), Seq: 3},
	})
}

// TestRangeDelsRoundTrip writes tables with and without range tombstones:
// the tombstones come back from Open as written, the bounds and seqnum
// range widen to them, a table with none keeps format version 1 (what
// every older reader reads) and one with some is version 2.
func TestRangeDelsRoundTrip(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(4, 4)), 200, 8, 16)
	tests := []struct {
		name    string
		entries []entry
		rd      RangeTombstones
	}{
		{"points only", entries, nil},
		{"points and range tombstones", entries, testRangeDels()},
		{"range tombstones only", nil, testRangeDels()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, props := buildTableWithRangeDels(t, tt.entries, tt.rd, WriterOptions{BlockSize: 256, Filter: Bloom(10)})
			r := openTable(t, data, nil)
			if got, want := r.RangeDels().String(), tt.rd.String(); got != want {
				t.Fatalf("RangeDels = %s, want %s", got, want)
			}
			wantVersion := uint32(formatVersion1)
			if len(tt.rd) > 0 {
				wantVersion = formatVersion2
			}
			if v := footerVersion(data); v != wantVersion {
				t.Errorf("format version %d, want %d", v, wantVersion)
			}
			if l, err := r.Layout(); err != nil || l.RangeDels.BlockHandle != props.RangeDelBlock || l.FormatVersion != wantVersion {
				t.Errorf("Layout: range deletions %+v, version %d (%v); want %+v, %d", l.RangeDels, l.FormatVersion, err, props.RangeDelBlock, wantVersion)
			}
			if props.RangeDels != uint64(tt.rd.Count()) || r.Properties().RangeDels != props.RangeDels {
				t.Errorf("RangeDels property %d (read back %d), want %d", props.RangeDels, r.Properties().RangeDels, tt.rd.Count())
			}
			// The bounds hold every entry's key and every key a
			// tombstone covers.
			for _, e := range tt.entries {
				if base.CompareInternal(e.key, props.Smallest) < 0 || base.CompareInternal(e.key, props.Largest) > 0 {
					t.Fatalf("entry %v outside the bounds %v – %v", e.key, props.Smallest, props.Largest)
				}
			}
			for _, f := range tt.rd {
				if bytes.Compare(f.Start, props.Smallest.UserKey) < 0 || bytes.Compare(rangedel.LastCovered(f.End), props.Largest.UserKey) > 0 {
					t.Fatalf("tombstone [%q, %q) outside the bounds %v – %v", f.Start, f.End, props.Smallest, props.Largest)
				}
				lo, hi := tt.rd.SeqRange()
				if props.SmallestSeqNum > lo || props.LargestSeqNum < hi {
					t.Fatalf("seqnums %d–%d do not hold the tombstones' %d–%d", props.SmallestSeqNum, props.LargestSeqNum, lo, hi)
				}
			}
			// Points read as before: the tombstones are the caller's to
			// apply, not Get's, unless the lookup says it is covered.
			for _, e := range tt.entries {
				if _, ok := modelGet(tt.entries, e.key.UserKey, e.key.SeqNum()); !ok {
					continue
				}
				_, _, found, err := r.Get(MakeLookupKey(e.key.UserKey, e.key.SeqNum()), nil)
				if err != nil || !found {
					t.Fatalf("Get(%v) = %v, %v", e.key, found, err)
				}
				lk := MakeLookupKey(e.key.UserKey, e.key.SeqNum())
				lk.Covered = e.key.SeqNum()
				var stats LookupStats
				if _, _, found, err := r.Get(lk, &stats); err != nil || found || (!stats.FilterNegative && !stats.KeyPresent) {
					t.Fatalf("Get(%v) covered at its own seqnum = %v, %v, present %v; want not found", e.key, found, err, stats.KeyPresent)
				}
			}
		})
	}
}

// TestRangeDelBlockEveryBitFlip flips every bit of the range-deletion
// block and its trailer in turn: Open must fail with a corruption error
// naming the file and the block's offset.
func TestRangeDelBlockEveryBitFlip(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(5, 5)), 40, 8, 16)
	data, props := buildTableWithRangeDels(t, entries, testRangeDels(), WriterOptions{BlockSize: 256, Filter: Bloom(10)})
	h := props.RangeDelBlock
	if h.Length == 0 {
		t.Fatal("no range-deletion block")
	}
	checkBlockBitFlips(t, "range deletions", data, h)
	// A version-2 footer on a table without the block, and a version-1
	// footer on one with it, are damage too.
	for _, tt := range []struct {
		name string
		data []byte
		to   uint32
	}{
		{"v1 table relabelled v2", buildTable(t, entries, WriterOptions{BlockSize: 256}), formatVersion2},
		{"v2 table relabelled v1", data, formatVersion1},
	} {
		bad := relabel(tt.data, tt.to)
		if _, err := Open(bytes.NewReader(bad), int64(len(bad)), ReaderOptions{FileName: "000001.sst"}); !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: %v, want corruption", tt.name, err)
		}
	}
}

// checkBlockBitFlips flips every bit of block h of the table data, and of
// its trailer, in turn: Open must fail each time with a corruption error
// naming the file (000001.sst) and the block's offset.
func checkBlockBitFlips(t *testing.T, name string, data []byte, h BlockHandle) {
	t.Helper()
	for off := h.Offset; off < h.Offset+h.Length+blockTrailerLen; off++ {
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[off] ^= 1 << bit
			_, err := Open(bytes.NewReader(bad), int64(len(bad)), ReaderOptions{FileName: "000001.sst", FileNum: 1})
			var ce *base.CorruptionError
			if !errors.Is(err, ErrCorruption) || !errors.As(err, &ce) || ce.File != "000001.sst" || ce.Offset != int64(h.Offset) {
				t.Fatalf("%s: bit %d of byte %d flipped: %v; want a corruption error in 000001.sst at offset %d", name, bit, off, err, h.Offset)
			}
		}
	}
}

// relabel returns data with its footer's format version set to v and the
// footer's checksum recomputed, as a writer of that version would have.
func relabel(data []byte, v uint32) []byte {
	bad := bytes.Clone(data)
	f := bad[len(bad)-footerLen:]
	binary.LittleEndian.PutUint32(f[48:], v)
	binary.LittleEndian.PutUint32(f[52:], crc32.Checksum(f[:52], castagnoli))
	return bad
}

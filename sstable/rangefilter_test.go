package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/rangefilter"
)

// decimalEntries returns one Set per user key of n keys "k%08d" spaced
// step apart, as the bench writes them, sorted.
func decimalEntries(n, step int) []entry {
	out := make([]entry, n)
	for i := range out {
		out[i] = entry{base.MakeInternalKey(fmt.Appendf(nil, "k%08d", i*step), base.SeqNum(i+1), base.KindSet), []byte("v")}
	}
	return out
}

// userKeys returns the distinct user keys of sorted entries.
func userKeys(entries []entry) [][]byte {
	var keys [][]byte
	for _, e := range entries {
		if len(keys) == 0 || !bytes.Equal(keys[len(keys)-1], e.key.UserKey) {
			keys = append(keys, e.key.UserKey)
		}
	}
	return keys
}

// TestRangeFilterRoundTrip writes tables with and without range filters:
// a table with one is format version 3 with or without range tombstones,
// records the block in its properties and Layout, and its reader never
// rules out a range that holds a key (the oracle: the sorted keys); a
// table without keeps its old version and answers every range true.
func TestRangeFilterRoundTrip(t *testing.T) {
	random := randomEntries(rand.New(rand.NewPCG(21, 21)), 2000, 8, 8)
	tests := []struct {
		name    string
		entries []entry
		rd      RangeTombstones
		bits    float64
		version uint32
	}{
		{"decimal keys, 16 bits", decimalEntries(3000, 7), nil, 16, formatVersion3},
		{"decimal keys, range dels", decimalEntries(3000, 7), testRangeDels(), 10, formatVersion3},
		{"random keys, 8 bits", random, nil, 8, formatVersion3},
		{"no range filter", random, nil, 0, formatVersion1},
		{"range dels only", random, testRangeDels(), 0, formatVersion2},
		{"tombstones only, 16 bits", nil, testRangeDels(), 16, formatVersion2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, props := buildTableWithRangeDels(t, tt.entries, tt.rd, WriterOptions{BlockSize: 512, Filter: Bloom(10), RangeFilterBits: tt.bits})
			if got := footerVersion(data); got != tt.version {
				t.Fatalf("format version %d, want %d", got, tt.version)
			}
			r := openTable(t, data, nil)
			keys := userKeys(tt.entries)
			rf := r.RangeFilter()
			if tt.version != formatVersion3 {
				if rf != nil || props.RangeFilterBlock.Length != 0 || !r.MayContainRange([]byte("a"), []byte("b")) {
					t.Fatal("a table without a range filter has one, or rules a range out")
				}
				return
			}
			if rf == nil || rf.Keys() != uint64(len(keys)) || props.RangeFilterKeys != uint64(len(keys)) || props.RangeFilterFamily != GrafiteFamily {
				t.Fatalf("range filter %v, properties %+v; want one over %d keys", rf, props, len(keys))
			}
			if got := r.Properties(); got.RangeFilterBlock != props.RangeFilterBlock || got.RangeFilterBitsPer != props.RangeFilterBitsPer {
				t.Fatalf("read properties %+v, written %+v", got, props)
			}
			l, err := r.Layout()
			if err != nil || l.RangeFilter.BlockHandle != props.RangeFilterBlock || l.RangeFilter.RawLength != props.RangeFilterBlock.Length {
				t.Fatalf("layout %+v (%v), want the range filter at %+v", l.RangeFilter, err, props.RangeFilterBlock)
			}
			if len(tt.rd) > 0 && r.RangeDels().Count() != tt.rd.Count() {
				t.Fatalf("%d range tombstones, want %d", r.RangeDels().Count(), tt.rd.Count())
			}
			// Every range that holds a key answers true: a key and its
			// successor, and ranges from a key of random widths.
			rng := rand.New(rand.NewPCG(22, 22))
			for _, k := range keys {
				hi := append(bytes.Clone(k), 0)
				if !r.MayContainRange(k, hi) {
					t.Fatalf("[%q, %q) holds %q but is ruled out", k, hi, k)
				}
				lo := k[:rng.IntN(len(k)+1)]
				if !r.MayContainRange(lo, hi) {
					t.Fatalf("[%q, %q) holds %q but is ruled out", lo, hi, k)
				}
			}
			// Random ranges against the oracle: false only if no key is
			// in [lo, hi).
			for range 5000 {
				lo, hi := randomRangeKey(rng, tt.entries), randomRangeKey(rng, tt.entries)
				i, _ := slices.BinarySearchFunc(keys, lo, bytes.Compare)
				holds := i < len(keys) && bytes.Compare(keys[i], hi) < 0
				if holds && !r.MayContainRange(lo, hi) {
					t.Fatalf("[%q, %q) holds %q but is ruled out", lo, hi, keys[i])
				}
			}
		})
	}
}

// randomRangeKey returns a bound near the entries' keys: one of them, cut
// or extended by a byte.
func randomRangeKey(rng *rand.Rand, entries []entry) []byte {
	if len(entries) == 0 {
		return []byte{byte(rng.IntN(256))}
	}
	k := bytes.Clone(entries[rng.IntN(len(entries))].key.UserKey)
	switch rng.IntN(3) {
	case 0:
		return k[:rng.IntN(len(k)+1)]
	case 1:
		return append(k, byte(rng.IntN(256)))
	}
	return k
}

// TestRangeFilterSkipsEmptyRanges checks that the range filter rules out
// the empty short ranges it is for: of 2,000 ranges of 2 to 32 absent keys
// between the table's keys, at most 2% are answered true at 16 bits per
// key (the bound is 32/2^14 ≈ 0.2%; this table of keys 100 apart is
// exact, and answers none).
func TestRangeFilterSkipsEmptyRanges(t *testing.T) {
	data := buildTable(t, decimalEntries(5000, 100), WriterOptions{RangeFilterBits: 16})
	r := openTable(t, data, nil)
	rng := rand.New(rand.NewPCG(23, 23))
	falsePos := 0
	const ranges = 2000
	for range ranges {
		base := rng.IntN(5000)*100 + 1
		width := 2 + rng.IntN(31)
		lo, hi := fmt.Appendf(nil, "k%08d", base), fmt.Appendf(nil, "k%08d", base+width)
		if r.MayContainRange(lo, hi) {
			falsePos++
		}
	}
	if falsePos > ranges/50 {
		t.Fatalf("%d of %d empty ranges answered true", falsePos, ranges)
	}
	if n := testing.AllocsPerRun(100, func() { r.MayContainRange([]byte("k00000101"), []byte("k00000120")) }); n != 0 {
		t.Fatalf("MayContainRange allocates %v times", n)
	}
}

// TestRangeFilterBitsRejected: NewWriter refuses a setting the filter
// cannot build, naming the option.
func TestRangeFilterBitsRejected(t *testing.T) {
	for _, bits := range []float64{-1, 1, rangefilter.MaxBitsPerKey + 1} {
		_, err := NewWriter(new(bytes.Buffer), WriterOptions{RangeFilterBits: bits})
		var ae *rangefilter.ArgumentError
		if !errors.As(err, &ae) || !bytes.Contains([]byte(err.Error()), []byte("RangeFilterBits")) {
			t.Errorf("RangeFilterBits %v: %v, want an argument error naming RangeFilterBits", bits, err)
		}
	}
}

// rangeFilterTables are tables with range filters, with and without range
// tombstones, for the corruption tests.
func rangeFilterTables(t *testing.T) map[string][]byte {
	entries := decimalEntries(300, 13)
	plain := buildTable(t, entries, WriterOptions{BlockSize: 512, Filter: Bloom(10), RangeFilterBits: 12})
	withDels, _ := buildTableWithRangeDels(t, entries, testRangeDels(), WriterOptions{BlockSize: 512, RangeFilterBits: 12})
	return map[string][]byte{"range filter": plain, "range filter and range dels": withDels}
}

// TestRangeFilterBlockEveryBitFlip flips every bit of each range-filter
// block and its trailer in turn: Open must fail with a corruption error
// naming the file and the block's offset. Relabelling the footer's version
// either way is damage too.
func TestRangeFilterBlockEveryBitFlip(t *testing.T) {
	for name, data := range rangeFilterTables(t) {
		h := openTable(t, data, nil).Properties().RangeFilterBlock
		checkBlockBitFlips(t, name, data, h)
		for _, v := range []uint32{formatVersion1, formatVersion2} {
			bad := relabel(data, v)
			if _, err := Open(bytes.NewReader(bad), int64(len(bad)), ReaderOptions{FileName: "000001.sst"}); !errors.Is(err, ErrCorruption) {
				t.Errorf("%s relabelled version %d: %v, want corruption", name, v, err)
			}
		}
	}
	bad := relabel(buildTable(t, decimalEntries(50, 1), WriterOptions{}), formatVersion3)
	if _, err := Open(bytes.NewReader(bad), int64(len(bad)), ReaderOptions{FileName: "000001.sst"}); !errors.Is(err, ErrCorruption) {
		t.Errorf("v1 table relabelled version 3: %v, want corruption", err)
	}
}

// BenchmarkWriteRangeFilter writes a table of 100,000 entries as a flush
// does (snappy, a 10-bit Bloom filter) without a range filter and with
// one of 16 bits per key, over two key shapes: the bench's decimal keys
// (2i, 16 digits: an exact filter) and random letters (hashed). ns/key is
// the whole table's cost per key: the two forms' difference is the range
// filter's build cost per key.
func BenchmarkWriteRangeFilter(b *testing.B) {
	decimal := make([]entry, 100_000)
	for i, e := range benchEntries() {
		decimal[i] = entry{base.MakeInternalKey(fmt.Appendf(nil, "%016d", 2*i), base.SeqNum(i+1), base.KindSet), e.value}
	}
	for _, keys := range []struct {
		name    string
		entries []entry
	}{{"decimal", decimal}, {"random", benchEntries()}} {
		for _, bits := range []float64{0, 16} {
			b.Run(fmt.Sprintf("%s/bits=%g", keys.name, bits), func(b *testing.B) {
				opts := WriterOptions{Compression: SnappyCompression, Filter: Bloom(10), RangeFilterBits: bits}
				for b.Loop() {
					buildTable(b, keys.entries, opts)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys.entries)), "ns/key")
			})
		}
	}
}

package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/bytealg"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/race"
)

// partitionedCases are tables written with partitioned indexes, from one
// partition per data block (a size of 1) to a few blocks a partition, with
// the features a table can have besides.
var partitionedCases = []struct {
	name      string
	opts      WriterOptions
	rangeDels bool
}{
	{"a partition per block", WriterOptions{BlockSize: 256, IndexPartitionSize: 1}, false},
	{"tiny, snappy, bloom", WriterOptions{BlockSize: 256, IndexPartitionSize: 100, Compression: SnappyCompression, Filter: Bloom(10)}, false},
	{"aligned, range filter, ribbon", WriterOptions{BlockSize: 256, IndexPartitionSize: 300, BlockAlign: true, RangeFilterBits: 16, Filter: Ribbon(8)}, false},
	{"range tombstones, zstd, fuse", WriterOptions{BlockSize: 512, IndexPartitionSize: 200, Compression: ZstdCompression, Filter: Fuse(8)}, true},
}

// buildPartitioned writes entries with the case's options, and again
// without partitions, and checks that the first is partitioned.
func buildPartitioned(t *testing.T, entries []entry, opts WriterOptions, rangeDels bool) (part, plain []byte) {
	t.Helper()
	var rd RangeTombstones
	if rangeDels {
		rd = testRangeDels()
	}
	part, props := buildTableWithRangeDels(t, entries, rd, opts)
	opts.IndexPartitionSize = 0
	plain, _ = buildTableWithRangeDels(t, entries, rd, opts)
	if props.IndexPartitions < 2 || footerVersion(part) != formatVersion4 {
		t.Fatalf("%d partitions, format version %d: want a partitioned table", props.IndexPartitions, footerVersion(part))
	}
	return part, plain
}

// TestPartitionedIndexRoundTrip reads partitioned tables through every
// path against the sorted entries (the oracle), and against the same
// entries written unpartitioned: Get of every version, of every user key's
// newest and below its oldest, and of absent keys; the batch Get; a scan
// in both directions; SeekGE and SeekLT at every data block's last key,
// between blocks and at random keys; the estimate's block spans; the
// layout. Each table is read with partitions through a block cache,
// without one, and pinned.
func TestPartitionedIndexRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 53))
	entries := randomEntries(rng, sizeFor(3000, 800), 12, 200)
	for _, tc := range partitionedCases {
		data, plainData := buildPartitioned(t, entries, tc.opts, tc.rangeDels)
		plain, _ := openWith(t, plainData, ReaderOptions{})
		plainLayout, err := plain.Layout()
		if err != nil {
			t.Fatal(err)
		}
		targets := seekTargets(rng, entries, plainLayout)
		for _, ro := range []struct {
			name string
			opts ReaderOptions
		}{
			{"cache", ReaderOptions{Cache: cache.New(1 << 20)}},
			{"no cache", ReaderOptions{}},
			{"pinned", ReaderOptions{PinIndexPartitions: true}},
		} {
			name := tc.name + ", " + ro.name
			r, _ := openWith(t, data, ro.opts)
			checkGets(t, name, r, entries, targets)
			checkScans(t, name, r, entries, targets)
			for _, k := range targets {
				ps, pe := r.blockSpanAt(k)
				qs, qe := plain.blockSpanAt(k)
				if ps != qs || pe != qe {
					t.Fatalf("%s: the block a seek to %q lands in spans [%d, %d), unpartitioned [%d, %d)", name, k, ps, pe, qs, qe)
				}
			}
			if got := r.EstimateDiskUsage(nil, nil); got != uint64(len(data)) {
				t.Fatalf("%s: EstimateDiskUsage(nil, nil) = %d, want the file's %d", name, got, len(data))
			}
			l, err := r.Layout()
			if err != nil {
				t.Fatalf("%s: Layout: %v", name, err)
			}
			if !reflect.DeepEqual(l.Data, plainLayout.Data) || uint64(len(l.IndexPartitions)) != r.Properties().IndexPartitions || l.FormatVersion != formatVersion4 {
				t.Fatalf("%s: Layout's data blocks differ from the unpartitioned table's, or %d partitions, version %d", name, len(l.IndexPartitions), l.FormatVersion)
			}
			var indexBytes uint64
			for _, p := range append(l.IndexPartitions, l.Index) {
				indexBytes += p.Length
			}
			if indexBytes != r.Properties().IndexBytes {
				t.Fatalf("%s: partitions and top level take %d bytes, IndexBytes says %d", name, indexBytes, r.Properties().IndexBytes)
			}
		}
	}
}

// seekTargets returns user keys to look up and seek to: every data block's
// last user key, just past it and just before it (between blocks, and at a
// partition's boundary wherever one falls), every entry's, and random
// keys, mostly absent.
func seekTargets(rng *rand.Rand, entries []entry, l Layout) [][]byte {
	var out [][]byte
	for _, b := range l.Data {
		k := b.LastKey.UserKey
		out = append(out, k, append(bytes.Clone(k), 0))
		if n := len(k); n > 0 && k[n-1] > 0 {
			out = append(out, append(bytes.Clone(k[:n-1]), k[n-1]-1, 0xff))
		}
	}
	for _, e := range entries {
		out = append(out, e.key.UserKey)
	}
	for range 500 {
		k := make([]byte, rng.IntN(14))
		for i := range k {
			k[i] = byte('a' + rng.IntN(5))
		}
		out = append(out, k)
	}
	return append(out, nil, []byte{0xff, 0xff})
}

// checkGets checks Get and the batch Get against the entries: every
// version at its own seqnum, each target at the newest seqnum and at 0
// (below every version: not found, but present if the table has the key).
func checkGets(t *testing.T, name string, r *Reader, entries []entry, targets [][]byte) {
	t.Helper()
	check := func(k LookupKey) {
		want, found := modelGet(entries, k.UserKey, k.Seq)
		present := slices.ContainsFunc(entries, func(e entry) bool { return bytes.Equal(e.key.UserKey, k.UserKey) })
		var stats LookupStats
		v, kind, ok, err := r.Get(k, &stats)
		if err != nil || ok != found || ok && (kind != want.key.Kind() || !bytes.Equal(v, want.value)) {
			t.Fatalf("%s: Get(%q, %d) = %v, %v, %v, want %v, %v", name, k.UserKey, k.Seq, ok, kind, err, found, want.key)
		}
		if stats.KeyPresent != present {
			t.Fatalf("%s: Get(%q, %d): KeyPresent %v, want %v", name, k.UserKey, k.Seq, stats.KeyPresent, present)
		}
		var bstats LookupStats
		loc, maybe, err := r.Locate(k, &bstats)
		if err != nil {
			t.Fatalf("%s: Locate(%q): %v", name, k.UserKey, err)
		}
		if !maybe {
			if found || present {
				t.Fatalf("%s: Locate ruled out %q, which the table holds", name, k.UserKey)
			}
			return
		}
		b, _, err := r.LoadBlock(loc, &bstats, false)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.GetLocated(b, k, loc)
		b.Release()
		if err != nil || res.Found != found || found && !bytes.Equal(res.Value, want.value) || res.KeyPresent != present {
			t.Fatalf("%s: GetLocated(%q, %d) = %+v, %v, want found %v, present %v", name, k.UserKey, k.Seq, res, err, found, present)
		}
	}
	for _, e := range entries {
		check(LookupKey{UserKey: e.key.UserKey, Hash: MakeLookupKey(e.key.UserKey, 0).Hash, Seq: e.key.SeqNum()})
	}
	for _, k := range targets {
		check(MakeLookupKey(k, base.SeqNumMax))
		check(MakeLookupKey(k, 0))
	}
}

// checkScans checks a full scan in both directions, and SeekGE and SeekLT
// at every target, each followed by a few steps in its direction and back.
func checkScans(t *testing.T, name string, r *Reader, entries []entry, targets [][]byte) {
	t.Helper()
	it := r.NewIterator()
	defer it.Close()
	at := func(ok bool, i int, what string) {
		t.Helper()
		if it.Error() != nil {
			t.Fatalf("%s: %s: %v", name, what, it.Error())
		}
		if want := i >= 0 && i < len(entries); ok != want || ok && (base.CompareInternal(it.Key(), entries[i].key) != 0 || !bytes.Equal(it.Value(), entries[i].value)) {
			t.Fatalf("%s: %s: at entry %d (valid %v), want %d", name, what, i, ok, i)
		}
	}
	i := 0
	for ok := it.First(); i < len(entries); ok = it.Next() {
		at(ok, i, "forward scan")
		i++
	}
	at(it.Next(), len(entries), "past the end")
	i = len(entries) - 1
	for ok := it.Last(); i >= 0; ok = it.Prev() {
		at(ok, i, "backward scan")
		i--
	}
	at(it.Prev(), -1, "before the start")
	for _, k := range targets {
		ge, _ := slices.BinarySearchFunc(entries, k, func(e entry, k []byte) int { return bytes.Compare(e.key.UserKey, k) })
		ok := it.SeekGE(k)
		at(ok, ge, fmt.Sprintf("SeekGE(%q)", k))
		for j := 1; ok && j <= 3; j++ {
			ok = it.Next()
			at(ok, ge+j, fmt.Sprintf("SeekGE(%q) then Next ×%d", k, j))
		}
		ok = it.SeekLT(k)
		at(ok, ge-1, fmt.Sprintf("SeekLT(%q)", k))
		for j := 1; ok && j <= 3; j++ {
			ok = it.Prev()
			at(ok, ge-1-j, fmt.Sprintf("SeekLT(%q) then Prev ×%d", k, j))
		}
	}
}

// TestPartitionedIndexMemory checks what a partitioned table pins against
// the formula: the unpartitioned table pins its index as blockIndex lays
// it out — the last keys' common prefix once, their rests, 8 bytes per
// data block (2 more when aligned) — and the partitioned one the same
// layout over the partitions' last keys, plus 12 bytes per partition and
// 4 (the data blocks before each, and where its data ends). The
// partitions, cut where the writer's rule cuts them (after the entry that
// takes a partition's block to IndexPartitionSize), are derived here from
// the data blocks' handles and last keys. Pinned, the partitioned table
// pins what the unpartitioned one does.
func TestPartitionedIndexMemory(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(54, 54)), 3000, 12, 200)
	for _, tc := range partitionedCases {
		data, plainData := buildPartitioned(t, entries, tc.opts, tc.rangeDels)
		plain, plainMem := openWith(t, plainData, ReaderOptions{})
		r, partMem := openWith(t, data, ReaderOptions{})
		pinned, pinnedMem := openWith(t, data, ReaderOptions{PinIndexPartitions: true})
		l, err := r.Layout()
		if err != nil {
			t.Fatal(err)
		}
		var (
			blockKeys, partKeys [][]byte
			part                blockWriter
			size                = tc.opts.IndexPartitionSize
		)
		part.restartInterval = 1
		for i, b := range l.Data {
			k := b.LastKey.Append(nil)
			blockKeys = append(blockKeys, k)
			part.add(k, b.BlockHandle.appendVarint(nil))
			if part.size() >= size || i == len(l.Data)-1 {
				partKeys = append(partKeys, k)
				part.reset()
			}
		}
		if len(partKeys) != len(l.IndexPartitions) {
			t.Fatalf("%s: %d partitions by the writer's rule, the table has %d", tc.name, len(partKeys), len(l.IndexPartitions))
		}
		for i, p := range l.IndexPartitions {
			if !bytes.Equal(p.LastKey.Append(nil), partKeys[i]) {
				t.Fatalf("%s: partition %d's last key is %v, by the writer's rule %q", tc.name, i, p.LastKey, partKeys[i])
			}
		}
		aligned := l.Padding > 0
		whole, top := indexFormula(blockKeys, aligned), indexFormula(partKeys, false)+12*len(partKeys)+4
		if plain.IndexMemory() != whole || r.IndexMemory() != top || pinned.IndexMemory() != whole {
			t.Errorf("%s: IndexMemory %d unpartitioned, %d partitioned, %d pinned; the formula says %d, %d, %d", tc.name, plain.IndexMemory(), r.IndexMemory(), pinned.IndexMemory(), whole, top, whole)
		}
		want := whole - top
		if got := plainMem.bytes - partMem.bytes; got != want {
			t.Errorf("%s: the partitioned table pins %d bytes less than the unpartitioned (%d against %d), the formula says %d", tc.name, got, partMem.bytes, plainMem.bytes, want)
		}
		if pinnedMem.bytes != plainMem.bytes {
			t.Errorf("%s: with its partitions pinned the table pins %d bytes, unpartitioned %d", tc.name, pinnedMem.bytes, plainMem.bytes)
		}
	}
}

// indexFormula is the bytes a blockIndex over blocks with these last keys
// pins: the keys' common user-key prefix once and their rests, and 8 bytes
// per block, 10 with padding.
func indexFormula(keys [][]byte, padded bool) int {
	first, _ := base.DecodeInternalKey(keys[0])
	last, _ := base.DecodeInternalKey(keys[len(keys)-1])
	p := bytealg.CommonPrefix(first.UserKey, last.UserKey)
	n := p
	for _, k := range keys {
		n += len(k) - p + 8
		if padded {
			n += 2
		}
	}
	return n
}

// TestPartitionReadsCounted checks that a lookup in a partitioned table
// counts the partition it reads: from the file the first time, from the
// block cache after; without a cache from the file each time; and none
// with the partitions pinned, nor when the filter rules the key out.
func TestPartitionReadsCounted(t *testing.T) {
	entries := distinctEntries(2000)
	data, _ := buildPartitioned(t, entries, WriterOptions{BlockSize: 512, IndexPartitionSize: 256, Filter: Bloom(10)}, false)
	key := MakeLookupKey(entries[1234].key.UserKey, base.SeqNumMax)
	for _, tc := range []struct {
		name        string
		opts        ReaderOptions
		read, cache [2]int // the first and the second Get's
	}{
		{"cache", ReaderOptions{Cache: cache.New(1 << 20)}, [2]int{1, 0}, [2]int{0, 1}},
		{"no cache", ReaderOptions{}, [2]int{1, 1}, [2]int{0, 0}},
		{"pinned", ReaderOptions{PinIndexPartitions: true}, [2]int{0, 0}, [2]int{0, 0}},
	} {
		r, _ := openWith(t, data, tc.opts)
		for i := range 2 {
			var stats LookupStats
			if _, _, found, err := r.Get(key, &stats); !found || err != nil {
				t.Fatalf("%s: Get %d: found %v, %v", tc.name, i, found, err)
			}
			if stats.IndexBlocksRead != tc.read[i] || stats.IndexBlocksCached != tc.cache[i] {
				t.Fatalf("%s: Get %d: %d partitions read, %d from the cache; want %d, %d", tc.name, i, stats.IndexBlocksRead, stats.IndexBlocksCached, tc.read[i], tc.cache[i])
			}
		}
		var stats LookupStats
		absent := MakeLookupKey([]byte("key000000001"), base.SeqNumMax) // odd: never written
		for _, e := range entries {
			absent = MakeLookupKey(append(bytes.Clone(e.key.UserKey), '!'), base.SeqNumMax)
			if !r.MayContainHash(absent.Hash) {
				break
			}
		}
		if _, _, _, err := r.Get(absent, &stats); err != nil || !stats.FilterNegative || stats.IndexBlocksRead+stats.IndexBlocksCached != 0 {
			t.Fatalf("%s: a Get the filter rules out: %+v, %v", tc.name, stats, err)
		}
	}
}

// TestPartitionedEveryByteFlipDetected damages each byte of a small table
// with many index partitions in turn: opened with partitions read as
// needed and pinned, every read path gives an error wrapping
// ErrCorruption, never a wrong answer. Under -race, where each damaged
// table costs ten times as much, every fourth byte, a different fourth
// in each of the four runs (the single-threaded reads are the same code;
// make test runs the whole test without -race too).
func TestPartitionedEveryByteFlipDetected(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(55, 55)), 80, 8, 16)
	stride, run := 1, 0
	if race.Enabled {
		stride = 4
	}
	for _, opts := range []WriterOptions{
		{BlockSize: 100, IndexPartitionSize: 40, Filter: Bloom(10)},
		{BlockSize: 100, IndexPartitionSize: 1, BlockAlign: true, Compression: SnappyCompression},
	} {
		data, _ := buildPartitioned(t, entries, opts, false)
		for _, pin := range []bool{false, true} {
			first := run % stride
			run++
			if err := readAllWith(t, data, entries, "intact", pin); err != nil {
				t.Fatal(err)
			}
			r, _ := openWith(t, data, ReaderOptions{PinIndexPartitions: pin})
			l, err := r.Layout()
			if err != nil {
				t.Fatal(err)
			}
			for i := first; i < len(data); i += stride {
				if pad := isPadding(l, uint64(i)); pad {
					continue // no read interprets it (Layout reads it)
				}
				damaged := bytes.Clone(data)
				damaged[i] ^= 0x5a
				checkCorruption(t, readAllWith(t, damaged, entries, "flip", pin), fmt.Sprintf("%+v, pinned %v: flip of byte %d", opts, pin, i))
			}
		}
	}
}

// isPadding reports whether offset off is padding between aligned data
// blocks.
func isPadding(l Layout, off uint64) bool {
	var end uint64
	for _, b := range l.Data {
		if off >= end && off < b.Offset {
			return true
		}
		end = b.Offset + b.Length + blockTrailerLen
	}
	return false
}

// TestIndexPartitionSizeChecked checks that a negative partition size is
// refused by name, and that an index within one partition is written
// whole, as format version 1.
func TestIndexPartitionSizeChecked(t *testing.T) {
	if _, err := NewWriter(new(bytes.Buffer), WriterOptions{IndexPartitionSize: -1}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("IndexPartitionSize")) {
		t.Fatalf("IndexPartitionSize -1: %v, want an error naming it", err)
	}
	entries := distinctEntries(50)
	data, props := buildTableWithRangeDels(t, entries, nil, WriterOptions{BlockSize: 256, IndexPartitionSize: 1 << 20})
	if props.IndexPartitions != 0 || footerVersion(data) != formatVersion1 {
		t.Fatalf("an index under the partition size: %d partitions, version %d", props.IndexPartitions, footerVersion(data))
	}
	if err := readAll(t, data, entries, "one partition"); err != nil {
		t.Fatal(err)
	}
}

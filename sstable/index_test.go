package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// indexEntry is one entry of a table's index block as written.
type indexEntry struct {
	key    []byte // encoded internal key
	handle BlockHandle
}

// writtenIndex decodes r's index block straight from the file: the oracle
// the pinned index must agree with.
func writtenIndex(t *testing.T, r *Reader) []indexEntry {
	t.Helper()
	l, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.readBlock(l.Index.BlockHandle, "index")
	if err != nil {
		t.Fatal(err)
	}
	var it blockIter
	if err := it.init(raw, base.CompareEncoded); err != nil {
		t.Fatal(err)
	}
	var out []indexEntry
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, ok := decodeHandle(it.value)
		if !ok {
			t.Fatalf("index entry %d: bad handle", len(out))
		}
		out = append(out, indexEntry{bytes.Clone(it.key), h})
	}
	return out
}

// prefixedEntries returns n sorted entries whose user keys are prefix
// followed by a random tail of 1 to 8 letters, one to three versions each.
func prefixedEntries(rng *rand.Rand, prefix string, n int) []entry {
	var out []entry
	seq := base.SeqNum(1)
	for len(out) < n {
		uk := []byte(prefix)
		for range 1 + rng.IntN(8) {
			uk = append(uk, byte('a'+rng.IntN(26)))
		}
		for range min(1+rng.IntN(3), n-len(out)) {
			out = append(out, entry{base.MakeInternalKey(uk, seq, base.KindSet), []byte(fmt.Sprint(seq))})
			seq++
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return base.CompareInternal(a.key, b.key) })
	return slices.CompactFunc(out, func(a, b entry) bool { return base.CompareInternal(a.key, b.key) == 0 })
}

// versionsOf returns n versions of one user key, newest first.
func versionsOf(key string, n int) []entry {
	out := make([]entry, n)
	for i := range out {
		out[i] = entry{base.MakeInternalKey([]byte(key), base.SeqNum(n-i), base.KindSet), bytes.Repeat([]byte{'v'}, 40)}
	}
	return out
}

// TestPinnedIndex checks the pinned index against the index block as
// written: every block's last key and handle, the prefix held once at the
// size the keys predict, and search against a linear scan of the written
// keys for targets with and without the prefix, shorter than it, and
// every entry's own key.
func TestPinnedIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		name    string
		entries []entry
		align   bool
		prefix  string // the common prefix the index must find
	}{
		{"shared prefix", prefixedEntries(rng, "tenant-0042/", 3000), false, "tenant-0042/"},
		{"shared prefix aligned", prefixedEntries(rng, "tenant-0042/", 3000), true, "tenant-0042/"},
		{"random keys", randomEntries(rng, 3000, 40, 60), true, ""},
		{"one user key", versionsOf("only", 500), false, "only"},
		{"one entry", versionsOf("k", 1), false, "k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := buildTable(t, tc.entries, WriterOptions{BlockSize: 256, BlockAlign: tc.align})
			r := openTable(t, data, nil)
			want := writtenIndex(t, r)
			x := &r.index
			if x.numBlocks() != len(want) {
				t.Fatalf("%d blocks, the index block has %d", x.numBlocks(), len(want))
			}
			if string(x.prefix) != tc.prefix {
				t.Fatalf("prefix %q, want %q", x.prefix, tc.prefix)
			}
			rest := 0
			for i, e := range want {
				if got := x.appendKey(nil, i); !bytes.Equal(got, e.key) {
					t.Fatalf("block %d: key %q, written %q", i, got, e.key)
				}
				if got := x.handle(i); got != e.handle {
					t.Fatalf("block %d: handle %+v, written %+v", i, got, e.handle)
				}
				rest += len(e.key) - len(tc.prefix)
			}
			if len(x.keys) != rest || cap(x.keys) != rest {
				t.Fatalf("keys hold %d bytes (capacity %d), the rests take %d", len(x.keys), cap(x.keys), rest)
			}
			if padded := x.pads != nil; padded != (r.props.DataPadding > 0) {
				t.Fatalf("pads kept: %v, data padding %d", padded, r.props.DataPadding)
			}

			linear := func(target []byte) int {
				return slices.IndexFunc(want, func(e indexEntry) bool { return base.CompareEncoded(e.key, target) >= 0 })
			}
			targets := [][]byte{{}, []byte(tc.prefix), []byte(tc.prefix + "\xff"), []byte("\xff")}
			if len(tc.prefix) > 1 {
				p := tc.prefix
				targets = append(targets, []byte(p[:len(p)-1]), []byte(p[:len(p)-1]+"\x00"), []byte(p[:len(p)-1]+"\xff"))
			}
			for range 500 {
				k := []byte(tc.prefix)
				for range rng.IntN(6) {
					k = append(k, byte('a'+rng.IntN(26)))
				}
				targets = append(targets, k)
			}
			check := func(target []byte) {
				w := linear(target)
				if w < 0 {
					w = len(want)
				}
				if got := x.search(target); got != w {
					t.Fatalf("search(%q) = %d, want %d", target, got, w)
				}
			}
			for _, k := range targets {
				check(base.MakeInternalKey(k, base.SeqNumMax, base.KindMax).Append(nil))
				check(base.MakeInternalKey(k, 1, base.KindSet).Append(nil))
			}
			for _, e := range tc.entries {
				check(e.key.Append(nil))
			}
		})
	}
}

// TestPinnedIndexWraps checks the ends of a table of more than 4 GiB of
// data blocks, built without writing one: handles past 2³², and a block
// that alone spans more than 4 GiB, come back as they went in.
func TestPinnedIndexWraps(t *testing.T) {
	var hs []BlockHandle
	next := uint64(0)
	for _, length := range []uint64{1 << 30, 3<<30 - 100, 200, 9 << 30, 17, 4<<30 - blockTrailerLen, 1} {
		pad := next % 3 // any padding below a page
		hs = append(hs, BlockHandle{Offset: next + pad, Length: length})
		next += pad + length + blockTrailerLen
	}
	key := func(i int) []byte {
		return base.MakeInternalKey([]byte{'k', byte('a' + i)}, 1, base.KindSet).Append(nil)
	}
	b := newIndexBuilder(func(n int) []byte { return make([]byte, n) }, len(hs), []byte("k"), uint64(len(hs)*len(key(0))), true)
	for i, h := range hs {
		b.add(key(i), h)
	}
	x := &b.x
	for i, h := range hs {
		if got := x.handle(i); got != h {
			t.Fatalf("block %d: handle %+v, want %+v (wraps %v)", i, got, h, x.wraps)
		}
		if got := x.appendKey(nil, i); !bytes.Equal(got, key(i)) {
			t.Fatalf("block %d: key %q, want %q", i, got, key(i))
		}
	}
	if x.blockEnd(len(hs)-1) != next {
		t.Fatalf("last end %d, want %d", x.blockEnd(len(hs)-1), next)
	}
}

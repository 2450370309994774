package bloomkv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// multiExplainDB returns a DB whose reads meet every kind of place: a
// bottom level (k000…k299 compacted), an L0 table of every third key
// rewritten, another of deletions and a range tombstone [k100, k120), and a
// memtable with more writes, a deletion and a range tombstone [k200,
// k205). The block cache is off, so that every block a read needs is read
// from its file and the Explain of a key and its MultiGet trace match
// read for read.
func multiExplainDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open("/db", &Options{FS: vfs.NewMem(), BlockSize: 256, BlockCacheSize: -1, BitsPerKey: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	for i := range 300 {
		must(db.Put(key(i), fmt.Appendf(nil, "base%d", i), NoSync))
	}
	must(db.Flush())
	must(db.Compact(nil, []byte("l")))
	for i := 0; i < 300; i += 3 {
		must(db.Put(key(i), fmt.Appendf(nil, "l0-%d", i), NoSync))
	}
	must(db.Flush())
	for i := 1; i < 300; i += 7 {
		must(db.Delete(key(i), NoSync))
	}
	must(db.DeleteRange(key(100), key(120), NoSync))
	must(db.Flush())
	for i := 2; i < 300; i += 11 {
		must(db.Put(key(i), []byte("mem"), NoSync))
	}
	must(db.Delete(key(5), NoSync))
	must(db.DeleteRange(key(200), key(205), NoSync))
	return db
}

// sameStep compares what a step says of the key's path, leaving out the
// block counts (a shared block's read is counted with its first key) and
// the MultiGet columns.
func sameStep(a, b TraceStep) bool {
	a.BlocksFromCache, a.BlocksFromFile, a.BytesRead, a.Round, a.BlockKeys = 0, 0, 0, 0, 0
	b.BlocksFromCache, b.BlocksFromFile, b.BytesRead, b.Round, b.BlockKeys = 0, 0, 0, 0, 0
	return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

// TestExplainMultiGetMatchesExplain explains batches of keys — present in
// each place, deleted, covered by range tombstones, absent, repeated — and
// checks each key's trace against Explain of the key alone, the oracle:
// the same steps in the same order, the same answer, which is MultiGet's
// and Get's. The rounds must add up to the keys' steps.
func TestExplainMultiGetMatchesExplain(t *testing.T) {
	db := multiExplainDB(t)
	var all [][]byte
	for i := range 320 {
		all = append(all, fmt.Appendf(nil, "k%03d", i))
	}
	batches := [][][]byte{
		all,
		{[]byte("k002"), []byte("k002"), []byte("k105"), []byte("k201"), []byte("k005"), []byte("zzz"), []byte("k001")},
		{},
	}
	for bi, keys := range batches {
		mt, err := db.ExplainMultiGet(keys)
		if err != nil {
			t.Fatal(err)
		}
		values, err := db.MultiGet(keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(mt.Keys) != len(keys) {
			t.Fatalf("batch %d: %d traces for %d keys", bi, len(mt.Keys), len(keys))
		}
		var steps, blockSteps int
		for i, key := range keys {
			got := mt.Keys[i]
			want, err := db.Explain(key)
			if err != nil {
				t.Fatal(err)
			}
			get, gerr := db.Get(key)
			if (gerr == nil) != (want.Found && !want.Deleted) || !bytes.Equal(get, want.Value) {
				t.Fatalf("%s: Explain %v/%v %q, Get %q, %v", key, want.Found, want.Deleted, want.Value, get, gerr)
			}
			if !bytes.Equal(got.Key, key) || got.Found != want.Found || got.Deleted != want.Deleted || !bytes.Equal(got.Value, want.Value) ||
				got.Source != want.Source || got.CoveredBy != want.CoveredBy {
				t.Fatalf("%s: MultiGet trace found=%v deleted=%v %q in %q (%s); Explain found=%v deleted=%v %q in %q (%s)",
					key, got.Found, got.Deleted, got.Value, got.Source, got.CoveredBy, want.Found, want.Deleted, want.Value, want.Source, want.CoveredBy)
			}
			if !bytes.Equal(values[i], want.Value) || (values[i] == nil) != (!want.Found || want.Deleted) {
				t.Fatalf("%s: MultiGet %q, Explain %q", key, values[i], want.Value)
			}
			if len(got.Steps) != len(want.Steps) {
				t.Fatalf("%s: %d steps, Explain %d:\n%s\n%s", key, len(got.Steps), len(want.Steps), got, want)
			}
			for j := range got.Steps {
				if !sameStep(got.Steps[j], want.Steps[j]) {
					t.Fatalf("%s: step %d is\n%+v\nExplain's\n%+v", key, j+1, got.Steps[j], want.Steps[j])
				}
				s := got.Steps[j]
				if s.Kind == TableStep && s.InRange && s.Filter != FilterAbsent {
					steps++
					if s.Round == 0 || s.Round > len(mt.Rounds) {
						t.Fatalf("%s: step %d in round %d of %d", key, j+1, s.Round, len(mt.Rounds))
					}
					if s.BlockKeys > 0 {
						blockSteps++
					}
				}
			}
		}
		n := mt.Totals()
		if n.TableProbesToRead != steps {
			t.Fatalf("batch %d: the rounds sent %d keys to tables, the traces show %d", bi, n.TableProbesToRead, steps)
		}
		if n.BlockReadsSaved+n.Blocks != blockSteps || n.BlocksFromFile != n.Blocks {
			t.Fatalf("batch %d: %d blocks read (%d from files) and %d saved, for %d steps reading one", bi, n.Blocks, n.BlocksFromFile, n.BlockReadsSaved, blockSteps)
		}
		if s := mt.String(); !strings.Contains(s, "summary: "+mt.Summary()) {
			t.Fatalf("batch %d: String has no summary:\n%s", bi, s)
		}
	}
}

// TestExplainMultiGetSharesBlocks explains a batch over one table whose
// blocks are known from its Layout (the oracle, read from the file apart
// from the DB): keys of the same block share one read, and the round's
// account says how many blocks served how many keys.
func TestExplainMultiGetSharesBlocks(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, &Options{BlockSize: 256, BlockCacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 200 {
		if err := db.Put(fmt.Appendf(nil, "key%03d", i), []byte("value"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1", len(tables))
	}
	f, err := os.Open(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	r, err := sstable.Open(f, info.Size(), sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Data) < 6 {
		t.Fatalf("%d data blocks, want 6 or more", len(l.Data))
	}
	// blockOf is the block holding key: the first whose last key is ≥ it.
	blockOf := func(key []byte) int {
		return slices.IndexFunc(l.Data, func(b sstable.BlockInfo) bool {
			return base.CompareInternal(b.LastKey, base.MakeInternalKey(key, base.SeqNumMax, base.KindMax)) >= 0
		})
	}
	first := func(b int) int { // the number of block b's first key
		var n int
		fmt.Sscanf(string(l.Data[b].LastKey.UserKey), "key%d", &n)
		if b == 0 {
			return 0
		}
		fmt.Sscanf(string(l.Data[b-1].LastKey.UserKey), "key%d", &n)
		return n + 1
	}
	// Three keys of block 1, two of block 3, one of block 5, in an order
	// MultiGet must sort out.
	var keys [][]byte
	for _, k := range []int{first(3), first(1), first(5), first(1) + 1, first(3) + 1, first(1) + 2} {
		keys = append(keys, fmt.Appendf(nil, "key%03d", k))
	}
	perBlock := map[int]int{}
	for _, k := range keys {
		perBlock[blockOf(k)]++
	}
	if len(perBlock) != 3 || perBlock[1] != 3 || perBlock[3] != 2 || perBlock[5] != 1 {
		t.Fatalf("keys by block %v, want 3 in block 1, 2 in 3, 1 in 5", perBlock)
	}
	mt, err := db.ExplainMultiGet(keys)
	if err != nil {
		t.Fatal(err)
	}
	want := MultiGetRound{Keys: 6, Blocks: 3, Shared: 2, SharedKeys: 5, FromFile: 3, Concurrent: 3, Answered: 6}
	if len(mt.Rounds) != 1 {
		t.Fatalf("%d rounds, want 1:\n%s", len(mt.Rounds), mt)
	}
	got := mt.Rounds[0]
	got.BytesRead = 0
	if got != want {
		t.Fatalf("round %+v, want %+v", got, want)
	}
	var wantBytes int64
	for b := range perBlock {
		wantBytes += int64(l.Data[b].Length) + 5
	}
	if mt.Rounds[0].BytesRead != wantBytes {
		t.Fatalf("round read %d bytes, the blocks take %d", mt.Rounds[0].BytesRead, wantBytes)
	}
	reads := 0
	for i, tr := range mt.Keys {
		s := tr.Steps[len(tr.Steps)-1]
		if !s.Found || s.Round != 1 || s.BlockKeys != perBlock[blockOf(keys[i])] {
			t.Fatalf("%s: last step %+v, want found in round 1 from a block of %d keys", keys[i], s, perBlock[blockOf(keys[i])])
		}
		reads += s.BlocksFromFile
	}
	if n := mt.Totals(); reads != 3 || n.BlockReadsSaved != 3 || n.MostConcurrent != 3 {
		t.Fatalf("%d block reads over the keys, %d saved, %d at once; want 3, 3, 3", reads, n.BlockReadsSaved, n.MostConcurrent)
	}
}

package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestDeleteRangeArguments checks that DB.DeleteRange and
// Batch.DeleteRange refuse an empty range or an oversized key with an
// *ArgumentError naming the argument, and that the batch is left as it was.
func TestDeleteRangeArguments(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	big := bytes.Repeat([]byte{'k'}, MaxKeySize+1)
	tests := []struct {
		name       string
		start, end []byte
		arg        string
	}{
		{"equal", []byte("b"), []byte("b"), "end"},
		{"reversed", []byte("c"), []byte("b"), "end"},
		{"both empty", nil, []byte{}, "end"},
		{"oversized start", big, append(big, 'x'), "start"},
		{"oversized end", []byte("a"), big, "end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ae *ArgumentError
			if err := db.DeleteRange(tt.start, tt.end, nil); !errors.As(err, &ae) || ae.Arg != tt.arg {
				t.Errorf("DB.DeleteRange: %v, want an *ArgumentError for %s", err, tt.arg)
			}
			b := NewBatch()
			if err := b.DeleteRange(tt.start, tt.end); !errors.As(err, &ae) || ae.Arg != tt.arg {
				t.Errorf("Batch.DeleteRange: %v, want an *ArgumentError for %s", err, tt.arg)
			}
			if !b.Empty() || b.Len() != 0 {
				t.Errorf("a refused DeleteRange left the batch with %d records", b.Len())
			}
		})
	}
	// The empty key is a key: [nil, "a") deletes it.
	if err := db.Put([]byte{}, []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteRange(nil, []byte("a"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of the empty key after DeleteRange(nil, a): %v", err)
	}
}

func rdKey(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }

// blockReads sums the data blocks lookups read in a level, from files and
// the cache.
func blockReads(l LevelMetrics) uint64 { return l.BlocksFromFile + l.BlocksFromCache }

// TestDeleteRangeFilterQuestion puts keys in the bottom level, then a range
// tombstone over some of them in a newer L0 table whose filter holds other
// keys only: a Get of a covered key must see the tombstone although that
// filter says "absent", and must read no data block, the older versions
// being older than the tombstone; keys outside the range are read as
// before. Explain names the tombstone, MultiGet agrees with Get, a
// snapshot from before the deletion still sees the keys, iterators both
// ways skip the range, and once the snapshot is gone a compaction to the
// bottom drops the keys and the tombstone.
func TestDeleteRangeFilterQuestion(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), BlockSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 1000 {
		if err := db.Put(rdKey(i), bytes.Repeat([]byte{byte(i)}, 100), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteRange(rdKey(100), rdKey(300), nil); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := db.Put(fmt.Appendf(nil, "z%03d", i), []byte("other"), NoSync); err != nil {
			t.Fatal(err)
		}
	}

	// check reads the covered keys, and others, every way. tombLevel is
	// the level of the tombstone's table, -1 in the memtable: only that
	// table may be read for a covered key, and only when its filter's
	// "maybe" (a false positive: it holds other keys) says it may hold a
	// version newer than the tombstone.
	check := func(where string, tombLevel int) {
		t.Helper()
		before := db.Metrics()
		for i := 100; i < 300; i++ {
			if v, err := db.Get(rdKey(i)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%s) = %q, %v; want ErrNotFound", where, rdKey(i), v, err)
			}
		}
		covered := make([][]byte, 0, 200)
		for i := 100; i < 300; i++ {
			covered = append(covered, rdKey(i))
		}
		values, err := db.MultiGet(covered)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range values {
			if v != nil {
				t.Fatalf("%s: MultiGet found covered key %s", where, covered[i])
			}
		}
		after := db.Metrics()
		for level := range after.Levels {
			n := blockReads(after.Levels[level]) - blockReads(before.Levels[level])
			maybe := after.Levels[level].FilterPositives - before.Levels[level].FilterPositives
			if level != tombLevel && n != 0 || level == tombLevel && n > maybe {
				t.Errorf("%s: Gets of covered keys read %d data blocks in L%d (filter positives %d), want none but the tombstone's table's false positives", where, n, level, maybe)
			}
		}
		for _, i := range []int{0, 99, 300, 999} {
			if v, err := db.Get(rdKey(i)); err != nil || !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, 100)) {
				t.Fatalf("%s: Get(%s) = %q, %v", where, rdKey(i), v, err)
			}
			if v, err := snap.Get(rdKey(i + 1)); err != nil || len(v) != 100 || i+1 < 1000 && v[0] != byte(i+1) {
				if i+1 < 1000 {
					t.Fatalf("%s: snapshot Get(%s) = %q, %v", where, rdKey(i+1), v, err)
				}
			}
		}
		if v, err := snap.Get(rdKey(150)); err != nil || v[0] != 150 {
			t.Fatalf("%s: the snapshot from before the deletion: Get(%s) = %q, %v", where, rdKey(150), v, err)
		}
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !it.SeekGE(rdKey(100)) || !bytes.Equal(it.Key(), rdKey(300)) {
			t.Errorf("%s: SeekGE(%s) at %q, want %s", where, rdKey(100), it.Key(), rdKey(300))
		}
		if !it.Prev() || !bytes.Equal(it.Key(), rdKey(99)) {
			t.Errorf("%s: Prev at %q, want %s", where, it.Key(), rdKey(99))
		}
		if !it.SeekLT(rdKey(300)) || !bytes.Equal(it.Key(), rdKey(99)) {
			t.Errorf("%s: SeekLT(%s) at %q, want %s", where, rdKey(300), it.Key(), rdKey(99))
		}
		if !it.Next() || !bytes.Equal(it.Key(), rdKey(300)) {
			t.Errorf("%s: Next at %q, want %s", where, it.Key(), rdKey(300))
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil || n != 800+50 {
			t.Errorf("%s: a scan saw %d keys (%v), want 850", where, n, err)
		}
	}
	check("tombstone in the memtable", -1)
	tr, err := db.Explain(rdKey(150))
	if err != nil {
		t.Fatal(err)
	}
	if want := `range tombstone ["k0100", "k0300") @1001 in memtable`; tr.CoveredBy != want || !tr.Deleted {
		t.Errorf("Explain: CoveredBy %q, want %q\n%v", tr.CoveredBy, want, tr)
	}

	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	m := db.Metrics()
	if m.Levels[0].Tables != 1 || m.Levels[0].RangeDels != 1 {
		t.Fatalf("after the flush: L0 has %d tables, %d range tombstones; want 1 and 1", m.Levels[0].Tables, m.Levels[0].RangeDels)
	}
	check("tombstone in L0, behind a filter of other keys", 0)
	tr, err = db.Explain(rdKey(150))
	if err != nil {
		t.Fatal(err)
	}
	var l0Step *TraceStep
	for i := range tr.Steps {
		if tr.Steps[i].Kind == TableStep && tr.Steps[i].Level == 0 {
			l0Step = &tr.Steps[i]
		}
	}
	if l0Step == nil || l0Step.Filter != FilterAbsent || !l0Step.CoveredByRangeDel {
		t.Fatalf("Explain: the L0 step %+v, want a filter negative and the key covered\n%v", l0Step, tr)
	}
	want := fmt.Sprintf(`range tombstone ["k0100", "k0300") @1001 in L0/%s`, manifest.MakeFilename(manifest.FileTypeTable, l0Step.FileNum))
	if tr.CoveredBy != want || !strings.Contains(tr.Summary(), "covered by "+want) || !strings.Contains(tr.String(), `covered by range tombstone ["k0100", "k0300") @1001`) {
		t.Errorf("Explain: CoveredBy %q, want %q; summary %q", tr.CoveredBy, want, tr.Summary())
	}
	if tr.Totals().BlocksFromFile+tr.Totals().BlocksFromCache != 0 {
		t.Errorf("Explain read blocks for a covered key:\n%v", tr)
	}

	// Once the snapshot is gone, a compaction to the bottom drops the keys
	// and the tombstone.
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	before := db.Metrics()
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	after := db.Metrics()
	var rangeDels uint64
	for _, l := range after.Levels {
		rangeDels += l.RangeDels
	}
	if rangeDels != 0 {
		t.Errorf("%d range tombstones left after a compaction to the bottom with no snapshot", rangeDels)
	}
	var bytesBefore, bytesAfter uint64
	for i := range before.Levels {
		bytesBefore += before.Levels[i].Bytes
		bytesAfter += after.Levels[i].Bytes
	}
	// 200 of 1000 values of 100 bytes: at least a sixth of the tree goes.
	if bytesAfter > bytesBefore-bytesBefore/6 {
		t.Errorf("tree of %d bytes before the compaction, %d after: the range's space was not returned", bytesBefore, bytesAfter)
	}
	for i := 100; i < 300; i++ {
		if _, err := db.Get(rdKey(i)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after the compaction: Get(%s): %v", rdKey(i), err)
		}
	}
}

// TestDeleteRangeSurvivesReopen checks the WAL replay and the tables:
// range tombstones in the WAL only, in a table, and overlapping ones
// resolved by seqnum (a later Put inside an older range stays).
func TestDeleteRangeSurvivesReopen(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := db.Put(rdKey(i), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	steps := []func() error{
		func() error { return db.DeleteRange(rdKey(10), rdKey(20), nil) },
		func() error { return db.Flush() },
		func() error { return db.Put(rdKey(15), []byte("again"), nil) },
		func() error { return db.DeleteRange(rdKey(50), rdKey(70), nil) },
		func() error { return db.DeleteRange(rdKey(60), rdKey(80), nil) },
		func() error { return db.Put(rdKey(65), []byte("again"), nil) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	want := func(i int) string {
		switch {
		case i == 15 || i == 65:
			return "again"
		case i >= 10 && i < 20 || i >= 50 && i < 80:
			return ""
		}
		return "v"
	}
	for round := range 3 {
		for i := range 100 {
			v, err := db.Get(rdKey(i))
			if w := want(i); w == "" && !errors.Is(err, ErrNotFound) || w != "" && string(v) != w {
				t.Fatalf("round %d: Get(%s) = %q, %v; want %q", round, rdKey(i), v, err, w)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if db, err = Open("/db", &Options{FS: fs}); err != nil {
			t.Fatal(err)
		}
		if round == 1 {
			if err := db.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
}

// TestBatchLenResetEmpty checks Len, Empty and Reset against a count kept
// beside the batch, and that a reset batch applies as a new one would.
func TestBatchLenResetEmpty(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := NewBatch()
	if b.Len() != 0 || !b.Empty() {
		t.Fatalf("new batch: Len %d, Empty %v", b.Len(), b.Empty())
	}
	writes := []func() error{
		func() error { return b.Set([]byte("a"), []byte("1")) },
		func() error { return b.Delete([]byte("b")) },
		func() error { return b.DeleteRange([]byte("c"), []byte("e")) },
		func() error { return b.Set([]byte("d"), []byte("2")) },
	}
	for i, w := range writes {
		if err := w(); err != nil {
			t.Fatal(err)
		}
		if b.Len() != i+1 || b.Empty() {
			t.Fatalf("after %d writes: Len %d, Empty %v", i+1, b.Len(), b.Empty())
		}
	}
	size := b.Size()
	b.Reset()
	if b.Len() != 0 || !b.Empty() || b.Size() != NewBatch().Size() {
		t.Fatalf("after Reset: Len %d, Empty %v, Size %d", b.Len(), b.Empty(), b.Size())
	}
	// Reused: the same writes give the same bytes, and apply.
	for _, w := range writes {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	if b.Size() != size {
		t.Fatalf("the reused batch is %d bytes, the first %d", b.Size(), size)
	}
	if err := db.Apply(b, nil); err != nil {
		t.Fatal(err)
	}
	// d is set after the range deletion in the same batch: it stays.
	for k, want := range map[string]string{"a": "1", "b": "", "c": "", "d": "2"} {
		v, err := db.Get([]byte(k))
		if want == "" && !errors.Is(err, ErrNotFound) || want != "" && string(v) != want {
			t.Errorf("Get(%s) = %q, %v; want %q", k, v, err, want)
		}
	}
	if m := db.Metrics(); m.Writes != 4 || m.Batches != 1 {
		t.Errorf("Metrics: %d writes, %d batches; want 4 and 1", m.Writes, m.Batches)
	}
}

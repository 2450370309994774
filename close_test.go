package bloomkv

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestIteratorOutlivesReopen is DB.Close's promise with a table cache of
// any size: an iterator opened over twenty L0 tables, more than a 16-file
// cache holds (and, with values separated, twenty blob files, more than
// the DB keeps open), is kept open across a compaction that replaces them, the
// DB's Close, and an Open of the same directory, which deletes the twenty
// (no version of the new DB lists them). The iterator still reads every
// key, with the value it had when the iterator was made, and closes
// without an error.
func TestIteratorOutlivesReopen(t *testing.T) {
	for _, tc := range []struct {
		name         string
		os           bool
		maxOpenFiles int
		// blobs separates the values into blob files, of which the DB
		// keeps at most 4 open: fewer than the twenty flushes write.
		blobs bool
	}{
		{"mem/MaxOpenFiles=16", false, 16, false},
		{"mem/default", false, 0, false},
		{"os/MaxOpenFiles=16", true, 16, false},
		{"os/default", true, 0, false},
		{"mem/MaxOpenFiles=16/blobs", false, 16, true},
		{"os/MaxOpenFiles=16/blobs", true, 16, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs vfs.FS = vfs.NewMem()
			dir := "db"
			if tc.os {
				fs, dir = vfs.Default, t.TempDir()
			}
			opts := &Options{FS: fs, MaxOpenFiles: tc.maxOpenFiles, MemtableSize: 64 << 10,
				L0CompactionTrigger: 100, L0SlowdownTrigger: 100, L0StopTrigger: 100}
			if tc.blobs {
				opts.ValueSeparation.MinSize = 8
			}
			d, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			const rounds, keys = 20, 50
			key := func(i int) string { return fmt.Sprintf("k%03d", i) }
			value := func(round, i int) string { return fmt.Sprintf("round %d key %d", round, i) }
			// newest is the round of key i's value the iterator sees: the
			// last for tables; with blob files, the round written last
			// among those that wrote it, so that its values are spread
			// over all twenty blob files and the walks evict them.
			writes := func(round, i int) bool { return !tc.blobs || i%rounds == round || round == rounds }
			newest := func(i int) int {
				if tc.blobs {
					return i % rounds
				}
				return rounds - 1
			}
			put := func(round int) {
				for i := range keys {
					if writes(round, i) {
						if err := d.Put([]byte(key(i)), []byte(value(round, i)), NoSync); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			for round := range rounds {
				put(round)
			}
			listed := liveTableNums(t, d)
			if len(listed) != rounds {
				t.Fatalf("%d tables before the compaction, want %d in L0", len(listed), rounds)
			}
			if blobs, err := d.BlobFiles(); err != nil || tc.blobs != (len(blobs) == rounds) {
				t.Fatalf("%d blob files (%v); want %d with separation, else none", len(blobs), err, rounds)
			}
			it, err := d.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			walk := func(when string) {
				t.Helper()
				i := 0
				for ok := it.First(); ok; ok = it.Next() {
					if i >= keys || string(it.Key()) != key(i) || string(it.Value()) != value(newest(i), i) {
						t.Fatalf("%s: entry %d is %q = %q, want %q = %q", when, i, it.Key(), it.Value(), key(i), value(newest(i), i))
					}
					i++
				}
				if err := it.Error(); err != nil || i != keys {
					t.Fatalf("%s: %d of %d keys, then %v", when, i, keys, err)
				}
			}
			walk("before Close")
			if tc.blobs {
				// Every key again, so that the compaction leaves each of
				// the iterator's blob files without a reference, for the
				// new Open to delete.
				put(rounds)
			}
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d2, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d2.Close()
			for _, num := range listed {
				path := manifest.MakeFilepath(fs, dir, manifest.FileTypeTable, num)
				if _, err := fs.Stat(path); !errors.Is(err, iofs.ErrNotExist) {
					t.Fatalf("the new Open left %s, which no version lists: %v", path, err)
				}
			}
			walk("after Close and a new Open deleted its tables")
			if err := it.Close(); err != nil {
				t.Fatalf("Iterator.Close: %v", err)
			}
		})
	}
}

// TestIteratorOutlivesCloseNoDescriptor checks the one way DB.Close's
// promise can fail: the system refuses the descriptor a table needs to
// stay open past Close. The iterator then reports an error that wraps
// fs.ErrClosed and names the table, not a corruption; tables it could
// keep still read.
func TestIteratorOutlivesCloseNoDescriptor(t *testing.T) {
	var closing atomic.Bool
	fs := vfs.NewInjecting(vfs.NewMem(), func(op vfs.Op) bool {
		return closing.Load() && op.Kind == vfs.OpOpen && strings.HasSuffix(op.Name, ".sst")
	})
	d, err := Open("db", &Options{FS: fs, MaxOpenFiles: 16, MemtableSize: 64 << 10,
		L0CompactionTrigger: 100, L0SlowdownTrigger: 100, L0StopTrigger: 100})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20 // tables, more than the table cache's 6 handles
	for round := range rounds {
		if err := d.Put(fmt.Appendf(nil, "k%03d", round), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	closing.Store(true)
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v; a table an iterator could not keep is the iterator's error, not Close's", err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	err = it.Error()
	if !errors.Is(err, iofs.ErrClosed) || !errors.Is(err, vfs.ErrInjected) || errors.Is(err, ErrCorruption) ||
		!strings.Contains(err.Error(), ".sst") {
		t.Fatalf("after %d keys: %v; want an error naming the table, wrapping fs.ErrClosed and the cause, not corruption", n, err)
	}
	if cerr := it.Close(); errors.Is(cerr, ErrCorruption) {
		t.Fatalf("Iterator.Close: %v, a corruption", cerr)
	}
}

// liveTableNums returns the file numbers of the tables d's current version
// lists.
func liveTableNums(t *testing.T, d *DB) []uint64 {
	t.Helper()
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var nums []uint64
	for _, lt := range tables {
		nums = append(nums, lt.FileNum)
	}
	return nums
}

package bloomkv

// Recovery: a reopen finds every write (TestDBRecoveryReopen) and the
// lock keeps a second Open out (TestDBRecoveryLocked); the checks of a
// recovered DB that the crash and failure tests share (checkDirFiles,
// findPrefix, prefixError). A crash at every operation:
// db_recovery_crash_test.go; a failure of every operation:
// db_recovery_inject_test.go.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestDBRecoveryReopen writes in rounds, closing and reopening the DB after
// each, and checks that everything written is there — from the WAL alone,
// from tables alone, and mixed — and that a reopen leaves no obsolete file
// behind.
func TestDBRecoveryReopen(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	for _, tc := range []struct {
		name  string
		os    bool // the OS file system in t.TempDir(), rather than a MemFS
		opts  Options
		flush bool // flush before each Close
	}{
		{name: "WAL only", opts: Options{}},
		{name: "flushed", opts: Options{}, flush: true},
		{name: "rotations", opts: Options{MemtableSize: 64 << 10, MaxImmutableMemtables: 1}},
		{name: "zstd no filters", opts: Options{MemtableSize: 64 << 10, Compression: ZstdCompression, DisableFilters: true, BlockSize: 256}, flush: true},
		{name: "no cache", opts: Options{MemtableSize: 100 << 10, BlockCacheSize: -1, BitsPerKey: 3}},
		{name: "OS", os: true, opts: Options{MemtableSize: 64 << 10}},
		{name: "OS mmap", os: true, opts: Options{MemtableSize: 64 << 10, MmapTables: MapAllTables, BlockCacheSize: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			dir, opts := "db", tc.opts
			if tc.os {
				dir, opts.FS = t.TempDir(), vfs.Default
			} else {
				opts.FS = vfs.NewMem()
			}
			ks := newKeySpace(rng, 300)
			m := kvModel{}
			for round := range 5 {
				d, err := Open(dir, &opts)
				if err != nil {
					t.Fatalf("round %d: Open: %v", round, err)
				}
				if _, err := checkState(d, ks, m); err != nil {
					d.Close()
					t.Fatalf("round %d, after reopening: %v", round, err)
				}
				if err := checkDirFiles(opts.FS, dir, d); err != nil {
					d.Close()
					t.Fatalf("round %d, after reopening: %v", round, err)
				}
				for i := range 400 {
					ops := randOps(rng, ks, fmt.Sprintf("r%d.%d", round, i))
					wo := []*WriteOptions{nil, Sync, NoSync, NoSync}[rng.IntN(4)]
					if err := applyOps(d, ops, wo); err != nil {
						d.Close()
						t.Fatalf("round %d: write: %v", round, err)
					}
					m.apply(ops)
				}
				if tc.flush {
					if err := d.Flush(); err != nil {
						t.Fatalf("round %d: Flush: %v", round, err)
					}
				}
				if _, err := checkState(d, ks, m); err != nil {
					d.Close()
					t.Fatalf("round %d, before closing: %v", round, err)
				}
				if err := d.Close(); err != nil {
					t.Fatalf("round %d: Close: %v", round, err)
				}
			}
			// Other options read what the first ones wrote.
			opts.BlockSize, opts.Compression, opts.DisableFilters, opts.BitsPerKey = 16<<10, SnappyCompression, false, 20
			d, err := Open(dir, &opts)
			if err != nil {
				t.Fatalf("Open with other options: %v", err)
			}
			defer d.Close()
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after reopening with other options: %v", err)
			}
		})
	}
}

// randOps returns the writes of one Put, Delete or batch of up to 6 writes
// on keys of ks, with values tagged with tag and the write's index, so that
// every value written is unique.
func randOps(rng *rand.Rand, ks *keySpace, tag string) []kvOp {
	n := 1
	if rng.IntN(4) == 0 {
		n = 2 + rng.IntN(5)
	}
	ops := make([]kvOp, n)
	for i := range ops {
		ops[i].key = string(ks.pick(rng))
		if rng.IntN(4) == 0 {
			ops[i].del = true
			continue
		}
		n := rng.IntN(600)
		if rng.IntN(60) == 0 {
			n = 10<<10 + rng.IntN(60<<10) // a WAL record over several 32 KiB blocks
		}
		ops[i].value = string(fillValue(rng, fmt.Appendf(nil, "%s.%d|", tag, i), n))
	}
	return ops
}

// checkDirFiles checks that a DB just opened left no obsolete file in its
// directory: one manifest, one WAL, no temporary file, every table the
// version lists and no other older than the WAL (a table newer than the
// WAL may be a flush's output in progress).
//
// It looks while no compaction runs and no memtable waits for its flush,
// and holds the DB's mutex so that none starts: a running compaction
// keeps the version it read, and with it the tables a compaction beside
// it has just made obsolete, until it ends — a table obsolete but not yet
// removed, rightly; and a memtable waiting for its flush keeps its WAL.
func checkDirFiles(fs vfs.FS, dir string, d *DB) error {
	err := d.lockIdle()
	defer d.mu.Unlock()
	if err != nil {
		return err
	}
	current := d.mu.current
	names, err := fs.List(dir)
	if err != nil {
		return err
	}
	counts := map[manifest.FileType]int{}
	var walNum uint64
	tables := map[uint64]bool{}
	for _, name := range names {
		t, num, ok := manifest.ParseFilename(name)
		if !ok {
			continue
		}
		counts[t]++
		switch t {
		case manifest.FileTypeWAL:
			walNum = num
		case manifest.FileTypeTable:
			tables[num] = true
		}
	}
	if counts[manifest.FileTypeManifest] != 1 || counts[manifest.FileTypeTemp] != 0 || counts[manifest.FileTypeWAL] != 1 {
		return fmt.Errorf("directory holds %v; want 1 manifest, 1 WAL, no temporary file", names)
	}
	for num := range current.FileNums() {
		if !tables[num] {
			return fmt.Errorf("directory holds %v, without table %06d of the version", names, num)
		}
		delete(tables, num)
	}
	for num := range tables {
		if num < walNum {
			return fmt.Errorf("directory holds %v, with table %06d, which no version lists", names, num)
		}
	}
	return nil
}

// findPrefix returns a j in [lo, hi] such that the writes history[:j],
// applied to an empty DB, give got; ok is false if there is none. Values
// are unique, so a batch applied in part matches no prefix.
func findPrefix(history [][]kvOp, lo, hi int, got kvModel) (j int, ok bool) {
	m := kvModel{}
	for _, ops := range history[:lo] {
		m.apply(ops)
	}
	same := func(k string) bool {
		mv, mok := m[k]
		gv, gok := got[k]
		return mok == gok && mv == gv
	}
	mismatches := 0
	for k := range m {
		if !same(k) {
			mismatches++
		}
	}
	for k := range got {
		if _, ok := m[k]; !ok {
			mismatches++
		}
	}
	for j = lo; ; j++ {
		if mismatches == 0 {
			return j, true
		}
		if j >= hi {
			return -1, false
		}
		for _, op := range history[j] {
			// The keys op can change: its own, or a range deletion's
			// keys in m (a key m lacks stays as it was).
			keys := []string{op.key}
			if op.rangeDel {
				keys = keys[:0]
				for k := range m {
					if op.key <= k && k < op.end {
						keys = append(keys, k)
					}
				}
			}
			before := make([]bool, len(keys))
			for i, k := range keys {
				before[i] = same(k)
			}
			m.apply([]kvOp{op})
			for i, k := range keys {
				switch after := same(k); {
				case before[i] && !after:
					mismatches++
				case !before[i] && after:
					mismatches--
				}
			}
		}
	}
}

// modelAfter returns the model after the writes history[:j].
func modelAfter(history [][]kvOp, j int) kvModel {
	m := kvModel{}
	for _, ops := range history[:j] {
		m.apply(ops)
	}
	return m
}

// prefixError describes a recovered state that is no prefix of history
// between lo and hi.
func prefixError(history [][]kvOp, lo, hi int, got kvModel) error {
	return fmt.Errorf("recovered %d keys, which are not the first j of %d writes for any j in [%d, %d]\n"+
		"against the first %d (every write acknowledged durable): %s\nagainst the first %d (every write started): %s",
		len(got), len(history), lo, hi, lo, diffModels(got, modelAfter(history, lo)), hi, diffModels(got, modelAfter(history, hi)))
}

// TestDBRecoveryLocked checks that a second Open of a directory in use
// fails with ErrLocked, on the OS file system and on a MemFS, and that
// Close releases the directory.
func TestDBRecoveryLocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  func(t *testing.T) string
	}{
		{"OS", vfs.Default, func(t *testing.T) string { return t.TempDir() }},
		{"MemFS", vfs.NewMem(), func(*testing.T) string { return "db" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			d, err := Open(dir, &Options{FS: tc.fs})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Put([]byte("k"), []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				d2, err := Open(dir, &Options{FS: tc.fs})
				if !errors.Is(err, ErrLocked) {
					if d2 != nil {
						d2.Close()
					}
					t.Fatalf("second Open: %v, want ErrLocked", err)
				}
			}
			// The failed Opens changed nothing.
			if err := checkGet(d, []byte("k"), kvModel{"k": "v"}); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d, err = Open(dir, &Options{FS: tc.fs})
			if err != nil {
				t.Fatalf("Open after Close: %v", err)
			}
			defer d.Close()
			if err := checkGet(d, []byte("k"), kvModel{"k": "v"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFindPrefix checks findPrefix, the crash suites' oracle, against the
// plain definition: the least j in [lo, hi] whose model after history[:j]
// equals got, found by building each model whole (modelAfter). A range
// deletion changes keys other than its own start key, which an account of
// the start key alone misses.
func TestFindPrefix(t *testing.T) {
	set := func(k, v string) kvOp { return kvOp{key: k, value: v} }
	history := [][]kvOp{
		{set("a", "1"), set("b", "2")},
		{set("c", "3")},
		{{key: "a", end: "c", rangeDel: true}}, // deletes a and b, not c
		{set("b", "4"), {key: "c", del: true}},
		{{key: "b", value: "5", merge: true}},
		{{key: "", end: "z", rangeDel: true}},
	}
	var states []kvModel // every prefix's model, and some no prefix gives
	for j := range len(history) + 1 {
		states = append(states, modelAfter(history, j))
	}
	states = append(states, kvModel{"a": "1"}, kvModel{"b": "2", "c": "3"}, kvModel{"c": "3", "z": "9"})
	for lo := range len(history) + 1 {
		for hi := lo; hi <= len(history); hi++ {
			for i, got := range states {
				want, wantOK := -1, false
				for j := lo; j <= hi; j++ {
					if diffModels(got, modelAfter(history, j)) == "" {
						want, wantOK = j, true
						break
					}
				}
				if j, ok := findPrefix(history, lo, hi, got); j != want || ok != wantOK {
					t.Errorf("[%d, %d], state %d %v: findPrefix = %d, %v; want %d, %v", lo, hi, i, got, j, ok, want, wantOK)
				}
			}
		}
	}
}

package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// writeIngestTable writes, at path, a table of ops for DB.Ingest
// (writeIngestFile).
func writeIngestTable(t testing.TB, fs vfs.FS, path string, ops []kvOp) {
	t.Helper()
	if err := writeIngestFile(fs, path, ops); err != nil {
		t.Fatal(err)
	}
}

// writeIngestFile writes, at path, a table of ops for DB.Ingest: sets and
// deletes in key order (each at seqnum 0, as a loader writes them) and
// range deletions (at seqnum 1, the least a tombstone may carry); the
// file and its name durable.
func writeIngestFile(fs vfs.FS, path string, ops []kvOp) error {
	if err := fs.MkdirAll(fs.PathDir(path)); err != nil {
		return err
	}
	f, err := fs.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := sstable.NewWriter(f, sstable.WriterOptions{Filter: sstable.Bloom(10), BlockSize: 256})
	if err != nil {
		return err
	}
	var dels []sstable.RangeTombstone
	points := slices.Clone(ops)
	slices.SortStableFunc(points, func(a, b kvOp) int { return strings.Compare(a.key, b.key) })
	for _, op := range points {
		var err error
		switch {
		case op.rangeDel:
			dels = append(dels, sstable.RangeTombstone{Start: []byte(op.key), End: []byte(op.end), Seq: 1})
		case op.del:
			err = w.Add(sstable.MakeInternalKey([]byte(op.key), 0, sstable.KindDelete), nil)
		default:
			err = w.Add(sstable.MakeInternalKey([]byte(op.key), 0, sstable.KindSet), []byte(op.value))
		}
		if err != nil {
			return err
		}
	}
	if dels != nil {
		if err := w.SetRangeDels(sstable.FragmentRangeTombstones(dels)); err != nil {
			return err
		}
	}
	if _, err := w.Finish(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	for dir := fs.PathDir(path); ; dir = fs.PathDir(dir) { // the names too
		if err := fs.SyncDir(dir); err != nil {
			return err
		}
		if dir == fs.PathDir(dir) {
			return nil
		}
	}
}

// sets returns a set of each key, to the value key+tag.
func sets(tag string, keys ...string) []kvOp {
	var ops []kvOp
	for _, k := range keys {
		ops = append(ops, kvOp{key: k, value: k + tag})
	}
	return ops
}

// ingestedLevels returns the levels of the DB's ingested tables, and
// checks that each reads at one seqnum.
func ingestedLevels(t *testing.T, d *DB) []int {
	t.Helper()
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var levels []int
	for _, lt := range tables {
		if lt.Ingested {
			if lt.SmallestSeqNum != lt.LargestSeqNum {
				t.Errorf("ingested table %06d has seqnums %d-%d", lt.FileNum, lt.SmallestSeqNum, lt.LargestSeqNum)
			}
			levels = append(levels, lt.Level)
		}
	}
	return levels
}

// TestIngest ingests tables over a tree built by writes — in the
// memtable, in L0, compacted to the last level — and checks every read
// path against the model: the keys read as one write newer than every
// write before (shadowing older versions, deleting what their tombstones
// cover), a snapshot taken before sees none of them, a write after
// shadows them, and all of it survives a reopen. Each table lands at the
// level the overlaps call for.
func TestIngest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(d *DB, m kvModel) error // builds the tree
		tables [][]kvOp
		levels []int // of the ingested tables, from Tables: L0 first, then by key
	}{
		{"empty DB", nil, [][]kvOp{sets("i", "a", "b", "c"), sets("i", "x", "y")}, []int{6, 6}},
		{"overlaps the memtable", func(d *DB, m kvModel) error {
			return putAll(d, m, sets("w", "b", "q"))
		}, [][]kvOp{sets("i", "a", "b", "c")}, []int{0}}, // flushed first, the memtable is L0's
		{"overlaps L0", func(d *DB, m kvModel) error {
			if err := putAll(d, m, sets("w", "b", "q")); err != nil {
				return err
			}
			return d.Flush()
		}, [][]kvOp{sets("i", "a", "b", "c"), sets("i", "r", "s")}, []int{0, 6}},
		{"overlaps the last level", func(d *DB, m kvModel) error {
			if err := putAll(d, m, sets("w", "b", "c", "q")); err != nil {
				return err
			}
			if err := d.Compact(nil, nil); err != nil {
				return err
			}
			if err := putAll(d, m, sets("v", "z")); err != nil {
				return err
			}
			return d.Flush()
		}, [][]kvOp{append(sets("i", "a", "c"), kvOp{key: "p", del: true}, kvOp{key: "q", del: true})}, []int{5}},
		{"range tombstones", func(d *DB, m kvModel) error {
			if err := putAll(d, m, sets("w", "a", "d", "e", "f", "z")); err != nil {
				return err
			}
			return d.Compact(nil, nil)
		}, [][]kvOp{append(sets("i", "c", "g"), kvOp{rangeDel: true, key: "d", end: "f"})}, []int{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := &Options{FS: fs, BlockSize: 256}
			d, err := Open("/db", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { d.Close() }()
			m := kvModel{}
			if tc.before != nil {
				if err := tc.before(d, m); err != nil {
					t.Fatal(err)
				}
			}
			old := m.clone()
			snap, err := d.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for i, ops := range tc.tables {
				path := fmt.Sprintf("/load/%d.sst", i)
				writeIngestTable(t, fs, path, ops)
				paths = append(paths, path)
				m.apply(ops)
			}
			if err := d.Ingest(paths); err != nil {
				t.Fatal(err)
			}
			ks := &keySpace{}
			for c := 'a'; c <= 'z'; c++ {
				ks.keys = append(ks.keys, []byte{byte(c)})
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after Ingest: %v", err)
			}
			if _, err := checkState(snap, ks, old); err != nil {
				t.Fatalf("a snapshot taken before Ingest: %v", err)
			}
			snap.Close()
			if got := ingestedLevels(t, d); !slices.Equal(got, tc.levels) {
				t.Errorf("ingested tables at levels %v, want %v", got, tc.levels)
			}
			met := d.Metrics()
			if met.Ingests != 1 || met.TablesIngested != uint64(len(tc.tables)) || met.BytesIngested == 0 {
				t.Errorf("metrics: %d ingests, %d tables, %d bytes; want 1, %d, > 0", met.Ingests, met.TablesIngested, met.BytesIngested, len(tc.tables))
			}
			for _, p := range paths { // the sources are untouched
				if _, err := fs.Stat(p); err != nil {
					t.Errorf("source %s: %v", p, err)
				}
			}
			// Later writes shadow the ingested keys.
			if err := putAll(d, m, append(sets("later", "a", "c"), kvOp{key: "b", del: true})); err != nil {
				t.Fatal(err)
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after writes over the ingested keys: %v", err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if d, err = Open("/db", opts); err != nil {
				t.Fatal(err)
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after a reopen: %v", err)
			}
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after a compaction: %v", err)
			}
		})
	}
}

// putAll writes each op on its own and applies it to m.
func putAll(d *DB, m kvModel, ops []kvOp) error {
	for _, op := range ops {
		if err := applyOps(d, []kvOp{op}, nil); err != nil {
			return err
		}
		m.apply([]kvOp{op})
	}
	return nil
}

// TestIngestRefused gives Ingest tables it must refuse, each beside a good
// one: the error names the file and why (a damaged one wraps
// ErrCorruption), and the DB and its directory are as they were.
func TestIngestRefused(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := kvModel{}
	if err := putAll(d, m, sets("w", "a", "m")); err != nil {
		t.Fatal(err)
	}
	writeIngestTable(t, fs, "/in/good.sst", sets("i", "x", "y"))
	writeIngestTable(t, fs, "/in/overlap.sst", sets("i", "y", "z"))
	writeIngestTable(t, fs, "/in/corrupt.sst", sets("i", "c", "d"))
	flipByte(t, fs, "/in/corrupt.sst", 3) // in the first data block
	writeIngestTable(t, fs, "/in/covered.sst", append(sets("i", "e"), kvOp{rangeDel: true, key: "d", end: "f"}))
	writeRaw(t, fs, "/in/versions.sst", func(w *sstable.Writer) error {
		if err := w.Add(sstable.MakeInternalKey([]byte("k"), 2, sstable.KindSet), []byte("new")); err != nil {
			return err
		}
		return w.Add(sstable.MakeInternalKey([]byte("k"), 1, sstable.KindSet), []byte("old"))
	})
	writeRaw(t, fs, "/in/merge.sst", func(w *sstable.Writer) error {
		return w.Add(sstable.MakeInternalKey([]byte("k"), 0, sstable.KindMerge), []byte("+1"))
	})
	writeRaw(t, fs, "/in/blob.sst", func(w *sstable.Writer) error {
		return w.Add(sstable.MakeInternalKey([]byte("k"), 0, sstable.KindSetBlob), []byte{1, 2, 3})
	})
	writeRaw(t, fs, "/in/empty.sst", func(*sstable.Writer) error { return nil })
	if err := fs.MkdirAll("/in/dir.sst"); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	own := "/db/" + manifest.MakeFilename(manifest.FileTypeManifest, 1)
	for _, name := range names {
		if strings.HasPrefix(name, "MANIFEST") {
			own = "/db/" + name
		}
	}
	for _, tc := range []struct {
		path    string
		want    string
		corrupt bool
	}{
		{"/in/overlap.sst", "overlap", false},
		{"/in/corrupt.sst", "corrupt", true},
		{"/in/covered.sst", "own range tombstone", false},
		{"/in/versions.sst", "strictly increasing", false},
		{"/in/merge.sst", "no Options.Merger", false},
		{"/in/blob.sst", "blob handle", false},
		{"/in/empty.sst", "holds no keys", false},
		{"/in/missing.sst", "no such file", false},
		{"/in/dir.sst", "a directory", false},
		{own, "the DB's own directory", false},
	} {
		err := d.Ingest([]string{"/in/good.sst", tc.path})
		switch {
		case err == nil:
			t.Errorf("%s: Ingest succeeded", tc.path)
			continue
		case !strings.Contains(err.Error(), tc.path):
			t.Errorf("%s: %v, which does not name the file", tc.path, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v, want an error saying %q", tc.path, err, tc.want)
		case errors.Is(err, ErrCorruption) != tc.corrupt:
			t.Errorf("%s: %v: corruption %v, want %v", tc.path, err, errors.Is(err, ErrCorruption), tc.corrupt)
		}
		after, err := fs.List("/db")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(after, names) {
			t.Errorf("%s: the directory holds %v, before %v", tc.path, after, names)
		}
		if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
			t.Errorf("%s: the DB changed: %v %s", tc.path, err, diffModels(got, m))
		}
	}
	if met := d.Metrics(); met.Ingests != 0 {
		t.Errorf("Metrics.Ingests = %d after refusals only", met.Ingests)
	}
}

// writeRaw writes a table at path with add's entries.
func writeRaw(t *testing.T, fs vfs.FS, path string, add func(w *sstable.Writer) error) {
	t.Helper()
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := sstable.NewWriter(f, sstable.WriterOptions{Filter: sstable.Bloom(10)})
	if err != nil {
		t.Fatal(err)
	}
	if err := add(w); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestIngestCrash fails, in turn, each file system operation an Ingest of
// two tables makes — one overlapping the memtable, so that the Ingest
// flushes too — and crashes the file system just before it: after the
// failed Ingest the DB holds all of the tables (it returned nil) or none
// (an error), and every crash state reopens to all or none, with no table
// file the manifest does not list.
func TestIngestCrash(t *testing.T) {
	before := kvModel{}
	loaded := [][]kvOp{sets("i", "b", "c"), sets("i", "x", "y")}
	after := kvModel{}
	for fail := int64(0); ; fail++ {
		if fail > 500 {
			t.Fatal("Ingest still meets an injected failure after 500 operations")
		}
		mem := vfs.NewMem()
		var start atomic.Int64 // the index of the Ingest's first operation
		start.Store(-1)
		var mu sync.Mutex
		var crashed *vfs.MemFS
		inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
			if s := start.Load(); s < 0 || op.Index != s+fail {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			crashed = mem.CrashClone(vfs.CrashOptions{TornWrites: fail%2 == 1, Seed: uint64(fail)})
			return true
		})
		opts := &Options{FS: inj, L0CompactionTrigger: noCompaction}
		d, err := Open("/db", opts)
		if err != nil {
			t.Fatal(err)
		}
		clear(before)
		if err := putAll(d, before, sets("w", "a", "c", "m")); err != nil {
			t.Fatal(err)
		}
		clear(after)
		for k, v := range before {
			after[k] = v
		}
		var paths []string
		for i, ops := range loaded {
			paths = append(paths, fmt.Sprintf("/in/%d.sst", i))
			writeIngestTable(t, mem, paths[i], ops)
			after.apply(ops)
		}
		start.Store(inj.Ops())
		ierr := d.Ingest(paths)
		start.Store(-1) // the Ingest's operations only
		got, err := readAll(d)
		switch {
		case err != nil:
			t.Fatalf("fail %d: scan: %v", fail, err)
		case ierr == nil && diffModels(got, after) != "":
			t.Fatalf("fail %d: Ingest returned nil: %s", fail, diffModels(got, after))
		case ierr != nil && diffModels(got, before) != "":
			t.Fatalf("fail %d: Ingest returned %v: %s", fail, ierr, diffModels(got, before))
		}
		d.Close()
		mu.Lock()
		crashedFS := crashed
		mu.Unlock()
		if crashedFS == nil {
			if ierr != nil {
				t.Fatalf("no failure injected, yet Ingest returned %v", ierr)
			}
			t.Logf("crashed and failed each of the Ingest's %d operations", fail)
			return
		}
		checkIngestCrash(t, fmt.Sprintf("crash before operation %d", fail), crashedFS, paths, before, after)
		checkIngestCrash(t, fmt.Sprintf("crash after failing operation %d (Ingest: %v)", fail, ierr),
			mem.CrashClone(vfs.CrashOptions{Seed: uint64(fail)}), paths, before, after)
	}
}

// checkIngestCrash opens the crashed file system fs: the DB must hold
// before or after, no table the manifest does not list, and the sources
// whole.
func checkIngestCrash(t *testing.T, where string, fs *vfs.MemFS, paths []string, before, after kvModel) {
	t.Helper()
	d, err := Open("/db", &Options{FS: fs, L0CompactionTrigger: noCompaction})
	if err != nil {
		t.Fatalf("%s: Open: %v", where, err)
	}
	defer d.Close()
	got, err := readAll(d)
	if err != nil {
		t.Fatalf("%s: scan: %v", where, err)
	}
	if diffModels(got, before) != "" && diffModels(got, after) != "" {
		t.Fatalf("%s: neither all nor none: against none %s; against all %s", where, diffModels(got, before), diffModels(got, after))
	}
	if err := checkDirFiles(fs, "/db", d); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, p := range paths {
		if _, err := fs.Stat(p); err != nil {
			t.Fatalf("%s: source %s: %v", where, p, err)
		}
	}
}

// TestIngestRandom interleaves random writes, flushes, snapshots and
// ingests of random tables (sets, deletes and range deletions), and
// checks the DB and every snapshot against the model after each step.
func TestIngestRandom(t *testing.T) {
	for _, seed := range testSeeds(4, 2, testing.Short()) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 39))
			fs := vfs.NewMem()
			d, err := Open("/db", &Options{FS: fs, MemtableSize: 64 << 10, BlockSize: 256, L0CompactionTrigger: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ks := newKeySpace(rng, 200)
			m := kvModel{}
			type snapModel struct {
				s *Snapshot
				m kvModel
			}
			var snaps []snapModel
			defer func() {
				for _, s := range snaps {
					s.s.Close()
				}
			}()
			for step := range 60 {
				switch r := rng.IntN(10); {
				case r < 4:
					ops := randomIngestOps(rng, ks, step, 1)
					if err := putAll(d, m, ops); err != nil {
						t.Fatal(err)
					}
				case r < 5:
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				case r < 6:
					s, err := d.NewSnapshot()
					if err != nil {
						t.Fatal(err)
					}
					snaps = append(snaps, snapModel{s, m.clone()})
				default:
					var paths []string
					for i, ops := range randomIngestTables(rng, ks, step) {
						path := fmt.Sprintf("/in/%d-%d.sst", step, i)
						writeIngestTable(t, fs, path, ops)
						paths = append(paths, path)
						m.apply(ops)
					}
					if err := d.Ingest(paths); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
				}
				if _, err := checkState(d, ks, m); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if err := checkIter(rng, d, m, ks, 30); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				for i, s := range snaps {
					if _, err := checkState(s.s, ks, s.m); err != nil {
						t.Fatalf("step %d: snapshot %d: %v", step, i, err)
					}
				}
			}
		})
	}
}

// randomIngestOps returns n random writes of keys of ks: sets, deletes
// and, rarely, a range deletion.
func randomIngestOps(rng *rand.Rand, ks *keySpace, step, n int) []kvOp {
	var ops []kvOp
	for range n {
		k := string(ks.pick(rng))
		switch r := rng.IntN(10); {
		case r < 2:
			ops = append(ops, kvOp{key: k, del: true})
		case r < 3:
			end := string(ks.pick(rng))
			if k < end {
				ops = append(ops, kvOp{rangeDel: true, key: k, end: end})
			}
		default:
			ops = append(ops, kvOp{key: k, value: fmt.Sprintf("%s@%d.%d", k, step, rng.IntN(1000))})
		}
	}
	return ops
}

// randomIngestTables returns one to three tables to ingest together, over
// disjoint runs of ks's keys: distinct keys, sets and deletes, and a range
// deletion between two of them that covers none of the table's keys.
func randomIngestTables(rng *rand.Rand, ks *keySpace, step int) [][]kvOp {
	keys := slices.Clone(ks.keys)
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	n := 1 + rng.IntN(3)
	var tables [][]kvOp
	lo := rng.IntN(len(keys) / 2)
	for range n {
		hi := min(lo+1+rng.IntN(40), len(keys))
		var ops []kvOp
		for i := lo; i < hi; i++ {
			if rng.IntN(3) > 0 {
				continue
			}
			k := string(keys[i])
			if rng.IntN(5) == 0 {
				ops = append(ops, kvOp{key: k, del: true})
			} else {
				ops = append(ops, kvOp{key: k, value: fmt.Sprintf("%s@i%d", k, step)})
			}
		}
		// A range deletion over keys the table leaves out: between two
		// consecutive keys it holds, starting past the first.
		if len(ops) >= 2 && rng.IntN(2) == 0 {
			j := rng.IntN(len(ops) - 1)
			ops = append(ops, kvOp{rangeDel: true, key: ops[j].key + "\x00", end: ops[j+1].key})
		}
		if len(ops) > 0 {
			tables = append(tables, ops)
		}
		if lo = hi + 1; lo >= len(keys) {
			break
		}
	}
	return tables
}

// TestIngestExplain checks that Explain marks the step of an ingested
// table, and only it.
func TestIngestExplain(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Put([]byte("k"), []byte("old"), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	writeIngestTable(t, fs, "/in/k.sst", sets("new", "k"))
	if err := d.Ingest([]string{"/in/k.sst"}); err != nil {
		t.Fatal(err)
	}
	tr, err := d.Explain([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	var marked []bool
	for _, s := range tr.Steps {
		if s.Kind == TableStep {
			marked = append(marked, s.Ingested)
		}
	}
	// Both in L0, the ingested one newer: it answers, the other is not read.
	if !slices.Equal(marked, []bool{true}) || string(tr.Value) != "knew" || !strings.Contains(tr.String(), "(ingested)") {
		t.Errorf("steps' ingested marks %v, value %q; want [true], %q; trace:\n%s", marked, tr.Value, "knew", tr)
	}
}

// TestIngestKeepsEarlierWrites crashes right after an Ingest that flushed
// nothing (its table overlaps no memtable, or it has no table) over writes
// made without Sync: they must survive with it, so that a crash never
// keeps a later write and loses an earlier one, and an Ingest returns with
// every write before it durable whatever it adds. A crash just before the
// Ingest loses them: the Ingest is what keeps them.
func TestIngestKeepsEarlierWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tables map[string][]kvOp // path: the table's writes
	}{
		{"a table", map[string][]kvOp{"/in/z.sst": sets("i", "y", "z")}},
		{"no paths", nil},
		{"an empty list", map[string][]kvOp{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			d, err := Open("/db", &Options{FS: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			m := kvModel{}
			for _, op := range sets("w", "a", "b") {
				if err := d.Put([]byte(op.key), []byte(op.value), NoSync); err != nil {
					t.Fatal(err)
				}
				m.apply([]kvOp{op})
			}
			before := mem.CrashClone(vfs.CrashOptions{})
			var paths []string
			if tc.tables != nil {
				paths = []string{}
			}
			for path, ops := range tc.tables {
				writeIngestTable(t, mem, path, ops)
				paths = append(paths, path)
			}
			if err := d.Ingest(paths); err != nil {
				t.Fatal(err)
			}
			for _, ops := range tc.tables {
				m.apply(ops)
			}
			if got, want := d.Metrics().Ingests, uint64(min(len(tc.tables), 1)); got != want {
				t.Errorf("Metrics().Ingests = %d, want %d", got, want)
			}
			for _, c := range []struct {
				when string
				fs   *vfs.MemFS
				want kvModel
			}{
				{"before the Ingest", before, kvModel{}},
				{"after the Ingest", mem.CrashClone(vfs.CrashOptions{}), m},
			} {
				crashed, err := Open("/db", &Options{FS: c.fs})
				if err != nil {
					t.Fatal(err)
				}
				got, err := readAll(crashed)
				crashed.Close()
				if err != nil || diffModels(got, c.want) != "" {
					t.Errorf("a crash %s: %v %s", c.when, err, diffModels(got, c.want))
				}
			}
		})
	}
}

// TestIngestConcurrentWrites runs writers beside a sequence of ingests
// whose tables interleave with the writers' keys, so that most ingests
// flush the memtables first: every write and every ingested key is there
// at the end, with its value, and the files the version does not list are
// gone.
func TestIngestConcurrentWrites(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", &Options{FS: fs, MemtableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const writers, writes, ingests = 2, 600, 8
	m := kvModel{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				k, v := fmt.Sprintf("k%04d-w%d", i%200, g), fmt.Sprintf("v%d", i)
				if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				m[k] = v
				mu.Unlock()
			}
		}()
	}
	for n := range ingests {
		var ops []kvOp
		for i := n; i < 200; i += ingests {
			ops = append(ops, kvOp{key: fmt.Sprintf("k%04d-i", i), value: fmt.Sprintf("i%d", n)})
		}
		path := fmt.Sprintf("/in/%d.sst", n)
		writeIngestTable(t, fs, path, ops)
		if err := d.Ingest([]string{path}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		m.apply(ops)
		mu.Unlock()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
		t.Fatalf("%v %s", err, diffModels(got, m))
	}
	if err := checkDirFiles(fs, "/db", d); err != nil {
		t.Fatal(err)
	}
}

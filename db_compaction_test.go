package bloomkv

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// waitForCompactions waits until the picker has nothing left to do and
// the deleter has removed the files the compactions retired.
func (d *DB) waitForCompactions(t testing.TB) {
	t.Helper()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	for d.mu.bgErr == nil && (len(d.mu.compactions) > 0 || compaction.Pick(d.mu.current.Version, &d.opts.compaction, nil) != nil) {
		d.mu.cond.Wait()
	}
	err := d.mu.bgErr
	d.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	d.deleter.wait() // the files the compactions retired are gone
}

// smallTreeOptions make a deep tree from little data: tiny memtables,
// levels and tables.
func smallTreeOptions(fs vfs.FS) *Options {
	return &Options{FS: fs, MemtableSize: 64 << 10, BaseLevelSize: 64 << 10, TargetFileSize: 32 << 10, BlockSize: 1024}
}

// TestCompactionKeepsTheTreeATree writes, overwrites and deletes under
// sustained load and checks that compaction keeps L0 bounded, the deeper
// levels sorted and non-overlapping, and every key's value right.
func TestCompactionKeepsTheTreeATree(t *testing.T) {
	db, err := Open("/db", smallTreeOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	model := map[string]string{}
	maxL0 := 0
	for i := range 60_000 {
		k := fmt.Sprintf("key%06d", rng.IntN(20_000))
		if rng.IntN(10) == 0 {
			model[k] = ""
			delete(model, k)
			if err := db.Delete([]byte(k), NoSync); err != nil {
				t.Fatal(err)
			}
			continue
		}
		v := fmt.Sprintf("value-%d-%s", i, k)
		model[k] = v
		if err := db.Put([]byte(k), []byte(v), NoSync); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			maxL0 = max(maxL0, db.Metrics().Levels[0].Tables)
		}
	}
	db.waitForCompactions(t)
	if maxL0 > db.opts.L0StopTrigger {
		t.Fatalf("L0 reached %d tables, past the stop trigger %d", maxL0, db.opts.L0StopTrigger)
	}
	db.mu.Lock()
	err = db.mu.current.CheckInvariants()
	levels := 0
	for _, files := range db.mu.current.Levels[1:] {
		if len(files) > 0 {
			levels++
		}
	}
	db.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if levels < 2 {
		t.Fatalf("60,000 writes made only %d levels below L0", levels)
	}
	for i := range 20_000 {
		k := fmt.Sprintf("key%06d", i)
		v, err := db.Get([]byte(k))
		want, ok := model[k]
		if (err == nil) != ok || string(v) != want {
			t.Fatalf("Get(%s) = %q, %v; model %q, %v", k, v, err, want, ok)
		}
	}
	m := db.Metrics()
	if m.Compactions == 0 || m.WriteAmplification() <= 1 {
		t.Fatalf("compactions %d, write amplification %.2f", m.Compactions, m.WriteAmplification())
	}
	t.Logf("%d levels below L0, %d compactions, write amplification %.2f, %d stalls (%v)\n%s",
		levels, m.Compactions, m.WriteAmplification(), m.WriteStalls, m.WriteStallDuration, m)
}

// TestManualCompactionDropsTombstones deletes every key, compacts the whole
// range, and checks that no table is left — the tombstones had nothing
// below them to hide — and that the disk space is returned.
func TestManualCompactionDropsTombstones(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", smallTreeOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 5000 {
		if err := db.Put(key(i), make([]byte, 50), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	db.waitForCompactions(t)
	full := dirSize(t, fs, "/db")
	for i := range 5000 {
		if err := db.Delete(key(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	db.deleter.wait() // the compacted tables are gone from the directory
	m := db.Metrics()
	tables := 0
	for _, l := range m.Levels {
		tables += l.Tables
	}
	if tables != 0 || m.TombstonesDropped == 0 {
		t.Fatalf("%d tables left, %d tombstones dropped after deleting everything and compacting", tables, m.TombstonesDropped)
	}
	if _, err := db.Get(key(7)); err != ErrNotFound {
		t.Fatalf("Get of a deleted key: %v", err)
	}
	// What is left is the manifest (a record per flush and compaction),
	// CURRENT, LOCK and an empty WAL: a few KiB of the data's ~350 KiB.
	if empty := dirSize(t, fs, "/db"); empty > full/10 {
		t.Fatalf("%d bytes on disk after deleting all and compacting, %d before", empty, full)
	}
}

// dirSize returns the bytes of the files in dir.
func dirSize(t testing.TB, fs vfs.FS, dir string) int64 {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range names {
		info, err := fs.Stat(fs.PathJoin(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

var sustainedBytes = flag.Int64("db.sustained", 32<<20, "bytes TestSustainedWrites writes (the long form: 2 GiB and more)")

// TestSustainedWrites writes values as fast as it can, on the real file
// system, and checks that L0 stays bounded (writes are paced, and stall at
// the stop trigger), that the DB stays readable throughout, and reports
// the stalls, the delays and the write latencies' percentiles. The suite
// writes 32 MiB; -db.sustained=2147483648 is the long form.
func TestSustainedWrites(t *testing.T) {
	total := *sustainedBytes
	if race.Enabled && total > 8<<20 {
		total = 8 << 20
	}
	db, err := Open(t.TempDir(), &Options{MemtableSize: 1 << 20, BaseLevelSize: 4 << 20, TargetFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	value := make([]byte, 1000)
	maxL0, written, n := 0, int64(0), 0
	var latencies []time.Duration
	for written < total {
		for i := range value {
			value[i] = byte(rng.Uint32())
		}
		k := fmt.Sprintf("key%012d", rng.IntN(1<<40))
		start := time.Now()
		if err := db.Put([]byte(k), value, NoSync); err != nil {
			t.Fatal(err)
		}
		latencies = append(latencies, time.Since(start))
		written += int64(len(k) + len(value))
		if n++; n%2000 == 0 {
			m := db.Metrics()
			maxL0 = max(maxL0, m.Levels[0].Tables)
			if _, err := db.Get([]byte(k)); err != nil {
				t.Fatalf("after %d bytes: Get of the last key: %v", written, err)
			}
		}
	}
	m := db.Metrics()
	if maxL0 > db.opts.L0StopTrigger {
		t.Fatalf("L0 reached %d tables, past the stop trigger %d", maxL0, db.opts.L0StopTrigger)
	}
	levels := 0
	for _, l := range m.Levels[1:] {
		if l.Tables > 0 {
			levels++
		}
	}
	slices.Sort(latencies)
	pct := func(q float64) time.Duration { return latencies[min(int(q*float64(len(latencies))), len(latencies)-1)] }
	t.Logf("%d MiB in %d writes: L0 at most %d tables, %d levels below L0, %d compactions, write amplification %.2f, %d stalls for %v, %d delays for %v",
		written>>20, n, maxL0, levels, m.Compactions, m.WriteAmplification(), m.WriteStalls, m.WriteStallDuration, m.WriteDelays, m.WriteDelayDuration)
	t.Logf("write latency p50 %v, p99 %v, p99.9 %v, p99.99 %v, max %v", pct(0.5), pct(0.99), pct(0.999), pct(0.9999), latencies[len(latencies)-1])
}

// TestCompactionKeepsSnapshots compacts while a snapshot is open: the
// snapshot still reads the values of its time.
func TestCompactionKeepsSnapshots(t *testing.T) {
	db, err := Open("/db", smallTreeOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 3000 {
		db.Put(key(i), []byte("old"), NoSync)
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if i%2 == 0 {
			db.Delete(key(i), NoSync)
		} else {
			db.Put(key(i), []byte("new"), NoSync)
		}
	}
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if v, err := snap.Get(key(i)); err != nil || string(v) != "old" {
			t.Fatalf("snapshot Get(%d) = %q, %v after compaction", i, v, err)
		}
		v, err := db.Get(key(i))
		if i%2 == 0 && err != ErrNotFound || i%2 == 1 && string(v) != "new" {
			t.Fatalf("Get(%d) = %q, %v after compaction", i, v, err)
		}
	}
	snap.Close()
}

// TestCompactOnlyL0 compacts a tree whose data is all in overlapping L0
// tables: the result is one sorted run in the base level — L1 under static
// sizing, L6 under dynamic sizing while nothing is below L0.
func TestCompactOnlyL0(t *testing.T) {
	for _, tc := range []struct {
		sizing LevelSizing
		base   int
	}{{StaticLevelSizing, 1}, {DynamicLevelSizing, 6}} {
		t.Run(tc.sizing.String(), func(t *testing.T) { compactOnlyL0(t, tc.sizing, tc.base) })
	}
}

func compactOnlyL0(t *testing.T, sizing LevelSizing, base int) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), L0CompactionTrigger: 100, LevelSizing: sizing})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for round := range 3 {
		for i := range 100 {
			db.Put(key(i), []byte(fmt.Sprint(round)), NoSync)
		}
		db.Flush()
	}
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	m := db.Metrics()
	if m.Levels[0].Tables != 0 || m.Levels[base].Tables != 1 || m.BaseLevel != base {
		t.Fatalf("after Compact: L0 %d tables, L%d %d, base level L%d; want 0, 1 and L%d",
			m.Levels[0].Tables, base, m.Levels[base].Tables, m.BaseLevel, base)
	}
	if v, err := db.Get(key(42)); err != nil || string(v) != "2" {
		t.Fatalf("Get = %q, %v", v, err)
	}
}

// TestIntraL0Compaction slows the tables' reads, so that compactions fall
// behind the writes, L0 passes its slowdown trigger while the base level
// swells, and L0's newest tables are merged into one L0 table
// (compaction's intraL0); it checks that such compactions happened, the
// tree's invariants, and every read — the latest and at snapshots taken
// along the way — against a map model, before and after a reopen.
func TestIntraL0Compaction(t *testing.T) {
	var slowReads atomic.Bool
	slowReads.Store(true)
	fs := vfs.NewInjecting(vfs.NewMem(), func(op vfs.Op) bool {
		if op.Kind == vfs.OpReadAt && slowReads.Load() && strings.HasSuffix(op.Name, ".sst") {
			time.Sleep(time.Millisecond)
		}
		return false
	})
	var intraL0 atomic.Int64
	opts := smallTreeOptions(fs)
	opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 2, 4, 40
	opts.EventListener = &EventListener{CompactionEnd: func(info CompactionInfo) {
		if info.Level == 0 && info.OutputLevel == 0 && info.Err == nil {
			intraL0.Add(1)
		}
	}}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()

	type snapshotModel struct {
		snap  *Snapshot
		model map[string]string
	}
	var snaps []snapshotModel
	rng := rand.New(rand.NewPCG(5, 8))
	model := map[string]string{}
	const keys, maxWrites = 40_000, 400_000
	for i := 0; i < maxWrites && (intraL0.Load() < 2 || i < 40_000); i++ {
		k := fmt.Sprintf("key%05d", rng.IntN(keys))
		if rng.IntN(8) == 0 {
			delete(model, k)
			if err := db.Delete([]byte(k), NoSync); err != nil {
				t.Fatal(err)
			}
		} else {
			v := fmt.Sprintf("value-%d-%s", i, k)
			model[k] = v
			if err := db.Put([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if i%10_000 == 9_999 && len(snaps) < 4 {
			s, err := db.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, snapshotModel{s, maps.Clone(model)})
		}
	}
	if intraL0.Load() == 0 {
		t.Fatalf("%d writes with slow table reads made no intra-L0 compaction\n%s", maxWrites, db.Metrics())
	}
	check := func(when string, get func([]byte) ([]byte, error), model map[string]string) {
		t.Helper()
		for i := range keys {
			k := fmt.Sprintf("key%05d", i)
			v, err := get([]byte(k))
			want, ok := model[k]
			if ok && (err != nil || string(v) != want) || !ok && err != ErrNotFound {
				t.Fatalf("%s: Get(%s) = %q, %v; model %q, %v", when, k, v, err, want, ok)
			}
		}
	}
	for i, s := range snaps {
		check(fmt.Sprintf("snapshot %d", i), s.snap.Get, s.model)
	}
	slowReads.Store(false)
	db.waitForCompactions(t)
	for i, s := range snaps {
		check(fmt.Sprintf("snapshot %d, compactions done", i), s.snap.Get, s.model)
		s.snap.Close()
	}
	check("latest", db.Get, model)
	db.mu.Lock()
	err = db.mu.current.CheckInvariants()
	db.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("/db", opts); err != nil {
		t.Fatal(err)
	}
	check("reopened", db.Get, model)
	t.Logf("%d intra-L0 compactions; %s", intraL0.Load(), db.Metrics())
}

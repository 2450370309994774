package bloomkv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/compaction"
	"github.com/bloomkv/bloomkv/internal/vfs"
)

// waitForCompactions waits until the picker has nothing left to do.
func (d *DB) waitForCompactions(t testing.TB) {
	t.Helper()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.mu.bgErr == nil && (d.mu.compacting || compaction.Pick(d.mu.current.Version, &d.opts.compaction) != nil) {
		d.mu.cond.Wait()
	}
	if d.mu.bgErr != nil {
		t.Fatal(d.mu.bgErr)
	}
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
// range, and checks that no table is left: the tombstones had nothing
// below them to hide.
func TestManualCompactionDropsTombstones(t *testing.T) {
	db, err := Open("/db", smallTreeOptions(vfs.NewMem()))
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
	for i := range 5000 {
		if err := db.Delete(key(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
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
// tables: the result is one sorted run in L1.
func TestCompactOnlyL0(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), L0CompactionTrigger: 100})
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
	if m.Levels[0].Tables != 0 || m.Levels[1].Tables != 1 {
		t.Fatalf("after Compact: L0 %d tables, L1 %d; want 0 and 1", m.Levels[0].Tables, m.Levels[1].Tables)
	}
	if v, err := db.Get(key(42)); err != nil || string(v) != "2" {
		t.Fatalf("Get = %q, %v", v, err)
	}
}

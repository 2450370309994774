package bloomkv

import (
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

var checkpointRounds = flag.Int("checkpoint.rounds", 6, "checkpoints TestCheckpointUnderLoad takes while writers write (long form: 200)")

// noLinkFS is an FS that makes no hard links: the checkpoint copies.
type noLinkFS struct{ vfs.FS }

// checkpointOptions are small enough that a few hundred kilobytes of
// writes flush and compact, so a checkpoint meets tables in several
// levels, immutable memtables and a WAL being written.
func checkpointOptions(fs vfs.FS) *Options {
	return &Options{
		FS:                  fs,
		MemtableSize:        64 << 10,
		BaseLevelSize:       128 << 10,
		TargetFileSize:      16 << 10,
		BlockSize:           1024,
		L0CompactionTrigger: 2,
	}
}

// checkDBHolds opens the DB in dir on opts read-write, checks that it holds
// exactly want, and closes it.
func checkDBHolds(t *testing.T, dir string, opts *Options, want kvModel) {
	t.Helper()
	o := *opts
	o.ErrorIfNotExists = true
	d, err := Open(dir, &o)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	got, err := readAll(d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffModels(got, want); diff != "" {
		t.Fatalf("%s differs from the model:\n%s", dir, diff)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpoint takes checkpoints of a DB whose writes lie in every
// place — tables of several levels, immutable memtables, the WAL being
// written, with writes not yet synced — on file systems that link and
// that copy, and checks that each opens holding exactly the writes before
// it, and that the DB goes on unchanged.
func TestCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fs    func(t *testing.T) (vfs.FS, string)
		links bool // tables are hard links, checked with os.SameFile
	}{
		{"mem", func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "/" }, false},
		{"mem without links", func(t *testing.T) (vfs.FS, string) { return noLinkFS{vfs.NewMem()}, "/" }, false},
		{"os", func(t *testing.T) (vfs.FS, string) { return vfs.Default, t.TempDir() }, true},
		{"os without links", func(t *testing.T) (vfs.FS, string) { return noLinkFS{vfs.Default}, t.TempDir() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, root := tc.fs(t)
			opts := checkpointOptions(fs)
			dbDir := fs.PathJoin(root, "db")
			d, err := Open(dbDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			m := kvModel{}
			write := func(n int, wo *WriteOptions) {
				for i := range n {
					k := fmt.Sprintf("k%05d", rng.IntN(3000))
					if i%7 == 0 {
						if err := d.Delete([]byte(k), wo); err != nil {
							t.Fatal(err)
						}
						delete(m, k)
						continue
					}
					v := fmt.Sprintf("%s@%d:%s", k, i, strings.Repeat("v", rng.IntN(200)))
					if err := d.Put([]byte(k), []byte(v), wo); err != nil {
						t.Fatal(err)
					}
					m[k] = v
				}
			}
			var wantAt []kvModel
			var dirs []string
			take := func(copts *CheckpointOptions) {
				dir := fs.PathJoin(root, fmt.Sprintf("ckpt%d", len(dirs)))
				if err := d.Checkpoint(dir, copts); err != nil {
					t.Fatalf("Checkpoint: %v", err)
				}
				dirs, wantAt = append(dirs, dir), append(wantAt, m.clone())
			}
			take(nil) // empty
			write(1500, NoSync)
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			write(1000, NoSync) // tables in L0, immutable memtables, a WAL not synced
			take(nil)
			write(300, NoSync)
			take(&CheckpointOptions{Flush: true})
			write(300, NoSync) // after the last checkpoint: in none

			// The second checkpoint met both tables and a WAL.
			var tables, wals int
			names, err := fs.List(dirs[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				typ, _, _ := manifest.ParseFilename(name)
				tables += b2i(typ == manifest.FileTypeTable)
				wals += b2i(typ == manifest.FileTypeWAL)
			}
			if tables < 2 || wals < 1 {
				t.Fatalf("the checkpoint holds %d tables and %d WALs; the test wants both", tables, wals)
			}
			for i, dir := range dirs {
				checkDBHolds(t, dir, opts, wantAt[i])
			}
			got, err := readAll(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := diffModels(got, m); diff != "" {
				t.Fatalf("the DB changed:\n%s", diff)
			}
			if tc.links {
				// Compacted, so that no compaction replaces the tables
				// between the checkpoint and the check.
				if err := d.Compact(nil, nil); err != nil {
					t.Fatal(err)
				}
				dir := fs.PathJoin(root, "linked")
				if err := d.Checkpoint(dir, nil); err != nil {
					t.Fatal(err)
				}
				checkTablesLinked(t, dbDir, dir)
			}
		})
	}
}

// checkTablesLinked checks that the tables of checkpoint dir that the DB
// in dbDir still has are the same files, and that there is one.
func checkTablesLinked(t *testing.T, dbDir, dir string) {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, e := range names {
		if typ, _, ok := manifest.ParseFilename(e.Name()); !ok || typ != manifest.FileTypeTable {
			continue
		}
		a, err1 := os.Stat(filepath.Join(dir, e.Name()))
		b, err2 := os.Stat(filepath.Join(dbDir, e.Name()))
		if err1 != nil || err2 != nil {
			continue // compacted away in the DB since
		}
		if !os.SameFile(a, b) {
			t.Errorf("%s is a copy, not a hard link", e.Name())
		}
		shared++
	}
	if shared == 0 {
		t.Errorf("the checkpoint shares no table with the DB")
	}
}

// TestCheckpointTarget checks which directories Checkpoint takes: a
// missing one (made, parents too) or an empty one, and no other; a refused
// one is left as it was.
func TestCheckpointTarget(t *testing.T) {
	root := t.TempDir()
	d, err := Open(filepath.Join(root, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Put([]byte("k"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir     string
		wantErr error // nil: taken
	}{
		{filepath.Join(root, "a", "b", "new"), nil},
		{empty, nil},
		{full, iofs.ErrExist},
		{file, iofs.ErrExist},
		{filepath.Join(root, "db"), iofs.ErrExist}, // the DB itself
		{filepath.Join(root, "a", "b", "new"), iofs.ErrExist},
	} {
		err := d.Checkpoint(tc.dir, nil)
		if tc.wantErr == nil {
			if err != nil {
				t.Errorf("Checkpoint(%s): %v", tc.dir, err)
				continue
			}
			checkDBHolds(t, tc.dir, &Options{}, kvModel{"k": "v"})
			continue
		}
		if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.dir) {
			t.Errorf("Checkpoint(%s) = %v; want an error naming it, wrapping %v", tc.dir, err, tc.wantErr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(full, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the refused directory's file: %q, %v", b, err)
	}
	if names, _ := os.ReadDir(full); len(names) != 1 {
		t.Errorf("the refused directory now holds %v", names)
	}
	var ae *ArgumentError
	if err := d.Checkpoint("", nil); !errors.As(err, &ae) || ae.Arg != "dir" {
		t.Errorf(`Checkpoint("") = %v; want an ArgumentError for dir`, err)
	}
	d.Close()
	if err := d.Checkpoint(filepath.Join(root, "after"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Checkpoint after Close = %v; want ErrClosed", err)
	}
	if _, err := os.Stat(filepath.Join(root, "after")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("Checkpoint after Close made its directory (%v)", err)
	}
}

// TestCheckpointReadOnly checkpoints a DB opened read-only, whose writes
// are in tables and in WALs it replayed into memory, and checks that the
// source directory is unchanged, byte for byte.
func TestCheckpointReadOnly(t *testing.T) {
	mem := vfs.NewMem()
	opts := checkpointOptions(mem)
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	m := kvModel{}
	for i := range 2000 {
		k, v := fmt.Sprintf("k%04d", i%1500), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := d.Close(); err != nil { // writes the WAL's buffer
		t.Fatal(err)
	}
	before := dirContents(t, mem, "db")
	ro := *opts
	ro.ReadOnly = true
	r, err := Open("db", &ro)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Checkpoint("ckpt", &CheckpointOptions{Flush: true}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Checkpoint with Flush of a read-only DB = %v; want ErrReadOnly", err)
	}
	if err := r.Checkpoint("ckpt", nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if after := dirContents(t, mem, "db"); !equalContents(before, after) {
		t.Errorf("the read-only DB's directory changed")
	}
	// Read-only first: the checkpoint has its LOCK file.
	checkDBHolds(t, "ckpt", &ro, m)
	checkDBHolds(t, "ckpt", opts, m)
}

func equalContents(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ckptWrite is one write of TestCheckpointUnderLoad's history, stamped
// from one counter when it began and when it was acknowledged (0: not
// yet).
type ckptWrite struct {
	start, ack int64
}

// ckptKeys is how many keys each writer of TestCheckpointUnderLoad cycles
// through: its i-th write sets key i mod ckptKeys, so that a checkpoint
// stays small however long the test runs, and tells how many of the
// writer's writes it holds (the largest i it shows, plus one).
const ckptKeys = 300

func ckptKey(w, i int) string { return fmt.Sprintf("w%d-%04d", w, i%ckptKeys) }
func ckptValue(w, i int) string {
	return fmt.Sprintf("%d/%d|%s", w, i, strings.Repeat("x", (w*31+i)%97))
}

// ckptState is the state writer w's first n writes leave.
func ckptState(w, n int, into kvModel) {
	for i := max(0, n-ckptKeys); i < n; i++ {
		into[ckptKey(w, i)] = ckptValue(w, i)
	}
}

// TestCheckpointUnderLoad takes checkpoints while writers write, over and
// over, and checks each, read after a crash, against the history: it must
// hold every write acknowledged before Checkpoint was called, none that
// began after it returned, and be a prefix of the history — no write present whose start
// came after the acknowledgement of a write missing. Meanwhile the DB
// flushes and compacts, and keeps every write.
//
// Long form: go test -run TestCheckpointUnderLoad -checkpoint.rounds=200 .
func TestCheckpointUnderLoad(t *testing.T) {
	mem := vfs.NewMem()
	opts := checkpointOptions(mem)
	opts.MaxConcurrentCompactions = 2
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	const writers = 4
	var clock atomic.Int64
	var mu sync.Mutex
	history := make([][]ckptWrite, writers) // guarded by mu
	// Writers write holding gate's read lock; a checkpoint's check holds
	// it, so that the history stays short and the check sees it whole.
	var gate sync.RWMutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stopOnce sync.Once
	stopWriters := func() {
		stopOnce.Do(func() { close(stop) })
		wg.Wait()
	}
	defer stopWriters() // before Close, on a failure too
	acked := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, writes := range history {
			for _, h := range writes {
				if h.ack != 0 {
					n++
				}
			}
		}
		return n
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				gate.RLock()
				mu.Lock()
				history[w] = append(history[w], ckptWrite{start: clock.Add(1)})
				mu.Unlock()
				wo := NoSync
				if i%50 == 0 {
					wo = Sync
				}
				err := d.Put([]byte(ckptKey(w, i)), []byte(ckptValue(w, i)), wo)
				if err == nil {
					mu.Lock()
					history[w][i].ack = clock.Add(1)
					mu.Unlock()
				}
				gate.RUnlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}

	rounds := *checkpointRounds
	if testing.Short() {
		rounds = min(rounds, 3)
	}
	for round := range rounds {
		// Some writes between two checkpoints, so that each holds more.
		for target := acked() + 400; acked() < target; {
			time.Sleep(time.Millisecond)
		}
		dir := fmt.Sprintf("ckpt%d", round)
		called := clock.Add(1)
		if err := d.Checkpoint(dir, nil); err != nil {
			t.Fatal(err)
		}
		returned := clock.Add(1)
		gate.Lock()
		mu.Lock()
		hist := make([][]ckptWrite, writers)
		for w := range hist {
			hist[w] = append([]ckptWrite(nil), history[w]...)
		}
		mu.Unlock()
		// Read after a crash: Checkpoint made everything durable.
		err := checkCheckpointPrefix(mem.CrashClone(vfs.CrashOptions{}), opts, dir, hist, called, returned)
		gate.Unlock()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		removeDir(t, mem, dir) // so that the next rounds' crashes copy less
	}
	stopWriters()

	// The DB kept every write.
	mu.Lock()
	defer mu.Unlock()
	got, err := readAll(d)
	if err != nil {
		t.Fatal(err)
	}
	want := kvModel{}
	for w, writes := range history {
		n := 0
		for n < len(writes) && writes[n].ack != 0 {
			n++
		}
		ckptState(w, n, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("the DB lost %s: %q", k, got[k])
		}
	}
	if m := d.Metrics(); m.Flushes == 0 || m.Compactions == 0 {
		t.Errorf("no flush (%d) or compaction (%d) ran beside the checkpoints", m.Flushes, m.Compactions)
	}
}

// checkCheckpointPrefix opens checkpoint dir and checks it against hist,
// the history as of after Checkpoint returned; called and returned are the
// clock's stamps of the call and its return.
func checkCheckpointPrefix(fs vfs.FS, opts *Options, dir string, hist [][]ckptWrite, called, returned int64) error {
	o := *opts
	o.FS, o.ReadOnly = fs, true
	c, err := Open(dir, &o)
	if err != nil {
		return err
	}
	defer c.Close()
	got, err := readAll(c)
	if err != nil {
		return err
	}
	// How many of each writer's writes the checkpoint holds: its state
	// must be that of the writer's first n writes.
	want := kvModel{}
	lastStart, firstMissingAck := int64(0), int64(1<<62)
	total := 0
	for w, writes := range hist {
		n := 0
		for k, v := range got {
			var gw, gi int
			if _, err := fmt.Sscanf(v, "%d/%d|", &gw, &gi); err == nil && gw == w && strings.HasPrefix(k, fmt.Sprintf("w%d-", w)) {
				n = max(n, gi+1)
			}
		}
		switch {
		case n > len(writes):
			return fmt.Errorf("writer %d: holds %d writes, of %d begun", w, n, len(writes))
		case n > 0 && writes[n-1].start > returned:
			return fmt.Errorf("writer %d: holds its write %d, which began after Checkpoint returned", w, n-1)
		case n < len(writes) && writes[n].ack != 0 && writes[n].ack < called:
			return fmt.Errorf("writer %d: holds %d writes; its write %d was acknowledged before Checkpoint was called", w, n, n)
		}
		if n > 0 {
			lastStart = max(lastStart, writes[n-1].start)
		}
		if n < len(writes) && writes[n].ack != 0 {
			firstMissingAck = min(firstMissingAck, writes[n].ack)
		}
		ckptState(w, n, want)
		total += n
	}
	if diff := diffModels(got, want); diff != "" {
		return fmt.Errorf("not the state of a prefix of each writer's writes:\n%s", diff)
	}
	// A prefix of the whole history: no write present began after the
	// acknowledgement of one missing.
	if lastStart > firstMissingAck {
		return fmt.Errorf("not a prefix: a write present began at %d, after one missing was acknowledged at %d", lastStart, firstMissingAck)
	}
	if total == 0 {
		return errors.New("the checkpoint holds no write")
	}
	return nil
}

// TestCheckpointCrash crashes the file system at every operation of a
// checkpoint in turn, and fails each operation in turn: the DB's own
// directory must come back whole, and the checkpoint whole (CURRENT
// there) or refused by Open (no CURRENT); a failed Checkpoint leaves no
// directory behind; a crash after Checkpoint returned keeps it whole.
func TestCheckpointCrash(t *testing.T) {
	for _, linking := range []bool{true, false} {
		t.Run(fmt.Sprintf("links=%v", linking), func(t *testing.T) {
			testCheckpointCrash(t, linking)
		})
	}
}

func testCheckpointCrash(t *testing.T, linking bool) {
	mem := vfs.NewMem()
	var crashAt atomic.Int64 // the checkpoint's operation to crash or fail at; -1: none
	crashAt.Store(-1)
	var failing atomic.Bool
	var seen atomic.Int64
	var crashed *vfs.MemFS
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		if !strings.HasPrefix(op.Name, "ckpt") && !strings.HasPrefix(op.NewName, "ckpt") {
			return false
		}
		if seen.Add(1)-1 != crashAt.Load() {
			return false
		}
		if failing.Load() {
			return true
		}
		crashed = mem.CrashClone(vfs.CrashOptions{})
		return false
	})
	var fs vfs.FS = inj
	if !linking {
		fs = noLinkFS{inj}
	}
	opts := checkpointOptions(fs)
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := kvModel{}
	for i := range 1500 {
		k, v := fmt.Sprintf("k%04d", i%900), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v), nil); err != nil { // Sync: durable
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	crashedOpts := func(fs vfs.FS) *Options {
		o := *opts
		o.FS = fs
		return &o
	}
	// A crash after Checkpoint returned keeps the checkpoint whole.
	if err := d.Checkpoint("ckpt-done", nil); err != nil {
		t.Fatal(err)
	}
	checkDBHolds(t, "ckpt-done", crashedOpts(mem.CrashClone(vfs.CrashOptions{})), m)

	for _, fail := range []bool{false, true} {
		failing.Store(fail)
		for at := int64(0); ; at++ {
			dir := fmt.Sprintf("ckpt-%v-%d", fail, at)
			seen.Store(0)
			crashed = nil
			crashAt.Store(at)
			err := d.Checkpoint(dir, nil)
			crashAt.Store(-1)
			if seen.Load() <= at { // the checkpoint has fewer operations
				if err != nil {
					t.Fatal(err)
				}
				break
			}
			if fail {
				if err == nil || !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("operation %d failed: Checkpoint = %v; want the failure", at, err)
				}
				if _, serr := mem.Stat(dir); !errors.Is(serr, iofs.ErrNotExist) {
					names, _ := mem.List(dir)
					t.Fatalf("operation %d failed: Checkpoint left %s (%v) holding %v", at, dir, serr, names)
				}
				continue
			}
			if err != nil {
				t.Fatalf("crash at operation %d: Checkpoint = %v", at, err)
			}
			if crashed == nil {
				t.Fatalf("no crash at operation %d", at)
			}
			checkDBHolds(t, "db", crashedOpts(crashed), m)
			if _, err := crashed.Stat(crashed.PathJoin(dir, "CURRENT")); err == nil {
				checkDBHolds(t, dir, crashedOpts(crashed), m)
				continue
			}
			// Without CURRENT, Open refuses the directory if any table or
			// WAL of the checkpoint survived in it.
			names, _ := crashed.List(dir)
			dbFiles := false
			for _, name := range names {
				typ, _, ok := manifest.ParseFilename(name)
				dbFiles = dbFiles || ok && (typ == manifest.FileTypeTable || typ == manifest.FileTypeWAL)
			}
			if !dbFiles {
				continue
			}
			if r, err := Open(dir, crashedOpts(crashed)); err == nil || !errors.Is(err, ErrCorruption) {
				if r != nil {
					r.Close()
				}
				t.Fatalf("crash at operation %d: Open of %s without CURRENT, holding %v: %v; want ErrCorruption", at, dir, names, err)
			}
		}
	}
}

// removeDir removes dir and the files in it.
func removeDir(t *testing.T, fs vfs.FS, dir string) {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := fs.Remove(fs.PathJoin(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Remove(dir); err != nil {
		t.Fatal(err)
	}
}

package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// deadlockTimeout bounds the wait for work that deadlocks if a lock is
// held where it must not be: far beyond what the work takes on a loaded
// machine under -race, so that only a deadlock reaches it.
const deadlockTimeout = 3 * time.Minute

// within returns what ch delivers, or fails t, saying that what did not
// happen, once deadlockTimeout has passed.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadlockTimeout):
		t.Fatalf("%s: not after %v", what, deadlockTimeout)
		panic("unreachable")
	}
}

// TestDeleter checks the deleter on its own: files go in the order
// queued, wait returns once what was queued is removed, stop removes what
// is queued before it returns, and nothing queued after stop is removed.
// Each removal waits for a gate the test opens once the call under test
// has been made, so that there is work left for it to wait for.
func TestDeleter(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(*deleter) // wait or stop
	}{
		{"wait", (*deleter).wait},
		{"stop", (*deleter).stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var removed []uint64
			gate := make(chan struct{})
			var dl deleter
			var pendingErr error // pending's count as each file's removal starts
			dl.start(func(f obsoleteFile) {
				<-gate
				mu.Lock()
				if n := dl.pending(); n != 50-len(removed) && pendingErr == nil {
					pendingErr = fmt.Errorf("removing file %d of 50: pending = %d, want %d", len(removed), n, 50-len(removed))
				}
				removed = append(removed, f.num)
				mu.Unlock()
			})
			var want []uint64
			for num := range uint64(50) {
				if !dl.add(obsoleteFile{t: manifest.FileTypeTable, num: num}) {
					t.Fatalf("add %d refused before stop", num)
				}
				want = append(want, num)
			}
			if n := dl.pending(); n != len(want) {
				t.Errorf("%d files queued, none removed: pending = %d", len(want), n)
			}
			returned := make(chan []uint64)
			go func() {
				tc.call(&dl)
				mu.Lock()
				returned <- slices.Clone(removed)
				mu.Unlock()
			}()
			close(gate)
			got := within(t, returned, tc.name+" returning")
			if !slices.Equal(got, want) {
				t.Fatalf("%s returned with %v removed, want %v", tc.name, got, want)
			}
			if n := dl.pending(); n != 0 || pendingErr != nil {
				t.Errorf("after %s: pending = %d; %v", tc.name, n, pendingErr)
			}
			dl.stop() // a second stop, for "stop", returns at once
			if dl.add(obsoleteFile{t: manifest.FileTypeTable, num: 99}) {
				t.Fatal("add after stop queued the file")
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(removed, want) {
				t.Fatalf("after stop: removed %v, want %v", removed, want)
			}
		})
	}
}

// TestDeletionEventsMayCallTheDB runs compactions that retire tables, blob
// files and WALs with a listener whose deletion callbacks call the DB
// (Metrics takes the DB's mutex, Get a read state): the deletions must be
// reported with no lock of the DB held, or the workload deadlocks.
func TestDeletionEventsMayCallTheDB(t *testing.T) {
	var db atomic.Pointer[DB]
	var tables, blobs, wals, calls atomic.Int64
	var callErr atomic.Pointer[error]
	callDB := func(n *atomic.Int64) {
		n.Add(1)
		d := db.Load()
		if d == nil {
			return // Open's own deletions, before the test has the DB
		}
		calls.Add(1)
		_ = d.Metrics()
		if _, err := d.Get([]byte("key00000")); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrClosed) {
			callErr.CompareAndSwap(nil, &err)
		}
	}
	o := blobTestOptions(vfs.NewMem())
	o.EventListener = &EventListener{
		TableDeleted:    func(TableDeleteInfo) { callDB(&tables) },
		BlobFileDeleted: func(TableDeleteInfo) { callDB(&blobs) },
		WALDeleted:      func(WALDeleteInfo) { callDB(&wals) },
	}
	d, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	db.Store(d)
	done := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(38, 1))
		for range 3 {
			for _, i := range rng.Perm(2000) {
				if err := d.Put(fmt.Appendf(nil, "key%05d", i), fillValue(rng, nil, 300), NoSync); err != nil {
					done <- err
					return
				}
			}
		}
		if err := d.Compact(nil, nil); err != nil {
			done <- err
			return
		}
		d.deleter.wait()
		done <- d.Close()
	}()
	if err := within(t, done, "the workload's end (a deletion callback that calls the DB deadlocks it)"); err != nil {
		t.Fatal(err)
	}
	if p := callErr.Load(); p != nil {
		t.Fatalf("Get from a deletion callback: %v", *p)
	}
	if tables.Load() == 0 || blobs.Load() == 0 || wals.Load() == 0 || calls.Load() == 0 {
		t.Fatalf("deletions reported: %d tables, %d blob files, %d WALs (%d called the DB); want some of each",
			tables.Load(), blobs.Load(), wals.Load(), calls.Load())
	}
}

// TestCloseDrainsDeletionsBeforeUnlock holds the deleter of a DB inside
// the removal of a table the DB's compaction retired, then closes the DB:
// while that removal is under way the directory stays locked (an Open of
// it fails with ErrLocked); Close returns once the retired files are gone,
// so that an Open at once in the same directory finds no obsolete table,
// and the closed DB removes nothing after Close has returned.
func TestCloseDrainsDeletionsBeforeUnlock(t *testing.T) {
	mem := vfs.NewMem()
	var closed atomic.Bool
	var lateRemoves atomic.Int64
	blocked, gate := make(chan struct{}), make(chan struct{})
	var blockOnce sync.Once
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		if op.Kind == vfs.OpRemove {
			if closed.Load() {
				lateRemoves.Add(1)
			}
			if strings.HasSuffix(op.Name, ".sst") {
				blockOnce.Do(func() { close(blocked); <-gate })
			}
		}
		return false
	})
	o := smallTreeOptions(inj)
	d, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	w := newBGWorkload()
	for round := range 3 {
		if err := w.write(d, round, 0, 400); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	within(t, blocked, "the removal of a table a full compaction retired")
	// The table whose removal is held, and any file queued behind it,
	// are pending.
	if n := d.Metrics().ObsoleteFilesPending; n < 1 {
		t.Errorf("with a table's removal held: Metrics.ObsoleteFilesPending = %d, want at least 1", n)
	}
	closeErr := make(chan error, 1)
	go func() { closeErr <- d.Close() }()
	if d2, err := Open("db", &Options{FS: mem}); !errors.Is(err, ErrLocked) {
		if err == nil {
			d2.Close()
		}
		t.Fatalf("Open while the closing DB removes a file: %v, want ErrLocked", err)
	}
	close(gate)
	if err := within(t, closeErr, "Close returning"); err != nil {
		t.Fatal(err)
	}
	closed.Store(true)

	var reopenDeleted atomic.Int64
	d2, err := Open("db", &Options{FS: mem, EventListener: &EventListener{
		TableDeleted: func(TableDeleteInfo) { reopenDeleted.Add(1) },
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if n := reopenDeleted.Load(); n != 0 {
		t.Errorf("Open after Close deleted %d obsolete tables; Close should have", n)
	}
	if n := lateRemoves.Load(); n != 0 {
		t.Errorf("the closed DB removed %d files after Close returned", n)
	}
	if err := w.check(d2); err != nil {
		t.Fatal(err)
	}
}

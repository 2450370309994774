package manifest

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// rotationSetup creates a manifest (number 1) on fs and appends n generated
// edits to it.
func rotationSetup(t *testing.T, fs vfs.FS, seed uint64, n int) (*Log, *gen) {
	t.Helper()
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed)), m: newModel()}
	l, err := Create(fs, dir, 1, &start)
	if err != nil {
		t.Fatal(err)
	}
	appendEdits(t, l, g, n)
	return l, g
}

// sameButNext reports whether got is want with NextFileNumber either
// want's or next: what a rotation to a manifest recording next may leave.
func sameButNext(got, want State, next uint64) bool {
	if got.NextFileNumber != want.NextFileNumber && got.NextFileNumber != next {
		return false
	}
	got.NextFileNumber = want.NextFileNumber
	return sameState(got, want)
}

// TestRotate rotates a manifest with edits to a new one: the new Log holds
// the same state with the raised counter, CURRENT names it, the old Log
// takes no more appends, and the new one does, for Recover to find.
func TestRotate(t *testing.T) {
	mem := newMemDir(t)
	l, g := rotationSetup(t, mem, 20, 30)
	old := l.State()
	// WALs numbered from the counter since the last edit: the DB's counter
	// is ahead of the manifest's.
	num := old.NextFileNumber + 3
	next := num + 1
	l2, err := l.Rotate(num, next)
	if err != nil {
		t.Fatal(err)
	}
	want := old
	want.NextFileNumber = next
	if !sameState(l2.State(), want) || l2.FileNum() != num || l2.Err() != nil {
		t.Fatalf("the new log holds manifest %d, state %+v; want %d, %+v", l2.FileNum(), l2.State(), num, want)
	}
	if _, err := l.Append(&VersionEdit{}); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("Append to the old log after Rotate: %v, want ErrLogClosed", err)
	}
	if _, err := l.Rotate(next, next+1); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("Rotate of the old log after Rotate: %v, want ErrLogClosed", err)
	}
	names, _ := mem.List(dir)
	if wantNames := []string{"CURRENT", "MANIFEST-000001", MakeFilename(FileTypeManifest, num)}; !slices.Equal(names, wantNames) {
		t.Fatalf("directory holds %v, want %v (Rotate leaves deleting the old manifest to the caller)", names, wantNames)
	}
	b, _ := readFile(mem, dir+"/CURRENT")
	if string(b) != MakeFilename(FileTypeManifest, num)+"\n" {
		t.Fatalf("CURRENT holds %q", b)
	}
	rec := mustRecover(t, mem.CrashClone(vfs.CrashOptions{}))
	if rec.ManifestFileNum != num || rec.Edits != 1 || !sameState(rec.State, want) {
		t.Fatalf("after a crash Recover = manifest %d, %d edits", rec.ManifestFileNum, rec.Edits)
	}
	if l2.RotationDue(0) {
		t.Fatal("a manifest holding only its snapshot is due for rotation")
	}

	// The new log goes on from the snapshot.
	g.m.nextNum = next
	states := appendEdits(t, l2, g, 10)
	rec = mustRecover(t, mem.CrashClone(vfs.CrashOptions{}))
	if rec.ManifestFileNum != num || rec.Edits != 11 || !sameState(rec.State, states[10]) {
		t.Fatalf("after appends to the new log Recover = manifest %d, %d edits", rec.ManifestFileNum, rec.Edits)
	}
	l2.Close()
}

// TestRotateRejects checks the refusals: a number that may be in use, a
// closed log, a broken one. A refused number creates nothing and leaves the
// log live.
func TestRotateRejects(t *testing.T) {
	mem := newMemDir(t)
	l, _ := rotationSetup(t, mem, 21, 5)
	before := l.State()
	for _, num := range []uint64{1, before.NextFileNumber - 1} {
		if l2, err := l.Rotate(num, before.NextFileNumber+5); err == nil || l2 != nil || !strings.Contains(err.Error(), "below the next file number") {
			t.Fatalf("Rotate to number %d (next file number %d): %v", num, before.NextFileNumber, err)
		}
	}
	if names, _ := mem.List(dir); !slices.Equal(names, []string{"CURRENT", "MANIFEST-000001"}) {
		t.Fatalf("a refused Rotate left %v", names)
	}
	if l.Err() != nil || !sameState(l.State(), before) {
		t.Fatal("a refused Rotate changed the log")
	}
	if _, err := l.Append(&VersionEdit{NextFileNumber: before.NextFileNumber + 1}); err != nil {
		t.Fatalf("Append after a refused Rotate: %v", err)
	}
	l.Close()
	if _, err := l.Rotate(100, 101); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("Rotate of a closed log: %v", err)
	}

	// A broken log: its failed edit may or may not be durable, so its
	// state is no snapshot to carry over.
	mem = newMemDir(t)
	armed := false
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool { return armed && op.Kind == vfs.OpSync })
	l, g := rotationSetup(t, inj, 22, 5)
	armed = true
	if _, err := l.Append(g.next()); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Append with a failing sync: %v", err)
	}
	armed = false
	num := l.State().NextFileNumber + 10
	if l2, err := l.Rotate(num, num+1); !errors.Is(err, vfs.ErrInjected) || l2 != nil {
		t.Fatalf("Rotate of a broken log: %v", err)
	}
	if l.RotationDue(0) {
		t.Fatal("a broken log is due for rotation")
	}
	if names, _ := mem.List(dir); !slices.Equal(names, []string{"CURRENT", "MANIFEST-000001"}) {
		t.Fatalf("Rotate of a broken log left %v", names)
	}
	l.Close()
}

// TestRotationDue checks when a log is due, against sizes measured on the
// file: from maxSize on, once the edits after the snapshot are as long as
// the snapshot — so a snapshot alone larger than maxSize does not make
// every edit rotate.
func TestRotationDue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tables  int // in the snapshot
		maxSize int64
	}{
		{"small snapshot", 0, 2 << 10},
		{"snapshot above maxSize", 200, 2 << 10},
		{"maxSize 0", 50, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := newMemDir(t)
			g := &gen{rng: rand.New(rand.NewPCG(23, 23)), m: newModel()}
			snap := &VersionEdit{}
			for range tc.tables {
				// Deep levels are sorted runs: give each table its own
				// slot range of one level, padded to a known length.
				f := g.newTable(0, 0)
				snap.NewFiles = append(snap.NewFiles, NewFile{Level: 0, Meta: f})
			}
			snap.NextFileNumber, snap.LastSeqNum = g.m.nextNum, g.m.lastSeq
			l, err := Create(mem, dir, 1, snap)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			g.m.apply(snap)
			snapSize := fileSize(t, mem, dir+"/MANIFEST-000001")
			if tc.tables > 0 && snapSize < 4<<10 && tc.maxSize > 0 {
				t.Fatalf("snapshot of %d bytes, want one above maxSize %d", snapSize, tc.maxSize)
			}
			sawDue := false
			for i := 0; !sawDue; i++ {
				if i > 10000 {
					t.Fatal("never due")
				}
				size := fileSize(t, mem, dir+"/MANIFEST-000001")
				want := size >= tc.maxSize && size >= 2*snapSize
				if got := l.RotationDue(tc.maxSize); got != want {
					t.Fatalf("after %d edits, %d bytes (snapshot %d, maxSize %d): RotationDue %v, want %v",
						i, size, snapSize, tc.maxSize, got, want)
				}
				sawDue = want
				e := g.next()
				if _, err := l.Append(e); err != nil {
					t.Fatal(err)
				}
				g.m.apply(e)
			}
		})
	}
}

// fileSize returns the length of the named file.
func fileSize(t *testing.T, fs vfs.FS, name string) int64 {
	t.Helper()
	st, err := fs.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestRotateFailures fails each file system operation of a Rotate in turn.
// Before the rename over CURRENT the log stays live: it takes appends,
// which Recover finds (crash or not) in the old manifest, the directory is
// as before, and the next rotation waits until the log has grown by an
// eighth. From the rename on, the log is broken: every Append fails, and
// Recover finds the same state whichever manifest CURRENT names.
func TestRotateFailures(t *testing.T) {
	sawBefore, sawAfter := 0, 0
	for i := int64(0); ; i++ {
		mem := newMemDir(t)
		failAt := int64(-1)
		renamed := false // a rename over CURRENT went through before the failure
		var failed vfs.Op
		inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
			if failAt >= 0 && op.Index == failAt {
				failed = op
				return true
			}
			if op.Kind == vfs.OpRename && strings.HasSuffix(op.NewName, "/CURRENT") {
				renamed = true
			}
			return false
		})
		l, g := rotationSetup(t, inj, 24, 20)
		old := l.State()
		num := old.NextFileNumber + 2
		renamed, failAt = false, inj.Ops()+i
		l2, err := l.Rotate(num, num+1)
		if inj.Injected() == 0 {
			if err != nil || l2 == nil {
				t.Fatalf("Rotate without a failure: %v", err)
			}
			if i < 10 {
				t.Fatalf("Rotate took only %d operations", i)
			}
			l2.Close()
			break
		}
		if err == nil && failed.Kind == vfs.OpClose && failed.Name == dir+"/MANIFEST-000001" {
			// Closing the obsolete log loses nothing: Rotate goes on.
			if rec := mustRecover(t, mem.CrashClone(vfs.CrashOptions{})); rec.ManifestFileNum != num || !sameButNext(rec.State, old, num+1) {
				t.Fatalf("failing %s: Recover = manifest %d", failed, rec.ManifestFileNum)
			}
			l2.Close()
			continue
		}
		if err == nil || l2 != nil || !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("failing %s: Rotate returned %v, %v", failed, l2, err)
		}
		if !renamed {
			sawBefore++
			if l.Err() != nil {
				t.Fatalf("failing %s, before the rename: the log is broken: %v", failed, l.Err())
			}
			if names, _ := mem.List(dir); !slices.Equal(names, []string{"CURRENT", "MANIFEST-000001"}) {
				t.Fatalf("failing %s, before the rename: directory holds %v", failed, names)
			}
			size := l.Size()
			if l.RotationDue(0) {
				t.Fatalf("failing %s: due again at once", failed)
			}
			states := []State{old}
			for l.Size() < size+size/8 {
				if l.RotationDue(0) {
					t.Fatalf("failing %s: due again after growing from %d to %d bytes", failed, size, l.Size())
				}
				states = append(states, appendEdits(t, l, g, 1)[1])
			}
			if !l.RotationDue(0) {
				t.Fatalf("failing %s: not due after growing from %d to %d bytes", failed, size, l.Size())
			}
			last := states[len(states)-1]
			for _, fs := range []vfs.FS{mem, mem.CrashClone(vfs.CrashOptions{})} {
				rec := mustRecover(t, fs)
				if rec.ManifestFileNum != 1 || !sameState(rec.State, last) {
					t.Fatalf("failing %s, before the rename: Recover = manifest %d, not the old one with the appends since", failed, rec.ManifestFileNum)
				}
			}
			// And a retry goes through.
			l2, err := l.Rotate(num+5, num+6)
			if err != nil {
				t.Fatalf("failing %s: the retry: %v", failed, err)
			}
			l2.Close()
		} else {
			sawAfter++
			if !errors.Is(l.Err(), vfs.ErrInjected) {
				t.Fatalf("failing %s, after the rename: the log is not broken (Err %v)", failed, l.Err())
			}
			if _, err := l.Append(g.next()); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("failing %s, after the rename: Append: %v", failed, err)
			}
			if l.RotationDue(0) {
				t.Fatalf("failing %s, after the rename: due", failed)
			}
			for _, fs := range []vfs.FS{mem, mem.CrashClone(vfs.CrashOptions{})} {
				rec := mustRecover(t, fs)
				if (rec.ManifestFileNum != 1 && rec.ManifestFileNum != num) || !sameButNext(rec.State, old, num+1) {
					t.Fatalf("failing %s, after the rename: Recover = manifest %d, another state", failed, rec.ManifestFileNum)
				}
			}
		}
		l.Close()
	}
	if sawBefore < 8 || sawAfter == 0 {
		t.Fatalf("%d failures before the rename, %d after: the rotation's steps are not what the test expects", sawBefore, sawAfter)
	}
}

// TestRotateCrash crashes before every file system operation of a Rotate,
// and after it, with and without torn writes: Recover finds the old
// manifest or the new one, with the same state, and the new one once
// Rotate returned.
func TestRotateCrash(t *testing.T) {
	for _, torn := range []bool{false, true} {
		mem := newMemDir(t)
		var during bool
		var old State
		var num uint64
		crashes, sawNew := 0, 0
		check := func(after bool) {
			crashes++
			rec, err := Recover(mem.CrashClone(vfs.CrashOptions{TornWrites: torn, Seed: uint64(crashes)}), dir)
			switch {
			case err != nil:
				t.Fatalf("torn %v, crash %d: Recover: %v", torn, crashes, err)
			case rec.ManifestFileNum == num:
				sawNew++
			case after || rec.ManifestFileNum != 1:
				t.Fatalf("torn %v, crash %d (Rotate returned: %v): Recover found manifest %d", torn, crashes, after, rec.ManifestFileNum)
			}
			if !sameButNext(rec.State, old, num+1) {
				t.Fatalf("torn %v, crash %d: Recover found manifest %d with another state", torn, crashes, rec.ManifestFileNum)
			}
		}
		inj := vfs.NewInjecting(mem, func(vfs.Op) bool {
			if during {
				check(false)
			}
			return false
		})
		l, _ := rotationSetup(t, inj, 25, 20)
		old = l.State()
		num = old.NextFileNumber
		during = true
		l2, err := l.Rotate(num, num+1)
		during = false
		if err != nil {
			t.Fatal(err)
		}
		check(true)
		l2.Close()
		if crashes < 10 || sawNew < 2 || sawNew == crashes {
			t.Fatalf("torn %v: %d crashes, %d of them recovering the new manifest; want ≥ 10, some of each", torn, crashes, sawNew)
		}
	}
}

// TestReplace breaks a manifest with a failed append and replaces it: the
// new manifest holds exactly the edits whose Append returned nil (the model),
// not the failed one, with the raised counters; CURRENT names it and Recover
// finds it; the new Log takes appends. Replace refuses a healthy Log and a
// closed one.
func TestReplace(t *testing.T) {
	mem := newMemDir(t)
	armed := false
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool { return armed && op.Kind == vfs.OpSync })
	l, g := rotationSetup(t, inj, 23, 8)
	num := l.State().NextFileNumber + 10
	if _, err := l.Replace(num, num+1, 0); err == nil {
		t.Fatal("Replace of a healthy log succeeded")
	}
	want := l.State()
	before := g.m.clone()
	armed = true
	if _, err := l.Append(g.next()); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Append with a failing sync: %v", err)
	}
	armed = false
	g.m = before // the failed edit is not in the model
	if !l.Replaceable() {
		t.Fatal("a log broken by a failed Append is not replaceable")
	}
	l2, err := l.Replace(num, num+1, want.LastSeqNum+5)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if _, err := l.Append(g.next()); !errors.Is(err, ErrLogClosed) {
		t.Errorf("Append to the replaced log: %v; want ErrLogClosed", err)
	}
	// The replacement raises the counters it is given: so must the model.
	g.m.nextNum, g.m.lastSeq = num+1, want.LastSeqNum+5
	if err := g.m.check(l2.State()); err != nil {
		t.Errorf("the replacement's state: %v", err)
	}
	appendEdits(t, l2, g, 3)
	l2.Close()
	rec, err := Recover(mem, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ManifestFileNum != num {
		t.Errorf("CURRENT names %06d; want the replacement %06d", rec.ManifestFileNum, num)
	}
	if err := g.m.check(rec.State); err != nil {
		t.Errorf("recovered state: %v", err)
	}
	if _, err := l2.Replace(num+5, num+6, 0); !errors.Is(err, ErrLogClosed) {
		t.Errorf("Replace of a closed log: %v; want ErrLogClosed", err)
	}
}

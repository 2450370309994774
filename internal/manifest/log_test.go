package manifest

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

const dir = "/db"

// newMemDir returns a MemFS holding an empty, durable dir.
func newMemDir(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	if err := mem.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := mem.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return mem
}

// appendEdits appends n generated edits to l and returns the state after
// each, states[0] being the state before the first.
func appendEdits(t *testing.T, l *Log, g *gen, n int) []State {
	t.Helper()
	states := []State{l.State()}
	for i := range n {
		e := g.next()
		s, err := l.Append(e)
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		g.m.apply(e)
		if !sameState(s, l.State()) {
			t.Fatal("Append's state differs from State()")
		}
		if err := g.m.check(s); err != nil {
			t.Fatalf("after Append %d: %v", i, err)
		}
		states = append(states, s)
	}
	return states
}

func mustRecover(t *testing.T, fs vfs.FS) Recovered {
	t.Helper()
	rec, err := Recover(fs, dir)
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	return rec
}

func TestCreateAppendRecover(t *testing.T) {
	mem := newMemDir(t)
	g := &gen{rng: rand.New(rand.NewPCG(8, 8)), m: newModel()}
	l, err := Create(mem, dir, 1, &start)
	if err != nil {
		t.Fatal(err)
	}
	states := appendEdits(t, l, g, 100)
	g.keyPad = 20000 // edits of ~40 KB, which span log blocks
	states = append(states, appendEdits(t, l, g, 5)[1:]...)
	g.keyPad = 0
	states = append(states, appendEdits(t, l, g, 5)[1:]...)

	rec := mustRecover(t, mem)
	if !sameState(rec.State, states[len(states)-1]) || rec.ManifestFileNum != 1 || rec.Edits != len(states) || rec.TornTail {
		t.Fatalf("Recover = manifest %d, %d edits, torn %v; want manifest 1, %d edits\n%s", rec.ManifestFileNum, rec.Edits, rec.TornTail, len(states), rec.Version)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := l.Append(&VersionEdit{}); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	names, _ := mem.List(dir)
	if !slices.Equal(names, []string{"CURRENT", "MANIFEST-000001"}) {
		t.Fatalf("directory holds %v", names)
	}

	// Roll to a new manifest holding a snapshot, as Open does.
	snap := rec.SnapshotEdit()
	num := snap.NextFileNumber
	snap.NextFileNumber++
	l2, err := Create(mem, dir, num, snap)
	if err != nil {
		t.Fatal(err)
	}
	want := rec.State
	want.NextFileNumber++
	if !sameState(l2.State(), want) || l2.FileNum() != num || l2.Size() == 0 || l2.Err() != nil {
		t.Fatal("the new log's state is not the snapshot's")
	}
	rec2 := mustRecover(t, mem)
	if rec2.ManifestFileNum != num || rec2.Edits != 1 || !sameState(rec2.State, want) {
		t.Fatalf("after the roll Recover = manifest %d, %d edits", rec2.ManifestFileNum, rec2.Edits)
	}
	b, _ := readFile(mem, dir+"/CURRENT")
	if string(b) != MakeFilename(FileTypeManifest, num)+"\n" {
		t.Fatalf("CURRENT holds %q", b)
	}
	l2.Close()
}

func readFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	_, err = f.ReadAt(b, 0)
	return b, err
}

func writeFile(t *testing.T, fs vfs.FS, name string, b []byte) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestCreateRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		num  uint64
		edit VersionEdit
		want string
	}{
		{"file number 0", 0, VersionEdit{NextFileNumber: 5}, "file number 0"},
		{"number not allocated", 5, VersionEdit{NextFileNumber: 5}, "not above the manifest's number 5"},
		{"no next file number", 1, VersionEdit{}, "not above the manifest's number 1"},
		{"not a snapshot", 1, VersionEdit{NextFileNumber: 5, DeletedFiles: []DeletedFile{{1, 2}}}, "no level holds it"},
	} {
		mem := newMemDir(t)
		l, err := Create(mem, dir, tc.num, &tc.edit)
		if err == nil || !strings.Contains(err.Error(), tc.want) || l != nil {
			t.Errorf("%s: Create error %v, want one containing %q", tc.name, err, tc.want)
		}
		if names, _ := mem.List(dir); len(names) != 0 {
			t.Errorf("%s: Create left %v", tc.name, names)
		}
	}
}

func TestAppendInvalidEditKeepsLog(t *testing.T) {
	mem := newMemDir(t)
	l, err := Create(mem, dir, 1, &start)
	if err != nil {
		t.Fatal(err)
	}
	size := l.Size()
	if _, err := l.Append(&VersionEdit{DeletedFiles: []DeletedFile{{0, 1}}}); err == nil {
		t.Fatal("invalid edit appended")
	}
	if l.Size() != size || l.Err() != nil {
		t.Fatal("a rejected edit was written, or broke the log")
	}
	if _, err := l.Append(&VersionEdit{NextFileNumber: 7}); err != nil {
		t.Fatal(err)
	}
	if rec := mustRecover(t, mem); rec.NextFileNumber != 7 || rec.Edits != 2 {
		t.Fatalf("Recover = %+v", rec)
	}
}

// TestAppendFailureSticky fails a write or a sync of the manifest: Append
// reports it, every later Append returns it, and the manifest holds the
// acknowledged edits, with the failed one or without it.
func TestAppendFailureSticky(t *testing.T) {
	for _, kind := range []vfs.OpKind{vfs.OpWrite, vfs.OpSync} {
		mem := newMemDir(t)
		armed := false
		fs := vfs.NewInjecting(mem, func(op vfs.Op) bool {
			return armed && op.Kind == kind && strings.HasPrefix(op.Name, dir+"/MANIFEST-")
		})
		g := &gen{rng: rand.New(rand.NewPCG(9, 9)), m: newModel()}
		l, err := Create(fs, dir, 1, &start)
		if err != nil {
			t.Fatal(err)
		}
		states := appendEdits(t, l, g, 3)
		armed = true
		e := g.next()
		if _, err := l.Append(e); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("%v: Append error %v", kind, err)
		}
		armed = false
		g.m.apply(e)
		st, err := l.Append(g.next())
		if !errors.Is(err, vfs.ErrInjected) || !errors.Is(l.Err(), vfs.ErrInjected) {
			t.Fatalf("%v: Append after a failure: %v, Err %v", kind, err, l.Err())
		}
		if !sameState(st, states[3]) || !sameState(l.State(), states[3]) {
			t.Fatalf("%v: the failed edit changed the state", kind)
		}
		// A write that failed was not passed on; a sync that failed left
		// the edit written, visible now and lost in a crash.
		live, crashed := mustRecover(t, mem), mustRecover(t, mem.CrashClone(vfs.CrashOptions{}))
		wantLive := 4
		if kind == vfs.OpWrite {
			wantLive = 3
		}
		if live.Edits-1 != wantLive || crashed.Edits-1 != 3 || !sameState(crashed.State, states[3]) {
			t.Fatalf("%v: recovered %d edits live, %d after a crash", kind, live.Edits-1, crashed.Edits-1)
		}
		if err := g.m.check(live.State); kind == vfs.OpSync && err != nil {
			t.Fatalf("%v: live state: %v", kind, err)
		}
		l.Close()
	}
}

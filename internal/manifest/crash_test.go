package manifest

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestCreateFailures fails each operation of Create in turn, for a new
// database and for a roll from an existing manifest: the error is
// reported, CURRENT names a complete manifest (or none, for a new
// database), and nothing is left behind unless CURRENT may name it.
func TestCreateFailures(t *testing.T) {
	for _, roll := range []bool{false, true} {
		for i := int64(0); ; i++ {
			mem := newMemDir(t)
			var old State
			var snap *VersionEdit
			var num uint64 = 1
			if roll {
				g := &gen{rng: rand.New(rand.NewPCG(10, 10)), m: newModel()}
				l, err := Create(mem, dir, 1, &start)
				if err != nil {
					t.Fatal(err)
				}
				old = appendEdits(t, l, g, 10)[10]
				l.Close()
				snap = old.SnapshotEdit()
				num = snap.NextFileNumber
				snap.NextFileNumber++
			} else {
				snap = &VersionEdit{NextFileNumber: 2}
			}
			want, _ := State{}.Apply(snap)
			inj := vfs.NewInjecting(mem, vfs.FailAt(i))
			l, err := Create(inj, dir, num, snap)
			if inj.Injected() == 0 {
				if err != nil {
					t.Fatalf("roll %v: Create with no failure: %v", roll, err)
				}
				if rec := mustRecover(t, mem.CrashClone(vfs.CrashOptions{})); rec.ManifestFileNum != num {
					t.Fatalf("roll %v: a crash after Create returned recovers manifest %d", roll, rec.ManifestFileNum)
				}
				if i < 10 {
					t.Fatalf("roll %v: Create took only %d operations", roll, i)
				}
				break
			}
			if err == nil || l != nil {
				t.Fatalf("roll %v, op %d: Create succeeded despite the failure", roll, i)
			}
			for _, fs := range []vfs.FS{mem, mem.CrashClone(vfs.CrashOptions{})} {
				rec, err := Recover(fs, dir)
				names, _ := fs.List(dir)
				switch {
				case !roll && errors.Is(err, ErrNoManifest):
					if fs == vfs.FS(mem) && len(names) != 0 {
						t.Fatalf("op %d: failed Create left %v", i, names)
					}
				case err != nil:
					t.Fatalf("roll %v, op %d: Recover: %v", roll, i, err)
				case rec.ManifestFileNum == num:
					if !sameState(rec.State, want) {
						t.Fatalf("roll %v, op %d: new manifest recovers a different state", roll, i)
					}
				case roll && rec.ManifestFileNum == 1:
					if !sameState(rec.State, old) {
						t.Fatalf("op %d: old manifest recovers a different state", i)
					}
					if fs == vfs.FS(mem) && !slices.Equal(names, []string{"CURRENT", "MANIFEST-000001"}) {
						t.Fatalf("op %d: failed Create left %v", i, names)
					}
				default:
					t.Fatalf("roll %v, op %d: CURRENT names manifest %d", roll, i, rec.ManifestFileNum)
				}
			}
		}
	}
}

// TestCrash crashes at every file-system operation of a workload — Create,
// appends (some spanning log blocks), a roll to a new manifest, more
// appends — with and without torn writes, and recovers each crash. The
// result must be the state after a prefix of the edits that includes every
// acknowledged one: the last acknowledged state, or the one in flight.
func TestCrash(t *testing.T) {
	for _, torn := range []bool{false, true} {
		mem := newMemDir(t)
		var history []State // every state the workload moves through
		acked := -1         // index in history of the last acknowledged state
		inFlight := false   // whether history[acked+1] is being written
		crashes, tornTails, ahead := 0, 0, 0
		check := func() {
			opts := []vfs.CrashOptions{{}}
			if torn {
				opts = []vfs.CrashOptions{{TornWrites: true, Seed: 1}, {TornWrites: true, Seed: 2}, {TornWrites: true, Seed: 3}}
			}
			for _, o := range opts {
				crashes++
				rec, err := Recover(mem.CrashClone(o), dir)
				if acked < 0 && errors.Is(err, ErrNoManifest) {
					continue
				}
				if err != nil {
					t.Fatalf("torn %v, crash %d (acked %d): Recover: %v", torn, crashes, acked, err)
				}
				if rec.TornTail {
					tornTails++
				}
				hi := acked
				if inFlight {
					hi++
				}
				found := false
				for j := max(acked, 0); j <= hi; j++ {
					if sameState(rec.State, history[j]) {
						found = true
						if j > acked {
							ahead++
						}
						break
					}
				}
				if !found {
					t.Fatalf("torn %v, crash %d: recovered a state that is not in history[%d:%d]:\n%s", torn, crashes, acked, hi+1, rec.Version)
				}
			}
		}
		fs := vfs.NewInjecting(mem, func(vfs.Op) bool { check(); return false })

		g := &gen{rng: rand.New(rand.NewPCG(11, 11)), m: newModel()}
		first, _ := State{}.Apply(&start)
		history = append(history, first)
		inFlight = true
		l, err := Create(fs, dir, 1, &start)
		if err != nil {
			t.Fatal(err)
		}
		acked, inFlight = 0, false
		appendAll := func(n int) {
			for i := range n {
				g.keyPad = 0
				if i%7 == 3 {
					g.keyPad = 15000
				}
				e := g.next()
				next, err := l.State().Apply(e)
				if err != nil {
					t.Fatal(err)
				}
				history = append(history, next)
				inFlight = true
				if _, err := l.Append(e); err != nil {
					t.Fatal(err)
				}
				g.m.apply(e)
				acked, inFlight = acked+1, false
			}
		}
		appendAll(15)

		snap := l.State().SnapshotEdit()
		num := snap.NextFileNumber
		snap.NextFileNumber++
		g.m.nextNum++
		rolled, _ := State{}.Apply(snap)
		history = append(history, rolled)
		inFlight = true
		l2, err := Create(fs, dir, num, snap)
		if err != nil {
			t.Fatal(err)
		}
		acked, inFlight = acked+1, false
		l.Close()
		l = l2
		appendAll(15)
		check()
		l.Close()
		if torn && tornTails == 0 {
			t.Error("no crash left a torn tail")
		}
		if torn && ahead == 0 {
			t.Error("no crash kept an edit whose Append had not returned")
		}
		t.Logf("torn %v: %d crashes, %d torn tails, %d ahead of the acknowledged state", torn, crashes, tornTails, ahead)
	}
}

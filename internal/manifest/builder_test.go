package manifest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// start is the first edit of every state the tests build: like a new DB's
// snapshot, it sets the next file number.
var start = VersionEdit{NextFileNumber: 2}

// TestApplyRandom drives State.Apply with random valid edits and random
// invalid ones, against the model: valid edits give the model's state,
// invalid ones are rejected and change nothing.
func TestApplyRandom(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 6))
		m := newModel()
		g := &gen{rng: rng, m: m}
		s, err := State{}.Apply(&start)
		if err != nil {
			t.Fatal(err)
		}
		var batch []*VersionEdit
		batchStart, batchModel := s, m.clone()
		for step := range 300 {
			if rng.IntN(4) == 0 {
				bad, why := g.invalid(s)
				if bad != nil {
					got, err := s.Apply(bad)
					if err == nil {
						t.Fatalf("seed %d step %d: invalid edit (%s) accepted: %+v", seed, step, why, bad)
					}
					if !sameState(got, s) {
						t.Fatalf("seed %d step %d: rejected edit changed the state", seed, step)
					}
					continue
				}
			}
			e := g.next()
			next, err := s.Apply(e)
			if err != nil {
				t.Fatalf("seed %d step %d: valid edit %+v rejected: %v\nstate:\n%s", seed, step, e, err, s.Version)
			}
			m.apply(e)
			if err := m.check(next); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			s = next
			// Applying a run of edits at once, through one Builder, must
			// give what applying them one by one gave.
			batch = append(batch, e)
			if len(batch) == 10 {
				got, err := batchStart.Apply(batch...)
				if err != nil {
					t.Fatalf("seed %d step %d: batch: %v", seed, step, err)
				}
				if !sameState(got, s) {
					t.Fatalf("seed %d step %d: batch result differs:\n%s\nwant\n%s", seed, step, got.Version, s.Version)
				}
				if err := batchModel.check(batchStart); err != nil {
					t.Fatalf("seed %d: an earlier state changed: %v", seed, err)
				}
				batch, batchStart, batchModel = nil, s, m.clone()
			}
		}
	}
}

// invalid returns an edit that must not apply to s, and why, or nil if the
// state offers no such edit of the kind drawn.
func (g *gen) invalid(s State) (*VersionEdit, string) {
	var files []NewFile
	for level, f := range s.Version.Files() {
		files = append(files, NewFile{Level: level, Meta: f})
	}
	pick := func() (NewFile, bool) {
		if len(files) == 0 {
			return NewFile{}, false
		}
		return files[g.rng.IntN(len(files))], true
	}
	next, last := s.NextFileNumber, s.LastSeqNum
	switch g.rng.IntN(8) {
	case 0:
		return &VersionEdit{DeletedFiles: []DeletedFile{{Level: g.rng.IntN(NumLevels), FileNum: next + 5}}}, "delete a missing table"
	case 1:
		if f, ok := pick(); ok {
			return &VersionEdit{DeletedFiles: []DeletedFile{{Level: (f.Level + 1) % NumLevels, FileNum: f.Meta.FileNum}}}, "delete from the wrong level"
		}
	case 2:
		if f, ok := pick(); ok {
			return &VersionEdit{NewFiles: []NewFile{{Level: f.Level, Meta: f.Meta}}}, "add a table twice"
		}
	case 3:
		if f, ok := pick(); ok {
			return &VersionEdit{DeletedFiles: []DeletedFile{{f.Level, f.Meta.FileNum}, {f.Level, f.Meta.FileNum}}}, "delete a table twice"
		}
	case 4:
		// A new L1+ table overlapping one already there.
		for _, f := range files {
			if f.Level > 0 {
				o := meta(next, string(f.Meta.Largest.UserKey), string(f.Meta.Largest.UserKey)+"z", 1, 1)
				return &VersionEdit{NextFileNumber: next + 1, NewFiles: []NewFile{{Level: f.Level, Meta: o}}}, "overlap in L1+"
			}
		}
	case 5:
		if next > 2 {
			return &VersionEdit{NextFileNumber: next - 1}, "next file number back"
		}
	case 6:
		return &VersionEdit{NewFiles: []NewFile{{Level: 3, Meta: meta(next, "a", "a", 1, 1)}}}, "table number not allocated"
	case 7:
		return &VersionEdit{NextFileNumber: next + 1, NewFiles: []NewFile{{Level: 6, Meta: meta(next, "zz", "zz", last+1, last+1)}}}, "seqnum beyond the last"
	}
	return nil, ""
}

func TestApplyRejects(t *testing.T) {
	base := State{NextFileNumber: 100, LastSeqNum: 50, LogNumber: 10}
	base, err := base.Apply(&VersionEdit{NewFiles: []NewFile{
		{Level: 0, Meta: meta(20, "a", "m", 41, 50)},
		{Level: 0, Meta: meta(19, "c", "z", 31, 40)},
		{Level: 1, Meta: meta(5, "a", "c", 1, 9)},
		{Level: 1, Meta: meta(6, "e", "g", 1, 9)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit VersionEdit
		want string
	}{
		{"delete missing", VersionEdit{DeletedFiles: []DeletedFile{{1, 7}}}, "no level holds it"},
		{"delete wrong level", VersionEdit{DeletedFiles: []DeletedFile{{2, 5}}}, "but it is in L1"},
		{"delete bad level", VersionEdit{DeletedFiles: []DeletedFile{{7, 5}}}, "does not exist"},
		{"delete twice", VersionEdit{DeletedFiles: []DeletedFile{{1, 5}, {1, 5}}}, "no level holds it"},
		{"add existing", VersionEdit{NewFiles: []NewFile{{Level: 3, Meta: meta(5, "x", "y", 1, 1)}}}, "already in L1"},
		{"add twice", VersionEdit{NewFiles: []NewFile{{Level: 3, Meta: meta(50, "x", "y", 1, 1)}, {Level: 4, Meta: meta(50, "x", "y", 1, 1)}}}, "already in L3"},
		{"add bad level", VersionEdit{NewFiles: []NewFile{{Level: -1, Meta: meta(50, "x", "y", 1, 1)}}}, "does not exist"},
		{"add nil meta", VersionEdit{NewFiles: []NewFile{{Level: 1}}}, "without metadata"},
		{"add invalid", VersionEdit{NewFiles: []NewFile{{Level: 1, Meta: meta(50, "y", "x", 1, 1)}}}, "sorts after largest"},
		{"L1 overlap", VersionEdit{NewFiles: []NewFile{{Level: 1, Meta: meta(50, "c", "d", 1, 1)}}}, "overlap"},
		{"L0 interleave", VersionEdit{NewFiles: []NewFile{{Level: 0, Meta: meta(50, "b", "b", 45, 45)}}}, "interleave"},
		{"log number back", VersionEdit{LogNumber: 9}, "log number back"},
		{"next file back", VersionEdit{NextFileNumber: 99}, "next file number back"},
		{"last seq back", VersionEdit{LastSeqNum: 49}, "last seqnum back"},
		{"last seq too big", VersionEdit{LastSeqNum: 1 << 56}, "above the maximum"},
		{"log number unallocated", VersionEdit{LogNumber: 100}, "not below the next file number"},
		{"table unallocated", VersionEdit{NewFiles: []NewFile{{Level: 2, Meta: meta(100, "x", "y", 1, 1)}}}, "not below the next file number"},
		{"seqnum unassigned", VersionEdit{NewFiles: []NewFile{{Level: 2, Meta: meta(60, "x", "y", 1, 51)}}}, "above the last seqnum 50"},
	}
	for _, tc := range cases {
		got, err := base.Apply(&tc.edit)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if !sameState(got, base) {
			t.Errorf("%s: rejected edit changed the state", tc.name)
		}
	}

	// What is valid: moving a table between levels in one edit, deleting and
	// re-adding it in the same level, a table at the last seqnum.
	for _, e := range []VersionEdit{
		{DeletedFiles: []DeletedFile{{1, 5}}, NewFiles: []NewFile{{Level: 2, Meta: meta(5, "a", "c", 1, 9)}}},
		{DeletedFiles: []DeletedFile{{1, 6}}, NewFiles: []NewFile{{Level: 1, Meta: meta(6, "e", "h", 1, 9)}}},
		{DeletedFiles: []DeletedFile{{0, 19}}, NewFiles: []NewFile{{Level: 6, Meta: meta(21, "a", "z", 50, 50)}}},
		{LogNumber: 10, NextFileNumber: 100, LastSeqNum: 50},
	} {
		if _, err := base.Apply(&e); err != nil {
			t.Errorf("valid edit %+v rejected: %v", e, err)
		}
	}
}

// TestApplyOwnsMetadata checks that a version keeps its own copy of an
// added table, and that unchanged levels are shared, not copied.
func TestApplyOwnsMetadata(t *testing.T) {
	f := meta(5, "a", "c", 1, 1)
	e := &VersionEdit{NextFileNumber: 10, LastSeqNum: 1, NewFiles: []NewFile{{Level: 1, Meta: f}}}
	s, err := State{}.Apply(e)
	if err != nil {
		t.Fatal(err)
	}
	f.Smallest.UserKey[0] = 'z'
	f.Size = 1
	got := s.Version.Levels[1][0]
	if string(got.Smallest.UserKey) != "a" || got.Size != 500 {
		t.Fatalf("the version shares the edit's metadata: %s", got)
	}
	s2, err := s.Apply(&VersionEdit{NewFiles: []NewFile{{Level: 0, Meta: meta(6, "a", "c", 1, 1)}}})
	if err != nil {
		t.Fatal(err)
	}
	if &s2.Version.Levels[1][0] != &s.Version.Levels[1][0] {
		t.Fatal("an unchanged level was copied")
	}
	// Emptying a level leaves nil, as in a fresh version.
	s3, err := s2.Apply(&VersionEdit{DeletedFiles: []DeletedFile{{1, 5}}})
	if err != nil || s3.Version.Levels[1] != nil {
		t.Fatalf("emptied level = %v, %v", s3.Version.Levels[1], err)
	}
}

func TestSnapshotEdit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	m := newModel()
	g := &gen{rng: rng, m: m}
	s, _ := State{}.Apply(&start)
	for range 200 {
		e := g.next()
		var err error
		if s, err = s.Apply(e); err != nil {
			t.Fatal(err)
		}
		m.apply(e)
	}
	snap := s.SnapshotEdit()
	got, err := State{}.Apply(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !sameState(got, s) {
		t.Fatalf("snapshot rebuilds\n%s\nwant\n%s", got.Version, s.Version)
	}
	// And through the encoding, as a new manifest holds it.
	dec, err := Decode(snap.Encode(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, err = (State{}).Apply(&dec); err != nil || !sameState(got, s) {
		t.Fatalf("decoded snapshot rebuilds a different state: %v", err)
	}
	if (State{}).SnapshotEdit().NewFiles != nil {
		t.Fatal("snapshot of the zero state has tables")
	}
}

// TestSpliceMatchesRebuild checks Finish's splice of a level below L0 —
// the deleted tables found by search, the added ones merged in, the order
// checked only beside them — against the level rebuilt whole: the kept
// and the added tables sorted, and every pair of neighbours checked. Edits
// delete and add random tables, some of them overlapping others, in
// levels of up to 40 tables; both must accept the same edits and give the
// same level.
func TestSpliceMatchesRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 1))
	accepted, rejected := 0, 0
	for trial := range 3000 {
		var old []*FileMetadata
		num := uint64(1)
		for key := 0; key < 200 && len(old) < rng.IntN(41); key += 1 + rng.IntN(12) {
			hi := key + rng.IntN(4)
			old = append(old, meta(num, slotKey(key), slotKey(hi), 1, 1))
			num++
			key = hi
		}
		s, err := State{NextFileNumber: 1000, LastSeqNum: 10}.Apply(&VersionEdit{NewFiles: levelFiles(3, old)})
		if err != nil {
			t.Fatal(err)
		}
		e := &VersionEdit{}
		deleted := map[uint64]bool{}
		for _, f := range old {
			if rng.IntN(4) == 0 {
				e.DeletedFiles = append(e.DeletedFiles, DeletedFile{Level: 3, FileNum: f.FileNum})
				deleted[f.FileNum] = true
			}
		}
		for range rng.IntN(5) {
			lo := rng.IntN(210)
			e.NewFiles = append(e.NewFiles, NewFile{Level: 3, Meta: meta(num, slotKey(lo), slotKey(lo+rng.IntN(3)), 1, 1)})
			num++
		}
		want := slices.DeleteFunc(slices.Clone(old), func(f *FileMetadata) bool { return deleted[f.FileNum] })
		for _, n := range e.NewFiles {
			want = append(want, n.Meta)
		}
		slices.SortFunc(want, bySmallest)
		wantErr := checkLevel(3, want)

		got, err := s.Apply(e)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("trial %d: splice error %v, rebuild error %v\nold:\n%s\nedit %+v", trial, err, wantErr, s.Version, e)
		}
		if err != nil {
			rejected++
			continue
		}
		accepted++
		if err := got.Version.CheckInvariants(); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		gotLevel := got.Version.Levels[3]
		if len(gotLevel) != len(want) {
			t.Fatalf("trial %d: L3 has %d tables, the rebuild %d", trial, len(gotLevel), len(want))
		}
		for i := range want {
			if gotLevel[i].FileNum != want[i].FileNum {
				t.Fatalf("trial %d: L3[%d] is %s, the rebuild's %s", trial, i, gotLevel[i], want[i])
			}
		}
	}
	// Both outcomes must be exercised for the comparison to mean anything.
	if accepted < 300 || rejected < 300 {
		t.Fatalf("%d edits accepted, %d rejected: the generator no longer exercises both", accepted, rejected)
	}
}

// levelFiles returns files as the NewFiles of level.
func levelFiles(level int, files []*FileMetadata) []NewFile {
	out := make([]NewFile, len(files))
	for i, f := range files {
		out[i] = NewFile{Level: level, Meta: f}
	}
	return out
}

// TestApplyMoveThenDelete checks a table of the base that one edit moves
// and a later edit of the same Builder deletes: gone, though the base
// still holds it, whichever level it moved to.
func TestApplyMoveThenDelete(t *testing.T) {
	for _, to := range []int{1, 2} {
		s, err := State{NextFileNumber: 10, LastSeqNum: 10}.Apply(&VersionEdit{NewFiles: []NewFile{{Level: 1, Meta: meta(5, "a", "c", 1, 1)}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Apply(
			&VersionEdit{DeletedFiles: []DeletedFile{{1, 5}}, NewFiles: []NewFile{{Level: to, Meta: meta(5, "a", "c", 1, 1)}}},
			&VersionEdit{DeletedFiles: []DeletedFile{{to, 5}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Version.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if n := len(slices.Collect(got.Version.FileNums())); n != 0 {
			t.Fatalf("moved to L%d and deleted: %d tables left:\n%s", to, n, got.Version)
		}
		// The index must not list it either: adding it again applies.
		if _, err := got.Apply(&VersionEdit{NewFiles: []NewFile{{Level: 3, Meta: meta(5, "a", "c", 1, 1)}}}); err != nil {
			t.Fatalf("moved to L%d and deleted, then added again: %v", to, err)
		}
	}
}

package iterator_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
)

// TestLevelIterRestrict checks a LevelIter restricted again and again, with
// random bounds and random tables ruled out, against the concatenation of
// the tables it must still read: those not wholly outside the bounds that
// admit admits. It checks too that admit is asked only of tables within the
// bounds, that no table it rules out is opened, and that Restrict(nil,
// nil, nil) gives back the whole level.
func TestLevelIterRestrict(t *testing.T) {
	for seed := range itertest.Seeds() {
		rng := rand.New(rand.NewPCG(seed, 4))
		w := itertest.NewWorld(t, rng, 200)
		if len(w.All) == 0 {
			continue
		}
		l := itertest.BuildLevel(t, rng, w.All, 1)
		var ruledOut []bool // by table of the level; reset by each round
		var failure error
		opened := 0
		it := iterator.NewLevelIter(l.Files, func(i int) (iterator.Iterator, error) {
			if ruledOut[i] && failure == nil {
				failure = fmt.Errorf("table %d opened, though admit ruled it out", i)
			}
			opened++
			return l.Open(i)
		}, nil, nil)
		for round := range 4 {
			var lower, upper []byte
			if rng.IntN(3) > 0 {
				lower = itertest.RandKey(rng)
			}
			if rng.IntN(3) > 0 {
				upper = itertest.RandKey(rng)
			}
			ruledOut = make([]bool, len(l.Files))
			var admit iterator.Admitter
			if round%4 != 3 { // every fourth round admits every table again
				for i := range ruledOut {
					ruledOut[i] = rng.IntN(3) == 0
				}
				admit = iterator.AdmitFunc(func(i int) bool {
					f := l.Files[i]
					if (lower != nil && bytes.Compare(f.Largest.UserKey, lower) < 0 ||
						upper != nil && bytes.Compare(f.Smallest.UserKey, upper) >= 0) && failure == nil {
						failure = fmt.Errorf("admit asked of table %d [%q, %q], outside the bounds", i, f.Smallest.UserKey, f.Largest.UserKey)
					}
					return !ruledOut[i]
				})
			} else {
				lower, upper = nil, nil
			}
			it.Restrict(lower, upper, admit)
			// The oracle: the entries of the tables the iterator must read.
			var want []itertest.KV
			for i, f := range l.Files {
				outside := lower != nil && bytes.Compare(f.Largest.UserKey, lower) < 0 ||
					upper != nil && bytes.Compare(f.Smallest.UserKey, upper) >= 0
				if !outside && !ruledOut[i] {
					want = append(want, tableEntries(l, i, w.All)...)
				}
			}
			if err := checkMoves(rng, it, want, 80); err != nil || failure != nil {
				t.Fatalf("seed %d, round %d, bounds [%q, %q), ruled out %v: %v %v", seed, round, lower, upper, ruledOut, err, failure)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if opened == 0 {
			t.Fatalf("seed %d: no table opened", seed)
		}
	}
}

// TestLevelIterRestrictKeepsTable checks that a Restrict whose bounds keep
// the open table keeps it open — a seek into it after the Restrict opens
// nothing — and that one whose bounds or admit leave it out does not show
// its entries: the next seek opens another table, or none.
func TestLevelIterRestrictKeepsTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := &itertest.Level{}
	for i := range 3 {
		l.Add(t, rng, []itertest.KV{itertest.Set(fmt.Sprintf("%d-a", i), 1), itertest.Set(fmt.Sprintf("%d-b", i), 1)}, uint64(i+1))
	}
	var opens []int
	it := iterator.NewLevelIter(l.Files, func(i int) (iterator.Iterator, error) {
		opens = append(opens, i)
		return l.Open(i)
	}, nil, nil)
	defer it.Close()
	all := iterator.AdmitFunc(func(int) bool { return true })
	none := iterator.AdmitFunc(func(int) bool { return false })
	steps := []struct {
		lower, upper string
		admit        iterator.Admitter
		seek, want   string // want "": nothing
		opens        []int
	}{
		{"", "", nil, "1-a", "1-a", []int{1}},
		{"1-a", "1-c", all, "1-b", "1-b", []int{1}},       // table 1 within the bounds: kept
		{"1-a", "1-b", nil, "1-a", "1-a", []int{1}},       // still
		{"1-a", "1-c", none, "1-a", "", []int{1}},         // ruled out: passed over, not shown
		{"1-a", "2-b", all, "1-b", "1-b", []int{1, 1}},    // closed by the last walk: opened again
		{"2-a", "2-c", all, "2-a", "2-a", []int{1, 1, 2}}, // outside the bounds: another table
	}
	for i, s := range steps {
		it.Restrict(bound(s.lower), bound(s.upper), s.admit)
		got := ""
		if it.SeekGE([]byte(s.seek)) {
			got = string(it.Key().UserKey)
		}
		if got != s.want || !slices.Equal(opens, s.opens) || it.Error() != nil {
			t.Fatalf("step %d: SeekGE(%q) in [%q, %q) = %q, opens %v (%v); want %q, opens %v", i, s.seek, s.lower, s.upper, got, opens, it.Error(), s.want, s.opens)
		}
	}
}

// bound is s as a bound: nil for "".
func bound(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// tableEntries returns the entries of all (the level's entries, sorted)
// within table i's bounds: BuildLevel cuts all into consecutive tables
// bounded by their first and last entries, so those are the table's.
func tableEntries(l *itertest.Level, i int, all []itertest.KV) []itertest.KV {
	f := l.Files[i]
	var kvs []itertest.KV
	for _, e := range all {
		if base.CompareInternal(e.Key, f.Smallest) >= 0 && base.CompareInternal(e.Key, f.Largest) <= 0 {
			kvs = append(kvs, e)
		}
	}
	return kvs
}

// TestMergingIterExclude checks a MergingIter whose children are excluded
// and readmitted again and again against the sorted union of the children
// left in, and that an excluded child is never moved.
func TestMergingIterExclude(t *testing.T) {
	for seed := range itertest.Seeds() {
		rng := rand.New(rand.NewPCG(seed, 5))
		w := itertest.NewWorld(t, rng, 300)
		children := w.Children(nil, nil)
		moves := make([]int, len(children))
		wrapped := make([]iterator.Iterator, len(children))
		for i, c := range children {
			wrapped[i] = &movesCounter{Iterator: c, n: &moves[i]}
		}
		m := iterator.NewMergingIter(wrapped...)
		for round := range 4 {
			var excluded []bool
			if round%4 != 3 {
				excluded = make([]bool, len(children))
				for i := range excluded {
					excluded[i] = rng.IntN(3) == 0
				}
			}
			m.Exclude(excluded)
			var want []itertest.KV
			for i, s := range w.Sources {
				if excluded == nil || !excluded[i] {
					want = append(want, s.Entries...)
				}
			}
			slices.SortFunc(want, itertest.Compare)
			before := slices.Clone(moves)
			if err := checkMoves(rng, m, want, 100); err != nil {
				t.Fatalf("seed %d, round %d, sources %v, excluded %v: %v", seed, round, w.SourceNames(), excluded, err)
			}
			for i := range excluded {
				if excluded[i] && moves[i] != before[i] {
					t.Fatalf("seed %d, round %d: excluded child %d moved %d times", seed, round, i, moves[i]-before[i])
				}
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// movesCounter counts the moves made on an Iterator.
type movesCounter struct {
	iterator.Iterator
	n *int
}

func (c *movesCounter) First() bool          { *c.n++; return c.Iterator.First() }
func (c *movesCounter) Last() bool           { *c.n++; return c.Iterator.Last() }
func (c *movesCounter) SeekGE(k []byte) bool { *c.n++; return c.Iterator.SeekGE(k) }
func (c *movesCounter) SeekLT(k []byte) bool { *c.n++; return c.Iterator.SeekLT(k) }
func (c *movesCounter) Next() bool           { *c.n++; return c.Iterator.Next() }
func (c *movesCounter) Prev() bool           { *c.n++; return c.Iterator.Prev() }

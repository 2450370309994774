package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// testLevel is a level of tables with gaps between them, and a key ("l")
// whose versions are split between two tables. It records which tables
// were opened and how many are open.
type testLevel struct {
	files  []levelFile
	opened []int // indexes of the tables opened, in order
	open   int   // tables open now
	most   int   // the most tables open at once
}

type countingIter struct {
	internalIterator
	l *testLevel
}

func (c countingIter) Close() error {
	c.l.open--
	return c.internalIterator.Close()
}

func newTestLevel(t *testing.T) *testLevel {
	tables := [][]ikv{
		{setAt("b", 1), setAt("c", 2), setAt("d", 3)},
		{setAt("f", 4), setAt("g", 5), setAt("h", 6)},
		{setAt("j", 7), setAt("k", 8), setAt("l", 10)},
		{setAt("l", 9), setAt("m", 11)},
	}
	l := &testLevel{}
	rng := rand.New(rand.NewPCG(1, 1))
	for i, entries := range tables {
		r := buildTestTable(t, rng, entries, uint64(i+1))
		l.files = append(l.files, levelFile{
			smallest: entries[0].key.UserKey,
			largest:  entries[len(entries)-1].key.UserKey,
			open: func() (internalIterator, error) {
				l.opened = append(l.opened, i)
				l.open++
				l.most = max(l.most, l.open)
				return countingIter{r.NewIterator(), l}, nil
			},
		})
	}
	return l
}

func setAt(key string, seq base.SeqNum) ikv {
	return ikv{base.MakeInternalKey([]byte(key), seq, base.KindSet), []byte(key + "-value")}
}

// at describes where an internalIterator is, for comparisons: "l#9" or
// "-" when it is not at an entry.
func atKey(it internalIterator, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%s#%d", it.Key().UserKey, it.Key().SeqNum())
}

// TestIterLevelBoundaries walks across table boundaries and seeks into the
// gaps between tables, before the first and after the last.
func TestIterLevelBoundaries(t *testing.T) {
	l := newTestLevel(t)
	it := newLevelIter(l.files, nil, nil)
	steps := []struct {
		op   string
		move func() bool
		want string
	}{
		{"First", it.First, "b#1"},
		{"SeekGE(e)", func() bool { return it.SeekGE([]byte("e")) }, "f#4"},
		{"Prev", it.Prev, "d#3"},
		{"Next", it.Next, "f#4"},
		{"SeekLT(e)", func() bool { return it.SeekLT([]byte("e")) }, "d#3"},
		{"Next", it.Next, "f#4"},
		{"SeekLT(f)", func() bool { return it.SeekLT([]byte("f")) }, "d#3"},
		{"SeekGE(i)", func() bool { return it.SeekGE([]byte("i")) }, "j#7"},
		{"SeekLT(j)", func() bool { return it.SeekLT([]byte("j")) }, "h#6"},
		{"SeekGE(a)", func() bool { return it.SeekGE([]byte("a")) }, "b#1"},
		{"Prev", it.Prev, "-"},
		{"SeekGE(\"\")", func() bool { return it.SeekGE(nil) }, "b#1"},
		{"SeekLT(b)", func() bool { return it.SeekLT([]byte("b")) }, "-"},
		{"SeekGE(n)", func() bool { return it.SeekGE([]byte("n")) }, "-"},
		{"SeekLT(z)", func() bool { return it.SeekLT([]byte("z")) }, "m#11"},
		// "l" is split: its newer version ends table 2, its older starts 3.
		{"SeekGE(l)", func() bool { return it.SeekGE([]byte("l")) }, "l#10"},
		{"Next", it.Next, "l#9"},
		{"Prev", it.Prev, "l#10"},
		{"SeekLT(m)", func() bool { return it.SeekLT([]byte("m")) }, "l#9"},
		{"Prev", it.Prev, "l#10"},
		{"Prev", it.Prev, "k#8"},
		{"Last", it.Last, "m#11"},
		{"Next", it.Next, "-"},
	}
	var done []string
	for _, s := range steps {
		done = append(done, s.op)
		if got := atKey(it, s.move()); got != s.want || it.Error() != nil {
			t.Fatalf("after %v: at %s (error %v), want %s", done, got, it.Error(), s.want)
		}
		if l.open > 1 {
			t.Fatalf("after %v: %d tables open", done, l.open)
		}
	}
	if err := it.Close(); err != nil || l.open != 0 {
		t.Fatalf("Close = %v with %d tables still open", err, l.open)
	}
}

// TestIterLevelScan checks full scans both ways and that each table is
// opened once per scan, one at a time.
func TestIterLevelScan(t *testing.T) {
	l := newTestLevel(t)
	it := newLevelIter(l.files, nil, nil)
	var fwd, bwd []string
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, atKey(it, true))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		bwd = append(bwd, atKey(it, true))
	}
	want := []string{"b#1", "c#2", "d#3", "f#4", "g#5", "h#6", "j#7", "k#8", "l#10", "l#9", "m#11"}
	slices.Reverse(bwd)
	if !slices.Equal(fwd, want) || !slices.Equal(bwd, want) {
		t.Fatalf("forward %v, backward reversed %v; want %v", fwd, bwd, want)
	}
	// Seeks within the open table reuse its iterator.
	it.SeekGE([]byte("g"))
	it.SeekLT([]byte("h"))
	it.SeekGE([]byte("e"))
	if !slices.Equal(l.opened, []int{0, 1, 2, 3, 3, 2, 1, 0, 1}) || l.most != 1 || l.open != 1 {
		t.Fatalf("opened tables %v, at most %d at once, %d open", l.opened, l.most, l.open)
	}
	if err := it.Close(); err != nil || l.open != 0 {
		t.Fatalf("Close = %v with %d tables still open", err, l.open)
	}
}

// TestIterLevelBounds checks that the tables wholly outside the bounds are
// never opened, whatever the moves.
func TestIterLevelBounds(t *testing.T) {
	for _, tc := range []struct {
		lower, upper string
		tables       []int // may be opened
	}{
		{"f", "h", []int{1}},
		{"e", "i", []int{1}},
		{"d", "f\x00", []int{0, 1}},
		{"e", "f", nil},        // the gap between two tables
		{"i", "c", nil},        // crossed bounds
		{"l", "", []int{2, 3}}, // upper "" is read as nil: unbounded
	} {
		l := newTestLevel(t)
		var upper []byte
		if tc.upper != "" {
			upper = []byte(tc.upper)
		}
		it := newLevelIter(l.files, []byte(tc.lower), upper)
		for ok := it.First(); ok; ok = it.Next() {
		}
		for ok := it.Last(); ok; ok = it.Prev() {
		}
		for _, k := range []string{"", "a", "e", "g", "l", "z"} {
			it.SeekGE([]byte(k))
			it.SeekLT([]byte(k))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		for _, i := range l.opened {
			if !slices.Contains(tc.tables, i) {
				t.Errorf("bounds [%q, %q): opened table %d; want only %v", tc.lower, tc.upper, i, tc.tables)
				break
			}
		}
	}
}

// TestIterLevelErrors checks that a table that fails to open, and a table
// whose iterator fails, stop the level iterator with the error.
func TestIterLevelErrors(t *testing.T) {
	errOpen := errors.New("open failed")
	files := []levelFile{
		{[]byte("a"), []byte("b"), func() (internalIterator, error) {
			return newSliceIter([]ikv{setAt("a", 1), setAt("b", 2)}), nil
		}},
		{[]byte("c"), []byte("d"), func() (internalIterator, error) { return nil, errOpen }},
	}
	it := newLevelIter(files, nil, nil)
	if !it.First() || !it.Next() || it.Next() || it.Error() != errOpen {
		t.Fatalf("scan into an unopenable table: error %v", it.Error())
	}
	if it.First() || it.Last() || it.SeekGE([]byte("a")) || it.Close() != errOpen {
		t.Fatal("the level iterator moved after a failure")
	}

	failing := newSliceIter([]ikv{setAt("c", 3), setAt("d", 4)})
	failing.failAfter = 1 // First succeeds, Next fails
	files[1].open = func() (internalIterator, error) { return failing, nil }
	it = newLevelIter(files, nil, nil)
	if !it.SeekGE([]byte("b")) || !it.Next() || it.Next() || it.Error() != errInjected {
		t.Fatalf("scan through a failing table: error %v", it.Error())
	}
	if err := it.Close(); err != errInjected || failing.closes != 1 {
		t.Fatalf("Close = %v, table closed %d times", err, failing.closes)
	}
}

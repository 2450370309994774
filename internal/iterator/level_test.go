package iterator_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// testLevel is a level of tables with gaps between them, and a key ("l")
// whose versions are split between two tables. It records which tables
// were opened and how many are open.
type testLevel struct {
	itertest.Level
	opened []int // indexes of the tables opened, in order
	open   int   // tables open now
	most   int   // the most tables open at once
}

type countingIter struct {
	iterator.Iterator
	l *testLevel
}

func (c countingIter) Close() error {
	c.l.open--
	return c.Iterator.Close()
}

func newTestLevel(t *testing.T) *testLevel {
	tables := [][]itertest.KV{
		{itertest.Set("b", 1), itertest.Set("c", 2), itertest.Set("d", 3)},
		{itertest.Set("f", 4), itertest.Set("g", 5), itertest.Set("h", 6)},
		{itertest.Set("j", 7), itertest.Set("k", 8), itertest.Set("l", 10)},
		{itertest.Set("l", 9), itertest.Set("m", 11)},
	}
	l := &testLevel{}
	rng := rand.New(rand.NewPCG(1, 1))
	for i, entries := range tables {
		l.Add(t, rng, entries, uint64(i+1))
	}
	return l
}

// iter returns a level iterator over l within [lower, upper) that counts
// the tables it opens.
func (l *testLevel) iter(lower, upper []byte) *iterator.LevelIter {
	return iterator.NewLevelIter(l.Files, func(i int) (iterator.Iterator, error) {
		l.opened = append(l.opened, i)
		l.open++
		l.most = max(l.most, l.open)
		it, _ := l.Level.Open(i)
		return countingIter{it, l}, nil
	}, lower, upper)
}

// atKey describes where an iterator is, for comparisons: "l#9" or "-" when
// it is not at an entry.
func atKey(it iterator.Iterator, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%s#%d", it.Key().UserKey, it.Key().SeqNum())
}

// TestLevelIterBoundaries walks across table boundaries and seeks into the
// gaps between tables, before the first and after the last.
func TestLevelIterBoundaries(t *testing.T) {
	l := newTestLevel(t)
	it := l.iter(nil, nil)
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

// TestLevelIterScan checks full scans both ways and that each table is
// opened once per scan, one at a time.
func TestLevelIterScan(t *testing.T) {
	l := newTestLevel(t)
	it := l.iter(nil, nil)
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

// TestLevelIterBounds checks that the tables wholly outside the bounds are
// never opened, whatever the moves. (The indexes it records are those open
// receives: a table's index in the whole level, not among those kept.)
func TestLevelIterBounds(t *testing.T) {
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
		it := l.iter([]byte(tc.lower), upper)
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

// TestLevelIterErrors checks that a table that fails to open, and a table
// whose iterator fails, stop the level iterator with the error.
func TestLevelIterErrors(t *testing.T) {
	errOpen := errors.New("open failed")
	files := []*manifest.FileMetadata{fileMeta(1, "a", "b"), fileMeta(2, "c", "d")}
	second := func() (iterator.Iterator, error) { return nil, errOpen }
	open := func(i int) (iterator.Iterator, error) {
		if i == 0 {
			return itertest.NewSliceIter([]itertest.KV{itertest.Set("a", 1), itertest.Set("b", 2)}), nil
		}
		return second()
	}
	it := iterator.NewLevelIter(files, open, nil, nil)
	if !it.First() || !it.Next() || it.Next() || it.Error() != errOpen {
		t.Fatalf("scan into an unopenable table: error %v", it.Error())
	}
	if it.First() || it.Last() || it.SeekGE([]byte("a")) || it.Close() != errOpen {
		t.Fatal("the level iterator moved after a failure")
	}

	failing := itertest.NewSliceIter([]itertest.KV{itertest.Set("c", 3), itertest.Set("d", 4)})
	failing.FailAfter = 1 // First succeeds, Next fails
	second = func() (iterator.Iterator, error) { return failing, nil }
	it = iterator.NewLevelIter(files, open, nil, nil)
	if !it.SeekGE([]byte("b")) || !it.Next() || it.Next() || it.Error() != itertest.ErrInjected {
		t.Fatalf("scan through a failing table: error %v", it.Error())
	}
	if err := it.Close(); err != itertest.ErrInjected || failing.Closes != 1 {
		t.Fatalf("Close = %v, table closed %d times", err, failing.Closes)
	}

	// A table whose Close fails, though its walk did not: leaving it stops
	// the level iterator with that error.
	errClose := errors.New("close failed")
	first := itertest.NewSliceIter([]itertest.KV{itertest.Set("a", 1), itertest.Set("b", 2)})
	second = func() (iterator.Iterator, error) {
		return itertest.NewSliceIter([]itertest.KV{itertest.Set("c", 3)}), nil
	}
	it = iterator.NewLevelIter(files, func(i int) (iterator.Iterator, error) {
		if i == 0 {
			return failingClose{first, errClose}, nil
		}
		return second()
	}, nil, nil)
	if !it.First() || !it.Next() || it.Next() || it.Error() != errClose || first.Closes != 1 {
		t.Fatalf("scan out of a table whose Close fails: error %v, table closed %d times", it.Error(), first.Closes)
	}
	if it.SeekGE([]byte("c")) || it.Close() != errClose {
		t.Fatal("the level iterator moved after a failure")
	}
}

// failingClose is an iterator whose Close returns err.
type failingClose struct {
	iterator.Iterator
	err error
}

func (f failingClose) Close() error {
	f.Iterator.Close()
	return f.err
}

// fileMeta returns the metadata of table num holding user keys lo to hi.
func fileMeta(num uint64, lo, hi string) *manifest.FileMetadata {
	return &manifest.FileMetadata{
		FileNum:  num,
		Smallest: base.MakeInternalKey([]byte(lo), base.SeqNumMax, base.KindSet),
		Largest:  base.MakeInternalKey([]byte(hi), 0, base.KindSet),
	}
}

// numbered returns n Sets with keys prefix000…, seqnums from seq on, and
// value "v".
func numbered(prefix string, n int, seq base.SeqNum) []itertest.KV {
	var es []itertest.KV
	for i := range n {
		k := fmt.Sprintf("%s%03d", prefix, i)
		es = append(es, itertest.KV{Key: base.MakeInternalKey([]byte(k), seq+base.SeqNum(i), base.KindSet), Value: []byte("v")})
	}
	return es
}

// drain walks it forward from First, as a compaction does, and returns the
// number of entries and the error that ended the walk.
func drain(it iterator.Iterator) (n int, err error) {
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

// TestLevelIterForward walks a compaction's input level forward only, with
// empty tables, a table that fails to open and tables that fail in the
// middle and at their first entry: every table opened is closed, the
// failure ends the walk with the entries before it, and a level iterator
// closed after a clean walk can walk again.
func TestLevelIterForward(t *testing.T) {
	files := []*manifest.FileMetadata{fileMeta(1, "a000", "a002"), fileMeta(2, "b", "b"), fileMeta(3, "c000", "c001"), fileMeta(4, "d", "d")}
	contents := map[uint64][]itertest.KV{1: numbered("a", 3, 1), 2: nil, 3: numbered("c", 2, 1), 4: nil}
	for _, tc := range []struct {
		name      string
		failOpen  uint64
		failEntry map[uint64]int // FailAfter of the table: it fails moving onto that entry
		want      int
		wantErr   bool
	}{
		{"empty tables are skipped", 0, nil, 5, false},
		{"a table fails to open", 3, nil, 3, true},
		{"a table fails in the middle", 0, map[uint64]int{3: 1}, 4, true},
		{"a table fails at its first entry", 0, map[uint64]int{3: 0}, 3, true},
	} {
		var opened []*itertest.SliceIter
		closes := func() (n int) {
			for _, s := range opened {
				n += s.Closes
			}
			return n
		}
		l := iterator.NewLevelIter(files, func(i int) (iterator.Iterator, error) {
			f := files[i]
			if f.FileNum == tc.failOpen {
				return nil, itertest.ErrInjected
			}
			s := itertest.NewSliceIter(contents[f.FileNum])
			if failAt, ok := tc.failEntry[f.FileNum]; ok {
				s.FailAfter = failAt
			}
			opened = append(opened, s)
			return s, nil
		}, nil, nil)
		n, err := drain(l)
		if n != tc.want || (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, itertest.ErrInjected)) {
			t.Errorf("%s: %d entries, %v; want %d, error %v", tc.name, n, err, tc.want, tc.wantErr)
		}
		if l.Next() {
			t.Errorf("%s: Next after the end", tc.name)
		}
		if cerr := l.Close(); !errors.Is(cerr, err) || closes() != len(opened) {
			t.Errorf("%s: Close = %v, %d of %d tables closed", tc.name, cerr, closes(), len(opened))
		}
		// It can start over.
		if tc.wantErr {
			continue
		}
		if n, err := drain(l); n != tc.want || err != nil || l.Close() != nil {
			t.Errorf("%s: second pass %d entries, %v", tc.name, n, err)
		}
	}
}

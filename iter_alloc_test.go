package bloomkv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// iterAllocDB opens a database with keys in the levels below L0 (a
// compaction's), l0 tables in L0, each spanning those keys, and some keys
// in the memtable, under opts'
// filters, and returns it with the counts of its read state's memtables,
// L0 tables and levels below L0 holding tables.
func iterAllocDB(t testing.TB, opts *Options, l0 int) (d *DB, memtables, l0Tables, levels int) {
	t.Helper()
	opts.FS, opts.MemtableSize = vfs.NewMem(), 4<<20
	opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 100, 100, 100
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	put := func(from, to int) {
		for i := from; i < to; i++ {
			if err := d.Put(fmt.Appendf(nil, "key%06d", i), []byte("value"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 2000)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := range l0 {
		for j := range 200 { // every L0 table spans the levels' keys
			if err := d.Put(fmt.Appendf(nil, "key%06d", 10*j+i), []byte("newer"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	put(5000, 5010)
	rs, _, err := d.acquireReadState()
	if err != nil {
		t.Fatal(err)
	}
	defer d.releaseReadState(rs)
	for _, tables := range rs.version.tables[1:] {
		if len(tables) > 0 {
			levels++
		}
	}
	return d, 1 + len(rs.imm), len(rs.version.tables[0]), levels
}

// TestNewIterAllocs checks what a new Iterator allocates, the pooled
// stack (iterAlloc) once warm: the Iterator itself, an iterator per
// memtable past the inlineMemIters the stack holds, and, without range
// filters, where the L0 tables are not lazyTables, a table iterator per
// L0 table; nothing per memtable it holds, per level, for the bounds'
// copies or for range filters' skipping state. Under
// -race sync.Pool drops a quarter of what it is given at random, and a
// stack built anew allocates its room again, so there the test builds
// and closes the Iterators without counting; `make test` counts them
// without -race.
func TestNewIterAllocs(t *testing.T) {
	prefix := &PrefixExtractor{Name: "key00", Split: func(k []byte) int { return min(len(k), 5) }}
	for _, tc := range []struct {
		name       string
		opts       Options
		eagerL0    bool // the L0 tables' iterators are made with the stack
		l0, bounds int
	}{
		{name: "plain", opts: Options{}, eagerL0: true, l0: 3},
		{name: "plain/no-L0", opts: Options{}, eagerL0: true},
		{name: "prefix", opts: Options{Prefix: prefix}, eagerL0: true, l0: 3},
		{name: "range-filters", opts: Options{RangeFilterBits: []float64{16}}, l0: 3},
		{name: "range-filters/many-L0", opts: Options{RangeFilterBits: []float64{16}}, l0: 20},
		{name: "range-filters+prefix", opts: Options{RangeFilterBits: []float64{16}, Prefix: prefix}, l0: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			d, memtables, l0, levels := iterAllocDB(t, &opts, tc.l0)
			if l0 != tc.l0 || levels == 0 {
				t.Fatalf("the DB has %d L0 tables and %d levels below; want %d and some", l0, levels, tc.l0)
			}
			want := 1 + max(0, memtables-inlineMemIters)
			if tc.eagerL0 {
				want += l0
			}
			io := &IterOptions{LowerBound: []byte("key000100"), UpperBound: []byte("key000200")}
			for _, form := range []struct {
				name string
				run  func(*testing.T)
			}{
				{"NewIter+Close", func(t *testing.T) {
					it, err := d.NewIter(io)
					if err != nil {
						t.Fatal(err)
					}
					if err := it.Close(); err != nil {
						t.Fatal(err)
					}
				}},
				{"NewIter+SetBounds+Close", func(t *testing.T) {
					it, err := d.NewIter(io)
					if err != nil {
						t.Fatal(err)
					}
					it.SetBounds(io.UpperBound, nil)
					it.SetBounds(io.LowerBound, io.UpperBound)
					if err := it.Close(); err != nil {
						t.Fatal(err)
					}
				}},
			} {
				n := testing.AllocsPerRun(200, func() { form.run(t) })
				if !race.Enabled && n > float64(want) {
					t.Errorf("%s allocates %v times; want at most %d (%d memtables, %d L0 tables, %d levels)",
						form.name, n, want, memtables, l0, levels)
				}
			}
		})
	}
}

// TestIterClosedStaysClosed checks that an Iterator's Close, which gives
// its stack to the next new Iterator, leaves it closed for good: its
// methods report it is not valid, a second Close returns ErrClosed, and
// neither disturbs the Iterator that took the stack over, which reads its
// own bounds (not the bounds, keys or buffers of the closed one).
func TestIterClosedStaysClosed(t *testing.T) {
	opts := Options{RangeFilterBits: []float64{16}}
	d, _, _, _ := iterAllocDB(t, &opts, 3)
	first, err := d.NewIter(&IterOptions{LowerBound: []byte("key000100"), UpperBound: []byte("key000103")})
	if err != nil {
		t.Fatal(err)
	}
	for ok := first.Last(); ok; ok = first.Prev() { // the backward direction fills the key buffers
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := d.NewIter(&IterOptions{LowerBound: []byte("key000010"), UpperBound: []byte("key000012")})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if !second.First() {
		t.Fatalf("second: First = false (%v)", second.Error())
	}
	for name, moved := range map[string]func() bool{
		"First": first.First, "Last": first.Last, "Next": first.Next, "Prev": first.Prev,
		"SeekGE":       func() bool { return first.SeekGE([]byte("key000010")) },
		"SeekLT":       func() bool { return first.SeekLT([]byte("key000012")) },
		"SeekPrefixGE": func() bool { return first.SeekPrefixGE([]byte("key000010")) },
	} {
		if moved() || first.Valid() || first.Key() != nil || first.Value() != nil {
			t.Errorf("closed Iterator: %s moved to %q", name, first.Key())
		}
	}
	first.SetBounds(nil, nil)
	if err := first.Error(); !errors.Is(err, ErrClosed) {
		t.Errorf("Error of a closed Iterator = %v; want ErrClosed", err)
	}
	if err := first.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v; want ErrClosed", err)
	}
	if _, err := first.Clone(); !errors.Is(err, ErrClosed) {
		t.Errorf("Clone of a closed Iterator = %v; want ErrClosed", err)
	}
	var got []string
	for ok := second.Valid(); ok; ok = second.Next() {
		got = append(got, string(second.Key()))
	}
	if want := []string{"key000010", "key000011"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("second Iterator: %q; want %q", got, want)
	}
}

// BenchmarkNewIter measures building and closing an Iterator over a DB
// with a memtable, three L0 tables and a level below, with range filters
// (rf=on) and without (rf=off): alone (NewIter+Close), and with an empty
// short scan between (NewIter+First+Close, in a gap between the keys,
// inside every table's key range), where range filters leave every table
// out, so that the scan costs little more than its stack.
func BenchmarkNewIter(b *testing.B) {
	for _, rf := range []string{"on", "off"} {
		opts := Options{}
		if rf == "on" {
			opts.RangeFilterBits = []float64{16}
		}
		d, _, _, _ := iterAllocDB(b, &opts, 3)
		io := &IterOptions{LowerBound: []byte("key000100a"), UpperBound: []byte("key000100b")}
		for _, scan := range []bool{false, true} {
			form := "NewIter+Close"
			if scan {
				form = "NewIter+First+Close"
			}
			b.Run(fmt.Sprintf("form=%s/rf=%s", form, rf), func(b *testing.B) {
				b.ReportAllocs()
				cpuBefore, cpuErr := procstat.ReadUsage()
				for b.Loop() {
					it, err := d.NewIter(io)
					if err != nil {
						b.Fatal(err)
					}
					if scan && it.First() {
						b.Fatalf("a key in the gap: %q", it.Key())
					}
					if err := it.Close(); err != nil {
						b.Fatal(err)
					}
				}
				if cpuAfter, err := procstat.ReadUsage(); err == nil && cpuErr == nil {
					// The process's CPU time, which a loaded machine
					// inflates less than the wall time ns/op measures.
					b.ReportMetric(float64((cpuAfter.CPU()-cpuBefore.CPU()).Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// TestIterEmptyMemtableLeftOut checks that an Iterator built while the
// mutable memtable is empty leaves it out of its merge — and that it is
// right to: what is written after shows neither in it nor in its clone,
// while a new Iterator shows it; a memtable with a write stays in.
func TestIterEmptyMemtableLeftOut(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, k := range []string{"a", "c"} {
		if err := d.Put([]byte(k), []byte(k), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	keys := func(it *Iterator) string {
		t.Helper()
		var got []string
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	children := func(it *Iterator) int { return len(it.alloc.children) }
	before, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if got := children(before); got != 1 {
		t.Errorf("over an empty memtable and one table: %d children, want 1", got)
	}
	for _, k := range []string{"b", "d"} {
		if err := d.Put([]byte(k), []byte(k), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DeleteRange([]byte("a"), []byte("b"), NoSync); err != nil {
		t.Fatal(err)
	}
	clone, err := before.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	after, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if got := children(after); got != 2 {
		t.Errorf("over a memtable with writes and one table: %d children, want 2", got)
	}
	for _, c := range []struct {
		name string
		it   *Iterator
		want string
	}{
		{"built before the writes", before, "[a c]"},
		{"its clone, after them", clone, "[a c]"},
		{"built after the writes", after, "[b c d]"},
	} {
		if got := keys(c.it); got != c.want {
			t.Errorf("Iterator %s: %s, want %s", c.name, got, c.want)
		}
	}
}

package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// openMerge opens a DB on a MemFS with merger m (nil: none).
func openMerge(t *testing.T, fs vfs.FS, m *Merger, tweak func(o *Options)) *DB {
	t.Helper()
	o := &Options{FS: fs, Merger: m}
	if tweak != nil {
		tweak(o)
	}
	d, err := Open("db", o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return d
}

func mustInt(t *testing.T, b []byte, err error) int64 {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	v, err := DecodeInt64(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMergeCounter adds to counters from every place a value can be —
// memtable, L0, the bottom level, under a snapshot, through a Delete —
// and checks every read path against the sums.
func TestMergeCounter(t *testing.T) {
	d := openMerge(t, vfs.NewMem(), Int64AddMerger(), nil)
	defer d.Close()
	add := func(key string, n int64) {
		t.Helper()
		if err := d.Merge([]byte(key), EncodeInt64(n), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	for i := range 30 {
		k := fmt.Sprintf("c%02d", i%10)
		add(k, int64(i))
		want[k] += int64(i)
	}
	if err := d.Put([]byte("c03"), EncodeInt64(1000), nil); err != nil {
		t.Fatal(err)
	}
	want["c03"] = 1000
	if err := d.Compact(nil, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	snap, err := d.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	atSnap := maps2(want)
	for i := range 20 {
		k := fmt.Sprintf("c%02d", i%10)
		add(k, -int64(i))
		want[k] -= int64(i)
		if i == 10 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Delete([]byte("c05"), nil); err != nil {
		t.Fatal(err)
	}
	add("c05", 7)
	want["c05"] = 7

	check := func(r dbReader, m map[string]int64, what string) {
		t.Helper()
		var keys [][]byte
		for k, v := range m {
			got, err := r.Get([]byte(k))
			if g := mustInt(t, got, err); g != v {
				t.Errorf("%s: Get(%s) = %d, want %d", what, k, g, v)
			}
			keys = append(keys, []byte(k))
		}
		vals, err := r.MultiGet(keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			if g := mustInt(t, vals[i], nil); g != m[string(k)] {
				t.Errorf("%s: MultiGet[%s] = %d, want %d", what, k, g, m[string(k)])
			}
		}
		it, err := r.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		for _, fwd := range []bool{true, false} {
			n := 0
			ok := it.First()
			if !fwd {
				ok = it.Last()
			}
			for ; ok; n++ {
				if g := mustInt(t, it.Value(), nil); g != m[string(it.Key())] {
					t.Errorf("%s: iterator (forward %v) at %s: %d, want %d", what, fwd, it.Key(), g, m[string(it.Key())])
				}
				if fwd {
					ok = it.Next()
				} else {
					ok = it.Prev()
				}
			}
			if n != len(m) {
				t.Errorf("%s: iterator (forward %v) showed %d keys, want %d", what, fwd, n, len(m))
			}
		}
	}
	check(d, want, "DB")
	check(snap, atSnap, "snapshot")
	if err := d.Compact(nil, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	check(d, want, "DB after compaction")
	check(snap, atSnap, "snapshot after compaction")
	m := d.Metrics()
	if m.MergesFoldedByReads == 0 || m.MergesFoldedByCompactions == 0 {
		t.Errorf("merges folded: by reads %d, by compactions %d; want both > 0", m.MergesFoldedByReads, m.MergesFoldedByCompactions)
	}
	line := fmt.Sprintf("merges folded by reads %d by compactions %d", m.MergesFoldedByReads, m.MergesFoldedByCompactions)
	if !strings.Contains(strings.Join(strings.Fields(m.String()), " "), line) {
		t.Errorf("Metrics.String has no %q:\n%s", line, m.String())
	}
}

func maps2(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestMergerName checks that the merger's name is recorded and enforced
// at Open, and the arguments checked.
func TestMergerName(t *testing.T) {
	fs := vfs.NewMem()
	d := openMerge(t, fs, AppendMerger(), nil)
	if err := d.Merge([]byte("k"), []byte("a"), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    *Merger
		want string
	}{
		{nil, `written with merger "bloomkv.append": set Options.Merger`},
		{Int64AddMerger(), `Options.Merger is "bloomkv.int64add", but the DB was written with merger "bloomkv.append"`},
		{&Merger{Name: "", Merge: AppendMerger().Merge}, "has no Name"},
		{&Merger{Name: "x"}, `the merger "x" has no Merge`},
	} {
		_, err := Open("db", &Options{FS: fs, Merger: tc.m})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open with %v: %v, want an error saying %q", tc.m, err, tc.want)
		}
	}
	// The same name, read-only too, opens; the name survives a manifest
	// rotation (each Open writes a new manifest).
	for range 2 {
		d = openMerge(t, fs, AppendMerger(), nil)
		if v, err := d.Get([]byte("k")); err != nil || string(v) != "a" {
			t.Fatalf("Get = %q, %v", v, err)
		}
		d.Close()
	}
	d = openMerge(t, fs, AppendMerger(), func(o *Options) { o.ReadOnly = true })
	d.Close()

	// A DB without a merger refuses merges, writing nothing.
	d = openMerge(t, vfs.NewMem(), nil, nil)
	defer d.Close()
	if err := d.Merge([]byte("k"), []byte("a"), nil); !errors.Is(err, ErrNoMerger) {
		t.Errorf("Merge without a merger: %v, want ErrNoMerger", err)
	}
	b := NewBatch()
	b.Set([]byte("j"), []byte("x"))
	b.Merge([]byte("k"), []byte("a"))
	if err := d.Apply(b, nil); !errors.Is(err, ErrNoMerger) {
		t.Errorf("Apply of a merge without a merger: %v, want ErrNoMerger", err)
	}
	if _, err := d.Get([]byte("j")); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused batch wrote: Get(j) = %v", err)
	}
}

// TestMergeBadOperands checks Int64AddMerger's operand check at the write
// and its error at a read over a base that is no integer.
func TestMergeBadOperands(t *testing.T) {
	d := openMerge(t, vfs.NewMem(), Int64AddMerger(), nil)
	defer d.Close()
	var ae *ArgumentError
	if err := d.Merge([]byte("k"), []byte("abc"), nil); !errors.As(err, &ae) || ae.Arg != "operand" {
		t.Errorf("Merge of a 3-byte operand: %v, want an *ArgumentError for the operand", err)
	}
	if err := d.Put([]byte("k"), []byte("not a number"), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Merge([]byte("k"), EncodeInt64(1), nil); err != nil {
		t.Fatal(err)
	}
	for _, flush := range []bool{false, true} {
		if flush {
			if err := d.Compact(nil, []byte{0xff}); err != nil {
				t.Fatalf("a compaction that cannot fold: %v", err)
			}
		}
		if _, err := d.Get([]byte("k")); err == nil || !strings.Contains(err.Error(), "int64add: the value below is 12 bytes") {
			t.Errorf("Get over a bad base (compacted %v): %v", flush, err)
		}
		it, _ := d.NewIter(nil)
		if it.First() || it.Error() == nil {
			t.Errorf("iterator over a bad base (compacted %v): valid %v, error %v", flush, it.Valid(), it.Error())
		}
		it.Close()
	}
	// Nothing was lost: a Put over it reads again.
	if err := d.Put([]byte("k"), EncodeInt64(5), nil); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get([]byte("k")); mustInt(t, v, err) != 5 {
		t.Errorf("Get = %d", mustInt(t, v, err))
	}
}

// TestMergeGetStopsAtBase checks that a Get of a key with operands reads
// the places down to its base and no further: with the base in L0 over
// an older version at the bottom, Explain shows the operands' steps, the
// base's, and no step of the bottom level's table; and the trace names
// the fold.
func TestMergeGetStopsAtBase(t *testing.T) {
	d := openMerge(t, vfs.NewMem(), AppendMerger(), nil)
	defer d.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Put([]byte("k"), []byte("old"), nil))
	must(d.Compact(nil, []byte{0xff})) // to the bottom
	must(d.Put([]byte("k"), []byte("base"), nil))
	must(d.Flush()) // L0: the base
	must(d.Merge([]byte("k"), []byte("+1"), nil))
	must(d.Flush()) // L0: an operand
	must(d.Merge([]byte("k"), []byte("+2"), nil))
	must(d.Merge([]byte("k"), []byte("+3"), nil)) // the memtable: two operands
	tr, err := d.Explain([]byte("k"))
	must(err)
	if string(tr.Value) != "base+1+2+3" || tr.Operands != 3 || tr.Source != "merge" || !strings.HasPrefix(tr.MergeBase, "L0/") {
		t.Fatalf("Explain: value %q, %d operands, source %q, base %q\n%v", tr.Value, tr.Operands, tr.Source, tr.MergeBase, tr)
	}
	var operands, bottom int
	for _, s := range tr.Steps {
		if s.Operand {
			operands++
		}
		if s.Kind == TableStep && s.Level > 0 {
			bottom++
		}
	}
	last := tr.Steps[len(tr.Steps)-1]
	if operands != 3 || bottom != 0 || last.Kind != MergeStep || last.Operands != 3 {
		t.Errorf("steps: %d operands, %d steps below L0, last %+v; want 3, 0, a merge of 3\n%v", operands, bottom, last, tr)
	}
	if !strings.Contains(tr.String(), "merge operand") || !strings.Contains(tr.Summary(), "3 merge operands folded over the value in L0/") {
		t.Errorf("String:\n%v", tr)
	}
}

// TestMergeNeverSeparated checks that a flush keeps every operand in its
// table, however large, where it separates a Set's value of that size.
func TestMergeNeverSeparated(t *testing.T) {
	d := openMerge(t, vfs.NewMem(), AppendMerger(), func(o *Options) { o.ValueSeparation.MinSize = 16 })
	defer d.Close()
	big := bytes.Repeat([]byte("m"), 1000)
	for i := range 5 {
		if err := d.Merge([]byte(fmt.Sprint("k", i)), big, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if m := d.Metrics(); m.Blobs.BytesWritten != 0 {
		t.Errorf("a flush of operands wrote %d bytes of blob files", m.Blobs.BytesWritten)
	}
	if err := d.Put([]byte("k0"), big, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Merge([]byte("k0"), []byte("!"), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if m := d.Metrics(); m.Blobs.BytesWritten == 0 {
		t.Error("the Set was not separated")
	}
	// The fold over a separated base reads it, by each read path.
	want := string(big) + "!"
	if v, err := d.Get([]byte("k0")); err != nil || string(v) != want {
		t.Errorf("Get over a separated base: %d bytes, %v", len(v), err)
	}
	it, _ := d.NewIter(nil)
	defer it.Close()
	if !it.First() || string(it.Value()) != want || !it.Last() || !it.First() || string(it.Value()) != want {
		t.Errorf("iterator over a separated base: %d bytes, %v", len(it.Value()), it.Error())
	}
	if !it.SeekLT([]byte("k1")) || string(it.Value()) != want {
		t.Errorf("backward over a separated base: %q %d bytes, %v", it.Key(), len(it.Value()), it.Error())
	}
}

// TestMergeIndexedBatch checks that an indexed batch's and a
// transaction's merges fold over the DB's value and over their own
// writes, and that a transaction reading a key it merged records the
// read.
func TestMergeIndexedBatch(t *testing.T) {
	d := openMerge(t, vfs.NewMem(), AppendMerger(), nil)
	defer d.Close()
	d.Put([]byte("a"), []byte("db"), nil)
	d.Merge([]byte("b"), []byte("db"), nil)
	b, err := d.NewIndexedBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Merge([]byte("a"), []byte("+x"))
	b.Merge([]byte("a"), []byte("+y"))
	b.Set([]byte("c"), []byte("s"))
	b.Merge([]byte("c"), []byte("+z"))
	b.DeleteRange([]byte("b"), []byte("bb"))
	b.Merge([]byte("b"), []byte("+w"))
	want := map[string]string{"a": "db+x+y", "b": "+w", "c": "s+z"}
	for k, w := range want {
		if v, err := b.Get([]byte(k)); err != nil || string(v) != w {
			t.Errorf("Batch.Get(%s) = %q, %v; want %q", k, v, err, w)
		}
	}
	it, _ := b.NewIter(nil)
	var got []string
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	it.Close()
	if w := []string{"c=s+z", "b=+w", "a=db+x+y"}; !slices.Equal(got, w) {
		t.Errorf("batch iterator backward: %v, want %v", got, w)
	}
	if err := d.Apply(b, nil); err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if v, err := d.Get([]byte(k)); err != nil || string(v) != w {
			t.Errorf("after Apply, Get(%s) = %q, %v; want %q", k, v, err, w)
		}
	}

	// A transaction that merges and reads the key conflicts with a write
	// of it; one that merges blind does not.
	for _, read := range []bool{true, false} {
		txn, _ := d.NewTransaction(true)
		txn.Merge([]byte("a"), []byte("+t"))
		if read {
			if v, err := txn.Get([]byte("a")); err != nil || string(v) != "db+x+y+t" {
				t.Errorf("txn.Get = %q, %v", v, err)
			}
		}
		d.Merge([]byte("a"), []byte("+o"), nil)
		err := txn.Commit(nil)
		if read != errors.Is(err, ErrConflict) {
			t.Errorf("Commit of a transaction that merged (read %v): %v", read, err)
		}
	}
	if v, err := d.Get([]byte("a")); err != nil || string(v) != "db+x+y+o+o+t" {
		t.Errorf("Get(a) = %q, %v", v, err)
	}
}

// TestMergeIterModel checks iterators over merges against a model through
// flushes and compactions, moving both ways at random: the operands'
// folds must cross every source (memtables, L0, levels) and every change
// of direction.
func TestMergeIterModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 4))
	d := openMerge(t, vfs.NewMem(), AppendMerger(), func(o *Options) { o.MemtableSize = 64 << 10 })
	defer d.Close()
	ks := newKeySpace(rng, 40)
	m := kvModel{}
	for i := range 3000 {
		var op kvOp
		k := string(ks.pick(rng))
		switch rng.IntN(10) {
		case 0:
			op = kvOp{del: true, key: k}
		case 1:
			op = randRangeDel(rng, ks)
		case 2, 3:
			op = kvOp{key: k, value: fmt.Sprint("s", i)}
		default:
			op = kvOp{merge: true, key: k, value: fmt.Sprint("+", i)}
		}
		if err := applyOps(d, []kvOp{op}, NoSync); err != nil {
			t.Fatal(err)
		}
		m.apply([]kvOp{op})
		switch {
		case i%500 == 499:
			if err := d.Compact(nil, []byte{0xff}); err != nil {
				t.Fatal(err)
			}
		case i%97 == 0:
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if i%50 == 0 {
			if err := checkIter(rng, d, m, ks, 40); err != nil {
				t.Fatalf("after %d writes: %v", i, err)
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after %d writes: %v", i, err)
			}
		}
	}
}

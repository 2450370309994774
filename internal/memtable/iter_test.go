package memtable

import (
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestInitIterReuse checks the room an Iter keeps from Close to InitIter:
// a reused Iter reads its new memtable exactly (the oracle: the keys
// added, in order), a closed one refers to no memtable and holds no
// entry, a long scan's large buffer is let go of, and a short scan on a
// reused Iter allocates nothing.
func TestInitIterReuse(t *testing.T) {
	fill := func(n int, tag string) (*Memtable, []string) {
		m := New(1 << 20)
		var keys []string
		for i := range n {
			k := fmt.Sprintf("%s%05d", tag, i)
			m.Add(base.SeqNum(i+1), base.KindSet, []byte(k), []byte("v"+k))
			keys = append(keys, k)
		}
		return m, keys
	}
	scan := func(t *testing.T, it *Iter, from string, n int) []string {
		t.Helper()
		var got []string
		for ok := it.SeekGE([]byte(from)); ok && len(got) < n; ok = it.Next() {
			k := it.Key()
			if want := "v" + string(k.UserKey); string(it.Value()) != want {
				t.Fatalf("value of %q is %q, want %q", k.UserKey, it.Value(), want)
			}
			got = append(got, string(k.UserKey))
		}
		return got
	}
	closed := func(t *testing.T, it *Iter) {
		t.Helper()
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if it.m != nil || it.Valid() || cap(it.buf) > maxKeptEntries {
			t.Fatalf("closed Iter: memtable %p, valid %v, room %d (at most %d)", it.m, it.Valid(), cap(it.buf), maxKeptEntries)
		}
		for i, e := range it.buf[:cap(it.buf)] {
			if e != (entry{}) {
				t.Fatalf("closed Iter keeps entry %d of its buffer", i)
			}
		}
	}
	a, aKeys := fill(1000, "a")
	b, bKeys := fill(1000, "b")

	it := a.NewIter()
	if got := scan(t, it, "", len(aKeys)); fmt.Sprint(got) != fmt.Sprint(aKeys) {
		t.Fatalf("full scan of a: %d keys, want %d", len(got), len(aKeys))
	}
	closed(t, it)
	if cap(it.buf) != 0 {
		t.Fatalf("a full scan's buffer of room %d is kept", cap(it.buf))
	}
	for _, tc := range []struct {
		m    *Memtable
		keys []string
		from int
		n    int
	}{
		{a, aKeys, 10, 20},
		{b, bKeys, 500, 40}, // reads b, not what it kept of a
		{b, bKeys, 990, 40}, // runs off the end
		{a, aKeys, 0, 3},
	} {
		a.InitIter(it) // then over tc.m: InitIter forgets the memtable before
		tc.m.InitIter(it)
		want := tc.keys[tc.from:min(tc.from+tc.n, len(tc.keys))]
		if got := scan(t, it, tc.keys[tc.from], tc.n); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("scan of %d from %s: %v, want %v", tc.n, tc.keys[tc.from], got, want)
		}
		// A seek refills fewer entries than the scan's last refill: Close
		// must zero what the longer one left too.
		if !it.SeekGE([]byte(tc.keys[tc.from])) {
			t.Fatalf("SeekGE(%s) found nothing", tc.keys[tc.from])
		}
		closed(t, it)
		if cap(it.buf) == 0 {
			t.Fatalf("a short scan's buffer is not kept")
		}
	}
	seekKey := []byte(bKeys[100])
	if n := testing.AllocsPerRun(100, func() {
		b.InitIter(it)
		for ok, i := it.SeekGE(seekKey), 0; ok && i < 20; ok, i = it.Next(), i+1 {
		}
		_ = it.Close()
	}); n != 0 {
		t.Errorf("a short scan on a reused Iter allocates %v times, want 0", n)
	}
}

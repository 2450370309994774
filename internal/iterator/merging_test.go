package iterator_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
)

// TestMergingIterForward merges children forward only, as a compaction
// does — an empty child and one holding newer versions of another's keys
// among them — against the sorted union of their entries; then children
// that fail at First and in the middle: the failure ends the merge, Next
// stays false, and Close closes every child and returns the failure.
func TestMergingIterForward(t *testing.T) {
	a, b, c := numbered("a", 5, 1), numbered("b", 5, 10), numbered("a", 5, 20) // c holds newer versions of a's keys
	children := []*itertest.SliceIter{itertest.NewSliceIter(a), itertest.NewSliceIter(nil), itertest.NewSliceIter(b), itertest.NewSliceIter(c)}
	m := iterator.NewMergingIter(asIterators(children)...)
	var got []itertest.KV
	for ok := m.First(); ok; ok = m.Next() {
		k := m.Key()
		got = append(got, itertest.KV{Key: base.InternalKey{UserKey: bytes.Clone(k.UserKey), Trailer: k.Trailer}, Value: bytes.Clone(m.Value())})
	}
	want := slices.Concat(a, b, c)
	slices.SortFunc(want, itertest.Compare)
	if !equalKVs(got, want) || m.Error() != nil {
		t.Fatalf("merge = %v, %v; want %v", got, m.Error(), want)
	}
	if err := m.Close(); err != nil || closes(children) != 4 {
		t.Fatalf("Close = %v after %d closes", err, closes(children))
	}

	for _, tc := range []struct {
		failAt int // b's FailAfter: it fails moving onto that entry
		want   int // entries merged before the failure
	}{{0, 0}, {3, len(a) + 3}} {
		children := []*itertest.SliceIter{itertest.NewSliceIter(a), itertest.NewSliceIter(b)}
		children[1].FailAfter = tc.failAt
		m := iterator.NewMergingIter(asIterators(children)...)
		n, err := drain(m)
		if !errors.Is(err, itertest.ErrInjected) || n != tc.want || m.Next() {
			t.Errorf("child failing at %d: %d entries, %v; want %d and the failure", tc.failAt, n, err, tc.want)
		}
		if err := m.Close(); !errors.Is(err, itertest.ErrInjected) || closes(children) != 2 {
			t.Errorf("child failing at %d: Close = %v after %d closes", tc.failAt, err, closes(children))
		}
	}
}

func asIterators(s []*itertest.SliceIter) []iterator.Iterator {
	its := make([]iterator.Iterator, len(s))
	for i, c := range s {
		its[i] = c
	}
	return its
}

// closes is the number of Close calls on children.
func closes(children []*itertest.SliceIter) (n int) {
	for _, c := range children {
		n += c.Closes
	}
	return n
}

func equalKVs(a, b []itertest.KV) bool {
	return slices.EqualFunc(a, b, func(x, y itertest.KV) bool {
		return base.CompareInternal(x.Key, y.Key) == 0 && bytes.Equal(x.Value, y.Value)
	})
}

// TestMergingIterInitAfterClose reuses one MergingIter, as a DB Iterator's
// pooled stack does: after a merge that failed and was closed, Init over
// other children merges them as a new MergingIter would, keeping neither
// the failure, nor the excluded children, nor the heap's old entries.
func TestMergingIterInitAfterClose(t *testing.T) {
	a, b := numbered("a", 5, 1), numbered("b", 5, 10)
	var m iterator.MergingIter
	failing := []*itertest.SliceIter{itertest.NewSliceIter(a), itertest.NewSliceIter(b)}
	failing[1].FailAfter = 2
	m.Init(asIterators(failing))
	m.Exclude([]bool{true, false})
	if _, err := drain(&m); !errors.Is(err, itertest.ErrInjected) {
		t.Fatalf("failing merge: %v; want the failure", err)
	}
	m.Close()
	for _, children := range [][]itertest.KV{slices.Concat(a, b), a, nil} {
		iters := []*itertest.SliceIter{itertest.NewSliceIter(children), itertest.NewSliceIter(numbered("c", 3, 30))}
		m.Init(asIterators(iters))
		var got []itertest.KV
		for ok := m.Last(); ok; ok = m.Prev() {
			k := m.Key()
			got = append(got, itertest.KV{Key: base.InternalKey{UserKey: bytes.Clone(k.UserKey), Trailer: k.Trailer}, Value: bytes.Clone(m.Value())})
		}
		want := slices.Concat(children, numbered("c", 3, 30))
		slices.SortFunc(want, func(x, y itertest.KV) int { return itertest.Compare(y, x) })
		if !equalKVs(got, want) || m.Error() != nil {
			t.Errorf("merge after Init = %v, %v; want %v", got, m.Error(), want)
		}
		if err := m.Close(); err != nil || closes(iters) != 2 {
			t.Errorf("Close = %v after %d closes", err, closes(iters))
		}
	}
}

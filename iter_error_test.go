package bloomkv

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
)

// TestIterChildError checks that a failing child stops a forward scan with
// its error, and that Close still closes everything once and reports it.
func TestIterChildError(t *testing.T) {
	good := itertest.NewSliceIter([]itertest.KV{itertest.Set("a", 1), itertest.Set("c", 3), itertest.Set("e", 5)})
	bad := itertest.NewSliceIter([]itertest.KV{itertest.Set("b", 2), itertest.Set("d", 4), itertest.Set("f", 6)})
	bad.FailAfter = 2 // First, Next, then the failure
	closed := 0
	it := newIterator(iterator.NewMergingIter(good, bad), base.SeqNumMax, IterOptions{}, func() error {
		closed++
		return nil
	})
	var keys []string
	for k := range it.All() {
		keys = append(keys, string(k))
	}
	// bad fails moving past "d": its newest version was known by then.
	if got := strings.Join(keys, " "); got != "a b c d" {
		t.Fatalf("scanned %q before the failure, want a b c d", got)
	}
	if it.Valid() || it.Key() != nil || it.Value() != nil || it.Error() != itertest.ErrInjected {
		t.Fatalf("after the failure: Valid %v, Key %q, Error %v", it.Valid(), it.Key(), it.Error())
	}
	if it.First() || it.Last() || it.SeekGE([]byte("a")) || it.SeekLT([]byte("z")) || it.Next() || it.Prev() {
		t.Fatal("the iterator moved after a failure")
	}
	if err := it.Close(); err != itertest.ErrInjected {
		t.Fatalf("Close = %v, want the failure", err)
	}
	if good.Closes != 1 || bad.Closes != 1 || closed != 1 {
		t.Fatalf("children closed %d and %d times, onClose called %d times", good.Closes, bad.Closes, closed)
	}
}

// TestIterBackwardFailure checks that a failure while passing the versions
// of a key backward does not show an older version: the newer one may be
// what failed to load.
func TestIterBackwardFailure(t *testing.T) {
	child := itertest.NewSliceIter([]itertest.KV{itertest.Set("k", 5), itertest.Set("k", 1)})
	child.FailAfter = 1 // SeekLT lands on k#1; the Prev to k#5 fails
	it := newIterator(iterator.NewMergingIter(child), base.SeqNumMax, IterOptions{}, nil)
	if it.SeekLT([]byte("z")) || it.Error() != itertest.ErrInjected {
		t.Fatalf("SeekLT showed %q, error %v", it.Value(), it.Error())
	}
	if err := it.Close(); err != itertest.ErrInjected {
		t.Fatalf("Close = %v", err)
	}
}

// TestIterTombstonesAndVersions checks what a read at each sequence
// number sees of a key's history, both ways.
func TestIterTombstonesAndVersions(t *testing.T) {
	// a: set@1, deleted@3, set@5. b: set@2, deleted@4. c: set@6.
	mem := itertest.NewSliceIter([]itertest.KV{itertest.Set("a", 5), itertest.Del("b", 4), itertest.Set("c", 6)})
	old := itertest.NewSliceIter([]itertest.KV{itertest.Del("a", 3), itertest.Set("a", 1), itertest.Set("b", 2)})
	for _, tc := range []struct {
		seq  base.SeqNum
		want string
	}{
		{0, ""}, {1, "a"}, {2, "ab"}, {3, "b"}, {4, ""}, {5, "a"}, {6, "ac"}, {base.SeqNumMax, "ac"},
	} {
		mem, old := *mem, *old
		it := newIterator(iterator.NewMergingIter(&mem, &old), tc.seq, IterOptions{}, nil)
		var fwd, bwd string
		for ok := it.First(); ok; ok = it.Next() {
			fwd += string(it.Key())
		}
		for ok := it.Last(); ok; ok = it.Prev() {
			bwd = string(it.Key()) + bwd
		}
		if fwd != tc.want || bwd != tc.want {
			t.Errorf("seq %d: forward %q, backward %q; want %q", tc.seq, fwd, bwd, tc.want)
		}
		if it.Close() != nil {
			t.Fatal(it.Error())
		}
	}
}

// TestIterClosed checks that a closed Iterator reports ErrClosed and never
// panics, and that Close releases everything exactly once.
func TestIterClosed(t *testing.T) {
	child := itertest.NewSliceIter([]itertest.KV{itertest.Set("a", 1)})
	errRelease := errors.New("release failed")
	released := 0
	it := newIterator(iterator.NewMergingIter(child), base.SeqNumMax, IterOptions{}, func() error {
		released++
		return errRelease
	})
	if !it.First() {
		t.Fatal("First on a one-key iterator")
	}
	if err := it.Close(); err != errRelease {
		t.Fatalf("Close = %v, want onClose's error", err)
	}
	if it.First() || it.Last() || it.SeekGE(nil) || it.SeekLT(nil) || it.Next() || it.Prev() || it.Valid() {
		t.Fatal("a closed iterator moved")
	}
	if it.Key() != nil || it.Value() != nil || !errors.Is(it.Error(), ErrClosed) {
		t.Fatalf("closed: Key %q, Value %q, Error %v", it.Key(), it.Value(), it.Error())
	}
	for range it.All() {
		t.Fatal("All yielded on a closed iterator")
	}
	if err := it.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
	if child.Closes != 1 || released != 1 {
		t.Fatalf("child closed %d times, onClose called %d times", child.Closes, released)
	}
}

// TestIterAllBreak checks that breaking out of All leaves the iterator at
// the last key yielded, ready to continue.
func TestIterAllBreak(t *testing.T) {
	it := newIterator(iterator.NewMergingIter(itertest.NewSliceIter([]itertest.KV{itertest.Set("a", 1), itertest.Set("b", 2), itertest.Set("c", 3)})), base.SeqNumMax, IterOptions{}, nil)
	for k := range it.All() {
		if string(k) == "b" {
			break
		}
	}
	if string(it.Key()) != "b" || !it.Next() || string(it.Key()) != "c" {
		t.Fatalf("after a break at b and Next: at %q", it.Key())
	}
	n := 0
	for range it.All() {
		n++
	}
	if n != 3 || it.Close() != nil {
		t.Fatalf("a second range over All yielded %d keys, want 3", n)
	}
}

package bloomkv

import (
	"bytes"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
)

// The iterators below the DB's Iterator, and the random worlds of versions
// these tests read through it, are package internal/iterator's and its
// itertest's; their own tests are there. The tests here are of the
// Iterator: what it shows of every version, and how it fails.

// newIterator returns an unpositioned Iterator that shows inner's entries
// as of read sequence number seq within opts' bounds, which it copies. It
// owns inner: Close closes it and then calls onClose, if not nil (a DB's
// Iterator, built by iterOver, releases its read state instead). The
// tests build Iterators over stacks of their own with it.
func newIterator(inner iterator.Iterator, seq base.SeqNum, opts IterOptions, onClose func() error) *Iterator {
	it := &Iterator{&iterState{
		inner:     inner,
		seq:       seq,
		userLower: bytes.Clone(opts.LowerBound),
		userUpper: bytes.Clone(opts.UpperBound),
		onClose:   onClose,
	}}
	it.lower, it.upper = it.userLower, it.userUpper
	return it
}

// worldIterator returns an Iterator over the whole of w: a merge of a fresh
// child on every source, as DB.newIter builds one.
func worldIterator(w *itertest.World, seq base.SeqNum, opts IterOptions) *Iterator {
	inner := iterator.NewMergingIter(w.Children(opts.LowerBound, opts.UpperBound)...)
	return newIterator(inner, seq, opts, nil)
}

// visibleKeys is the oracle: the keys and values an Iterator must show, in
// order — for each user key within the bounds, its newest version with a
// seqnum ≤ seq, if that is a Set.
func visibleKeys(all []itertest.KV, seq base.SeqNum, opts IterOptions) (keys, values [][]byte) {
	newest := map[string]itertest.KV{}
	for _, e := range all {
		k := string(e.Key.UserKey)
		if e.Key.SeqNum() > seq {
			continue
		}
		if old, ok := newest[k]; !ok || e.Key.SeqNum() > old.Key.SeqNum() {
			newest[k] = e
		}
	}
	var sorted []string
	for k, e := range newest {
		inBounds := (opts.LowerBound == nil || k >= string(opts.LowerBound)) &&
			(opts.UpperBound == nil || k < string(opts.UpperBound))
		if e.Key.Kind() == base.KindSet && inBounds {
			sorted = append(sorted, k)
		}
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		keys = append(keys, []byte(k))
		values = append(values, newest[k].Value)
	}
	return keys, values
}

package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// ikv is one version: an internal key and its value.
type ikv struct {
	key   base.InternalKey
	value []byte
}

func (e ikv) String() string { return fmt.Sprintf("%v=%q", e.key, e.value) }

func compareIKV(a, b ikv) int { return base.CompareInternal(a.key, b.key) }

// errInjected is the failure a sliceIter injects.
var errInjected = errors.New("injected failure")

// sliceIter is an internalIterator over sorted entries that holds its
// callers to the interface contract: it panics on Key, Value, Next or Prev
// when not at an entry, and on use after Close, and it overwrites the key
// and value it returned when it moves. After failAfter moves its next move
// fails with errInjected (failAfter < 0: never).
type sliceIter struct {
	entries    []ikv
	pos        int
	valid      bool
	key, value []byte // copies of the current entry's, clobbered on a move
	failAfter  int
	err        error
	closes     int
}

func newSliceIter(entries []ikv) *sliceIter { return &sliceIter{entries: entries, failAfter: -1} }

// move applies a move that positions at index i (valid if in range), or
// injects the failure.
func (s *sliceIter) move(i int) bool {
	if s.closes > 0 {
		panic("sliceIter: used after Close")
	}
	if s.err != nil {
		return false
	}
	if s.failAfter == 0 {
		s.err, s.valid = errInjected, false
		return false
	}
	if s.failAfter > 0 {
		s.failAfter--
	}
	clobber(s.key)
	clobber(s.value)
	s.pos, s.valid = i, i >= 0 && i < len(s.entries)
	if s.valid {
		s.key = append(s.key[:0], s.entries[i].key.UserKey...)
		s.value = append(s.value[:0], s.entries[i].value...)
	}
	return s.valid
}

func clobber(b []byte) {
	for i := range b {
		b[i] = '!'
	}
}

func (s *sliceIter) mustBeValid(op string) {
	if !s.valid {
		panic("sliceIter: " + op + " when not at an entry")
	}
}

func (s *sliceIter) First() bool { return s.move(0) }
func (s *sliceIter) Last() bool  { return s.move(len(s.entries) - 1) }
func (s *sliceIter) SeekGE(k []byte) bool {
	return s.move(sort.Search(len(s.entries), func(i int) bool {
		return bytes.Compare(s.entries[i].key.UserKey, k) >= 0
	}))
}
func (s *sliceIter) SeekLT(k []byte) bool {
	return s.move(sort.Search(len(s.entries), func(i int) bool {
		return bytes.Compare(s.entries[i].key.UserKey, k) >= 0
	}) - 1)
}
func (s *sliceIter) Next() bool { s.mustBeValid("Next"); return s.move(s.pos + 1) }
func (s *sliceIter) Prev() bool { s.mustBeValid("Prev"); return s.move(s.pos - 1) }
func (s *sliceIter) Key() base.InternalKey {
	s.mustBeValid("Key")
	return base.InternalKey{UserKey: s.key, Trailer: s.entries[s.pos].key.Trailer}
}
func (s *sliceIter) Value() []byte { s.mustBeValid("Value"); return s.value }
func (s *sliceIter) Error() error  { return s.err }
func (s *sliceIter) Close() error {
	s.closes++
	s.valid = false
	return s.err
}

// iterWorld is a random set of versions spread over sources of every kind:
// memtables, L0-like tables, levels of non-overlapping tables and slices.
type iterWorld struct {
	all     []ikv // every version, sorted
	maxSeq  base.SeqNum
	sources []iterSource
}

// iterSource makes a fresh child iterator over some of the world's versions.
// Level sources leave out the tables wholly outside [lower, upper).
type iterSource struct {
	name    string
	entries []ikv // sorted
	open    func(lower, upper []byte) internalIterator
}

// randIterKey returns a short key over a 4-letter alphabet, possibly empty, so
// that versions of a key collide across sources.
func randIterKey(rng *rand.Rand) []byte {
	k := make([]byte, rng.IntN(4))
	for i := range k {
		k[i] = byte('a' + rng.IntN(4))
	}
	return k
}

// newWorld builds a world of up to n versions with unique sequence numbers.
func newWorld(tb testing.TB, rng *rand.Rand, n int) *iterWorld {
	w := &iterWorld{}
	total := rng.IntN(n + 1)
	for seq := 1; seq <= total; seq++ {
		kind := base.KindSet
		if rng.IntN(4) == 0 {
			kind = base.KindDelete
		}
		var v []byte
		if kind == base.KindSet {
			v = fmt.Appendf(nil, "v%d", seq)
		}
		w.all = append(w.all, ikv{base.MakeInternalKey(randIterKey(rng), base.SeqNum(seq), kind), v})
	}
	w.maxSeq = base.SeqNum(total)
	// Deal the versions out to the sources at random.
	nsrc := 1 + rng.IntN(6)
	parts := make([][]ikv, nsrc)
	for _, e := range w.all {
		i := rng.IntN(nsrc)
		parts[i] = append(parts[i], e)
	}
	slices.SortFunc(w.all, compareIKV)
	for i, p := range parts {
		slices.SortFunc(p, compareIKV)
		switch rng.IntN(4) {
		case 0:
			w.sources = append(w.sources, memtableSource(p))
		case 1:
			w.sources = append(w.sources, tableSource(tb, rng, p, uint64(i)))
		case 2:
			w.sources = append(w.sources, levelSource(tb, rng, p, uint64(100*(i+1))))
		default:
			w.sources = append(w.sources, iterSource{"slice", p, func(_, _ []byte) internalIterator { return newSliceIter(p) }})
		}
	}
	return w
}

func memtableSource(entries []ikv) iterSource {
	m := memtable.New(0)
	for _, e := range entries {
		m.Add(e.key.SeqNum(), e.key.Kind(), e.key.UserKey, e.value)
	}
	return iterSource{"memtable", entries, func(_, _ []byte) internalIterator { return m.NewIter() }}
}

func tableSource(tb testing.TB, rng *rand.Rand, entries []ikv, fileNum uint64) iterSource {
	r := buildTestTable(tb, rng, entries, fileNum)
	return iterSource{"table", entries, func(_, _ []byte) internalIterator { return r.NewIterator() }}
}

// levelSource cuts entries into tables at random points, sometimes between
// two versions of one user key.
func levelSource(tb testing.TB, rng *rand.Rand, entries []ikv, fileNum uint64) iterSource {
	files := levelFiles(tb, rng, entries, fileNum)
	return iterSource{"level", entries, func(lower, upper []byte) internalIterator {
		return newLevelIter(files, lower, upper)
	}}
}

func levelFiles(tb testing.TB, rng *rand.Rand, entries []ikv, fileNum uint64) []levelFile {
	var files []levelFile
	for rest := entries; len(rest) > 0; fileNum++ {
		n := 1 + rng.IntN(min(len(rest), 12))
		t := rest[:n]
		rest = rest[n:]
		r := buildTestTable(tb, rng, t, fileNum)
		files = append(files, levelFile{
			smallest: t[0].key.UserKey,
			largest:  t[len(t)-1].key.UserKey,
			open:     func() (internalIterator, error) { return r.NewIterator(), nil },
		})
	}
	return files
}

// buildTestTable writes entries to an in-memory table with small blocks, so
// that a few entries span several blocks. It writes no filter: iterators
// do not use it, and building one costs more than the rest of a small table.
func buildTestTable(tb testing.TB, rng *rand.Rand, entries []ikv, fileNum uint64) *sstable.Reader {
	tb.Helper()
	var buf bytes.Buffer
	w, err := sstable.NewWriter(&buf, sstable.WriterOptions{
		BlockSize:       32 + rng.IntN(256),
		RestartInterval: 1 + rng.IntN(4),
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if err := w.Add(e.key, e.value); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	r, err := sstable.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), sstable.ReaderOptions{
		FileName: fmt.Sprintf("%06d.sst", fileNum),
		FileNum:  fileNum,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// children opens a fresh child iterator on every source.
func (w *iterWorld) children(lower, upper []byte) []internalIterator {
	var cs []internalIterator
	for _, s := range w.sources {
		cs = append(cs, s.open(lower, upper))
	}
	return cs
}

// iterator returns an Iterator over the whole world.
func (w *iterWorld) iterator(seq base.SeqNum, opts IterOptions) *Iterator {
	inner := newMergingIter(w.children(opts.LowerBound, opts.UpperBound)...)
	return newIterator(inner, seq, opts, nil)
}

// visible is the oracle: the keys and values an Iterator must show, in
// order — for each user key within the bounds, its newest version with a
// seqnum ≤ seq, if that is a Set.
func visibleKeys(all []ikv, seq base.SeqNum, opts IterOptions) (keys, values [][]byte) {
	newest := map[string]ikv{}
	for _, e := range all {
		k := string(e.key.UserKey)
		if e.key.SeqNum() > seq {
			continue
		}
		if old, ok := newest[k]; !ok || e.key.SeqNum() > old.key.SeqNum() {
			newest[k] = e
		}
	}
	var sorted []string
	for k, e := range newest {
		inBounds := (opts.LowerBound == nil || k >= string(opts.LowerBound)) &&
			(opts.UpperBound == nil || k < string(opts.UpperBound))
		if e.key.Kind() == base.KindSet && inBounds {
			sorted = append(sorted, k)
		}
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		keys = append(keys, []byte(k))
		values = append(values, newest[k].value)
	}
	return keys, values
}

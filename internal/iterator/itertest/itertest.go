// Package itertest is what the tests of package iterator, of the DB's
// Iterator (package bloomkv) and of compaction.Run share: KV versions, a
// SliceIter that holds its callers to the iterator.Iterator contract and
// fails on demand, and random Worlds of versions dealt out to memtables,
// tables, levels and slices, whose sorted union (World.All) is the oracle
// every iterator built over them must agree with.
//
// It is imported by tests only; it lives outside _test.go files because
// tests of several packages use it.
package itertest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// seeds is how many random worlds each model test tries, in every package
// whose tests import this one; raise it for a soak run, e.g.
// go test -run 'Model' -iter.seeds=20000 ./internal/iterator .
var seeds = flag.Int("iter.seeds", 300, "random worlds per iterator model test (-short: 50)")

// Seeds returns the number of random worlds a model test tries: -iter.seeds,
// or 50 under -short.
func Seeds() uint64 {
	if testing.Short() {
		return 50
	}
	return uint64(*seeds)
}

// KV is one version: an internal key and its value.
type KV struct {
	Key   base.InternalKey
	Value []byte
}

// String formats e for test failures.
func (e KV) String() string { return fmt.Sprintf("%v=%q", e.Key, e.Value) }

// Compare orders versions by base.CompareInternal of their keys.
func Compare(a, b KV) int { return base.CompareInternal(a.Key, b.Key) }

// Set returns a Set of key at seq, whose value is key+"-value".
func Set(key string, seq base.SeqNum) KV {
	return KV{base.MakeInternalKey([]byte(key), seq, base.KindSet), []byte(key + "-value")}
}

// Del returns a tombstone of key at seq.
func Del(key string, seq base.SeqNum) KV {
	return KV{base.MakeInternalKey([]byte(key), seq, base.KindDelete), nil}
}

// ErrInjected is the failure a SliceIter injects.
var ErrInjected = errors.New("injected failure")

// SliceIter is an iterator.Iterator over sorted Entries that holds its
// callers to the interface contract: it panics on Key, Value, Next or Prev
// when not at an entry, and on use after Close, and it overwrites the key
// and value it returned when it moves. After FailAfter moves its next move
// fails with ErrInjected (FailAfter < 0: never); so for a walk from First,
// FailAfter n fails the move onto entry n. Closes counts its Close calls.
//
// A SliceIter is a plain value: copying one that has not moved yet gives an
// independent iterator over the same entries.
type SliceIter struct {
	Entries   []KV
	FailAfter int
	Closes    int

	pos        int
	valid      bool
	key, value []byte // copies of the current entry's, clobbered on a move
	err        error
}

// NewSliceIter returns an unpositioned SliceIter over entries that never
// fails.
func NewSliceIter(entries []KV) *SliceIter { return &SliceIter{Entries: entries, FailAfter: -1} }

// move applies a move that positions at index i (valid if in range), or
// injects the failure.
func (s *SliceIter) move(i int) bool {
	if s.Closes > 0 {
		panic("SliceIter: used after Close")
	}
	if s.err != nil {
		return false
	}
	if s.FailAfter == 0 {
		s.err, s.valid = ErrInjected, false
		return false
	}
	if s.FailAfter > 0 {
		s.FailAfter--
	}
	clobber(s.key)
	clobber(s.value)
	s.pos, s.valid = i, i >= 0 && i < len(s.Entries)
	if s.valid {
		s.key = append(s.key[:0], s.Entries[i].Key.UserKey...)
		s.value = append(s.value[:0], s.Entries[i].Value...)
	}
	return s.valid
}

func clobber(b []byte) {
	for i := range b {
		b[i] = '!'
	}
}

func (s *SliceIter) mustBeValid(op string) {
	if !s.valid {
		panic("SliceIter: " + op + " when not at an entry")
	}
}

// search returns the index of the first entry whose user key is ≥ k.
func (s *SliceIter) search(k []byte) int {
	return sort.Search(len(s.Entries), func(i int) bool {
		return bytes.Compare(s.Entries[i].Key.UserKey, k) >= 0
	})
}

// First moves to the first entry.
func (s *SliceIter) First() bool { return s.move(0) }

// Last moves to the last entry.
func (s *SliceIter) Last() bool { return s.move(len(s.Entries) - 1) }

// SeekGE moves to the first entry whose user key is ≥ k.
func (s *SliceIter) SeekGE(k []byte) bool { return s.move(s.search(k)) }

// SeekLT moves to the last entry whose user key is < k.
func (s *SliceIter) SeekLT(k []byte) bool { return s.move(s.search(k) - 1) }

// Next moves to the following entry; it panics if not at one.
func (s *SliceIter) Next() bool { s.mustBeValid("Next"); return s.move(s.pos + 1) }

// Prev moves to the preceding entry; it panics if not at one.
func (s *SliceIter) Prev() bool { s.mustBeValid("Prev"); return s.move(s.pos - 1) }

// Key returns the current key, whose user key is overwritten on the next
// move; it panics if not at an entry.
func (s *SliceIter) Key() base.InternalKey {
	s.mustBeValid("Key")
	return base.InternalKey{UserKey: s.key, Trailer: s.Entries[s.pos].Key.Trailer}
}

// Value returns the current value, overwritten on the next move; it panics
// if not at an entry.
func (s *SliceIter) Value() []byte { s.mustBeValid("Value"); return s.value }

// Error returns ErrInjected once the failure happened.
func (s *SliceIter) Error() error { return s.err }

// Close counts the call and returns the iterator's error. Every later move
// panics.
func (s *SliceIter) Close() error {
	s.Closes++
	s.valid = false
	return s.err
}

// World is a random set of versions spread over sources of every kind:
// memtables, L0-like tables, levels of non-overlapping tables and slices.
type World struct {
	All     []KV // every version, sorted
	MaxSeq  base.SeqNum
	Sources []Source
}

// Source makes a fresh child iterator over some of the world's versions.
// Level sources leave out the tables wholly outside [lower, upper).
type Source struct {
	Name    string
	Entries []KV // sorted
	Open    func(lower, upper []byte) iterator.Iterator
}

// RandKey returns a short key over a 4-letter alphabet, possibly empty, so
// that versions of a key collide across sources.
func RandKey(rng *rand.Rand) []byte {
	k := make([]byte, rng.IntN(4))
	for i := range k {
		k[i] = byte('a' + rng.IntN(4))
	}
	return k
}

// NewWorld builds a world of up to n versions with unique sequence numbers,
// a quarter of them tombstones.
func NewWorld(tb testing.TB, rng *rand.Rand, n int) *World {
	w := &World{}
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
		w.All = append(w.All, KV{base.MakeInternalKey(RandKey(rng), base.SeqNum(seq), kind), v})
	}
	w.MaxSeq = base.SeqNum(total)
	// Deal the versions out to the sources at random.
	nsrc := 1 + rng.IntN(6)
	parts := make([][]KV, nsrc)
	for _, e := range w.All {
		i := rng.IntN(nsrc)
		parts[i] = append(parts[i], e)
	}
	slices.SortFunc(w.All, Compare)
	for i, p := range parts {
		slices.SortFunc(p, Compare)
		switch rng.IntN(4) {
		case 0:
			w.Sources = append(w.Sources, MemtableSource(p))
		case 1:
			w.Sources = append(w.Sources, TableSource(tb, rng, p, uint64(i)))
		case 2:
			w.Sources = append(w.Sources, LevelSource(tb, rng, p, uint64(100*(i+1))))
		default:
			w.Sources = append(w.Sources, Source{"slice", p, func(_, _ []byte) iterator.Iterator { return NewSliceIter(p) }})
		}
	}
	return w
}

// Children opens a fresh child iterator on every source.
func (w *World) Children(lower, upper []byte) []iterator.Iterator {
	var cs []iterator.Iterator
	for _, s := range w.Sources {
		cs = append(cs, s.Open(lower, upper))
	}
	return cs
}

// SourceNames describes the sources, for test failures.
func (w *World) SourceNames() []string {
	var names []string
	for _, s := range w.Sources {
		names = append(names, fmt.Sprintf("%s(%d)", s.Name, len(s.Entries)))
	}
	return names
}

// MemtableSource returns a source over a memtable holding entries.
func MemtableSource(entries []KV) Source {
	m := memtable.New(0)
	for _, e := range entries {
		m.Add(e.Key.SeqNum(), e.Key.Kind(), e.Key.UserKey, e.Value)
	}
	return Source{"memtable", entries, func(_, _ []byte) iterator.Iterator { return m.NewIter() }}
}

// TableSource returns a source over a table holding entries.
func TableSource(tb testing.TB, rng *rand.Rand, entries []KV, fileNum uint64) Source {
	r := BuildTable(tb, rng, entries, fileNum)
	return Source{"table", entries, func(_, _ []byte) iterator.Iterator { return r.NewIterator() }}
}

// LevelSource returns a source over a level (BuildLevel) holding entries:
// each Open is a new iterator.LevelIter.
func LevelSource(tb testing.TB, rng *rand.Rand, entries []KV, fileNum uint64) Source {
	l := BuildLevel(tb, rng, entries, fileNum)
	return Source{"level", entries, func(lower, upper []byte) iterator.Iterator {
		return iterator.NewLevelIter(l.Files, l.Open, lower, upper)
	}}
}

// Level is a sorted run of tables, the metadata of table i in Files[i] and
// its reader in Tables[i]: what a version holds of a level.
type Level struct {
	Files  []*manifest.FileMetadata
	Tables []*sstable.Reader
}

// Open opens an iterator over table i: an iterator.OpenFunc.
func (l *Level) Open(i int) (iterator.Iterator, error) { return l.Tables[i].NewIterator(), nil }

// Add appends a table holding entries (sorted, non-empty) as file fileNum,
// with metadata bounded by its first and last keys.
func (l *Level) Add(tb testing.TB, rng *rand.Rand, entries []KV, fileNum uint64) {
	tb.Helper()
	l.Tables = append(l.Tables, BuildTable(tb, rng, entries, fileNum))
	l.Files = append(l.Files, &manifest.FileMetadata{
		FileNum:  fileNum,
		Smallest: entries[0].Key,
		Largest:  entries[len(entries)-1].Key,
	})
}

// BuildLevel cuts entries (sorted) into tables of 1 to 12 entries at random
// points, sometimes between two versions of one user key, numbered from
// fileNum.
func BuildLevel(tb testing.TB, rng *rand.Rand, entries []KV, fileNum uint64) *Level {
	tb.Helper()
	l := &Level{}
	for rest := entries; len(rest) > 0; fileNum++ {
		n := 1 + rng.IntN(min(len(rest), 12))
		l.Add(tb, rng, rest[:n], fileNum)
		rest = rest[n:]
	}
	return l
}

// BuildTable writes entries to an in-memory table with small blocks, so
// that a few entries span several blocks. It writes no filter: iterators
// do not use it, and building one costs more than the rest of a small table.
func BuildTable(tb testing.TB, rng *rand.Rand, entries []KV, fileNum uint64) *sstable.Reader {
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
		if err := w.Add(e.Key, e.Value); err != nil {
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

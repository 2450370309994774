package compaction

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/bloomkv/bloomkv/sstable"
)

// meta builds table metadata from user-key bounds, a seqnum range and a
// size: the smallest key carries the largest seqnum and the largest key the
// smallest, so the bounds are in order even when lo == hi.
func meta(num uint64, lo, hi string, minSeq, maxSeq base.SeqNum, size uint64) *manifest.FileMetadata {
	return &manifest.FileMetadata{
		FileNum:          num,
		Size:             size,
		Smallest:         base.MakeInternalKey([]byte(lo), maxSeq, base.KindSet),
		Largest:          base.MakeInternalKey([]byte(hi), minSeq, base.KindSet),
		SmallestSeqNum:   minSeq,
		LargestSeqNum:    maxSeq,
		FilterBitsPerKey: 10,
	}
}

// fileNums lists the file numbers of files.
func fileNums(files []*manifest.FileMetadata) []uint64 {
	var out []uint64
	for _, f := range files {
		out = append(out, f.FileNum)
	}
	return out
}

// checkedVersion returns a version of levels, failing the test if it breaks
// the manifest's invariants.
func checkedVersion(t testing.TB, levels [manifest.NumLevels][]*manifest.FileMetadata) *manifest.Version {
	t.Helper()
	v := &manifest.Version{Levels: levels}
	if err := v.CheckInvariants(); err != nil {
		t.Fatalf("test version: %v\n%s", err, v)
	}
	return v
}

// entry is one version of a key in the test model.
type entry struct {
	key   base.InternalKey
	value []byte
}

func (e entry) String() string { return fmt.Sprintf("%v=%q", e.key, e.value) }

func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int { return base.CompareInternal(a.key, b.key) })
}

// tableStore is a test Env: tables in memory, by file number. It records
// which outputs were finished and aborted and how many iterators are open,
// and fails on demand.
type tableStore struct {
	t       testing.TB
	mu      sync.Mutex
	tables  map[uint64][]byte
	nextNum uint64
	wopts   sstable.WriterOptions // for build; Filter is build's argument

	open     int // iterators open now
	finished map[uint64]bool
	aborted  map[uint64]bool

	failOpen   uint64 // Open of this file number fails
	failCreate int    // the n-th Create (1-based) fails
	failWrite  int    // the n-th output's writes fail
	failFinish int    // the n-th output's Finish fails
	creates    int
}

var errInjected = errors.New("injected failure")

func newTableStore(t testing.TB) *tableStore {
	return &tableStore{t: t, tables: make(map[uint64][]byte), nextNum: 1000,
		wopts:    sstable.WriterOptions{BlockSize: 512},
		finished: make(map[uint64]bool), aborted: make(map[uint64]bool)}
}

// build writes entries (sorted) as table num and returns its metadata.
func (s *tableStore) build(num uint64, entries []entry, bitsPerKey float64) *manifest.FileMetadata {
	s.t.Helper()
	return s.buildWithRangeDels(num, entries, nil, bitsPerKey)
}

// buildWithRangeDels is build for a table with range tombstones too.
func (s *tableStore) buildWithRangeDels(num uint64, entries []entry, rd rangedel.List, bitsPerKey float64) *manifest.FileMetadata {
	s.t.Helper()
	var buf bytes.Buffer
	wopts := s.wopts
	wopts.Filter = bloomSpec(bitsPerKey)
	w, err := sstable.NewWriter(&buf, wopts)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, e := range entries {
		if err := w.Add(e.key, e.value); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := w.SetRangeDels(rd); err != nil {
		s.t.Fatal(err)
	}
	props, err := w.Finish()
	if err != nil {
		s.t.Fatal(err)
	}
	s.tables[num] = buf.Bytes()
	return TableMetadata(num, uint64(buf.Len()), &props)
}

// bloomSpec returns the spec of a Bloom filter of bits per key, none for 0.
func bloomSpec(bits float64) sstable.FilterSpec {
	if bits == 0 {
		return sstable.FilterSpec{}
	}
	return sstable.Bloom(bits)
}

// bloomSpecs returns bloomSpec of each level's bits.
func bloomSpecs(bits [manifest.NumLevels]float64) [manifest.NumLevels]sstable.FilterSpec {
	var specs [manifest.NumLevels]sstable.FilterSpec
	for level, b := range bits {
		specs[level] = bloomSpec(b)
	}
	return specs
}

func (s *tableStore) reader(num uint64) (*sstable.Reader, error) {
	data, ok := s.tables[num]
	if !ok {
		return nil, fmt.Errorf("no table %06d", num)
	}
	return sstable.Open(bytes.NewReader(data), int64(len(data)), sstable.ReaderOptions{FileName: fmt.Sprintf("%06d.sst", num), FileNum: num})
}

// entries reads every entry of table num.
func (s *tableStore) entries(num uint64) []entry {
	s.t.Helper()
	r, err := s.reader(num)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []entry
	it := r.NewIterator()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		out = append(out, entry{base.InternalKey{UserKey: bytes.Clone(k.UserKey), Trailer: k.Trailer}, bytes.Clone(it.Value())})
	}
	if err := it.Close(); err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *tableStore) env() Env {
	return Env{
		Open: func(f *manifest.FileMetadata) (iterator.Iterator, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if f.FileNum == s.failOpen {
				return nil, errInjected
			}
			r, err := s.reader(f.FileNum)
			if err != nil {
				return nil, err
			}
			s.open++
			return &trackedIter{Iterator: r.NewIterator(), s: s}, nil
		},
		RangeDels: func(f *manifest.FileMetadata) (rangedel.List, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			r, err := s.reader(f.FileNum)
			if err != nil {
				return nil, err
			}
			return r.RangeDels(), nil
		},
		Create: func() (*Output, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.creates++
			if s.creates == s.failCreate {
				return nil, errInjected
			}
			num := s.nextNum
			s.nextNum++
			buf := new(bytes.Buffer)
			var w interface{ Write([]byte) (int, error) } = buf
			if s.creates == s.failWrite {
				w = failingWriter{}
			}
			n := s.creates
			return &Output{
				FileNum: num,
				W:       w,
				Finish: func() error {
					if n == s.failFinish {
						return errInjected
					}
					s.tables[num] = buf.Bytes()
					s.finished[num] = true
					return nil
				},
				Abort: func() {
					delete(s.tables, num)
					s.aborted[num] = true
				},
			}, nil
		},
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errInjected }

// trackedIter counts closes, so tests can check Run closes what it opens.
type trackedIter struct {
	*sstable.Iterator
	s      *tableStore
	closed bool
}

func (it *trackedIter) Close() error {
	if !it.closed {
		it.closed = true
		it.s.mu.Lock()
		it.s.open--
		it.s.mu.Unlock()
	}
	return it.Iterator.Close()
}

// CurrentShape returns the shape of v as it is, in bytes.
func CurrentShape(v *manifest.Version) Shape {
	var s Shape
	for level := range s.Sizes {
		s.Sizes[level] = float64(v.LevelSize(level))
	}
	s.L0Tables = v.NumFiles(0)
	return s
}

// bloomReads returns the expected number of data blocks a lookup for an
// absent key reads in vain in a tree of shape s whose levels' Bloom
// filters have bits (0: no filter, every probe reads): the sum over the
// runs it probes — every L0 table, one table of each deeper level with
// data — of their false-positive rates, each from
// bloom.BlockedFalsePositiveRate, the tables' filter. It is the metric this
// package's tests judge the Bloom allocations by, computed from package
// bloom directly as an oracle for ExpectedFalsePositiveReads.
func bloomReads(s Shape, bits [manifest.NumLevels]float64) float64 {
	var sum float64
	for level := range bits {
		sum += float64(s.runs(level)) * falsePositiveRate(bits[level])
	}
	return sum
}

// bloomMemory returns the nominal filter memory of a tree of shape s whose
// levels' filters have bits: Σ Sizes[i]·bits[i], in bits when the sizes
// are in keys — Monkey's model, without the tables' block rounding and
// headers that FilterMemory counts.
func bloomMemory(s Shape, bits [manifest.NumLevels]float64) float64 {
	var m float64
	for level := range bits {
		if s.runs(level) > 0 {
			m += s.Sizes[level] * bits[level]
		}
	}
	return m
}

// falsePositiveRate is the false-positive rate of a table's blocked filter
// at bits per key b, with the probe count the writer uses; 1 without one.
func falsePositiveRate(b float64) float64 {
	if !(b > 0) {
		return 1
	}
	if p, ok := fprMemo.Load(b); ok {
		return p.(float64)
	}
	p := bloom.BlockedFalsePositiveRate(b, bloom.BlockedProbes(b))
	fprMemo.Store(b, p)
	return p
}

// fprMemo remembers falsePositiveRate: the sum behind it costs a fraction of
// a millisecond, and allocations take few distinct values (bitsGrid).
var fprMemo sync.Map

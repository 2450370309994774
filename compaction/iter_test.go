package compaction

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// sliceIter iterates over entries, failing at entry failAt (0: First fails;
// −1: never).
type sliceIter struct {
	es     []entry
	pos    int
	failAt int
	err    error
	closes *int
}

func (s *sliceIter) at() bool {
	if s.pos == s.failAt {
		s.err = fmt.Errorf("entry %d: %w", s.pos, errInjected)
		return false
	}
	return s.pos < len(s.es)
}

func (s *sliceIter) First() bool           { s.pos = 0; return s.at() }
func (s *sliceIter) Next() bool            { s.pos++; return s.at() }
func (s *sliceIter) Key() base.InternalKey { return s.es[s.pos].key }
func (s *sliceIter) Value() []byte         { return s.es[s.pos].value }
func (s *sliceIter) Error() error          { return s.err }
func (s *sliceIter) Close() error {
	if s.closes != nil {
		*s.closes++
	}
	return s.err
}

// numbered returns n entries with keys prefix0…, seqnums from seq.
func numbered(prefix string, n int, seq base.SeqNum) []entry {
	var es []entry
	for i := range n {
		es = append(es, set(fmt.Sprintf("%s%03d", prefix, i), seq+base.SeqNum(i), "v"))
	}
	return es
}

func drain(it Iterator) (n int, err error) {
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

func TestMergingIter(t *testing.T) {
	closes := 0
	a, b, c := numbered("a", 5, 1), numbered("b", 5, 10), numbered("a", 5, 20) // c holds newer versions of a's keys
	m := newMergingIter([]Iterator{
		&sliceIter{es: a, failAt: -1, closes: &closes},
		&sliceIter{es: nil, failAt: -1, closes: &closes},
		&sliceIter{es: b, failAt: -1, closes: &closes},
		&sliceIter{es: c, failAt: -1, closes: &closes},
	})
	var got []entry
	for ok := m.First(); ok; ok = m.Next() {
		got = append(got, entry{m.Key(), m.Value()})
	}
	want := append(append(append([]entry{}, a...), b...), c...)
	sortEntries(want)
	if !equalEntries(got, want) || m.Error() != nil {
		t.Fatalf("merge = %v, %v; want %v", got, m.Error(), want)
	}
	if err := m.Close(); err != nil || closes != 4 {
		t.Fatalf("Close = %v after %d closes", err, closes)
	}

	for _, failAt := range []int{0, 3} {
		closes = 0
		m := newMergingIter([]Iterator{
			&sliceIter{es: a, failAt: -1, closes: &closes},
			&sliceIter{es: b, failAt: failAt, closes: &closes},
		})
		n, err := drain(m)
		if !errors.Is(err, errInjected) || m.Next() {
			t.Errorf("child failing at %d: %d entries, %v", failAt, n, err)
		}
		if err := m.Close(); !errors.Is(err, errInjected) || closes != 2 {
			t.Errorf("child failing at %d: Close = %v after %d closes", failAt, err, closes)
		}
	}
}

func TestLevelIter(t *testing.T) {
	files := []*manifest.FileMetadata{meta(1, "a", "a", 1, 1, 1), meta(2, "b", "b", 1, 1, 1), meta(3, "c", "c", 1, 1, 1), meta(4, "d", "d", 1, 1, 1)}
	contents := map[uint64][]entry{1: numbered("a", 3, 1), 2: nil, 3: numbered("c", 2, 1), 4: nil}
	for _, tc := range []struct {
		name      string
		failOpen  uint64
		failEntry map[uint64]int
		want      int
		wantErr   bool
	}{
		{"empty tables are skipped", 0, nil, 5, false},
		{"a table fails to open", 3, nil, 3, true},
		{"a table fails in the middle", 0, map[uint64]int{3: 1}, 4, true},
		{"a table fails at its first entry", 0, map[uint64]int{3: 0}, 3, true},
	} {
		open, closes := 0, 0
		l := newLevelIter(files, func(f *manifest.FileMetadata) (Iterator, error) {
			if f.FileNum == tc.failOpen {
				return nil, errInjected
			}
			open++
			failAt, ok := tc.failEntry[f.FileNum]
			if !ok {
				failAt = -1
			}
			return &sliceIter{es: contents[f.FileNum], failAt: failAt, closes: &closes}, nil
		})
		n, err := drain(l)
		if n != tc.want || (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, errInjected)) {
			t.Errorf("%s: %d entries, %v; want %d, error %v", tc.name, n, err, tc.want, tc.wantErr)
		}
		if l.Next() {
			t.Errorf("%s: Next after the end", tc.name)
		}
		if cerr := l.Close(); !errors.Is(cerr, err) || closes != open {
			t.Errorf("%s: Close = %v, %d of %d tables closed", tc.name, cerr, closes, open)
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

// TestRunInputFailsMidway fails an input in the middle of the merge, in L0
// (a child of the merge) and in the output level (inside a level iterator).
func TestRunInputFailsMidway(t *testing.T) {
	for _, failing := range []uint64{1, 11} {
		s := newTableStore(t)
		c := &Compaction{Level: 0, OutputLevel: 1, BitsPerKey: 10}
		c.Inputs[0] = []*manifest.FileMetadata{meta(1, "a000", "a199", 1000, 1199, 100)}
		c.Inputs[1] = []*manifest.FileMetadata{meta(10, "b000", "b199", 1, 199, 100), meta(11, "c000", "c199", 1, 199, 100)}
		contents := map[uint64][]entry{1: numbered("a", 200, 1000), 10: numbered("b", 200, 1), 11: numbered("c", 200, 1)}
		env := s.env()
		closes, opened := 0, 0
		env.Open = func(f *manifest.FileMetadata) (Iterator, error) {
			opened++
			failAt := -1
			if f.FileNum == failing {
				failAt = 150
			}
			return &sliceIter{es: contents[f.FileNum], failAt: failAt, closes: &closes}, nil
		}
		outputs, _, err := Run(context.Background(), c, env, nil, &Options{TargetFileSize: 1024})
		if !errors.Is(err, errInjected) || outputs != nil {
			t.Errorf("table %d failing: %d outputs, %v", failing, len(outputs), err)
		}
		if closes != opened || len(s.finished) == 0 || len(s.aborted) != s.creates {
			t.Errorf("table %d failing: %d of %d inputs closed, %d of %d outputs aborted", failing, closes, opened, len(s.aborted), s.creates)
		}
	}
}

func TestCurrentShape(t *testing.T) {
	v := checkedVersion(t, levels{0: fourL0(), 2: {meta(1, "a", "b", 1, 1, 700)}})
	if got, want := CurrentShape(v), (Shape{Sizes: [manifest.NumLevels]float64{400, 0, 700}, L0Tables: 4}); got != want {
		t.Errorf("CurrentShape = %+v, want %+v", got, want)
	}
}

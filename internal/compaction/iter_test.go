package compaction

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// numbered returns n entries with keys prefix0…, seqnums from seq.
func numbered(prefix string, n int, seq base.SeqNum) []entry {
	var es []entry
	for i := range n {
		es = append(es, set(fmt.Sprintf("%s%03d", prefix, i), seq+base.SeqNum(i), "v"))
	}
	return es
}

// sliceIter returns an iterator over es (sorted) that fails moving onto
// entry failAt (−1: never): a shared itertest.SliceIter, which also panics
// on a move after Close or a Next off the end.
func sliceIter(es []entry, failAt int) *itertest.SliceIter {
	kvs := make([]itertest.KV, len(es))
	for i, e := range es {
		kvs[i] = itertest.KV{Key: e.key, Value: e.value}
	}
	s := itertest.NewSliceIter(kvs)
	s.FailAfter = failAt // a walk from First: FailAfter n fails onto entry n
	return s
}

// TestRunInputFailsMidway fails an input in the middle of the merge, in L0
// (a child of the merge) and in the output level (inside a level iterator).
func TestRunInputFailsMidway(t *testing.T) {
	for _, failing := range []uint64{1, 11} {
		s := newTableStore(t)
		c := &Compaction{Level: 0, OutputLevel: 1, Filter: sstable.Bloom(10)}
		c.Inputs[0] = []*manifest.FileMetadata{meta(1, "a000", "a199", 1000, 1199, 100)}
		c.Inputs[1] = []*manifest.FileMetadata{meta(10, "b000", "b199", 1, 199, 100), meta(11, "c000", "c199", 1, 199, 100)}
		contents := map[uint64][]entry{1: numbered("a", 200, 1000), 10: numbered("b", 200, 1), 11: numbered("c", 200, 1)}
		env := s.env()
		env.RangeDels = nil // the inputs are slices, not tables of the store
		var inputs []*itertest.SliceIter
		env.Open = func(f *manifest.FileMetadata) (iterator.Iterator, error) {
			failAt := -1
			if f.FileNum == failing {
				failAt = 150
			}
			it := sliceIter(contents[f.FileNum], failAt)
			inputs = append(inputs, it)
			return it, nil
		}
		outputs, _, err := Run(context.Background(), c, env, nil, with(defaultOptions(), func(o *Options) { o.TargetFileSize = 1024 }))
		if !errors.Is(err, itertest.ErrInjected) || outputs != nil {
			t.Errorf("table %d failing: %d outputs, %v", failing, len(outputs), err)
		}
		closes, opened := 0, len(inputs)
		for _, it := range inputs {
			closes += it.Closes
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

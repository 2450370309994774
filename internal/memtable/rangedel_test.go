package memtable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// TestRangeDelsMatchBuild checks RangeDels, read after every few additions
// (so that it adds to its cached list one tombstone at a time, or
// fragments all anew past maxIncrementalRangeDels), against rangedel.Build
// of every tombstone added so far, the oracle.
func TestRangeDelsMatchBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 50 {
		m := New(0)
		var added []rangedel.Tombstone
		for seq := base.SeqNum(1); seq <= 60; seq++ {
			a, b := rng.IntN(26), rng.IntN(26)
			if a == b {
				continue
			}
			start, end := []byte{byte('a' + min(a, b))}, []byte{byte('a' + max(a, b))}
			m.AddRangeDel(seq, start, end)
			added = append(added, rangedel.Tombstone{Start: start, End: end, Seq: seq})
			if rng.IntN(1+2*maxIncrementalRangeDels) != 0 {
				continue // read after a run of additions, short or long
			}
			if got, want := m.RangeDels(), rangedel.Build(added); !sameList(got, want) {
				t.Fatalf("trial %d, %d tombstones: RangeDels =\n%v\nBuild gives\n%v", trial, len(added), got, want)
			}
		}
		if got, want := m.RangeDels(), rangedel.Build(added); !sameList(got, want) {
			t.Fatalf("trial %d, at the end: RangeDels =\n%v\nBuild gives\n%v", trial, got, want)
		}
		m.Unref()
	}
}

func sameList(a, b rangedel.List) bool {
	return slices.EqualFunc(a, b, func(x, y rangedel.Fragment) bool {
		return bytes.Equal(x.Start, y.Start) && bytes.Equal(x.End, y.End) && slices.Equal(x.Seqs, y.Seqs)
	})
}

// BenchmarkRangeDelAddRead is a DeleteRange followed by a read of the
// memtable's tombstones, in a memtable already holding n of them, disjoint:
// the cost a workload alternating DeleteRange and Get pays per pair.
func BenchmarkRangeDelAddRead(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("tombstones=%d", n), func(b *testing.B) {
			m := New(0)
			defer m.Unref()
			key := func(i int) []byte { return fmt.Appendf(nil, "key%09d", i) }
			for i := range n {
				m.AddRangeDel(base.SeqNum(i+1), key(2*i), key(2*i+1))
			}
			m.RangeDels()
			seq := base.SeqNum(n)
			for i := 0; b.Loop(); i++ {
				seq++
				m.AddRangeDel(seq, key(2*(i%n)), key(2*(i%n)+1))
				m.RangeDels()
			}
		})
	}
}

package compaction

import (
	"slices"
	"sort"

	"github.com/bloomkv/bloomkv/internal/base"
)

// stripes are the read points that can still see old versions — the live
// snapshots' sequence numbers, sorted and without repeats — and cut the
// sequence numbers into stripes: stripe i holds (s[i−1], s[i]], and stripe
// len(s) everything above the newest snapshot, which only the latest read
// (at the newest sequence number) sees.
//
// A read at s[i] sees, of each key, the newest version in the highest
// non-empty stripe ≤ i; the latest read sees the newest version of all. So
// the versions any read point can see are exactly the newest version of
// each stripe, and the others can go.
type stripes []base.SeqNum

// newStripes returns the stripes of a set of snapshots in any order.
func newStripes(snapshots []base.SeqNum) stripes {
	s := slices.Clone(snapshots)
	slices.Sort(s)
	return stripes(slices.Compact(s))
}

// of returns the stripe of a version with sequence number seq: the index of
// the oldest snapshot that sees it (the first ≥ seq), len(s) if none does.
func (s stripes) of(seq base.SeqNum) int {
	if len(s) == 0 {
		return 0
	}
	return sort.Search(len(s), func(i int) bool { return s[i] >= seq })
}

package compaction

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// appendMerger is the merge operator of the tests: concatenation, which
// is associative and tells every order of the operands apart.
var appendMerger = &base.Merger{Name: "append", Merge: func(_, older, newer []byte) ([]byte, error) {
	return append(older, newer...), nil
}}

// mergeWrites is writes with a third of the sets made merge operands.
func mergeWrites(rng *rand.Rand, keys []string, n int, seq *base.SeqNum) []entry {
	es := writes(rng, keys, n, seq)
	for i := range es {
		if es[i].key.Kind() == base.KindSet && rng.IntN(3) > 0 {
			es[i].key.Trailer = base.MakeTrailer(es[i].key.SeqNum(), base.KindMerge)
		}
	}
	return es
}

// mergeGet is what a read of userKey at seq returns from a tree holding
// es (sorted), by the definition of a merge: the operands visible at seq,
// newest first, down to the first other version, folded by concatenation
// over it (a Set) or nothing (a tombstone, or no version at all).
func mergeGet(es []entry, userKey []byte, seq base.SeqNum) (value []byte, found bool) {
	seek := base.MakeInternalKey(userKey, seq, base.KindMax)
	i, _ := slices.BinarySearchFunc(es, seek, func(e entry, k base.InternalKey) int { return base.CompareInternal(e.key, k) })
	var ops [][]byte
	for ; i < len(es) && bytes.Equal(es[i].key.UserKey, userKey); i++ {
		switch es[i].key.Kind() {
		case base.KindMerge:
			ops = append(ops, es[i].value)
			continue
		case base.KindSet:
			value, found = slices.Clone(es[i].value), true
		}
		break
	}
	for j := len(ops) - 1; j >= 0; j-- {
		value, found = append(value, ops[j]...), true
	}
	return value, found
}

// TestRunMergeModel checks Run's folding of merge operands against the
// definition: every read point of every key reads the same value, folded,
// before the compaction and after it (with the level below); no key has
// two versions in one snapshot stripe; and at the bottom of the tree no
// operand is left with no version below it.
func TestRunMergeModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 39))
	var folded uint64
	for iter := range 300 {
		s := newTableStore(t)
		sc := randomScenarioOf(rng, s, mergeWrites)
		r := runScenario(t, rng, iter, s, sc, appendMerger)
		got, fail := r.got, r.fail
		r.checkReads(mergeGet)
		st := newStripes(sc.snapshots)
		for i := 1; i < len(got); i++ {
			a, b := got[i-1].key, got[i].key
			if bytes.Equal(a.UserKey, b.UserKey) && st.of(a.SeqNum()) == st.of(b.SeqNum()) {
				fail("%v and %v in one stripe", a, b)
			}
		}
		for i, e := range got {
			if sc.c.Bottommost && e.key.Kind() == base.KindMerge &&
				(i == len(got)-1 || !bytes.Equal(got[i+1].key.UserKey, e.key.UserKey)) {
				fail("operand %v left at the bottom with no version below it", e.key)
			}
		}
		checkOutputs(t, s, sc.c, r.outputs, r.opts, fail)
		folded += r.stats.MergesFolded
	}
	if folded == 0 {
		t.Fatal("no compaction folded an operand")
	}
}

// TestRunMergeFailureKeeps checks that a merger's error leaves the
// operands and their base as they were, so that nothing is lost.
func TestRunMergeFailureKeeps(t *testing.T) {
	s := newTableStore(t)
	in := []entry{
		{base.MakeInternalKey([]byte("k"), 4, base.KindMerge), []byte("c")},
		{base.MakeInternalKey([]byte("k"), 3, base.KindMerge), []byte("b")},
		{base.MakeInternalKey([]byte("k"), 2, base.KindSet), []byte("a")},
		{base.MakeInternalKey([]byte("k"), 1, base.KindDelete), nil},
	}
	c := &Compaction{Level: 1, OutputLevel: 2, Bottommost: true}
	c.Inputs[0] = append(c.Inputs[0], s.build(1, in, 10))
	c.Smallest, c.Largest = keyRange(c.Inputs[0])
	failing := &base.Merger{Name: "failing", Merge: func(_, _, _ []byte) ([]byte, error) { return nil, fmt.Errorf("refused") }}
	for _, m := range []*base.Merger{failing, nil} {
		outputs, _, err := Run(context.Background(), c, s.env(), nil, with(defaultOptions(), func(o *Options) { o.Merger = m }))
		if err != nil {
			t.Fatal(err)
		}
		var got []entry
		for _, f := range outputs {
			got = append(got, s.entries(f.FileNum)...)
		}
		// The tombstone below the Set hides nothing at the bottom: only
		// it goes.
		if !equalEntries(got, in[:3]) {
			t.Errorf("merger %v: output %v, want %v", m, got, in[:3])
		}
	}
}

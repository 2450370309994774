package iterator_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
)

// checkInternal runs random moves on an iterator.Iterator and on a model of
// all versions — an index into the sorted slice all — and returns the first
// disagreement, or else Close's error. Like the callers the contract names,
// it calls Next and Prev only at an entry.
func checkInternal(rng *rand.Rand, it iterator.Iterator, all []itertest.KV, steps int) error {
	if err := checkMoves(rng, it, all, steps); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// checkMoves is checkInternal without the Close: the iterator stays usable.
// Its first move is a positioning one.
func checkMoves(rng *rand.Rand, it iterator.Iterator, all []itertest.KV, steps int) error {
	var log []string
	i, valid := 0, false
	at := func(j int) bool {
		i, valid = j, j >= 0 && j < len(all)
		return valid
	}
	search := func(k []byte) int {
		return sort.Search(len(all), func(j int) bool { return bytes.Compare(all[j].Key.UserKey, k) >= 0 })
	}
	for range steps {
		var got, want bool
		switch r := rng.IntN(20); {
		case r == 0:
			log = append(log, "First")
			got, want = it.First(), at(0)
		case r == 1:
			log = append(log, "Last")
			got, want = it.Last(), at(len(all)-1)
		case r < 5 || !valid && r < 12:
			k := itertest.RandKey(rng)
			log = append(log, fmt.Sprintf("SeekGE(%q)", k))
			got, want = it.SeekGE(k), at(search(k))
		case r < 8 || !valid:
			k := itertest.RandKey(rng)
			log = append(log, fmt.Sprintf("SeekLT(%q)", k))
			got, want = it.SeekLT(k), at(search(k)-1)
		case r < 14:
			log = append(log, "Next")
			got, want = it.Next(), at(i+1)
		default:
			log = append(log, "Prev")
			got, want = it.Prev(), at(i-1)
		}
		if err := it.Error(); err != nil || got != want {
			return fmt.Errorf("after %s: returned %v, error %v; want %v", strings.Join(log, " "), got, err, want)
		}
		if want && (base.CompareInternal(it.Key(), all[i].Key) != 0 || !bytes.Equal(it.Value(), all[i].Value)) {
			return fmt.Errorf("after %s: at %v=%q, want %v", strings.Join(log, " "), it.Key(), it.Value(), all[i])
		}
	}
	return nil
}

// TestMergingIterModel checks the merging iterator alone against the sorted
// union of all versions, direction switches included.
func TestMergingIterModel(t *testing.T) {
	for seed := range itertest.Seeds() {
		rng := rand.New(rand.NewPCG(seed, 2))
		w := itertest.NewWorld(t, rng, 300)
		if err := checkInternal(rng, iterator.NewMergingIter(w.Children(nil, nil)...), w.All, 300); err != nil {
			t.Fatalf("seed %d, sources %v: %v", seed, w.SourceNames(), err)
		}
	}
}

// TestLevelIterModel checks the level iterator alone against the versions
// of its tables.
func TestLevelIterModel(t *testing.T) {
	for seed := range itertest.Seeds() {
		rng := rand.New(rand.NewPCG(seed, 3))
		w := itertest.NewWorld(t, rng, 200)
		l := itertest.LevelSource(t, rng, w.All, 1)
		if err := checkInternal(rng, l.Open(nil, nil), w.All, 300); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

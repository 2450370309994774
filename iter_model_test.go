package bloomkv

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
	"github.com/bloomkv/bloomkv/internal/race"
)

// modelIter is the oracle of an Iterator: a position in the sorted list of
// the keys it must show.
type modelIter struct {
	keys, values [][]byte
	i            int
	pos          iterPos
}

func (m *modelIter) at(i int, ifNone iterPos) bool {
	if i < 0 || i >= len(m.keys) {
		m.pos = ifNone
		return false
	}
	m.i, m.pos = i, posAt
	return true
}

func (m *modelIter) first() bool { return m.at(0, posAfter) }
func (m *modelIter) last() bool  { return m.at(len(m.keys)-1, posBefore) }
func (m *modelIter) seekGE(k []byte) bool {
	return m.at(sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 }), posAfter)
}
func (m *modelIter) seekLT(k []byte) bool {
	return m.at(sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 })-1, posBefore)
}
func (m *modelIter) next() bool {
	switch m.pos {
	case posBefore:
		return m.first()
	case posAt:
		return m.at(m.i+1, posAfter)
	}
	return false
}
func (m *modelIter) prev() bool {
	switch m.pos {
	case posAfter:
		return m.last()
	case posAt:
		return m.at(m.i-1, posBefore)
	}
	return false
}

// randIterBounds returns no bound, or a random lower and/or upper bound, now
// and then crossed.
func randIterBounds(rng *rand.Rand) IterOptions {
	var o IterOptions
	if rng.IntN(2) == 0 {
		o.LowerBound = itertest.RandKey(rng)
	}
	if rng.IntN(2) == 0 {
		o.UpperBound = itertest.RandKey(rng)
	}
	return o
}

// randReadSeq returns a read sequence number: any, all, or none of the world.
func randReadSeq(rng *rand.Rand, w *itertest.World) base.SeqNum {
	switch rng.IntN(8) {
	case 0:
		return base.SeqNumMax
	case 1:
		return 0
	}
	return base.SeqNum(rng.IntN(int(w.MaxSeq) + 2))
}

// TestIterModel checks the Iterator against the oracle over random worlds,
// read sequence numbers, bounds and sequences of moves, at every step
// (under -race, with -iter.seeds left at its default, 100 worlds).
func TestIterModel(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	for seed := range uint64(race.Size("iter.seeds", int(itertest.Seeds()), 100)) {
		rng := rand.New(rand.NewPCG(seed, 1))
		w := itertest.NewWorld(t, rng, 300)
		for range 4 {
			seq, opts := randReadSeq(rng, w), randIterBounds(rng)
			if err := checkIterator(rng, w, seq, opts, 150); err != nil {
				t.Fatalf("seed %d, seq %d, bounds [%q, %q), sources %v:\n%v", seed, seq, opts.LowerBound, opts.UpperBound, w.SourceNames(), err)
			}
		}
	}
}

// checkIterator runs steps random moves on an Iterator and on the oracle,
// then All, and returns the first disagreement with the moves that led to
// it.
func checkIterator(rng *rand.Rand, w *itertest.World, seq base.SeqNum, opts IterOptions, steps int) error {
	keys, values := visibleKeys(w.All, seq, opts)
	m := &modelIter{keys: keys, values: values}
	it := worldIterator(w, seq, opts)
	var log []string
	fail := func(format string, args ...any) error {
		return fmt.Errorf("after %s:\n"+format, append([]any{strings.Join(log, " ")}, args...)...)
	}
	for range steps {
		var got, want bool
		switch r := rng.IntN(20); {
		case r == 0:
			log = append(log, "First")
			got, want = it.First(), m.first()
		case r == 1:
			log = append(log, "Last")
			got, want = it.Last(), m.last()
		case r < 5:
			k := itertest.RandKey(rng)
			log = append(log, fmt.Sprintf("SeekGE(%q)", k))
			got, want = it.SeekGE(k), m.seekGE(k)
		case r < 8:
			k := itertest.RandKey(rng)
			log = append(log, fmt.Sprintf("SeekLT(%q)", k))
			got, want = it.SeekLT(k), m.seekLT(k)
		case r < 14:
			log = append(log, "Next")
			got, want = it.Next(), m.next()
		default:
			log = append(log, "Prev")
			got, want = it.Prev(), m.prev()
		}
		if err := it.Error(); err != nil {
			return fail("Error() = %v", err)
		}
		if got != want || it.Valid() != want {
			return fail("returned %v, Valid %v; want %v (model at %v)", got, it.Valid(), want, m.pos)
		}
		if !want {
			if it.Key() != nil || it.Value() != nil {
				return fail("Key, Value = %q, %q when not valid", it.Key(), it.Value())
			}
			continue
		}
		if !bytes.Equal(it.Key(), m.keys[m.i]) || !bytes.Equal(it.Value(), m.values[m.i]) {
			return fail("at %q=%q, want %q=%q", it.Key(), it.Value(), m.keys[m.i], m.values[m.i])
		}
	}
	var n int
	for k, v := range it.All() {
		if n >= len(keys) || !bytes.Equal(k, keys[n]) || !bytes.Equal(v, values[n]) {
			return fail("All: entry %d is %q=%q; want %d keys %q", n, k, v, len(keys), keys)
		}
		n++
	}
	if n != len(keys) {
		return fail("All: %d keys, want %d", n, len(keys))
	}
	if err := it.Close(); err != nil {
		return fail("Close: %v", err)
	}
	return nil
}

// TestIterFaultInjection puts a child that fails after a random number of
// moves among the sources: every key shown before the failure must be the
// oracle's, and the failure must stop the Iterator and come out of Error
// and Close.
func TestIterFaultInjection(t *testing.T) {
	for seed := range itertest.Seeds() {
		rng := rand.New(rand.NewPCG(seed, 4))
		w := itertest.NewWorld(t, rng, 200)
		faulty := itertest.NewSliceIter(nil)
		faulty.FailAfter = rng.IntN(20)
		for _, e := range w.All {
			if rng.IntN(3) == 0 {
				faulty.Entries = append(faulty.Entries, e)
			}
		}
		seq, opts := randReadSeq(rng, w), randIterBounds(rng)
		keys, values := visibleKeys(w.All, seq, opts)
		m := &modelIter{keys: keys, values: values}
		// The faulty child holds copies of some versions, so the
		// merge sees them twice; that hides nothing from the oracle.
		it := newIterator(iterator.NewMergingIter(append(w.Children(opts.LowerBound, opts.UpperBound), faulty)...), seq, opts, nil)
		var log []string
		for step := 0; ; step++ {
			var got, want bool
			switch r := rng.IntN(10); {
			case step == 0 || r == 0:
				k := itertest.RandKey(rng)
				log = append(log, fmt.Sprintf("SeekGE(%q)", k))
				got, want = it.SeekGE(k), m.seekGE(k)
			case r < 6:
				log = append(log, "Next")
				got, want = it.Next(), m.next()
			default:
				log = append(log, "Prev")
				got, want = it.Prev(), m.prev()
			}
			if err := it.Error(); err != nil {
				if err != itertest.ErrInjected || got || it.Valid() || it.Key() != nil {
					t.Fatalf("seed %d, after %v: Error %v, returned %v, Valid %v", seed, log, err, got, it.Valid())
				}
				break
			}
			if got != want || got && (!bytes.Equal(it.Key(), m.keys[m.i]) || !bytes.Equal(it.Value(), m.values[m.i])) {
				t.Fatalf("seed %d, after %v: returned %v at %q; want %v", seed, log, got, it.Key(), want)
			}
			if step > 1000 {
				t.Fatalf("seed %d: the faulty child never failed", seed)
			}
		}
		if it.First() || it.Last() || it.SeekGE(nil) || it.Next() {
			t.Fatalf("seed %d: the iterator moved after a failure", seed)
		}
		if err := it.Close(); err != itertest.ErrInjected {
			t.Fatalf("seed %d: Close = %v, want the failure", seed, err)
		}
	}
}

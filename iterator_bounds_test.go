package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/iterator/itertest"
	"github.com/bloomkv/bloomkv/vfs"
)

// cloneableWorldIterator is worldIterator with what SetBounds and Clone
// need, as DB.newIter provides them: the level iterators among the
// children, and a clone over fresh children.
func cloneableWorldIterator(w *itertest.World, seq base.SeqNum, opts IterOptions) *Iterator {
	children := w.Children(opts.LowerBound, opts.UpperBound)
	it := newIterator(iterator.NewMergingIter(children...), seq, opts, nil)
	for _, c := range children {
		if li, ok := c.(*iterator.LevelIter); ok {
			it.levels = append(it.levels, li)
		}
	}
	it.clone = func(o IterOptions) (*Iterator, error) { return cloneableWorldIterator(w, seq, o), nil }
	return it
}

// modelPair is an Iterator under test and its oracle.
type modelPair struct {
	name string
	it   *Iterator
	m    *modelIter
}

// TestIterModelBoundsClone runs random moves, SetBounds and Clone on
// Iterators and on the oracle over random worlds: SetBounds gives the
// iterator the oracle of its new bounds, unpositioned, and a clone starts
// with the oracle of its original's bounds, unpositioned, then moves on
// its own. Bounds narrow and widen (so a level must take back tables it
// left out), and cross now and then.
func TestIterModelBoundsClone(t *testing.T) {
	// A sixth of the worlds TestIterModel reads: each here takes more
	// moves, and the moves SetBounds and Clone add are few.
	for seed := range max(8, itertest.Seeds()/6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		w := itertest.NewWorld(t, rng, 300)
		seq := randReadSeq(rng, w)
		if err := checkBoundsClone(rng, w, seq, 300); err != nil {
			t.Fatalf("seed %d, seq %d, sources %v:\n%v", seed, seq, w.SourceNames(), err)
		}
	}
}

func checkBoundsClone(rng *rand.Rand, w *itertest.World, seq base.SeqNum, steps int) error {
	oracle := func(opts IterOptions) *modelIter {
		keys, values := visibleKeys(w.All, seq, opts)
		return &modelIter{keys: keys, values: values}
	}
	opts := randIterBounds(rng)
	pairs := []*modelPair{{name: "it", it: cloneableWorldIterator(w, seq, opts), m: oracle(opts)}}
	bounds := map[*Iterator]IterOptions{pairs[0].it: opts}
	var log []string
	fail := func(format string, args ...any) error {
		if len(log) > 40 {
			log = append([]string{"…"}, log[len(log)-40:]...)
		}
		return fmt.Errorf("after %s:\n"+format, append([]any{strings.Join(log, " ")}, args...)...)
	}
	for range steps {
		p := pairs[rng.IntN(len(pairs))]
		it, m := p.it, p.m
		var got, want bool
		switch r := rng.IntN(24); {
		case r == 0:
			log = append(log, p.name+".First")
			got, want = it.First(), m.first()
		case r == 1:
			log = append(log, p.name+".Last")
			got, want = it.Last(), m.last()
		case r < 4:
			k := itertest.RandKey(rng)
			log = append(log, fmt.Sprintf("%s.SeekGE(%q)", p.name, k))
			got, want = it.SeekGE(k), m.seekGE(k)
		case r < 6:
			k := itertest.RandKey(rng)
			log = append(log, fmt.Sprintf("%s.SeekLT(%q)", p.name, k))
			got, want = it.SeekLT(k), m.seekLT(k)
		case r < 12:
			log = append(log, p.name+".Next")
			got, want = it.Next(), m.next()
		case r < 18:
			log = append(log, p.name+".Prev")
			got, want = it.Prev(), m.prev()
		case r < 21:
			o := randIterBounds(rng)
			log = append(log, fmt.Sprintf("%s.SetBounds(%q, %q)", p.name, o.LowerBound, o.UpperBound))
			kept := IterOptions{LowerBound: bytes.Clone(o.LowerBound), UpperBound: bytes.Clone(o.UpperBound)}
			it.SetBounds(o.LowerBound, o.UpperBound)
			// The bounds were copied: the caller's slices may change.
			for _, b := range [][]byte{o.LowerBound, o.UpperBound} {
				for i := range b {
					b[i] ^= 0xff
				}
			}
			p.m = oracle(kept)
			bounds[it] = kept
			if it.Valid() || it.Next() || it.Prev() || it.Key() != nil {
				return fail("%s is positioned after SetBounds", p.name)
			}
			continue
		case r < 23 && len(pairs) < 4:
			c, err := it.Clone()
			if err != nil {
				return fail("%s.Clone: %v", p.name, err)
			}
			name := fmt.Sprintf("%s'", p.name)
			log = append(log, fmt.Sprintf("%s=%s.Clone", name, p.name))
			pairs = append(pairs, &modelPair{name: name, it: c, m: oracle(bounds[it])})
			bounds[c] = bounds[it]
			if c.Valid() || c.Next() {
				return fail("the clone %s is positioned", name)
			}
			continue
		default:
			if len(pairs) == 1 {
				continue
			}
			log = append(log, p.name+".Close")
			if err := it.Close(); err != nil {
				return fail("%s.Close: %v", p.name, err)
			}
			for i := range pairs {
				if pairs[i] == p {
					pairs = append(pairs[:i], pairs[i+1:]...)
					break
				}
			}
			continue
		}
		if err := it.Error(); err != nil {
			return fail("%s.Error() = %v", p.name, err)
		}
		if got != want || it.Valid() != want {
			return fail("%s returned %v, Valid %v; want %v (model at %v)", p.name, got, it.Valid(), want, p.m.pos)
		}
		if want && (!bytes.Equal(it.Key(), m.keys[m.i]) || !bytes.Equal(it.Value(), m.values[m.i])) {
			return fail("%s at %q=%q, want %q=%q", p.name, it.Key(), it.Value(), m.keys[m.i], m.values[m.i])
		}
	}
	for _, p := range pairs {
		// Both directions, whole, within the last bounds set.
		m := p.m
		var fwd, bwd [][]byte
		for ok := p.it.First(); ok; ok = p.it.Next() {
			fwd = append(fwd, bytes.Clone(p.it.Key()))
		}
		for ok := p.it.Last(); ok; ok = p.it.Prev() {
			bwd = append([][]byte{bytes.Clone(p.it.Key())}, bwd...)
		}
		if !equalKeys(fwd, m.keys) || !equalKeys(bwd, m.keys) {
			return fail("%s scans %d keys forward and %d backward; want %d", p.name, len(fwd), len(bwd), len(m.keys))
		}
		if err := p.it.Close(); err != nil {
			return fail("%s.Close: %v", p.name, err)
		}
	}
	return nil
}

func equalKeys(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestIterBoundsCloneDB checks SetBounds and Clone on a DB's iterators —
// live and of a snapshot — over memtables, L0 and deeper levels, with a
// prefix extractor (so SetBounds also ends prefix mode): each clone shows
// the point in time of its original, however the DB changed since, after
// its original and the snapshot are closed; and SetBounds keeps the point
// in time while the bounds narrow and widen.
func TestIterBoundsCloneDB(t *testing.T) {
	for _, seed := range testSeeds(2, 1, testing.Short()) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			opts := checkpointOptions(vfs.NewMem())
			opts.Prefix = testExtractors[int(seed)%len(testExtractors)]
			d, err := Open("db", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ks := newKeySpace(rng, 400)
			m := kvModel{}
			write := func(n int) {
				for range n {
					k := ks.pick(rng)
					if rng.IntN(5) == 0 {
						if err := d.Delete(k, NoSync); err != nil {
							t.Fatal(err)
						}
						delete(m, string(k))
						continue
					}
					v := fmt.Appendf(nil, "%s@%d|%s", shortKey(string(k)), len(m), strings.Repeat("v", rng.IntN(100)))
					if err := d.Put(k, v, NoSync); err != nil {
						t.Fatal(err)
					}
					m[string(k)] = string(v)
				}
			}
			write(1500)
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			write(800)
			snap, err := d.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			atSnap := m.clone()
			sit, err := snap.NewIter(randBounds(rng, ks))
			if err != nil {
				t.Fatal(err)
			}
			live, err := d.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			write(800) // after both: invisible to them and their clones

			check := func(it *Iterator, want kvModel) {
				t.Helper()
				for range 4 {
					o := randBounds(rng, ks)
					if o == nil {
						o = &IterOptions{}
					}
					if rng.IntN(3) == 0 {
						// In prefix mode when the bounds change.
						it.SeekPrefixGE(ks.probe(rng))
					}
					it.SetBounds(o.LowerBound, o.UpperBound)
					if err := checkIterMoves(rng, it, o, want, ks, 60, true); err != nil {
						t.Fatal(err)
					}
				}
			}
			sc, err := sit.Clone()
			if err != nil {
				t.Fatal(err)
			}
			lc, err := live.Clone()
			if err != nil {
				t.Fatal(err)
			}
			if err := sit.Close(); err != nil {
				t.Fatal(err)
			}
			if err := snap.Close(); err != nil {
				t.Fatal(err)
			}
			if err := d.Compact(nil, nil); err != nil { // replaces every table they read
				t.Fatal(err)
			}
			check(sc, atSnap)
			check(lc, atSnap)
			check(live, atSnap)
			scc, err := sc.Clone()
			if err != nil {
				t.Fatal(err)
			}
			check(scc, atSnap)
			for _, it := range []*Iterator{sc, lc, live, scc} {
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sc.Clone(); !errors.Is(err, ErrClosed) {
				t.Errorf("Clone of a closed iterator = %v; want ErrClosed", err)
			}
			sc.SetBounds([]byte("a"), nil) // does nothing
			if sc.First() || !errors.Is(sc.Error(), ErrClosed) {
				t.Errorf("a closed iterator moved after SetBounds")
			}
			now, err := d.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			check(now, m)
			d.Close()
			if _, err := now.Clone(); !errors.Is(err, ErrClosed) {
				t.Errorf("Clone after the DB's Close = %v; want ErrClosed", err)
			}
			now.Close()
		})
	}
}

// BenchmarkIterRebound compares the ways to read a new range of one point
// in time: a new Iterator, SetBounds on one, and a Clone; each then seeks
// to the range's first key. The DB has tables in L0 and deeper levels.
func BenchmarkIterRebound(b *testing.B) {
	d, err := Open("db", checkpointOptions(vfs.NewMem()))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	for i := range 20000 {
		if err := d.Put(key(i*7919%20000), []byte("value"), NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	for i := range 3000 {
		if err := d.Put(key(i*13%20000), []byte("newer"), NoSync); err != nil {
			b.Fatal(err)
		}
	}
	bounds := func(i int) (lo, hi []byte) {
		n := i * 7 % 19000
		return key(n), key(n + 100)
	}
	b.Run("NewIter", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			lo, hi := bounds(i)
			it, err := d.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi})
			if err != nil {
				b.Fatal(err)
			}
			it.First()
			it.Close()
		}
	})
	b.Run("SetBounds", func(b *testing.B) {
		it, err := d.NewIter(nil)
		if err != nil {
			b.Fatal(err)
		}
		defer it.Close()
		for i := 0; b.Loop(); i++ {
			lo, hi := bounds(i)
			it.SetBounds(lo, hi)
			it.First()
		}
	})
	b.Run("Clone", func(b *testing.B) {
		it, err := d.NewIter(nil)
		if err != nil {
			b.Fatal(err)
		}
		defer it.Close()
		for i := 0; b.Loop(); i++ {
			lo, hi := bounds(i)
			it.SetBounds(lo, hi)
			c, err := it.Clone()
			if err != nil {
				b.Fatal(err)
			}
			c.First()
			c.Close()
		}
	})
}

// TestSetBoundsAllocs checks that SetBounds allocates nothing once its
// bounds' room is there: it re-bounds the stack in place.
func TestSetBoundsAllocs(t *testing.T) {
	d, err := Open("db", checkpointOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 3000 {
		if err := d.Put(fmt.Appendf(nil, "key%05d", i), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	lo, hi := []byte("key00100"), []byte("key00200")
	it.SetBounds(lo, hi)
	it.First()
	if n := testing.AllocsPerRun(100, func() { it.SetBounds(hi, lo[:7]) }); n != 0 {
		t.Errorf("SetBounds allocates %v times", n)
	}
}

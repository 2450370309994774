package compaction

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// rdWorld is versions and range tombstones, the oracle of what reads see.
type rdWorld struct {
	entries []entry // sorted
	tombs   []rangedel.Tombstone
}

// get is what a read of userKey at seq returns from the world, straight
// from the definitions: the newest visible version, unless it is a
// tombstone or a visible range tombstone covering the key is newer.
func (w *rdWorld) get(userKey []byte, seq base.SeqNum) ([]byte, bool) {
	e, ok := visible(w.entries, userKey, seq)
	if !ok || e.key.Kind() == base.KindDelete {
		return nil, false
	}
	for _, t := range w.tombs {
		if t.Seq <= seq && t.Seq > e.key.SeqNum() && bytes.Compare(t.Start, userKey) <= 0 && bytes.Compare(userKey, t.End) < 0 {
			return nil, false
		}
	}
	return e.value, true
}

// rangeDelsFor returns the range tombstones of a random batch of writes:
// n of them, over keys, with seqnums from *seq on.
func rangeDelsFor(rng *rand.Rand, keys []string, n int, seq *base.SeqNum) []rangedel.Tombstone {
	var ts []rangedel.Tombstone
	for range n {
		*seq++
		a, b := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
		if a > b {
			a, b = b, a
		}
		end := []byte(b)
		if a == b || rng.IntN(3) == 0 {
			end = append([]byte(b), 0)
		}
		ts = append(ts, rangedel.Tombstone{Start: []byte(a), End: end, Seq: *seq})
	}
	return ts
}

// runWithRangeDels writes a sorted run's entries and tombstones as tables
// cut at random user-key boundaries, each table's tombstones truncated to
// its part of the key space as a compaction writes them.
func runWithRangeDels(rng *rand.Rand, s *tableStore, es []entry, rd rangedel.List, num *uint64) []*manifest.FileMetadata {
	var files []*manifest.FileMetadata
	var lo []byte
	start := 0
	for i := range es {
		last := i == len(es)-1
		if last || (!bytes.Equal(es[i].key.UserKey, es[i+1].key.UserKey) && rng.IntN(6) == 0) {
			var hi []byte
			if !last {
				hi = rangedel.Successor(es[i].key.UserKey)
			}
			*num++
			files = append(files, s.buildWithRangeDels(*num, es[start:i+1], rd.Truncate(lo, hi), 10))
			lo, start = hi, i+1
		}
	}
	if len(es) == 0 && len(rd) > 0 {
		*num++
		files = append(files, s.buildWithRangeDels(*num, nil, rd, 10))
	}
	return files
}

// TestRunRangeDels compacts random inputs holding range tombstones, under
// random snapshots, into small output tables, and checks that every read
// point sees what it saw (the inputs and the levels below against the
// outputs and the levels below, key by key, from the definitions), that
// the outputs' bounds cover their tombstones and do not overlap, that they
// install into the version, and that at the bottom with no snapshot no
// tombstone and no covered version is left.
func TestRunRangeDels(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	for iter := range 300 {
		s := newTableStore(t)
		var keys []string
		for i := range 3 + rng.IntN(30) {
			keys = append(keys, fmt.Sprintf("k%03d", i*7%101))
		}
		c := &Compaction{Level: 1 + rng.IntN(4)}
		c.OutputLevel = c.Level + 1
		c.Bottommost = rng.IntN(2) == 0
		var seq base.SeqNum
		var num uint64
		var lv levels
		before, below := &rdWorld{}, &rdWorld{}
		if !c.Bottommost {
			below.entries = writes(rng, keys, 1+rng.IntN(30), &seq)
			below.tombs = rangeDelsFor(rng, keys, rng.IntN(3), &seq)
			lv[c.OutputLevel+1] = runWithRangeDels(rng, s, below.entries, rangedel.Build(below.tombs), &num)
		}
		for i := 1; i >= 0; i-- { // the output level's run first: it is older
			es := writes(rng, keys, rng.IntN(100), &seq)
			ts := rangeDelsFor(rng, keys, rng.IntN(5), &seq)
			// Interleave: a tombstone's seqnum among the versions'.
			for j := range ts {
				if len(es) > 0 && rng.IntN(2) == 0 {
					e := &es[rng.IntN(len(es))]
					s1, s2 := ts[j].Seq, e.key.SeqNum()
					ts[j].Seq, e.key.Trailer = s2, base.MakeTrailer(s1, e.key.Kind())
				}
			}
			sortEntries(es)
			if len(es) == 0 && len(ts) == 0 {
				continue
			}
			c.Inputs[i] = runWithRangeDels(rng, s, es, rangedel.Build(ts), &num)
			before.entries = append(before.entries, es...)
			before.tombs = append(before.tombs, ts...)
		}
		if c.NumInputs() == 0 {
			continue
		}
		sortEntries(before.entries)
		c.Smallest, c.Largest = keyRange(c.Inputs[0], c.Inputs[1])
		lv[c.Level], lv[c.OutputLevel] = c.Inputs[0], c.Inputs[1]
		var snapshots []base.SeqNum
		for range rng.IntN(4) {
			snapshots = append(snapshots, base.SeqNum(rng.IntN(int(seq)+2)))
		}
		opts := with(defaultOptions(), func(o *Options) {
			o.TargetFileSize = uint64(128 + rng.IntN(1024))
			o.TableOptions = sstableOpts(rng)
		})
		outputs, stats, err := Run(context.Background(), c, s.env(), snapshots, opts)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("iteration %d: %v, snapshots %v, bottommost %v: %s", iter, c, snapshots, c.Bottommost, fmt.Sprintf(format, args...))
		}
		if err != nil {
			fail("%v", err)
		}

		after := &rdWorld{}
		for i, f := range outputs {
			if err := f.Validate(); err != nil {
				fail("output %d: %v", i, err)
			}
			if i > 0 && bytes.Compare(outputs[i-1].Largest.UserKey, f.Smallest.UserKey) >= 0 {
				fail("outputs %d and %d overlap: %v, %v", i-1, i, outputs[i-1], f)
			}
			r, err := s.reader(f.FileNum)
			if err != nil {
				fail("output %d: %v", i, err)
			}
			rd := r.RangeDels()
			for _, fr := range rd {
				if bytes.Compare(fr.Start, f.Smallest.UserKey) < 0 || bytes.Compare(rangedel.LastCovered(fr.End), f.Largest.UserKey) > 0 {
					fail("output %d %v: range tombstone [%q, %q) outside its bounds", i, f, fr.Start, fr.End)
				}
			}
			after.entries = append(after.entries, s.entries(f.FileNum)...)
			after.tombs = append(after.tombs, rd.Tombstones()...)
		}
		if c.Bottommost && len(snapshots) == 0 {
			if len(after.tombs) > 0 {
				fail("range tombstones left at the bottom without snapshots: %v", rangedel.Build(after.tombs))
			}
		}
		if len(snapshots) == 0 {
			all := rangedel.Build(before.tombs)
			for _, e := range after.entries {
				if all.Cover(e.key.UserKey, base.SeqNumMax) > e.key.SeqNum() {
					fail("output version %v is covered by a newer range tombstone, with no snapshot to need it", e.key)
				}
			}
		}
		if uint64(len(after.tombs)) != stats.RangeDelsOut {
			fail("stats count %d range tombstones written, the outputs hold %d", stats.RangeDelsOut, len(after.tombs))
		}
		// Every read point sees what it saw, with the levels below.
		before.entries = append(before.entries, below.entries...)
		before.tombs = append(before.tombs, below.tombs...)
		after.entries = append(after.entries, below.entries...)
		after.tombs = append(after.tombs, below.tombs...)
		sortEntries(before.entries)
		sortEntries(after.entries)
		probe := slices.Clone(keys)
		for _, k := range keys {
			probe = append(probe, k+"\x00", k+"x")
		}
		for _, k := range probe {
			for _, p := range readPoints(snapshots) {
				v1, ok1 := before.get([]byte(k), p)
				v2, ok2 := after.get([]byte(k), p)
				if ok1 != ok2 || !bytes.Equal(v1, v2) {
					fail("read of %q at %d: before %q %v, after %q %v\noutputs %v", k, p, v1, ok1, v2, ok2, outputs)
				}
			}
		}
		b := manifest.NewBuilder(&manifest.Version{Levels: lv})
		if err := b.Apply(c.Edit(outputs)); err != nil {
			fail("edit: %v", err)
		}
		if v, err := b.Finish(); err != nil || v.CheckInvariants() != nil {
			fail("installing the outputs: %v %v", err, v.CheckInvariants())
		}
	}
}

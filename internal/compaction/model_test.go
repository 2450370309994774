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
	"github.com/bloomkv/bloomkv/sstable"
)

// scenario is a random compaction: input tables shaped as a tree would
// hold them, the versions in deeper levels (when not bottommost), and the
// live snapshots.
type scenario struct {
	c         *Compaction
	inputs    []entry // every version in the inputs
	below     []entry // versions in a level under the output level
	snapshots []base.SeqNum
	version   *manifest.Version // holding the inputs and below
}

// writes returns n random writes with seqnums from *seq on, sorted: keys
// from a small set so that keys get several versions, a quarter of them
// tombstones, values of random length.
func writes(rng *rand.Rand, keys []string, n int, seq *base.SeqNum) []entry {
	var out []entry
	for range n {
		*seq++
		uk := keys[rng.IntN(len(keys))]
		if rng.IntN(4) == 0 {
			out = append(out, entry{base.MakeInternalKey([]byte(uk), *seq, base.KindDelete), nil})
			continue
		}
		v := make([]byte, rng.IntN(48))
		for i := range v {
			v[i] = byte('a' + rng.IntN(26))
		}
		out = append(out, entry{base.MakeInternalKey([]byte(uk), *seq, base.KindSet), v})
	}
	sortEntries(out)
	return out
}

// sortedRun writes entries (sorted) as tables of a level, cut at random
// user-key boundaries, with random filter sizes: tables of one level built
// at different times under different shapes and allocations.
func sortedRun(rng *rand.Rand, s *tableStore, es []entry, num *uint64) []*manifest.FileMetadata {
	var files []*manifest.FileMetadata
	start := 0
	for i := range es {
		last := i == len(es)-1
		if last || (!bytes.Equal(es[i].key.UserKey, es[i+1].key.UserKey) && rng.IntN(8) == 0) {
			*num++
			files = append(files, s.build(*num, es[start:i+1], []float64{0, 4, 10, 16.5}[rng.IntN(4)]))
			start = i + 1
		}
	}
	return files
}

func randomScenario(rng *rand.Rand, s *tableStore) *scenario {
	return randomScenarioOf(rng, s, writes)
}

// randomScenarioOf is randomScenario with the writes gen makes.
func randomScenarioOf(rng *rand.Rand, s *tableStore, gen func(rng *rand.Rand, keys []string, n int, seq *base.SeqNum) []entry) *scenario {
	var keys []string
	for i := range 3 + rng.IntN(40) {
		keys = append(keys, fmt.Sprintf("k%03d", i*7%101))
	}
	if rng.IntN(4) == 0 {
		keys = append(keys, "") // the empty key
	}
	sc := &scenario{c: &Compaction{Level: rng.IntN(6)}}
	c := sc.c
	c.OutputLevel = c.Level + 1
	// An intra-L0 compaction (intraL0) merges L0 tables into one L0
	// table: nothing of its output level joins it, and it is never
	// bottommost (the base level is below).
	intraL0 := c.Level == 0 && rng.IntN(3) == 0
	if intraL0 {
		c.OutputLevel = 0
	}
	c.Bottommost = !intraL0 && (c.Level == lastLevel-1 || rng.IntN(2) == 0)
	c.Filter = []sstable.FilterSpec{{}, sstable.Bloom(10), sstable.Bloom(7.5)}[rng.IntN(3)]

	var seq base.SeqNum
	var num uint64
	var lv levels
	if !c.Bottommost {
		sc.below = gen(rng, keys, rng.IntN(40), &seq)
		if len(sc.below) > 0 {
			lv[c.OutputLevel+1] = sortedRun(rng, s, sc.below, &num)
		}
	}
	if next := gen(rng, keys, rng.IntN(150), &seq); len(next) > 0 && !intraL0 {
		sc.inputs = append(sc.inputs, next...)
		c.Inputs[1] = sortedRun(rng, s, next, &num)
	}
	if c.Level == 0 {
		// Flushes: each a contiguous range of seqnums, newest first.
		for range 1 + rng.IntN(5) {
			es := gen(rng, keys, 1+rng.IntN(60), &seq)
			sc.inputs = append(sc.inputs, es...)
			num++
			c.Inputs[0] = append([]*manifest.FileMetadata{s.build(num, es, 10)}, c.Inputs[0]...)
		}
	} else {
		es := gen(rng, keys, 1+rng.IntN(150), &seq)
		sc.inputs = append(sc.inputs, es...)
		c.Inputs[0] = sortedRun(rng, s, es, &num)
	}
	sortEntries(sc.inputs)
	c.Smallest, c.Largest = keyRange(c.Inputs[0], c.Inputs[1])
	lv[c.OutputLevel], lv[c.Level] = c.Inputs[1], c.Inputs[0] // one level, L0, for an intra-L0 compaction
	sc.version = &manifest.Version{Levels: lv}

	for range rng.IntN(5) {
		sc.snapshots = append(sc.snapshots, base.SeqNum(rng.IntN(int(seq)+3)))
	}
	if len(sc.snapshots) > 0 && rng.IntN(3) == 0 {
		sc.snapshots = append(sc.snapshots, sc.snapshots[0]) // the same snapshot twice
	}
	return sc
}

// readPoints are the sequence numbers reads can happen at: the snapshots
// and the latest.
func readPoints(snapshots []base.SeqNum) []base.SeqNum {
	return append(slices.Clone(snapshots), base.SeqNumMax)
}

// visible returns the version of userKey a read at seq sees among sorted
// versions, and whether there is one. A tombstone is a version.
func visible(es []entry, userKey []byte, seq base.SeqNum) (entry, bool) {
	seek := base.MakeInternalKey(userKey, seq, base.KindMax)
	i, _ := slices.BinarySearchFunc(es, seek, func(e entry, k base.InternalKey) int { return base.CompareInternal(e.key, k) })
	if i < len(es) && bytes.Equal(es[i].key.UserKey, userKey) {
		return es[i], true
	}
	return entry{}, false
}

// get is what a read of userKey at seq returns from a tree holding es.
func get(es []entry, userKey []byte, seq base.SeqNum) (value []byte, found bool) {
	e, ok := visible(es, userKey, seq)
	if !ok || e.key.Kind() == base.KindDelete {
		return nil, false
	}
	return e.value, true
}

// oracleOutput computes what the compaction must write, from the definition
// rather than Run's walk: the versions some read point sees, less — at the
// bottom — the tombstones with no kept version older than them.
func oracleOutput(sc *scenario) []entry {
	var out []entry
	points := readPoints(sc.snapshots)
	for i := 0; i < len(sc.inputs); {
		j := i
		for j < len(sc.inputs) && bytes.Equal(sc.inputs[j].key.UserKey, sc.inputs[i].key.UserKey) {
			j++
		}
		versions := sc.inputs[i:j]
		var kept []entry
		for _, e := range versions {
			for _, p := range points {
				if v, ok := visible(versions, e.key.UserKey, p); ok && v.key.Trailer == e.key.Trailer {
					kept = append(kept, e)
					break
				}
			}
		}
		for sc.c.Bottommost && len(kept) > 0 && kept[len(kept)-1].key.Kind() == base.KindDelete {
			kept = kept[:len(kept)-1]
		}
		out = append(out, kept...)
		i = j
	}
	return out
}

func TestRunModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 300 {
		s := newTableStore(t)
		sc := randomScenario(rng, s)
		r := runScenario(t, rng, iter, s, sc, nil)
		got, outputs, stats, opts, fail := r.got, r.outputs, r.stats, r.opts, r.fail
		if want := oracleOutput(sc); !equalEntries(got, want) {
			fail("output\n%v\nwant\n%v", got, want)
		}
		r.checkReads(get)
		if !sc.c.Bottommost && stats.TombstonesDropped != 0 {
			fail("dropped %d tombstones above the bottom", stats.TombstonesDropped)
		}

		checkOutputs(t, s, sc.c, outputs, opts, fail)
		if stats.EntriesIn != uint64(len(sc.inputs)) || stats.EntriesOut != uint64(len(got)) ||
			stats.EntriesIn != stats.EntriesOut+stats.ShadowedDropped+stats.TombstonesDropped ||
			stats.InputTables != sc.c.NumInputs() || stats.OutputTables != len(outputs) || stats.BytesRead != sc.c.InputBytes() {
			fail("stats %+v", stats)
		}
		if s.open != 0 || len(s.aborted) != 0 || len(s.finished) != len(outputs) {
			fail("%d iterators open, %d outputs aborted, %d finished", s.open, len(s.aborted), len(s.finished))
		}

		// The result installs into the version the inputs came from.
		b := manifest.NewBuilder(sc.version)
		if err := b.Apply(sc.c.Edit(outputs)); err != nil {
			fail("edit: %v", err)
		}
		if v, err := b.Finish(); err != nil || v.CheckInvariants() != nil {
			fail("installing the outputs: %v", err)
		}
	}
}

// scenarioRun is a scenario's compaction, run by runScenario.
type scenarioRun struct {
	sc      *scenario
	got     []entry // the entries written
	outputs []*manifest.FileMetadata
	stats   Stats
	opts    *Options
	fail    func(format string, args ...any) // names the iteration
}

// runScenario runs sc's compaction, iteration iter of a test, with random
// output options and merger m (nil: none).
func runScenario(t *testing.T, rng *rand.Rand, iter int, s *tableStore, sc *scenario, m *base.Merger) *scenarioRun {
	t.Helper()
	r := &scenarioRun{sc: sc}
	r.opts = with(defaultOptions(), func(o *Options) {
		o.TargetFileSize = uint64(256 + rng.IntN(2048))
		o.TableOptions = sstableOpts(rng)
		o.Merger = m
	})
	var err error
	r.outputs, r.stats, err = Run(context.Background(), sc.c, s.env(), sc.snapshots, r.opts)
	if err != nil {
		t.Fatalf("iteration %d: %v: %v", iter, sc.c, err)
	}
	r.fail = func(format string, args ...any) {
		t.Helper()
		t.Fatalf("iteration %d: %v, snapshots %v, bottommost %v: %s", iter, sc.c, sc.snapshots, sc.c.Bottommost, fmt.Sprintf(format, args...))
	}
	for _, f := range r.outputs {
		r.got = append(r.got, s.entries(f.FileNum)...)
	}
	return r
}

// checkReads checks that what every read sees, as get reads it, is
// unchanged by the compaction, in the tree with the levels below.
func (r *scenarioRun) checkReads(get func(es []entry, userKey []byte, seq base.SeqNum) ([]byte, bool)) {
	before := append(slices.Clone(r.sc.inputs), r.sc.below...)
	after := append(slices.Clone(r.got), r.sc.below...)
	sortEntries(before)
	sortEntries(after)
	for _, e := range before {
		for _, p := range readPoints(r.sc.snapshots) {
			v1, ok1 := get(before, e.key.UserKey, p)
			v2, ok2 := get(after, e.key.UserKey, p)
			if ok1 != ok2 || !bytes.Equal(v1, v2) {
				r.fail("read of %q at %d: before %q %v, after %q %v\ninputs %v\noutput %v", e.key.UserKey, p, v1, ok1, v2, ok2, r.sc.inputs, r.got)
			}
		}
	}
}

// checkOutputs checks the outputs' metadata against their tables, their
// order, that no user key spans two, and their sizes against the target.
func checkOutputs(t *testing.T, s *tableStore, c *Compaction, outputs []*manifest.FileMetadata, opts *Options, fail func(string, ...any)) {
	t.Helper()
	target := outputTarget(c, opts)
	if c.OutputLevel == 0 && len(outputs) > 1 {
		fail("an intra-L0 compaction wrote %d tables, want one", len(outputs))
	}
	for i, f := range outputs {
		if err := f.Validate(); err != nil {
			fail("output %d: %v", i, err)
		}
		es := s.entries(f.FileNum)
		r, err := s.reader(f.FileNum)
		if err != nil {
			fail("output %d: %v", i, err)
		}
		props := r.Properties()
		if f.Size != uint64(len(s.tables[f.FileNum])) ||
			base.CompareInternal(f.Smallest, es[0].key) != 0 || base.CompareInternal(f.Largest, es[len(es)-1].key) != 0 ||
			f.SmallestSeqNum != props.SmallestSeqNum || f.LargestSeqNum != props.LargestSeqNum ||
			f.FilterBitsPerKey != props.FilterBitsPer {
			fail("output %d: metadata %v, table %v", i, f, props)
		}
		if (c.Filter.Family == sstable.NoFilter) != (props.FilterBytes == 0) || (c.Filter.Family != sstable.NoFilter && props.FilterBitsPer < c.Filter.Bits) {
			fail("output %d: filter of %v bits/key, want %v", i, props.FilterBitsPer, c.Filter)
		}
		if bytes.Compare(f.Smallest.UserKey, c.Smallest) < 0 || bytes.Compare(f.Largest.UserKey, c.Largest) > 0 {
			fail("output %d %v outside the compaction's range", i, f)
		}
		if i > 0 && bytes.Compare(outputs[i-1].Largest.UserKey, f.Smallest.UserKey) >= 0 {
			fail("outputs %d and %d overlap or share a user key: %v, %v", i-1, i, outputs[i-1], f)
		}
		// Cut at the first user key after the target: every table but the
		// last reaches it, and none passes it by more than its last key's
		// versions (plus block framing).
		lastKey := es[len(es)-1].key.UserKey
		var lastGroup uint64
		for _, e := range es {
			if bytes.Equal(e.key.UserKey, lastKey) {
				lastGroup += uint64(e.key.EncodedLen()+len(e.value)) + 16
			}
		}
		// (Compression shrinks the block pending at the cut below the
		// estimate the cut was made on; and the writer's estimate counts
		// 4 bytes for an empty pending block, which is never written.)
		if i < len(outputs)-1 && props.DataBytes+4 < target && opts.TableOptions.Compression == sstable.NoCompression {
			fail("output %d of %d data bytes cut before the target %d", i, props.DataBytes, target)
		}
		if props.DataBytes > target+lastGroup+64 {
			fail("output %d of %d data bytes passes the target %d by more than its last key (%d bytes)", i, props.DataBytes, target, lastGroup)
		}
	}
}

// sstableOpts returns random table options: small blocks, so tables have
// several, and now and then compression.
func sstableOpts(rng *rand.Rand) sstable.WriterOptions {
	o := sstable.WriterOptions{BlockSize: 128 + rng.IntN(1024)}
	if rng.IntN(4) == 0 {
		o.Compression = sstable.SnappyCompression
	}
	return o
}

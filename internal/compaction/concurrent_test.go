package compaction

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/race"
)

// TestPickConcurrent checks, on hand-built trees, which compaction Pick
// chooses beside running ones.
func TestPickConcurrent(t *testing.T) {
	opts := with(pickerOpts, func(o *Options) { o.MaxConcurrentCompactions = 3 })
	one := with(opts, func(o *Options) { o.MaxConcurrentCompactions = 1 })
	slow := with(opts, func(o *Options) { o.L0SlowdownTrigger = 4 })
	// slowWhole is slow with L0's tables each past an intra-L0
	// compaction's bound (maxIntraL0Tables TargetFileSizes): L0
	// compacts into the base level however the base level ranks.
	slowWhole := with(slow, func(o *Options) { o.TargetFileSize = 1 })
	// L1 over its target (1 KiB) with three tables, the first the least
	// overlapping in L2, then the second; L0 below its trigger (l0Low),
	// or at it (l0Due) over [a, g], which takes L1's first two tables,
	// and with L2 far over its target (l0DueDeepL2), so that L0 outranks
	// L1 (L0 scores 1 over L1's 1.76, L1 1.76 over L2's 98.7).
	const (
		l0Low = iota
		l0Due
		l0DueDeepL2
	)
	tree := func(kind int) *manifest.Version {
		l0 := fourL0()[:3]
		if kind != l0Low {
			l0 = []*manifest.FileMetadata{
				meta(14, "a", "c", 40, 49, 100), meta(13, "b", "e", 30, 39, 100),
				meta(12, "d", "g", 20, 29, 100), meta(11, "a", "a", 10, 19, 100),
			}
		}
		l2 := []*manifest.FileMetadata{meta(20, "c", "d", 1, 1, 100), meta(21, "q", "r", 1, 1, 1000)}
		if kind == l0DueDeepL2 {
			l2[1] = meta(21, "q", "r", 1, 1, 100000)
		}
		return checkedVersion(t, levels{
			0: l0,
			1: {meta(1, "a", "b", 1, 1, 600), meta(2, "c", "g", 1, 1, 600), meta(3, "q", "z", 1, 1, 600)},
			2: l2,
		})
	}
	l1 := func(v *manifest.Version, i int) *Compaction {
		return newCompaction(v, 1, 2, v.Levels[1][i:i+1], opts)
	}
	for _, tc := range []struct {
		name    string
		tree    int
		opts    *Options
		running func(v *manifest.Version) []*Compaction
		want    string // "L<level>→L<output> <first input>", or "" for nil
	}{
		{"idle: the least overlapping table of L1", l0Low, opts,
			func(*manifest.Version) []*Compaction { return nil }, "L1→L2 1"},
		// Table 2 overlaps 100 bytes of L2 per 600 of its own, table 3
		// 1000.
		{"a busy table: the next least overlapping one", l0Low, opts,
			func(v *manifest.Version) []*Compaction { return []*Compaction{l1(v, 0)} }, "L1→L2 2"},
		{"the last slot is L0's", l0Low, opts,
			func(v *manifest.Version) []*Compaction { return []*Compaction{l1(v, 0), l1(v, 2)} }, ""},
		{"with one slot, it is anyone's", l0Low, one,
			func(*manifest.Version) []*Compaction { return nil }, "L1→L2 1"},
		{"every slot taken", l0Low, one,
			func(v *manifest.Version) []*Compaction { return []*Compaction{l1(v, 2)} }, ""},
		// L0 scores 1 over L1's 1.76; L1 1.76 over L2's 0.11.
		{"L0 due, but L1 is worse off", l0Due, opts,
			func(*manifest.Version) []*Compaction { return nil }, "L1→L2 1"},
		{"L0 first from the slowdown trigger", l0DueDeepL2, slow,
			func(*manifest.Version) []*Compaction { return nil }, "L0→L1 14"},
		{"L0 takes the last slot", l0DueDeepL2, slow,
			func(v *manifest.Version) []*Compaction {
				return []*Compaction{l1(v, 2), newCompaction(v, 2, 3, v.Levels[2][:1], slow)}
			}, "L0→L1 14"},
		// From the slowdown trigger, while L1 outranks it, L0 merges its
		// newest tables into one L0 table (intraL0), holding no L1 table:
		// also beside a compaction of the tables it would need.
		{"L0 into itself while the base level outranks it", l0Due, slow,
			func(*manifest.Version) []*Compaction { return nil }, "L0→L0 14"},
		{"L0 into itself takes the last slot", l0Due, slow,
			func(v *manifest.Version) []*Compaction {
				return []*Compaction{l1(v, 2), newCompaction(v, 2, 3, v.Levels[2][:1], slow)}
			}, "L0→L0 14"},
		{"L0 into itself beside the base level's compaction", l0Due, slow,
			func(v *manifest.Version) []*Compaction { return []*Compaction{l1(v, 1)} }, "L0→L0 14"},
		// With no run of L0 to merge, L0 waits rather than rewrite the
		// base level that outranks it, which may take L0's slot.
		{"no run to merge: L0 waits for the base level", l0Due, slowWhole,
			func(*manifest.Version) []*Compaction { return nil }, "L1→L2 1"},
		{"no run to merge: the base level takes L0's slot", l0Due, slowWhole,
			func(v *manifest.Version) []*Compaction {
				return []*Compaction{l1(v, 2), newCompaction(v, 2, 3, v.Levels[2][:1], slowWhole)}
			}, "L1→L2 1"},
		// Below the slowdown trigger, the base level (L1), which outranks
		// L0, may take L0's slot.
		{"the base level takes the last slot from an outranked L0", l0Due, opts,
			func(v *manifest.Version) []*Compaction {
				return []*Compaction{l1(v, 2), newCompaction(v, 2, 3, v.Levels[2][:1], opts)}
			}, "L1→L2 1"},
		{"nor does the base level from an L0 that is not due", l0Low, opts,
			func(v *manifest.Version) []*Compaction {
				return []*Compaction{l1(v, 2), newCompaction(v, 2, 3, v.Levels[2][:1], opts)}
			}, ""},
		{"one L0 compaction at a time", l0Due, opts,
			func(v *manifest.Version) []*Compaction {
				return []*Compaction{newCompaction(v, 0, 1, slices.Clone(v.Levels[0]), opts)}
			}, "L1→L2 3"},
		// L0 needs tables 1 and 2: while 2 is busy, it waits, and the
		// next level by rank, L2, goes on.
		{"an L0 that needs a busy table waits", l0DueDeepL2, slow,
			func(v *manifest.Version) []*Compaction { return []*Compaction{l1(v, 1)} }, "L2→L3 21"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tree(tc.tree)
			c := Pick(v, tc.opts, tc.running(v))
			got := ""
			if c != nil {
				got = fmt.Sprintf("L%d→L%d %d", c.Level, c.OutputLevel, c.Inputs[0][0].FileNum)
			}
			if got != tc.want {
				t.Fatalf("Pick = %v (%q), want %q", c, got, tc.want)
			}
		})
	}
}

// TestPickDeeperNeverTakesL0Slot checks that the exception to L0's slot is
// the base level's alone: a deeper level that outranks a due L0 still
// leaves it the last slot.
func TestPickDeeperNeverTakesL0Slot(t *testing.T) {
	opts := with(pickerOpts, func(o *Options) {
		o.MaxConcurrentCompactions = 3
		o.LevelSizing = StaticLevelSizing
	})
	// L0 due over [c, m]; L1 (the base, 1 KiB target) under its target
	// outside that range; L2 three times over its 10 KiB target, with
	// nothing below: it outranks L0 (and L0 outranks L1).
	v := checkedVersion(t, levels{
		0: fourL0(),
		1: {meta(1, "x", "z", 1, 1, 100)},
		2: {meta(30, "a", "b", 1, 1, 10000), meta(31, "c", "d", 1, 1, 10000), meta(32, "e", "f", 1, 1, 10000)},
	})
	running := []*Compaction{newCompaction(v, 2, 3, v.Levels[2][:1], opts), newCompaction(v, 2, 3, v.Levels[2][1:2], opts)}
	c := Pick(v, opts, running)
	if c == nil || c.Level != 0 {
		t.Fatalf("Pick = %v, want L0's compaction", c)
	}
	// With a slot to spare, L2 goes first.
	if c := Pick(v, opts, running[:1]); c == nil || c.Level != 2 {
		t.Fatalf("Pick with a spare slot = %v, want L2's", c)
	}
}

// simTable is a table of the concurrency simulation: its versions of keys,
// by key then seqnum descending.
type simTable struct {
	meta    *manifest.FileMetadata
	entries []simEntry
}

type simEntry struct {
	key string
	seq base.SeqNum
}

// TestPickConcurrentlyKeepsTheTree runs a simulated DB: flushes add L0
// tables of random keys, Pick starts compactions beside the running ones,
// and the running ones finish in random order, each installing its edit on
// the version current by then, as the DB does. Its oracles do not use
// Pick's rules: every edit must be accepted by the manifest's Builder (it
// deletes only tables still there, and L1 and deeper stay sorted and
// non-overlapping), every version ever written must be in the tree, and
// for every key a read's order — L0 newest first, then L1, L2, … — must
// meet its versions newest first. It also counts how often compactions ran
// side by side, so that the test cannot pass by running one at a time.
// The simulation is one goroutine, where the race detector has nothing to
// check: under -race it runs one seed per sizing, `make test-plain` all
// four.
func TestPickConcurrentlyKeepsTheTree(t *testing.T) {
	seeds := uint64(4)
	if race.Enabled {
		seeds = 1
	}
	for _, sizing := range []LevelSizing{DynamicLevelSizing, StaticLevelSizing} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%v/seed%d", sizing, seed), func(t *testing.T) {
				simulateConcurrentCompactions(t, sizing, seed)
			})
		}
	}
}

func simulateConcurrentCompactions(t *testing.T, sizing LevelSizing, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 16))
	opts := with(defaultOptions(), func(o *Options) {
		o.LevelSizing = sizing
		o.L0CompactionTrigger = 2
		o.BaseLevelSize = 2000 // 20 entries of 100 bytes
		o.LevelMultiplier = 4
		o.MaxConcurrentCompactions = 1 + int(seed%3) + 1
	})
	const entrySize = 100
	tables := map[uint64]*simTable{}
	v := &manifest.Version{}
	var running []*Compaction
	var seq base.SeqNum
	nextNum := uint64(1)
	written := map[simEntry]bool{}
	newTable := func(es []simEntry) *manifest.FileMetadata {
		slices.SortFunc(es, func(a, b simEntry) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(b.seq, a.seq))
		})
		lo, hi := es[0], es[len(es)-1]
		m := &manifest.FileMetadata{
			FileNum: nextNum, Size: uint64(entrySize * len(es)),
			Smallest:         base.MakeInternalKey([]byte(lo.key), lo.seq, base.KindSet),
			Largest:          base.MakeInternalKey([]byte(hi.key), hi.seq, base.KindSet),
			SmallestSeqNum:   slices.MinFunc(es, func(a, b simEntry) int { return cmp.Compare(a.seq, b.seq) }).seq,
			LargestSeqNum:    slices.MaxFunc(es, func(a, b simEntry) int { return cmp.Compare(a.seq, b.seq) }).seq,
			FilterBitsPerKey: 10,
		}
		nextNum++
		tables[m.FileNum] = &simTable{meta: m, entries: es}
		return m
	}
	install := func(e *manifest.VersionEdit) {
		t.Helper()
		b := manifest.NewBuilder(v)
		if err := b.Apply(e); err != nil {
			t.Fatalf("edit refused: %v\n%s", err, v)
		}
		nv, err := b.Finish()
		if err != nil {
			t.Fatalf("edit breaks the tree: %v\n%s", err, v)
		}
		v = nv
	}
	// finish installs a running compaction: the merge of its inputs, cut
	// into tables of at most 8 keys, or the move of its one table.
	finish := func(i int) {
		c := running[i]
		running = slices.Delete(running, i, i+1)
		var outputs []*manifest.FileMetadata
		if c.IsTrivialMove() {
			outputs = c.Inputs[0]
		} else {
			var es []simEntry
			for _, files := range c.Inputs {
				for _, f := range files {
					es = append(es, tables[f.FileNum].entries...)
				}
			}
			slices.SortFunc(es, func(a, b simEntry) int { return cmp.Compare(a.key, b.key) })
			for len(es) > 0 {
				n, keys := 0, 0
				for n < len(es) && (keys < 8 || es[n].key == es[n-1].key) {
					if n == 0 || es[n].key != es[n-1].key {
						keys++
					}
					n++
				}
				outputs = append(outputs, newTable(slices.Clone(es[:n])))
				es = es[n:]
			}
		}
		install(c.Edit(outputs))
	}
	concurrent := 0
	for step := range 4000 {
		switch r := rng.IntN(10); {
		case r < 4: // a flush
			es := make([]simEntry, 1+rng.IntN(12))
			for i := range es {
				seq++
				es[i] = simEntry{fmt.Sprintf("k%03d", rng.IntN(300)), seq}
				written[es[i]] = true
			}
			install(&manifest.VersionEdit{NewFiles: []manifest.NewFile{{Level: 0, Meta: newTable(es)}}})
		case r < 8:
			if c := Pick(v, opts, running); c != nil {
				running = append(running, c)
				concurrent += min(len(running)-1, 1)
			}
		default:
			if len(running) > 0 {
				finish(rng.IntN(len(running)))
			}
		}
		if step%50 == 0 || step == 3999 {
			checkSimTree(t, v, tables, written)
		}
	}
	for len(running) > 0 {
		finish(0)
	}
	checkSimTree(t, v, tables, written)
	if concurrent < 20 && opts.MaxConcurrentCompactions > 1 {
		t.Errorf("only %d compactions started beside another", concurrent)
	}
	t.Logf("%d compactions started beside another; the tree:\n%s", concurrent, v)
}

// checkSimTree checks that the tree holds every version written, each
// once, and that a read meets every key's versions newest first.
func checkSimTree(t *testing.T, v *manifest.Version, tables map[uint64]*simTable, written map[simEntry]bool) {
	t.Helper()
	last := map[string]base.SeqNum{}
	seen := map[simEntry]bool{}
	for level, files := range v.Levels {
		for _, f := range files {
			for _, e := range tables[f.FileNum].entries {
				if seen[e] {
					t.Fatalf("%v is in the tree twice", e)
				}
				seen[e] = true
				if s, ok := last[e.key]; ok && e.seq >= s {
					t.Fatalf("L%d table %06d has %s#%d below #%d: a read would see an older version first\n%s",
						level, f.FileNum, e.key, e.seq, s, v)
				}
				last[e.key] = e.seq
			}
		}
	}
	if len(seen) != len(written) {
		t.Fatalf("the tree holds %d versions, %d were written", len(seen), len(written))
	}
}

// TestSlots checks how many compactions Slots lets run for each size of
// L0, against the rule its doc states: 1 + (L0 − trigger)/concurrency
// beyond the trigger, capped by MaxConcurrentCompactions; every slot
// without a concurrency.
func TestSlots(t *testing.T) {
	for _, tc := range []struct {
		l0, most, concurrency, want int
	}{
		{0, 4, 8, 1}, {4, 4, 8, 1}, {11, 4, 8, 1}, {12, 4, 8, 2}, {19, 4, 8, 2}, {20, 4, 8, 3},
		{28, 4, 8, 4}, {60, 4, 8, 4}, // capped
		{12, 2, 8, 2}, {40, 2, 8, 2},
		{5, 3, 1, 2}, {6, 3, 1, 3},
		{0, 3, 0, 3}, {0, 0, 0, 1}, // every slot; at least one
	} {
		var l0 []*manifest.FileMetadata
		for i := tc.l0 - 1; i >= 0; i-- { // newest first
			l0 = append(l0, meta(uint64(100+i), "a", "b", base.SeqNum(2*i+1), base.SeqNum(2*i+2), 1))
		}
		v := checkedVersion(t, levels{0: l0})
		opts := with(pickerOpts, func(o *Options) {
			o.MaxConcurrentCompactions, o.L0CompactionConcurrency = tc.most, tc.concurrency
		})
		if got := Slots(v, opts); got != tc.want {
			t.Errorf("L0 of %d, at most %d, concurrency %d: Slots = %d, want %d", tc.l0, tc.most, tc.concurrency, got, tc.want)
		}
	}
}

package compaction

import (
	"math"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// pickerOpts make level targets small round numbers: L1 1 KiB, L2 10 KiB, L3 100 KiB, …
var pickerOpts = with(defaultOptions(), func(o *Options) { o.BaseLevelSize = 1024 })

type levels = [manifest.NumLevels][]*manifest.FileMetadata

// fourL0 are four L0 tables, newest first, whose user keys span [c, m].
func fourL0() []*manifest.FileMetadata {
	return []*manifest.FileMetadata{
		meta(14, "d", "f", 40, 49, 100),
		meta(13, "e", "h", 30, 39, 100),
		meta(12, "k", "m", 20, 29, 100),
		meta(11, "c", "d", 10, 19, 100),
	}
}

// fiveL1 is a sorted L1 run of 500 bytes.
func fiveL1() []*manifest.FileMetadata {
	return []*manifest.FileMetadata{
		meta(1, "a", "b", 1, 1, 100),
		meta(2, "c", "c", 1, 1, 100),
		meta(3, "g", "j", 1, 1, 100),
		meta(4, "l", "p", 1, 1, 100),
		meta(5, "q", "z", 1, 1, 100),
	}
}

func TestPick(t *testing.T) {
	type want struct {
		level        int
		inputs       [2][]uint64
		lo, hi       string
		bottommost   bool
		score        float64
		nothingToDo  bool
		trivialMoves bool
	}
	cases := []struct {
		name   string
		levels levels
		want   want
	}{
		{"empty", levels{}, want{nothingToDo: true}},
		{"L0 below its trigger", levels{0: fourL0()[:3], 1: fiveL1()}, want{nothingToDo: true}},
		{
			"L0 at its trigger takes all of L0 and the L1 tables overlapping their union",
			levels{0: fourL0(), 1: fiveL1()},
			want{level: 0, inputs: [2][]uint64{{14, 13, 12, 11}, {2, 3, 4}}, lo: "c", hi: "p", bottommost: true, score: 1},
		},
		{
			"a deeper table inside the widened range is not bottommost",
			levels{0: fourL0(), 1: fiveL1(), 3: {meta(30, "o", "o", 1, 1, 10)}},
			want{level: 0, inputs: [2][]uint64{{14, 13, 12, 11}, {2, 3, 4}}, lo: "c", hi: "p", score: 1},
		},
		{
			"deeper tables outside the range are bottommost",
			levels{0: fourL0(), 1: fiveL1(), 3: {meta(30, "a", "b", 1, 1, 10), meta(31, "r", "s", 1, 1, 10)}},
			want{level: 0, inputs: [2][]uint64{{14, 13, 12, 11}, {2, 3, 4}}, lo: "c", hi: "p", bottommost: true, score: 1},
		},
		{
			"L1 over its target: the table with the least overlap per byte",
			levels{
				1: {meta(1, "a", "c", 1, 1, 600), meta(2, "d", "f", 1, 1, 600)},
				2: {meta(10, "a", "b", 1, 1, 5000), meta(11, "e", "e", 1, 1, 100), meta(12, "f", "g", 1, 1, 100)},
			},
			want{level: 1, inputs: [2][]uint64{{2}, {11, 12}}, lo: "d", hi: "g", bottommost: true, score: 1200.0 / 1024},
		},
		{
			"equal overlap ratios go to the first table",
			levels{1: {meta(1, "a", "c", 1, 1, 600), meta(2, "d", "f", 1, 1, 600)}},
			want{level: 1, inputs: [2][]uint64{{1}, nil}, lo: "a", hi: "c", bottommost: true, score: 1200.0 / 1024, trivialMoves: true},
		},
		{
			// L0 1 over L1's 0 (counted 0.01), L2 1.46 over L3's 0.
			"the highest score over the next level's wins",
			levels{0: fourL0(), 2: {meta(20, "a", "z", 1, 1, 15000)}},
			want{level: 2, inputs: [2][]uint64{{20}, nil}, lo: "a", hi: "z", bottommost: true, score: 15000.0 / 10240, trivialMoves: true},
		},
		{
			// Scores L1 2, L2 4, L3 9.77, L4 0: L3's over L4's (counted
			// 0.01) wins over L1's 2/4 and L2's 4/9.77.
			"the deeper levels by their score over the next level's: the bottom drains first",
			levels{
				1: {meta(1, "a", "b", 1, 1, 2048)},
				2: {meta(20, "c", "z", 1, 1, 40960)},
				3: {meta(30, "a", "z", 1, 1, 1e6)},
			},
			want{level: 3, inputs: [2][]uint64{{30}, nil}, lo: "a", hi: "z", bottommost: true, score: 1e6 / 102400.0, trivialMoves: true},
		},
		{
			// Every level at its target: all score 1 over 1.
			"a tie goes to the shallower level",
			levels{0: fourL0(), 1: {meta(1, "a", "b", 1, 1, 1024)}, 2: {meta(20, "t", "t", 1, 1, 10240)},
				3: {meta(30, "u", "u", 1, 1, 102400)}, 4: {meta(40, "v", "v", 1, 1, 1024000)}, 5: {meta(50, "w", "w", 1, 1, 10240000)}},
			want{level: 0, inputs: [2][]uint64{{14, 13, 12, 11}, nil}, lo: "c", hi: "m", bottommost: true, score: 1},
		},
		{
			"L5 compacts into L6",
			levels{5: {meta(50, "a", "m", 1, 1, 20<<20)}, 6: {meta(60, "k", "z", 1, 1, 1<<40)}},
			want{level: 5, inputs: [2][]uint64{{50}, {60}}, lo: "a", hi: "z", bottommost: true, score: float64(20<<20) / (1024 * 1e4)},
		},
		{"L6 is never picked, however large", levels{6: {meta(60, "a", "z", 1, 1, 1<<50)}}, want{nothingToDo: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := checkedVersion(t, tc.levels)
			c := Pick(v, pickerOpts, nil)
			if tc.want.nothingToDo {
				if c != nil {
					t.Fatalf("Pick = %v, want nil", c)
				}
				return
			}
			if c == nil {
				t.Fatal("Pick = nil")
			}
			w := tc.want
			if c.Level != w.level || c.OutputLevel != w.level+1 {
				t.Errorf("levels L%d→L%d, want L%d→L%d", c.Level, c.OutputLevel, w.level, w.level+1)
			}
			for i := range 2 {
				if got := fileNums(c.Inputs[i]); !slices.Equal(got, w.inputs[i]) {
					t.Errorf("Inputs[%d] = %v, want %v", i, got, w.inputs[i])
				}
			}
			if string(c.Smallest) != w.lo || string(c.Largest) != w.hi {
				t.Errorf("range [%s, %s], want [%s, %s]", c.Smallest, c.Largest, w.lo, w.hi)
			}
			if c.Bottommost != w.bottommost {
				t.Errorf("Bottommost = %v, want %v", c.Bottommost, w.bottommost)
			}
			if math.Abs(c.Score-w.score) > 1e-9 {
				t.Errorf("Score = %v, want %v", c.Score, w.score)
			}
			if c.Filter != sstable.Bloom(10) || c.Manual {
				t.Errorf("Filter %v, Manual %v; want bloom 10 bits/key, false", c.Filter, c.Manual)
			}
			if c.IsTrivialMove() != w.trivialMoves {
				t.Errorf("IsTrivialMove = %v, want %v", c.IsTrivialMove(), w.trivialMoves)
			}
			checkApplies(t, v, c)
		})
	}
}

// checkApplies installs c with a synthetic merge and checks the result
// keeps the manifest's invariants: the inputs are complete enough that the
// output fits in its level.
func checkApplies(t *testing.T, v *manifest.Version, c *Compaction) *manifest.Version {
	t.Helper()
	out := syntheticOutput(c, 900+uint64(c.Level))
	b := manifest.NewBuilder(v)
	if err := b.Apply(c.Edit([]*manifest.FileMetadata{out})); err != nil {
		t.Fatalf("applying %v: %v", c, err)
	}
	nv, err := b.Finish()
	if err != nil {
		t.Fatalf("installing %v: %v", c, err)
	}
	if err := nv.CheckInvariants(); err != nil {
		t.Fatalf("after %v: %v", c, err)
	}
	return nv
}

// syntheticOutput is one table standing for the merge of c's inputs: their
// key range, seqnums and size.
func syntheticOutput(c *Compaction, num uint64) *manifest.FileMetadata {
	lo, hi := base.SeqNumMax, base.SeqNum(0)
	var size uint64
	for _, files := range c.Inputs {
		for _, f := range files {
			lo, hi = min(lo, f.SmallestSeqNum), max(hi, f.LargestSeqNum)
			size += f.Size
		}
	}
	return meta(num, string(c.Smallest), string(c.Largest), lo, hi, size)
}

func TestScoresAndTargets(t *testing.T) {
	v := checkedVersion(t, levels{
		0: fourL0()[:2],
		1: {meta(1, "a", "b", 1, 1, 512)},
		3: {meta(3, "a", "b", 1, 1, 150<<10)},
		6: {meta(6, "a", "b", 1, 1, 1<<40)},
	})
	got := Scores(v, TargetsOf(v, pickerOpts), pickerOpts)
	want := [manifest.NumLevels]float64{0.5, 0.5, 0, 1.5, 0, 0, 0}
	if got != want {
		t.Errorf("Scores = %v, want %v", got, want)
	}
	for level, target := range map[int]uint64{0: 0, 1: 1024, 2: 10240, 6: 1024 * 100000} {
		if got := pickerOpts.LevelTargetSize(level); got != target {
			t.Errorf("LevelTargetSize(%d) = %d, want %d", level, got, target)
		}
	}
	if got := defaultOptions().LevelTargetSize(3); got != 1600<<20 {
		t.Errorf("default L3 target %d, want 1600 MiB", got)
	}
	huge := with(defaultOptions(), func(o *Options) { o.BaseLevelSize, o.LevelMultiplier = 1<<60, 1000 })
	if got := huge.LevelTargetSize(6); got != math.MaxUint64 {
		t.Errorf("LevelTargetSize saturates at %d, want MaxUint64", got)
	}
}

func TestTrivialMoveNeedsAMatchingFilter(t *testing.T) {
	f := meta(1, "a", "c", 1, 1, 2048)
	v := checkedVersion(t, levels{1: {f}})
	noFilters := *with(pickerOpts, func(o *Options) { o.BitsPerKey = 0 }) // the DB's DisableFilters
	for _, tc := range []struct {
		bits   float64
		opts   Options
		trival bool
	}{
		{10, *pickerOpts, true},
		{10.9, *pickerOpts, true}, // a filter rounded up to whole blocks
		{14, *pickerOpts, false},  // sized for a shallower level
		{0, *pickerOpts, false},
		{0, noFilters, true},
		{10, noFilters, false},
	} {
		f.FilterBitsPerKey = tc.bits
		c := Pick(v, &tc.opts, nil)
		if c.IsTrivialMove() != tc.trival {
			t.Errorf("table of %v bits/key, compaction to %v: IsTrivialMove = %v, want %v", tc.bits, c.Filter, !tc.trival, tc.trival)
		}
	}
	// A move's edit moves the table.
	f.FilterBitsPerKey = 10
	c := Pick(v, pickerOpts, nil)
	b := manifest.NewBuilder(v)
	if err := b.Apply(c.Edit(c.Inputs[0])); err != nil {
		t.Fatal(err)
	}
	nv, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if nv.NumFiles(1) != 0 || nv.NumFiles(2) != 1 || nv.Levels[2][0].FileNum != 1 {
		t.Fatalf("after the move:\n%v", nv)
	}
}

func TestPickManualStepsDownToTheDeepestLevel(t *testing.T) {
	v := checkedVersion(t, levels{
		0: {meta(12, "x", "y", 30, 39, 10), meta(11, "b", "e", 20, 29, 10), meta(10, "a", "c", 10, 19, 10)},
		2: {meta(20, "a", "d", 5, 9, 10)},
		4: {meta(40, "c", "f", 1, 4, 10), meta(41, "m", "n", 1, 4, 10)},
	})
	steps := []struct {
		level      int
		inputs     [2][]uint64
		bottommost bool
	}{
		{0, [2][]uint64{{11, 10}, nil}, false}, // not 12: outside the range
		{1, [2][]uint64{{900}, {20}}, false},
		{2, [2][]uint64{{901}, nil}, false},
		{3, [2][]uint64{{902}, {40}}, true},
	}
	for i, step := range steps {
		c := PickManual(v, []byte("a"), []byte("f"), pickerOpts)
		if c == nil {
			t.Fatalf("step %d: PickManual = nil", i)
		}
		if c.Level != step.level || fileNums(c.Inputs[0]) == nil ||
			!slices.Equal(fileNums(c.Inputs[0]), step.inputs[0]) || !slices.Equal(fileNums(c.Inputs[1]), step.inputs[1]) ||
			c.Bottommost != step.bottommost || !c.Manual || c.Score != 0 {
			t.Fatalf("step %d: %v, want L%d inputs %v bottommost %v", i, c, step.level, step.inputs, step.bottommost)
		}
		v = checkApplies(t, v, c)
	}
	if c := PickManual(v, []byte("a"), []byte("f"), pickerOpts); c != nil {
		t.Fatalf("after the last step: %v", c)
	}
	// Everything in [a, f] is in L4; x-y is still in L0, m-n in L4.
	if v.NumFiles(0) != 1 || v.NumFiles(4) != 2 || len(v.Overlapping(4, []byte("a"), []byte("f"))) != 1 {
		t.Fatalf("final version:\n%v", v)
	}
}

func TestPickManualRanges(t *testing.T) {
	v := checkedVersion(t, levels{
		0: {meta(13, "g", "h", 40, 49, 10), meta(12, "d", "f", 30, 39, 10), meta(11, "b", "d", 20, 29, 10), meta(10, "a", "b", 10, 19, 10)},
		3: {meta(30, "a", "z", 1, 9, 10)},
	})
	cases := []struct {
		name   string
		lo, hi []byte
		want   []uint64 // L0 inputs; nil: no compaction
	}{
		{"closure of overlap in L0", []byte("a"), []byte("a"), []uint64{12, 11, 10}},
		{"closure from the other end", []byte("e"), []byte("e"), []uint64{12, 11, 10}},
		{"a table on its own", []byte("g"), []byte("g"), []uint64{13}},
		{"no upper bound", []byte("c"), nil, []uint64{13, 12, 11, 10}},
		{"between the tables", []byte("fa"), []byte("fz"), nil},
		{"reversed", []byte("f"), []byte("a"), nil},
	}
	for _, tc := range cases {
		c := PickManual(v, tc.lo, tc.hi, pickerOpts)
		switch {
		case tc.want == nil && c != nil:
			t.Errorf("%s: PickManual = %v, want nil", tc.name, c)
		case tc.want != nil && (c == nil || c.Level != 0 || !slices.Equal(fileNums(c.Inputs[0]), tc.want)):
			t.Errorf("%s: PickManual = %v, want L0 inputs %v", tc.name, c, tc.want)
		}
	}
	if c := PickManual(&manifest.Version{}, nil, nil, pickerOpts); c != nil {
		t.Errorf("empty version: %v", c)
	}
	// The empty key is a key: hi = []byte{} bounds the range to it.
	ve := checkedVersion(t, levels{0: {meta(2, "", "", 5, 5, 10)}, 1: {meta(1, "", "a", 1, 1, 10)}})
	if c := PickManual(ve, nil, []byte{}, pickerOpts); c == nil || !slices.Equal(fileNums(c.Inputs[1]), []uint64{1}) {
		t.Errorf("range of the empty key: %v", c)
	}
}

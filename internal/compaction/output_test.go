package compaction

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// TestOutputCutterCut walks a cutter of target 100 through sequences of
// (output size, next user key) and checks each answer against the rule
// its doc states.
func TestOutputCutterCut(t *testing.T) {
	type step struct {
		size uint64
		key  string
		want bool
	}
	cases := []struct {
		name   string
		starts []string // the grandparents' smallest keys
		first  string   // the first output's first key
		steps  []step
	}{
		{"below half the target never, even at a start", []string{"d", "h"}, "a",
			[]step{{49, "d", false}, {49, "h", false}}},
		{"at the first start passed past half", []string{"d", "h"}, "a",
			[]step{{50, "c", false}, {60, "d", true}}},
		{"a key past a start counts as at it", []string{"d", "h"}, "a",
			[]step{{60, "e", true}}},
		{"between starts, below the target, waits", []string{"d", "h"}, "a",
			[]step{{60, "b", false}, {99, "c", false}}},
		{"at twice the target always", []string{"x"}, "a",
			[]step{{199, "b", false}, {200, "c", true}}},
		{"past the last start at the target", []string{"d"}, "a",
			[]step{{40, "d", false}, {99, "e", false}, {100, "f", true}}},
		{"no grandparents: at the target", nil, "a",
			[]step{{99, "b", false}, {100, "c", true}}},
		{"a start at the output's first key is behind it", []string{"a", "m", "z"}, "a",
			[]step{{60, "b", false}, {60, "m", true}}},
		// What follows the last start may be the compaction's last keys.
		{"the last start waits for the target", []string{"d", "h"}, "a",
			[]step{{40, "d", false}, {90, "h", false}, {99, "i", false}, {100, "j", true}}},
		// Three starts passed below half: the fourth needs 50+5·3 = 65%,
		// the fifth 70%, the sixth 75%.
		{"dense grandparents raise the bar", []string{"b", "c", "d", "e", "f", "g", "z"}, "a",
			[]step{{10, "b", false}, {20, "c", false}, {30, "d", false}, {64, "e", false}, {69, "f", false}, {75, "g", true}}},
		// One key passing two starts counts both: 50+5·1 = 55%.
		{"one key passing two starts counts both", []string{"b", "c"}, "a",
			[]step{{54, "c", false}}},
		{"the bar stops at 90%", []string{"b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "z"}, "a",
			[]step{{10, "b", false}, {10, "c", false}, {10, "d", false}, {10, "e", false}, {10, "f", false}, {10, "g", false},
				{10, "h", false}, {10, "i", false}, {10, "j", false}, {10, "k", false}, {89, "l", false}, {90, "m", true}}},
		// 55% at the second start, 60% at the third; after the cut the
		// next start is the new output's first: 50%.
		{"a cut starts the count again", []string{"b", "c", "d", "e", "z"}, "a",
			[]step{{10, "b", false}, {54, "c", false}, {60, "d", true}, {50, "e", true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gps []*manifest.FileMetadata
			for i, s := range tc.starts {
				gps = append(gps, meta(uint64(i+1), s, s, 1, 1, 1))
			}
			c := newOutputCutter(100, gps)
			c.begin([]byte(tc.first))
			for i, s := range tc.steps {
				got := c.cut(s.size, []byte(s.key))
				if got != s.want {
					t.Fatalf("step %d: cut(%d, %q) = %v, want %v", i, s.size, s.key, got, s.want)
				}
				if got {
					c.begin([]byte(s.key))
				}
			}
		})
	}
}

// TestRunCutsAtGrandparents compacts 1,000 keys whose outputs target 4 KiB
// above grandparents of 100 keys each, about 1.5 targets: every output must
// then be one grandparent's range exactly, so no grandparent overlaps two
// outputs. (An eleventh grandparent starts past the inputs, as the level's
// next table would: past the last start the cutter cuts at the target.)
// Without the grandparents the same compaction cuts at the target, and
// outputs straddle the same ranges.
func TestRunCutsAtGrandparents(t *testing.T) {
	key := func(i int) string { return fmt.Sprintf("k%04d", i) }
	var in []entry
	for i := range 1000 {
		in = append(in, set(key(i), base.SeqNum(i+1), strings.Repeat(string(rune('a'+i%26)), 40)))
	}
	var gps []*manifest.FileMetadata
	var starts []string
	for i := 0; i <= 1000; i += 100 {
		gps = append(gps, meta(uint64(100+i), key(i), key(i+99), 1, 1, 1<<20))
		starts = append(starts, key(i))
	}
	starts = starts[:10] // the inputs end before the eleventh
	const target = 4096
	run := func(grandparents []*manifest.FileMetadata) []*manifest.FileMetadata {
		s := newTableStore(t)
		c := &Compaction{Level: 1, OutputLevel: 2, Inputs: [2][]*manifest.FileMetadata{{s.build(1, in, 10)}},
			Grandparents: grandparents, Filter: sstable.Bloom(10)}
		outputs, _, err := Run(context.Background(), c, s.env(), nil, with(defaultOptions(), func(o *Options) { o.TargetFileSize = target }))
		if err != nil {
			t.Fatal(err)
		}
		return outputs
	}
	// straddled counts the grandparents whose range two outputs share.
	straddled := func(outputs []*manifest.FileMetadata) int {
		n := 0
		for _, g := range gps {
			over := 0
			for _, f := range outputs {
				if bytes.Compare(f.Smallest.UserKey, g.Largest.UserKey) <= 0 && bytes.Compare(g.Smallest.UserKey, f.Largest.UserKey) <= 0 {
					over++
				}
			}
			if over > 1 {
				n++
			}
		}
		return n
	}

	outputs := run(gps)
	var firsts []string
	for _, f := range outputs {
		firsts = append(firsts, string(f.Smallest.UserKey))
	}
	if !slices.Equal(firsts, starts) {
		t.Errorf("outputs start at %v, want the grandparents' starts %v", firsts, starts)
	}
	if n := straddled(outputs); n != 0 {
		t.Errorf("%d grandparents overlap two outputs, want 0", n)
	}
	plain := run(nil)
	if n := straddled(plain); n == 0 {
		t.Errorf("cut at the target alone, no grandparent overlaps two of %d outputs: the case does not test the cut", len(plain))
	}
	// Grandparents of 50 keys, under the target, the last starting at the
	// compaction's last key: a cut there would leave that key a table of
	// its own, where the output before it is past half the target.
	var tail []*manifest.FileMetadata
	for i := 0; i < 1000; i += 50 {
		tail = append(tail, meta(uint64(300+i), key(i), key(i+49), 1, 1, 1<<20))
	}
	tail = append(tail, meta(2000, key(999), key(1099), 1, 1, 1<<20))
	outputs = run(tail)
	if last := outputs[len(outputs)-1]; bytes.Equal(last.Smallest.UserKey, []byte(key(999))) {
		t.Errorf("the last output is the last key alone: %s", last.Smallest.UserKey)
	}
}

// TestPickGrandparents checks that a picked compaction carries the tables
// of the level below its output level that overlap its whole key range —
// the output level's tables' included — and none when it writes the last
// level.
func TestPickGrandparents(t *testing.T) {
	cases := []struct {
		name   string
		levels levels
		want   []uint64
	}{
		{
			"the range of both input levels",
			levels{1: {meta(1, "c", "h", 1, 1, 4096)}, 2: {meta(20, "a", "d", 1, 1, 100)},
				3: {meta(30, "a", "a", 1, 1, 10), meta(31, "b", "b", 1, 1, 10), meta(32, "i", "k", 1, 1, 10)}},
			[]uint64{30, 31},
		},
		{
			"L0 into L1, grandparents from L2",
			levels{0: fourL0(), 2: {meta(20, "a", "b", 1, 1, 10), meta(21, "d", "e", 1, 1, 10), meta(22, "x", "y", 1, 1, 10)}},
			[]uint64{21},
		},
		{
			"none below the last level",
			levels{5: {meta(50, "a", "m", 1, 1, 20<<20)}, 6: {meta(60, "k", "z", 1, 1, 1<<40)}},
			nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Pick(checkedVersion(t, tc.levels), pickerOpts, nil)
			if c == nil {
				t.Fatal("Pick = nil")
			}
			if got := fileNums(c.Grandparents); !slices.Equal(got, tc.want) {
				t.Errorf("L%d→L%d over [%s, %s]: Grandparents = %v, want %v", c.Level, c.OutputLevel, c.Smallest, c.Largest, got, tc.want)
			}
		})
	}
}

// TestOutputCompression checks which compactions write TopLevelCompression
// — those from L0 into a base level above the last — and that a table
// moves down unchanged only into a level of its own compression, or when
// its record predates compressions.
func TestOutputCompression(t *testing.T) {
	o := &Options{TableOptions: sstable.WriterOptions{Compression: sstable.SnappyCompression}, TopLevelCompression: sstable.NoCompression}
	for _, tc := range []struct {
		level, output int
		want          sstable.Compression
	}{
		{0, 4, sstable.NoCompression},     // into the base level
		{0, 6, sstable.SnappyCompression}, // the base level is the last
		{4, 5, sstable.SnappyCompression},
		{5, 6, sstable.SnappyCompression},
	} {
		if got := o.OutputCompression(&Compaction{Level: tc.level, OutputLevel: tc.output}); got != tc.want {
			t.Errorf("L%d→L%d: %v, want %v", tc.level, tc.output, got, tc.want)
		}
	}
	// Pick sets it: L0 into L1 (the base under static sizing) and L1 into
	// L2.
	for _, tc := range []struct {
		levels levels
		want   sstable.Compression
	}{
		{levels{0: fourL0()}, sstable.NoCompression},
		{levels{1: {meta(1, "a", "b", 1, 1, 4096)}}, sstable.SnappyCompression},
	} {
		c := Pick(checkedVersion(t, tc.levels), with(pickerOpts, func(p *Options) {
			p.TableOptions.Compression, p.TopLevelCompression = o.TableOptions.Compression, o.TopLevelCompression
		}), nil)
		switch {
		case c == nil:
			t.Errorf("%v: Pick = nil", tc.levels)
		case c.Compression != tc.want:
			t.Errorf("Pick = %v with compression %v, want %v", c, c.Compression, tc.want)
		}
	}
	for _, tc := range []struct {
		table, want sstable.Compression // the table's (0: unrecorded), the level's
		move        bool
	}{
		{sstable.SnappyCompression, sstable.SnappyCompression, true},
		{sstable.NoCompression, sstable.NoCompression, true},
		{sstable.NoCompression, sstable.DefaultCompression, true}, // a writer's default is none
		{sstable.NoCompression, sstable.SnappyCompression, false},
		{sstable.SnappyCompression, sstable.NoCompression, false},
		{0, sstable.SnappyCompression, true},
	} {
		m := meta(1, "a", "b", 1, 1, 10)
		m.Compression = uint8(tc.table)
		c := &Compaction{Level: 4, OutputLevel: 5, Inputs: [2][]*manifest.FileMetadata{{m}}, Filter: sstable.Bloom(10), Compression: tc.want}
		if got := c.IsTrivialMove(); got != tc.move {
			t.Errorf("a %v table into a %v level: IsTrivialMove = %v, want %v", tc.table, tc.want, got, tc.move)
		}
	}
}

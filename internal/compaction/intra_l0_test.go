package compaction

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// TestIntraL0Run checks which of L0's newest tables an intra-L0 compaction
// merges: each older one while it is at most twice the bytes of those
// newer than it, within the bound.
func TestIntraL0Run(t *testing.T) {
	for _, tc := range []struct {
		sizes []uint64 // newest first
		most  uint64
		want  int
	}{
		{[]uint64{3, 3, 3, 3}, 1000, 4},
		{[]uint64{3, 3, 3, 3, 3, 3}, 14, 4},          // the bound: 15 bytes would pass 14
		{[]uint64{3, 3, 3, 100, 3}, 1000, 3},         // 100 is more than twice 9: the run stops there
		{[]uint64{3, 3, 3, 18, 3}, 1000, 5},          // 18 is twice 9: it joins, and so does the next
		{[]uint64{3, 3, 3, 3, 24, 72, 300}, 1000, 6}, // 24 ≤ 2·12, 72 ≤ 2·36, 300 > 2·108
		{[]uint64{50, 3, 3}, 1000, 3},                // the newest joins whatever its size
		{[]uint64{50, 3, 3}, 40, 0},                  // unless it alone passes the bound
		{nil, 1000, 0},
	} {
		t.Run(fmt.Sprint(tc.sizes, tc.most), func(t *testing.T) {
			var l0 []*manifest.FileMetadata
			for i, size := range tc.sizes {
				seq := base.SeqNum(100 - 10*i)
				l0 = append(l0, meta(uint64(100-i), "a", "z", seq, seq+9, size))
			}
			run := intraL0Run(l0, tc.most)
			if !slices.Equal(run, l0[:tc.want]) {
				t.Fatalf("intraL0Run = %v, want the newest %d", fileNums(run), tc.want)
			}
			if cap(run) != len(run) {
				t.Fatalf("the run's capacity %d passes its length %d: an append would write into L0", cap(run), len(run))
			}
		})
	}
}

// TestIntraL0 checks when L0's compaction merges L0 into itself — from
// the slowdown trigger, while the base level outranks L0 — and what it
// takes: the newest run, one output with no grandparents, nothing of the
// base level, the outputs uncut.
func TestIntraL0(t *testing.T) {
	opts := with(pickerOpts, func(o *Options) { o.L0SlowdownTrigger = 6; o.TargetFileSize = 1000 })
	// l0 returns n L0 tables of 100 bytes over [a, z], newest first.
	l0 := func(n int) []*manifest.FileMetadata {
		var files []*manifest.FileMetadata
		for i := range n {
			seq := base.SeqNum(10000 - 10*i)
			files = append(files, meta(uint64(1000-i), "a", "z", seq, seq+9, 100))
		}
		return files
	}
	// base is L1 holding bytes over [a, z] (target 1 KiB), above an L2 of
	// 5 KiB.
	base := func(bytes uint64) [][]*manifest.FileMetadata {
		return [][]*manifest.FileMetadata{
			{meta(1, "a", "m", 1, 1, bytes/2), meta(2, "n", "z", 1, 1, bytes/2)},
			{meta(3, "a", "z", 1, 1, 5000)},
		}
	}
	for _, tc := range []struct {
		name     string
		l0       int
		baseSize uint64
		want     string // Pick's choice: "L0→L0 <inputs>", "L0→L1", or another level's
	}{
		// L0 scores 2 (8 tables over a trigger of 4); L1 8 over L2's 0.5
		// (its target 10 KiB): L1 outranks L0.
		{"from the slowdown trigger, a swollen base level: L0 into itself", 8, 8000, "L0→L0 8"},
		{"below the slowdown trigger: the base level first", 5, 8000, "L1→L2"},
		// L1 at 1.2 over L2's 0.5 ranks 2.4; L0's 2 over 1.2 ranks 1.7.
		{"a base level near its target still outranks L0", 8, 1200, "L0→L0 8"},
		// L1 below its target (0.9 over L2's 0.5 ranks 1.8, above L0's
		// 2 over 0.9): L0 compacts into it, at less than its own bytes.
		{"a base level below its target: L0 into it", 8, 900, "L0→L1"},
		// L0's 3 over 1.2, 2.5, outranks L1's 2.4.
		{"L0 outranks the base level: L0 into it", 12, 1200, "L0→L1"},
		// The bound (16 TargetFileSizes, 16,000 bytes) takes 160 of 170.
		{"the bound", 170, 100000, "L0→L0 160"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base(tc.baseSize)
			v := checkedVersion(t, levels{0: l0(tc.l0), 1: b[0], 2: b[1]})
			c := Pick(v, opts, nil)
			if c == nil {
				t.Fatalf("Pick = nil, want %s", tc.want)
			}
			got := fmt.Sprintf("L%d→L%d", c.Level, c.OutputLevel)
			if c.Level == 0 && c.OutputLevel == 0 {
				got += fmt.Sprintf(" %d", len(c.Inputs[0]))
				if !slices.Equal(c.Inputs[0], v.Levels[0][:len(c.Inputs[0])]) || len(c.Inputs[1]) != 0 || len(c.Grandparents) != 0 || c.Bottommost {
					t.Fatalf("intra-L0 %v: want L0's newest tables alone, no grandparents, not bottommost", c)
				}
				if target := outputTarget(c, opts); target < 1<<62 {
					t.Fatalf("intra-L0 outputs cut at %d bytes, want one output", target)
				}
			}
			if got != tc.want {
				t.Fatalf("Pick = %v (%s), want %s", c, got, tc.want)
			}
		})
	}
}

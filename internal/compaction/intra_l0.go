package compaction

import (
	"math"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Intra-L0 compactions: L0's newest tables merged into one L0 table, while
// the base level drains.
//
// An L0 compaction takes every base-level table its tables overlap — all
// of them, under random writes — and holds them for its whole run, so
// that no compaction of the base level can run beside it. When
// compactions fall behind the writes (a tree much larger than the page
// cache, whose compactions read from the device), L0 passes the slowdown
// trigger, from where it goes first, and L0 compactions follow one
// another: the base level only grows, and each L0 compaction rewrites
// more of it per byte it takes from L0. In a 30,000,000-key random fill in
// a 320 MiB memory cgroup the base level reached 47 times its target
// (787 MB against 16.8 MB) and every L0 compaction rewrote all of it, ten
// bytes of base level per byte of L0.
//
// So from the slowdown trigger, while the base level, past its target,
// outranks L0 by the order of Pick (its score over the next level's above
// L0's score over its own: L0 compacted now would rewrite more of the base
// level than it brings), L0's compaction merges L0's newest tables into
// one L0 table instead, as RocksDB's intra-L0 compactions do when L0
// cannot go down: L0's table count falls — the writes' pacing eases,
// lookups probe fewer tables — while the base level, no longer held,
// drains into the next level in the other slots; once it no longer
// outranks L0, L0 compacts into it with every table it has gathered, at a
// small cost per byte.
//
// The tables merged are the newest ones, in a run: each older one joins
// while it is at most twice the bytes of those newer than it in the run,
// so that a merged table is merged again only with about as many bytes
// again (each byte is rewritten within L0 a logarithmic number of times,
// not once per merge), up to maxIntraL0Tables TargetFileSizes. The run is
// closed under L0's order: every table newer than its oldest is in it, and
// flushes during the compaction are newer than all of it, so its one
// output takes its place in L0's order (by largest seqnum) and no version
// moves below an older one.

// minIntraL0Tables is the fewest tables an intra-L0 compaction merges: a
// merge of fewer takes L0's count down too little to be worth its write.
const minIntraL0Tables = 4

// maxIntraL0Tables bounds an intra-L0 compaction's input, in
// TargetFileSizes: its output is one table, which the next L0 compaction
// rewrites whole, and while it runs no other L0 compaction can, so that
// it must end before the flushes behind it fill L0.
const maxIntraL0Tables = 16

// intraL0Due reports whether L0's compaction is an intra-L0 one: L0 holds
// at least L0SlowdownTrigger tables, and the base level, at or past its
// target, outranks it (see above). (A base level below its target costs an
// L0 compaction less than L0's own bytes.) Then, while no run of L0's
// newest tables is there to merge (intraL0), L0 waits — for flushes to
// make one, or for the base level to drain below its target or L0's
// rank — rather than compact into the base level: that would rewrite the
// whole swollen base level and hold it meanwhile.
func intraL0Due(v *manifest.Version, t Targets, scores [manifest.NumLevels]float64, opts *Options) bool {
	return v.NumFiles(0) >= opts.L0SlowdownTrigger && t.Base < lastLevel && scores[t.Base] >= 1 &&
		rank(0, t, scores) < rank(t.Base, t, scores)
}

// intraL0 returns the intra-L0 compaction of v's L0: its newest run of
// tables (intraL0Run), or nil if the run holds fewer than
// minIntraL0Tables.
func intraL0(v *manifest.Version, opts *Options) *Compaction {
	run := intraL0Run(v.Levels[0], maxIntraL0Tables*opts.TargetFileSize)
	if len(run) < minIntraL0Tables {
		return nil
	}
	c := &Compaction{Level: 0, OutputLevel: 0}
	c.Inputs[0] = run
	c.Smallest, c.Largest = keyRange(run)
	return c
}

// intraL0Run returns the newest tables of l0 (in L0's order, newest first)
// that an intra-L0 compaction merges: each older table joins while its
// size is at most twice the sum of those before it and the sum stays
// within most bytes.
func intraL0Run(l0 []*manifest.FileMetadata, most uint64) []*manifest.FileMetadata {
	var sum uint64
	n := 0
	for _, f := range l0 {
		if n > 0 && f.Size > 2*sum || sum+f.Size > most {
			break
		}
		sum += f.Size
		n++
	}
	return l0[:n:n]
}

// outputTarget returns the size Run cuts c's outputs at: TargetFileSize,
// or, for an intra-L0 compaction, whose output is one table (cut, it
// would leave L0 as many tables as it merged), a size no table reaches
// (half the range, so that the cutter's twice the target does not wrap).
func outputTarget(c *Compaction, opts *Options) uint64 {
	if c.OutputLevel == 0 {
		return math.MaxUint64 / 2
	}
	return opts.TargetFileSize
}

// Package compaction decides what bloomkv's LSM tree compacts and how: a
// picker that scores the levels and chooses input tables, a merge that
// rewrites them into the next level keeping exactly the versions a reader
// can still see, and the allocation of filter memory across levels. It is
// logic over manifest versions and table iterators, testable without a DB:
// the DB supplies the version, opens the input tables, creates the output
// files and installs the result (Compaction.Edit) with one manifest edit.
//
// # Picking
//
// Every level but the last has a score (Scores), and those at least 1 need
// compacting; Pick takes them by their score over the score of the level
// they compact into, highest first (ties to the shallower level), so that
// the bottom of the tree drains first, and L0 first once it reaches
// L0SlowdownTrigger tables:
//
//	L0:             number of tables / L0CompactionTrigger
//	Ln, Base≤n≤5:   size / target
//
// L0 is limited by count because a lookup probes every L0 table; deeper
// levels by size, each T = LevelMultiplier times the one above (TargetsOf).
// Under DynamicLevelSizing the targets come from the largest level's actual
// size, so that it holds about (T−1)/T of the data, and L0 compacts into
// the base level, the shallowest the data needs (the levels between are
// empty); under StaticLevelSizing L1 targets BaseLevelSize and L0 compacts
// into L1. An L0 compaction takes all of L0; an Ln compaction the one
// table with the least overlap in Ln+1 per byte of its own. Both add the
// tables of the output level that overlap the inputs' key range. From
// L0SlowdownTrigger tables, while the base level, past its target,
// outranks L0, L0's compaction merges its newest tables into one L0 table
// instead (an intra-L0 compaction, intraL0Due), so that L0 compactions do
// not hold the base level and rewrite it ever more swollen while it needs
// to drain.
// PickManual compacts a key range down level by level, for the DB's
// Compact. A compaction of one table that overlaps nothing below, and
// whose filter suits the level below, is done by moving the table
// (Compaction.IsTrivialMove).
//
// Up to MaxConcurrentCompactions run at once: Pick takes the running ones
// and returns only a compaction that shares no table with them and writes
// no key range into a level one of them reads or writes; with two slots or
// more, the last is kept for L0 (or the base level, while it outranks a
// due L0 below the slowdown trigger), and one L0 compaction runs at a time.
//
// # The seam to the DB
//
// The DB calls Pick (or PickManual) with its current version and the
// compactions it is running; runs the
// compaction with Run, passing an Env that opens the input tables
// (*sstable.Iterator is an iterator.Iterator) and creates the output
// files, and the sequence numbers of its live snapshots; and installs
// Compaction.Edit of the outputs with one manifest edit. For every table
// it builds, flushes included, it asks FilterForLevel for the filter.
//
// # Merging
//
// Run merges the inputs in internal-key order (user key ascending, newest
// version first) with the merging and level iterators of the DB's reads
// (package internal/iterator), which hide nothing, and decides for each
// version of a user key whether it stays: the keep rule below, in Run, is
// what drops shadowed versions and tombstones. The read points are the
// live snapshots s_1 < … < s_k and the latest read; a read at S sees the
// newest version with seqnum ≤ S. The snapshots cut the seqnums into
// stripes (s_{i−1}, s_i], plus (s_k, ∞). Walking a key's versions newest
// to oldest:
//
//   - A version is kept iff it is the first (newest) of its stripe. Every
//     read point that sees some version of a stripe sees its newest, so the
//     others are invisible at every read point: "shadowed", dropped.
//   - When the compaction is bottommost (no level below the output level
//     has a table overlapping its key range), a kept tombstone is dropped
//     iff no kept version is older than it: the reads that saw it then
//     find no version at all — not found, as before. (This is more than
//     LevelDB's rule, which drops only tombstones older than every
//     snapshot; a tombstone above the oldest snapshot with nothing under
//     it goes too.)
//
// So for every key and every read point the visible version — or its
// absence — is the same after the compaction as before, and no version
// that no read point can see survives it, except tombstones that still
// hide something below.
//
// Merge operands (base.KindMerge) bend the first rule: an operand that is
// the newest of its stripe is kept together with what is below it in the
// stripe — the operands down to the first other version, its base — as
// one version, their fold with Options.Merger: a Set over a Set's value,
// or over nothing where a tombstone, a version expired at the clock's
// reading or a range-deleted version ends the run (or lies next below
// it), or the key ends at the bottom; otherwise one operand, the base
// being in an older stripe or a deeper level, or a Set whose expiry has
// not passed, kept below the operand (mergeRun). Every read point of the stripe folds the same run, so it
// reads the same value. A merger that fails leaves the run as it was.
//
// Outputs are cut at TargetFileSize, but only between user keys: all the
// versions of a key go to one table, so a lookup needs one table per level.
//
// INVARIANT: the output of a compaction is a sorted run: tables in key
// order, each table's largest user key below the next one's smallest, all
// within [Compaction.Smallest, Compaction.Largest], a range no table of the
// output level outside the compaction overlaps; so installing it keeps the
// level invariants of package manifest.
//
// INVARIANT: for a user key, versions in a shallower level (or an earlier L0
// table) are newer than those in deeper ones. The picker keeps it: L0
// inputs are closed under overlap, and deeper inputs are whole sorted-run
// tables, so no version moves below an older one left behind.
//
// # Filters across levels
//
// Every table's filter is the one its level gets when it is written
// (FilterForLevel, from the tree's projected shape and the
// FilterAllocation, or fixed per level by Options.LevelFilters; below L0
// the shape is the settled one, without L0's short-lived tables:
// PlanForLevel). Under
// UniformAllocation that is a Bloom filter of Options.BitsPerKey
// everywhere: each of the L runs a lookup probes has false-positive rate
// p, and an absent key costs about L·p wasted block reads. Under
// OptimalAllocation (Monkey: Dayan, Athanassoulis and Idreos, SIGMOD 2017)
// each run's rate is proportional to its size, within the same total
// memory:
//
//	b_i = avg + (Σ_j (n_j/N)·ln n_j − ln n_i) / (ln 2)²
//
// (BitsPerKeyForLevels gives the derivation and the clamping), so small
// levels get many bits per key and the largest slightly fewer than the
// average; with T = 10 the expected wasted reads drop to about the largest
// level's rate, a constant. BestAllocation solves the same problem with a
// choice of family per level — none, Bloom, binary fuse or Ribbon — and each
// family's real rate and cost in tables of the level's size, as a
// knapsack's linear relaxation, in which one level may give a fraction of
// its tables the next richer filter (FiltersForLevels, LevelFilter);
// ProgressiveAllocation is Pebble's fixed fuse widths, for comparison.
// The table records its filter's family and parameters, so tables built
// under different shapes, allocations or families mix freely. The
// allocations are judged by that metric, the expected wasted reads of a
// lookup for an absent key: Σ over the runs it probes of their filters'
// false-positive rates (ExpectedFalsePositiveReads), at equal memory
// (FilterMemory). Two floors bound them from below: FalsePositiveFloor,
// perfect filters (rate 2^−b at b bits per key) optimally allocated,
// which no filters beat, and FamilyFalsePositiveFloor, the same for the
// families above at the tree's table sizes, which no allocation of them
// beats.
//
// # Separated values
//
// A table entry of kind base.KindSetBlob holds a handle to a value in a
// blob file; Run copies it like any value, so a compaction rewrites keys
// and handles, not values, and counts each output table's references per
// blob file (manifest.BlobRef), from which the version knows each file's
// dead share without reading it. Dead values are reclaimed as RocksDB's
// integrated BlobDB reclaims them: a compaction that meets a handle into
// a blob file whose dead share has reached Options.BlobDeadShare reads
// the value and writes it to a blob file of its own, and the table it
// writes references that one instead (Compaction.RelocateBlobs,
// runner.blobHandle). Once no table
// references the old file it leaves the version, and the DB deletes it
// when no reader needs it. A file whose tables no compaction is due to
// take — the deepest level's, in a DB that has stopped writing — gets
// one of its own: when nothing else is due, the picker rewrites a table
// that references it into its own level (pickBlobRewrite).
//
// Pebble instead rewrites the blob file itself, its live values into a
// new file under the same blob file ID, and the manifest remaps the ID;
// its handles name a block and an index within it, so that they survive
// the rewrite. That spares rewriting the tables, but needs the
// indirection, and the rewrite has to read every handle of the file's
// tables to learn which values are live — it keeps per-table bitmaps for
// that. Here the tables are small (keys and handles, the values elsewhere),
// so rewriting the few that reference a file is cheap, the relocation is
// the ordinary compaction path (its keep rule, crash safety and manifest
// edit), and a handle names a file and an offset, nothing more.
package compaction

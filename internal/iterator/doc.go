// Package iterator is bloomkv's one stack of internal iterators: the
// Iterator interface every source of entries implements (memtables,
// tables), the MergingIter that merges any number of them, and the
// LevelIter that reads a level of non-overlapping tables as one. The DB's
// reads and compactions both build on it:
//
//   - A DB Iterator (package bloomkv) merges a memtable iterator per
//     memtable, a table iterator per L0 table and a LevelIter per deeper
//     level, each LevelIter over a version's open tables, and walks the
//     merge in both directions. For a prefix seek it narrows the same
//     stack rather than building another: MergingIter.Exclude leaves out
//     the L0 tables whose filters rule the prefix out, and
//     LevelIter.Restrict bounds each level to the prefix's range and
//     passes over the tables whose filters rule it out, unopened.
//   - compaction.Run merges a table iterator per input L0 table and a
//     LevelIter over the input tables of each deeper level, opened through
//     compaction.Env.Open, and walks the merge forward only.
//
// # Who hides versions
//
// Nothing in this package hides or drops an entry: every version of every
// key comes out, tombstones and versions newer than any reader included, in
// base.CompareInternal order. Deciding what a reader sees is the job of the
// layer above: the DB's Iterator (iterator.go in package bloomkv) skips
// versions newer than its read sequence number and, of each user key, shows
// the newest visible version if it is a Set and nothing if it is a
// tombstone, and hides a version that a visible range tombstone with a
// newer seqnum covers; compaction.Run's keep rule drops the versions no
// read point can see (range-deleted ones included) and, at the bottom of
// the tree, the tombstones that hide nothing. Range tombstones are not
// entries of this stack at all: they are held beside it, fragmented
// (package rangedel), by the memtables and tables themselves; the one thing
// the merge offers for them is SkipForward and SkipBackward, with which
// the DB's Iterator seeks the older children past a range a tombstone
// deletes.
// Keeping the merge ignorant of versions is what lets one merge serve both,
// and keeps its inner loop a heap operation and nothing else.
//
// # Where the interface lives
//
// Pebble puts its InternalIterator in internal/base so that its sstable
// and memtable packages can return it. Here memtable.Iter and
// sstable.Iterator satisfy Iterator structurally and never name it, so the
// interface lives beside the iterators that consume it, and package base
// stays the vocabulary of keys. The compile-time assertions that the two
// implementations keep satisfying it are in this package (iterator.go),
// which makes it depend on memtable and sstable; neither may therefore
// import it.
//
// # Tests
//
// Subpackage itertest holds what the tests of this package, of the DB's
// Iterator and of compaction.Run share: a strict slice-backed Iterator with
// failure injection, and random worlds of versions spread over memtables,
// tables and levels, whose sorted union is the oracle.
package iterator

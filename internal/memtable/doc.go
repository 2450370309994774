// Package memtable is bloomkv's sorted in-memory table: every write lands
// here (after the WAL) until the table is full, becomes immutable and is
// flushed to an L0 SSTable. It is a B-tree (github.com/google/btree) of
// internal keys in base.CompareInternal order — user key ascending, then
// sequence number descending — so the newest version of a key comes first
// and a seek to (key, S) lands on the newest version visible at S.
//
// The table holds every version it is given: a Set, a Delete (tombstone) and
// older versions of the same key all stay until the flush. Get answers one
// user key at one sequence number. Iterators yield all versions, and so
// does the merging iterator the DB puts above them (internal/iterator);
// hiding the versions a reader must not see (newer than its sequence
// number, shadowed, deleted) is the job of the DB's Iterator on top of the
// merge, which has to do it for SSTables anyway. (Compactions drop the
// versions no reader can see any longer: compaction.Run.)
//
// Range tombstones (AddRangeDel) are kept beside the tree, in a list of
// their own: few, and asked about as a fragmented whole, which RangeDels
// builds when first asked after an add and caches until the next
// (package rangedel). Get and iterators know nothing of them; the DB's
// reads ask RangeDels and apply them by sequence number.
//
// INVARIANT: no two entries have the same internal key (user key, seqnum,
// kind). The commit pipeline hands out every sequence number once, and Add
// panics if the precondition is broken rather than silently replacing a
// version a reader may already have returned.
//
// INVARIANT: an entry never changes and is never removed once added. The
// bytes of its key and value are copied into an append-only arena at Add, so
// slices returned by Get and by iterators stay valid, unchanged, for as long
// as the caller holds a reference to the memtable. Callers must not modify
// them.
//
// INVARIANT: the arena is freed exactly when the last reference is dropped.
// New returns a memtable holding its creator's reference; Ref and Unref
// count more (the DB takes one per read in progress). A slice used after
// that faults — or, for a memtable a Pool made, whose chunks the pool
// keeps for the next memtables, reads a later memtable's bytes: the count
// is what rules out such a use.
//
// # Memory
//
// Keys and values are copied into chunks of 4 KiB to 1 MiB (about 1/32 of
// New's size hint) rather than allocated one by one, and the chunks come
// from package offheap: outside the Go heap, so that a memtable's bytes cost
// their size in memory, not twice that once the garbage collector's heap
// growth is counted, and are never scanned. Memtables made by a Pool (the
// DB's) recycle each other's chunks, so that the writer does not take a
// page fault for every page of a fresh chunk. A tree item is a 40-byte value
// on the heap: a pointer into the arena, two lengths, the trailer and the
// key's first 16 bytes, which settle most comparisons of a tree descent
// without a cache miss into the arena (keys sharing a longer prefix fall
// back to comparing the rest). ApproximateSize counts key and value bytes
// plus a fixed per-entry overhead for the tree; the DB compares it with its
// memtable size to decide when to flush.
//
// # Concurrency
//
// Any number of goroutines may call Get, Len, Empty, ApproximateSize and use
// iterators while Add runs. Adds serialize among themselves (the DB has one
// writer per memtable; a second one only waits), and each Add is atomic: a
// reader sees an entry with its whole key and value or not at all.
//
// The mechanism is a sync.RWMutex around the tree. Add holds the write lock
// for one O(log n) insert; Get holds the read lock for one O(log n) descent.
// An iterator never holds the lock between calls: it copies a small batch of
// consecutive items under the read lock and, when the batch runs out or the
// direction changes, re-seeks just past its current key. So a slow or
// abandoned iterator can never block the writer, and one never closed leaks
// nothing.
//
// The alternative, copy-on-write snapshots (BTreeG.Clone per iterator),
// would give iterators a frozen view, but Clone itself must not run
// concurrently with a write, and after every clone the writer re-copies each
// node on its next insert path — allocation the write path pays for every
// iterator opened. The DB filters by sequence number anyway, so a frozen
// view buys nothing; the lock plus re-seek is cheaper and simpler.
//
// What an iterator sees: every entry that existed when it was created, in
// strictly increasing (Next) or decreasing (Prev) order, never a partial
// entry. Entries added after it was created may or may not appear; since
// their sequence numbers are above any snapshot the iterator's reader holds,
// the DB's Iterator skips them either way.
package memtable

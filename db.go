// Package bloomkv is an embedded, log-structured (LSM) key-value store whose
// tables carry a filter each (Bloom, binary fuse or Ribbon, or none where
// Options say so), so that a lookup skips a table without reading a byte
// of it whenever the table's filter says the key is absent.
//
// # How a write travels
//
// Put, Delete and Apply go through the commit pipeline (commit.go): the
// batch gets sequence numbers, is appended to the write-ahead log (in the
// log format of package record) — one fsync shared by every writer waiting at that moment, if any of
// them asked for Sync; NoSync writes stay in the log's 32 KiB block buffer
// until it fills or a Sync write, a memtable rotation or Close writes it —
// then inserted into the mutable memtable (package memtable) and published.
// A full memtable becomes immutable, a new WAL starts, and a background
// flush (flush.go) writes it to an L0 table (package sstable) and records
// the table in the manifest (package internal/manifest).
//
// # How a read travels
//
// Get (read.go) looks in the mutable memtable, then the immutable ones newest
// first, then the L0 tables newest first, then at most one table per deeper
// level. For each table whose key range holds the key, the table's filter
// (package bloom, fuse or ribbon) is consulted in memory before anything is read; only a
// "maybe" costs a data block, from the block cache (package internal/cache)
// or the file. Every step is counted in Metrics.
//
// # Files
//
// A DB directory holds LOCK, CURRENT, MANIFEST-NNNNNN, NNNNNN.log (WALs) and
// NNNNNN.sst (tables); see package internal/manifest for the names and the
// manifest protocol. The directory is the user's: the DB deletes or changes
// only files it can prove are its own (directory.go), and a read-only Open
// writes nothing.
//
// # Failures
//
// A failed flush or compaction is retried with a backoff while reads and
// writes go on; a failed WAL write stops writes until the damaged WAL is
// retired — by the DB itself once a full disk has room again, or by
// Resume; a corruption stops writes for good. See background.go.
//
// # Coming from Pebble, Badger or goleveldb
//
// The calls map one to one, with these differences: a value returned by
// Get is the caller's to keep (no closer to call, no copy to make), a nil
// *WriteOptions means a durable write (Sync), and an absent key is
// ErrNotFound.
//
//	Pebble                       Badger                        goleveldb                     bloomkv
//	pebble.Open(dir, opts)       badger.Open(opts)             leveldb.OpenFile(dir, opts)   Open(dir, opts)
//	db.Get(k): value, closer     txn.Get(k), item.ValueCopy    db.Get(k, nil)                DB.Get(k)
//	db.Set(k, v, pebble.Sync)    txn.Set(k, v) in db.Update    db.Put(k, v, wo)              DB.Put(k, v, nil)
//	db.Delete(k, pebble.Sync)    txn.Delete(k) in db.Update    db.Delete(k, wo)              DB.Delete(k, nil)
//	db.DeleteRange(s, e, o)      db.DropPrefix(p)              (none)                        DB.DeleteRange(s, e, nil)
//	db.Merge(k, v, o)            db.GetMergeOperator(k, f, d)  (none)                        DB.Merge(k, operand, nil)
//	db.NewBatch(), b.Commit      db.NewWriteBatch(), wb.Flush  new(leveldb.Batch), db.Write  NewBatch(), DB.Apply(b, nil)
//	db.NewIter(&IterOptions{…})  txn.NewIterator(opts)         db.NewIterator(rng, nil)      DB.NewIter(&IterOptions{LowerBound, UpperBound})
//	db.NewSnapshot()             db.View (a read transaction)  db.GetSnapshot()              DB.NewSnapshot(), DB.View
//	db.NewIndexedBatch()         (none)                        (none)                        DB.NewIndexedBatch()
//	(none)                       db.Update(fn), txn.Commit()   (none)                        DB.Update(fn), Transaction.Commit(nil)
//	db.Checkpoint(dir)           db.Backup(w, since)           (none)                        DB.Checkpoint(dir, nil)
//	db.Ingest(paths)             db.NewStreamWriter()          (none)                        DB.Ingest(paths)
//	db.Compact(s, e, parallel)   db.Flatten(workers)           db.CompactRange(r)            DB.Compact(lo, hi)
//	db.Flush()                   (none)                        (none)                        DB.Flush()
//	db.Metrics()                 db.LevelsToString()           db.Stats(&stats)              DB.Metrics()
//	pebble.ErrNotFound           badger.ErrKeyNotFound         leveldb.ErrNotFound           ErrNotFound
//
// An Iterator moves as Pebble's does (First, SeekGE, Valid, Next, Key,
// Value; All for a range loop). Filters: where Pebble sets a FilterPolicy
// per level and goleveldb a Filter in its options, Options.BitsPerKey sets
// the memory (10 bits per key by default) and Options.FilterAllocation or
// Options.LevelFilters the family (Bloom, binary fuse, Ribbon) per level;
// Badger's BloomFalsePositive is a rate, where bloomkv takes bits per key.
// Transactions are Badger's (snapshot isolation, ErrConflict at Commit),
// serializable for scanned ranges too (docs/transactions.md). Merge is
// Pebble's, with an associative Options.Merger whose name the DB records
// (docs/merge.md). There is no TTL.
//
// INVARIANT: a write acknowledged with Sync survives a crash; once a WAL
// write fails, the DB refuses every later write with that error until the
// WAL is retired, rather than acknowledge writes it cannot make durable.
//
// INVARIANT: a file is deleted only when no version a reader holds uses it.
package bloomkv

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/internal/offheap"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// DB is an open database. All its methods are safe for concurrent use,
// except that Close must not race with other calls: calls made after Close
// returns fail with ErrClosed.
type DB struct {
	dirname string
	opts    Options
	fs      vfs.FS
	lock    io.Closer
	cache   *cache.Cache
	// tableMemory holds what open tables pin (filters, indexes), off the
	// Go heap; released once the DB is closed and its last table too. Its
	// ReleaseFrom is tableMemoryReleaseFrom.
	tableMemory offheap.Allocator
	// memtables makes every memtable, so that their arenas recycle each
	// other's chunks (memtable.Pool); closed with the DB.
	memtables *memtable.Pool
	// budget is what the DB tracks to keep Options.MemoryLimit.
	budget    memoryBudget
	counters  dbCounters
	commit    commitPipeline
	oracle    oracle // conflict detection of transactions (oracle.go)
	events    *events
	lastJobID atomic.Int64 // numbers flushes and compactions for events

	// tableCache keeps the open tables' file handles, at most
	// Options.MaxOpenFiles less ten (table_cache.go).
	tableCache *tableCache
	// blobs are the open blob files (blob_files.go).
	blobs blobFiles

	// visibleSeq is the sequence number of the newest write readers see.
	visibleSeq atomic.Uint64

	// manifestMu serializes manifest appends (flushes), which fsync, so
	// that they do not hold mu while they wait for the disk.
	manifestMu    sync.Mutex
	manifest      *manifest.Log
	manifestEdits uint64 // edits appended; guarded by manifestMu

	bgDone sync.WaitGroup
	// deleter removes the files the running DB makes obsolete, off its
	// locks (obsolete_deleter.go); started once Open holds the LOCK,
	// stopped before Close releases it.
	deleter deleter
	// compactCtx is cancelled by Close, to interrupt a compaction.
	compactCtx    context.Context
	cancelCompact context.CancelFunc

	// writers counts the writes in progress (enterWriter), which Close
	// waits for once it has set closing; see enterWriter.
	writers atomic.Int64
	closing atomic.Bool

	mu struct {
		sync.Mutex
		// cond is broadcast when an immutable memtable is flushed, when a
		// background error occurs, and when Close starts.
		cond   sync.Cond
		closed bool

		// Background errors (background.go). bgErr is the sticky error of
		// a corruption or an unrecoverable manifest failure: every later
		// write returns it. walErr stops writes until the WAL is retired;
		// resume asks for that (DB.Resume). flushRetry and compactRetry
		// are failing jobs' errors and backoffs. orphans are the tables
		// of edits whose manifest append failed.
		bgErr        error
		walErr       error
		resume       bool
		flushRetry   retry
		compactRetry retry
		orphans      []uint64
		blobOrphans  []uint64 // as orphans, of blob files

		mem     *memtable.Memtable
		memWAL  uint64 // file number of mem's WAL
		wal     *record.Writer
		walFile vfs.File
		imm     []*immutable // oldest first, each waiting for its flush

		lastSeq     base.SeqNum // the last sequence number handed out
		nextFileNum uint64

		current *version
		// readState is the read state of the memtables and current now,
		// which reads take references on (read_state.go).
		readState *readState
		versions  map[*version]struct{} // every version with references
		tables    map[uint64]*table     // every open table, by file number
		// versionSeq numbers the versions installed (version.seq).
		versionSeq uint64
		// retired are the tables a version has left, each kept open until
		// no version with references lists it (unrefVersionLocked).
		retired []*table
		// pendingTables are the tables an edit being appended adds,
		// opened before the append (see applyEditLocked); no version
		// lists them yet, so unrefVersionLocked leaves them alone.
		pendingTables map[uint64]*table
		snapshots     map[*Snapshot]struct{}
		// compactions are the compactions running now (compact.go).
		compactions []*compaction.Compaction
		// manualCompacting is set while DB.Compact runs: background
		// compactions wait for it.
		manualCompacting bool
		// ingesting is set while DB.Ingest chooses its tables' levels and
		// appends its edit: no compaction is picked meanwhile, so none
		// writes into a level around a table it did not see (ingest.go).
		ingesting bool
		// pickGen changes whenever what the compaction picker looks at
		// may have: a new version, a compaction begun or ended, a retry
		// due, a DB.Compact ended.
		pickGen uint64
		// pacer paces writes while L0 is past its slowdown trigger.
		pacer pacer
		// installedEdit is the manifestEdits count of the current version.
		installedEdit uint64
	}
}

// immutable is a full memtable waiting to be flushed, with its WAL.
type immutable struct {
	mem    *memtable.Memtable
	walNum uint64
}

func (d *DB) checkOpen() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return ErrClosed
	}
	return nil
}

// newJobID numbers a flush or compaction, for its events.
func (d *DB) newJobID() int { return int(d.lastJobID.Add(1)) }

// Flush makes the mutable memtable immutable, if it holds anything, and
// waits until every immutable memtable is flushed to a table. If a flush
// fails meanwhile it returns that error; the flush is retried in the
// background all the same (see Resume).
func (d *DB) Flush() error {
	// The rotation goes through the commit pipeline: only its leader may
	// switch the WAL that writers append to.
	if err := d.enterWriter(); err != nil {
		return err
	}
	// Failures are counted from before the rotation: the flush it starts
	// may fail before this call waits for it.
	d.mu.Lock()
	failures := d.mu.flushRetry.total
	d.mu.Unlock()
	err := d.commit.commit(&commitRequest{flush: true}, d.applyGroup)
	d.exitWriter()
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waitFlushedLocked(failures)
}

// waitFlushedLocked waits until no immutable memtable is left, and
// returns nil then; or the reason it stops waiting first: Close, the
// sticky error, or a flush failed since flushRetry.total was failures.
// d.mu is held, and released while it waits.
func (d *DB) waitFlushedLocked(failures uint64) error {
	for len(d.mu.imm) > 0 && d.mu.bgErr == nil && !d.mu.closed && d.mu.flushRetry.total == failures {
		d.mu.cond.Wait()
	}
	switch {
	case d.mu.closed:
		return ErrClosed
	case d.mu.bgErr != nil:
		return d.mu.bgErr
	case d.mu.flushRetry.total != failures:
		return d.mu.flushRetry.last
	}
	return nil
}

// Close waits for writes in progress and for a flush in progress, then
// closes the DB's files, waits until the files the DB made obsolete are
// deleted, and releases its directory. It does not flush the
// memtable: its writes are in the WAL, which the next Open replays. It
// returns the error that stops writes, if any: a failed WAL write (writes
// acknowledged without Sync since the WAL's last sync may then be lost) or
// a corruption. A flush or compaction still failing loses nothing — what
// it would have written is in the WALs or the tables — and is not
// reported again. Every later call returns ErrClosed.
//
// An Iterator still open keeps reading, whatever Options.MaxOpenFiles
// says: the memtables and tables it reads stay in memory, and each of its
// tables and blob files keeps its file open (one descriptor a file,
// outside the caches' bounds), until the Iterator is closed. An Open of the same directory
// after Close may delete those files; the open descriptors still read
// them, on the systems bloomkv supports. Should the system refuse a
// descriptor (too many open files), the Iterator reports an error wrapping
// fs.ErrClosed for that table's reads, never ErrCorruption.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.mu.closed = true
	d.closing.Store(true)
	if d.cancelCompact != nil { // nil when read-only
		d.cancelCompact()
	}
	d.mu.cond.Broadcast()
	for d.writers.Load() > 0 {
		d.mu.cond.Wait()
	}
	d.mu.Unlock()
	d.bgDone.Wait()

	d.mu.Lock()
	var errs []error
	switch {
	case d.mu.bgErr != nil:
		// Reported even if a write reported it already: a background
		// job may have failed after the last write.
		errs = append(errs, d.mu.bgErr)
	case d.mu.walErr != nil:
		errs = append(errs, d.mu.walErr)
	case d.mu.wal != nil:
		errs = append(errs, d.mu.wal.Sync())
	}
	if d.mu.walFile != nil {
		errs = append(errs, d.mu.walFile.Close())
	}
	if d.manifest != nil {
		d.manifestMu.Lock()
		errs = append(errs, d.manifest.Close())
		d.manifestMu.Unlock()
	}
	// The DB's references to its read state and to the current version.
	// Its tables close now, unless a reader left open (an iterator) holds
	// the read state or a version that lists them: they then stay open,
	// files and memory, until it is closed.
	d.dropReadStateLocked(d.mu.readState)
	d.mu.readState = nil
	errs = append(errs, d.unrefVersionLocked(d.mu.current))
	// The tables still open are a reader's: each keeps its file open from
	// now on, outside the table cache, so that no eviction closes it and an
	// Open after this Close, which may delete it, does not take it from
	// the reader. A file that cannot be kept open says why on its reads:
	// the reader's error, not Close's.
	for _, t := range d.mu.tables {
		_ = t.file.keepOpen()
	}
	d.keepBlobsOpenLocked() // and their blob files
	// The DB's references to its memtables; a reader still open keeps its
	// own, so what it reads stays valid until it is closed.
	d.mu.mem.Unref()
	for _, imm := range d.mu.imm {
		imm.mem.Unref()
	}
	d.mu.imm = nil
	d.memtables.Close() // the chunks it keeps; a reader's memtable frees its own
	d.cache.Close()     // its memory is returned once open iterators release their blocks
	d.mu.Unlock()
	// The files the DB made obsolete go before the LOCK does, so that none
	// is deleted once another DB may have the directory; and with d.mu
	// released, since a deletion's event may call the DB (which then
	// returns ErrClosed).
	d.deleter.stop()
	errs = append(errs, d.lock.Close())
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("bloomkv: close: %w", err)
		}
	}
	return nil
}

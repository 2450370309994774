package bloomkv

import (
	"fmt"
	"sync"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// The write path: Put, Delete and Apply hand their batch to the commit
// pipeline (commit.go), whose leader runs applyGroup: room in the memtable
// (makeRoomLocked, which rotates a full memtable to a new WAL, and stalls
// or paces writes when flushes and compactions fall behind), sequence
// numbers, the WAL record and its fsync, the memtable insert, and then the
// sequence number readers see.

// Put sets key to value. With a nil or Sync WriteOptions it returns once the
// write is durable.
func (d *DB) Put(key, value []byte, opts *WriteOptions) error {
	w := getSingleWrite()
	defer putSingleWrite(w)
	if err := w.batch.Set(key, value); err != nil {
		return err
	}
	return d.apply(&w.batch, &w.req, opts)
}

// Delete removes key. Deleting a missing key is not an error.
func (d *DB) Delete(key []byte, opts *WriteOptions) error {
	w := getSingleWrite()
	defer putSingleWrite(w)
	if err := w.batch.Delete(key); err != nil {
		return err
	}
	return d.apply(&w.batch, &w.req, opts)
}

// DeleteRange removes every key in [start, end): start inclusive, end
// exclusive. It writes one range tombstone, whatever the number of keys it
// covers; reads stop seeing the keys at once, and compactions reclaim
// their space. With a nil or Sync WriteOptions it returns once the
// deletion is durable. It returns an *ArgumentError for an empty range
// (start ≥ end) or a key over MaxKeySize.
func (d *DB) DeleteRange(start, end []byte, opts *WriteOptions) error {
	w := getSingleWrite()
	defer putSingleWrite(w)
	if err := w.batch.DeleteRange(start, end); err != nil {
		return err
	}
	return d.apply(&w.batch, &w.req, opts)
}

// singleWrite is the batch and commit request of one Put or Delete, reused
// through singleWrites: a single-key write then allocates nothing on its way
// to the memtable in the common case, where it allocated a Batch, its bytes,
// a commitRequest and its channel every time.
type singleWrite struct {
	batch Batch
	req   commitRequest
}

// maxPooledBatch bounds the batch buffer a pooled singleWrite keeps, so that
// one big value does not stay pinned in the pool, while the Puts of values
// up to about that size reuse their buffer: a buffer of at most 4 KiB, the
// bound before, made every Put of a 4 KiB value allocate it again, and a
// fill of 500,000 such values (the peers' settings, alternating runs) ran
// 57,639 and 56,812 writes a second at 6.5–6.8 CPU seconds with 64 KiB
// against 45,226 and 42,024 at 12.3–12.7.
const maxPooledBatch = 64 << 10

var singleWrites = sync.Pool{New: func() any { return new(singleWrite) }}

func getSingleWrite() *singleWrite {
	w := singleWrites.Get().(*singleWrite)
	w.batch.Reset()
	return w
}

// putSingleWrite returns w to the pool. Only after commit returned: by then
// the commit pipeline holds no reference to w that it will use again.
func putSingleWrite(w *singleWrite) {
	if cap(w.batch.data) > maxPooledBatch {
		w.batch.data = nil
	}
	singleWrites.Put(w)
}

// Apply commits every write of b atomically: readers and recovery see all of
// them or none. b may be reused once Apply returns.
func (d *DB) Apply(b *Batch, opts *WriteOptions) error {
	return d.apply(b, new(commitRequest), opts)
}

// apply commits b with req, a request that is not in use (its channel, if
// any, is empty, as commit leaves it), and a transaction's reads, if req
// carries them.
func (d *DB) apply(b *Batch, req *commitRequest, opts *WriteOptions) error {
	if b.Len() == 0 {
		return d.checkOpen()
	}
	if err := d.checkMerges(b); err != nil {
		return err
	}
	if err := d.enterWriter(); err != nil {
		return err
	}
	defer d.exitWriter()
	if len(b.ttls) > 0 {
		b.stampExpiries(d.nowNanos())
	}
	*req = commitRequest{batch: b, sync: opts.sync(), wake: req.wake, txn: req.txn}
	return d.commit.commit(req, d.applyGroup)
}

// enterWriter admits a write, or returns why the DB takes none; Close waits
// for every admitted write to exitWriter. It takes no lock, so that a
// write takes d.mu once, in applyGroup: a flush or a compaction holding it
// (or descheduled while holding it) delays a write at one point rather
// than three, and no write wakes the loops that wait on d.mu.cond. A
// background error stops the write in makeRoomLocked, under d.mu.
//
// INVARIANT: a write Close does not see in d.writers sees d.closing: each
// side stores its own word before it loads the other's (sequentially
// consistent atomics), so Close never returns with a write admitted.
func (d *DB) enterWriter() error {
	d.writers.Add(1)
	switch {
	case d.closing.Load():
		d.exitWriter()
		return ErrClosed
	case d.opts.ReadOnly:
		d.exitWriter()
		return ErrReadOnly
	}
	return nil
}

// exitWriter ends a write that enterWriter admitted, waking Close if it
// waits for it.
func (d *DB) exitWriter() {
	if d.writers.Add(-1) == 0 && d.closing.Load() {
		d.mu.Lock()
		d.mu.cond.Broadcast()
		d.mu.Unlock()
	}
}

// applyGroup commits one group of batches: it is the leader's work in the
// commit pipeline, so it never runs concurrently with itself.
func (d *DB) applyGroup(group []*commitRequest) {
	fail := func(err error) {
		for _, r := range group {
			r.err = err
		}
	}
	// Transactions first: a request that conflicts gets ErrConflict, and
	// no sequence number, and writes nothing (r.writes is false).
	rec := d.oracle.check(group)
	size, sync, flush := 0, false, false
	for _, r := range group {
		if r.err != nil {
			continue
		}
		size += r.size()
		sync = sync || r.sync
		flush = flush || r.flush
	}

	d.mu.Lock()
	if err := d.makeRoomLocked(int64(size)); err != nil {
		d.mu.Unlock()
		fail(err)
		return
	}
	last := groupSeqNums(group, d.mu.lastSeq)
	d.mu.lastSeq = last
	mem, w := d.mu.mem, d.mu.wal
	d.mu.Unlock()

	// The group's records go into the WAL writer's block buffer, which
	// writes each 32 KiB block as it fills. A group with a Sync write then
	// writes what is buffered and fsyncs, once for the whole group; a group
	// without one returns with its records possibly still buffered in this
	// process (see WriteOptions): a write(2) per group, which is a write per
	// Put for a single writer, cost more than the memtable insert.
	//
	// The block's write(2) is the write's own, not a goroutine's
	// (record.NewBackgroundWriter): that goroutine, on a machine whose
	// processors the writer, the flush and compactions keep busy, ran
	// only when the writer blocked, and then held the processor the
	// writer woke to wait for: filling 2M keys of 1 KiB values, p99.9
	// 120–207 µs against 77–83 µs with the writes here, alternating.
	var err error
	for _, r := range group {
		if !r.writes() {
			continue
		}
		if _, err = w.WriteRecord(r.batch.data); err != nil {
			break
		}
	}
	if err == nil && sync {
		err = w.Sync()
		d.counters.walSyncs.Add(1)
	}
	if err != nil {
		d.mu.Lock()
		err = d.walFailedLocked(err)
		d.mu.Unlock()
		fail(err)
		return
	}
	d.counters.walBytes.Add(uint64(size))

	for _, r := range group {
		if r.writes() {
			batchrepr.Decode(r.batch.data, func(e batchrepr.Entry) { applyEntry(mem, e) })
			d.counters.writes.Add(uint64(r.batch.Len()))
			d.counters.batches.Add(1)
		}
	}
	// INVARIANT: published only after every write up to last is in mem.
	d.visibleSeq.Store(uint64(last))
	d.oracle.committed(group, last, rec)

	if flush {
		d.mu.Lock()
		if !d.mu.mem.Empty() {
			if err := d.rotateMemtableLocked(); err != nil {
				for _, r := range group {
					if r.flush { // the batches are committed; only Flush failed
						r.err = err
					}
				}
			}
		}
		d.mu.Unlock()
	}
}

// applyEntry adds one decoded write to mem: a range deletion beside the
// point versions, every other kind among them. The commit pipeline and WAL
// replay both insert through it.
func applyEntry(mem *memtable.Memtable, e batchrepr.Entry) {
	if e.Kind == base.KindRangeDelete {
		mem.AddRangeDel(e.Seq, e.Key, e.Value)
		return
	}
	mem.Add(e.Seq, e.Kind, e.Key, e.Value)
}

// makeRoomLocked makes sure the mutable memtable can take size more bytes,
// rotating it when full. When MaxImmutableMemtables full memtables already
// wait for their flush, or L0 has L0StopTrigger tables, the write waits (a
// write stall) until flush or compaction catches up — or fails, if the
// flush or compaction it would wait for is failing (see background.go);
// from L0SlowdownTrigger tables it is paced (pacing.go). So memory and L0
// stay bounded under any write load. d.mu is held.
func (d *DB) makeRoomLocked(size int64) error {
	var stalled time.Time
	stallReported, paced := false, false
	stall := func(reason string) {
		if stalled.IsZero() {
			stalled = time.Now()
		}
		if !stallReported {
			stallReported = true
			d.events.writeStallBegin(WriteStallBeginInfo{Reason: reason})
		}
	}
	defer func() {
		if !stalled.IsZero() {
			d.counters.stalls.Add(1)
			d.counters.stallNanos.Add(uint64(time.Since(stalled)))
		}
		if stallReported {
			d.events.writeStallEnd()
		}
	}()
	for {
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		switch {
		case l0Stop(d):
			// Every read probes every L0 table: past the stop trigger,
			// writes wait for compaction rather than let reads slow down
			// without bound.
			if err := d.mu.compactRetry.err; err != nil {
				return fmt.Errorf("bloomkv: L0 is full and compactions fail: %w", err)
			}
			stall("L0 stop trigger")
			d.mu.cond.Wait()
		case d.mu.mem.Empty() || d.mu.mem.ApproximateSize()+size <= d.opts.MemtableSize:
			if !paced {
				// Paced once per group: a group that waited finds the
				// state changed, and is charged for its bytes only once.
				paced = true
				if d.paceLocked(size) {
					continue
				}
			}
			return nil
		case len(d.mu.imm) >= d.opts.MaxImmutableMemtables:
			if err := d.mu.flushRetry.err; err != nil {
				return fmt.Errorf("bloomkv: the memtables are full and flushes fail: %w", err)
			}
			stall("memtables full")
			d.mu.cond.Wait()
		default:
			if err := d.rotateMemtableLocked(); err != nil {
				return err
			}
		}
	}
}

// rotateMemtableLocked makes the mutable memtable immutable and starts a new
// one with a new WAL. The old WAL is synced first: a WAL is then complete
// when a newer one exists, so recovery finds a torn tail, if any, only in
// the newest, and unsynced writes can never be lost from the middle of the
// history. d.mu is held, by the commit pipeline's leader: only it may switch
// the WAL that writers append to.
func (d *DB) rotateMemtableLocked() error {
	if err := d.mu.wal.Sync(); err != nil {
		return d.walFailedLocked(err)
	}
	// A new WAL that cannot be made leaves the old one intact (and just
	// synced): the rotation fails, and the next write that needs it tries
	// again. Only the old WAL's own failure stops writes.
	num := d.mu.nextFileNum
	d.mu.nextFileNum++
	f, err := d.createWAL(num)
	if err != nil {
		return err
	}
	old := d.mu.walFile
	d.mu.imm = append(d.mu.imm, &immutable{mem: d.mu.mem, walNum: d.mu.memWAL})
	d.mu.mem = d.memtables.New()
	d.updateReadStateLocked()
	d.mu.memWAL, d.mu.wal, d.mu.walFile = num, record.NewWriter(f), f
	d.mu.cond.Broadcast() // wakes the flush loop
	// Every byte of the old WAL is synced: a failure to close it loses
	// nothing, and is only reported.
	if err := old.Close(); err != nil {
		d.events.backgroundError(BackgroundErrorInfo{Op: "WAL", Err: fmt.Errorf("bloomkv: WAL: %w", err)})
	}
	return nil
}

// createWAL creates the WAL numbered num and makes its name durable; on
// failure it leaves no file.
func (d *DB) createWAL(num uint64) (vfs.File, error) {
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeWAL, num)
	f, err := d.fs.Create(path)
	if err == nil {
		if err = d.fs.SyncDir(d.dirname); err != nil {
			f.Close()
			d.fs.Remove(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bloomkv: new WAL: %w", err)
	}
	d.events.walCreated(WALCreateInfo{Path: path, FileNum: num})
	return f, nil
}

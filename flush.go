package bloomkv

import (
	"fmt"
	"slices"
	"time"

	"github.com/bloomkv/bloomkv/compaction"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/vfs"
	"github.com/bloomkv/bloomkv/memtable"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/wal"
)

// makeRoomLocked makes sure the mutable memtable can take size more bytes,
// rotating it when full. When MaxImmutableMemtables full memtables already
// wait for their flush, or L0 has L0StopTrigger tables, the write waits (a
// write stall) until flush or compaction catches up — or fails, if the
// flush or compaction it would wait for is failing (see background.go);
// from L0SlowdownTrigger tables it waits a millisecond. So memory and L0
// stay bounded under any write load. d.mu is held.
func (d *DB) makeRoomLocked(size int64) error {
	var stalled time.Time
	stallReported, slowed := false, false
	stall := func(reason string) {
		if stalled.IsZero() {
			stalled = time.Now()
		}
		if reason != "" && !stallReported {
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
			if len(d.mu.current.Levels[0]) >= d.opts.L0SlowdownTrigger && !slowed {
				// Past the slowdown trigger each write group gives
				// compaction a millisecond, so that L0 rarely reaches
				// the stop trigger and writes slow down smoothly.
				slowed = true
				stall("")
				d.mu.Unlock()
				time.Sleep(time.Millisecond)
				d.mu.Lock()
				continue
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
	d.mu.mem = memtable.New(d.opts.MemtableSize)
	d.mu.memWAL, d.mu.wal, d.mu.walFile = num, wal.NewWriter(f), f
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

// flushLoop flushes immutable memtables, oldest first, and retires a failed
// WAL when that is due (see background.go), until Close or a fatal error.
// A failed flush is retried after a backoff.
func (d *DB) flushLoop() {
	defer d.bgDone.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		for !d.mu.closed && d.mu.bgErr == nil && !d.flushDueLocked() {
			d.mu.cond.Wait()
		}
		if d.mu.closed || d.mu.bgErr != nil {
			return
		}
		if d.walRecoveryDueLocked() && (d.mu.wal != nil || len(d.mu.imm) == 0) {
			if _, err := d.recoverWALLocked(); err != nil {
				d.jobFailedLocked("WAL", &d.mu.flushRetry, err)
			}
			continue
		}
		if err := d.flushOldestLocked(); err != nil {
			d.jobFailedLocked("flush", &d.mu.flushRetry, err)
			continue
		}
		d.jobSucceededLocked("flush", &d.mu.flushRetry)
	}
}

// flushDueLocked reports whether the flush loop has work it may do now.
func (d *DB) flushDueLocked() bool {
	return d.mu.flushRetry.due() && (len(d.mu.imm) > 0 || d.walRecoveryDueLocked())
}

// flushOldestLocked writes the oldest immutable memtable to an L0 table and
// installs it with one manifest edit. d.mu is held, and released while the
// table is written and the edit synced.
func (d *DB) flushOldestLocked() error {
	imm := d.mu.imm[0]
	num := d.mu.nextFileNum
	d.mu.nextFileNum++
	bitsPerKey := compaction.BitsPerKeyForLevel(d.mu.current.Version, 0, &d.opts.compaction)
	job := d.newJobID()
	d.events.flushBegin(FlushInfo{JobID: job})
	start := time.Now()
	d.mu.Unlock()
	meta, err := d.writeTable(job, "flush", num, imm.mem, bitsPerKey)
	d.mu.Lock()
	info := FlushInfo{JobID: job, Output: tableInfo(0, meta)}
	if err == nil {
		// WALs older than the next memtable's are no longer needed.
		logNum := d.mu.memWAL
		if len(d.mu.imm) > 1 {
			logNum = d.mu.imm[1].walNum
		}
		edit := &manifest.VersionEdit{LogNumber: logNum}
		if meta != nil {
			edit.NewFiles = []manifest.NewFile{{Level: 0, Meta: meta}}
		}
		if err = d.applyEditLocked(edit); err == nil {
			d.mu.imm = d.mu.imm[1:]
			imm.mem.Unref() // the DB's reference; readers may still hold theirs
			d.counters.flushes.Add(1)
			if meta != nil {
				d.counters.compactions.bytesWritten[0].Add(meta.Size)
			}
			d.mu.cond.Broadcast()
			d.removeObsoleteWALsLocked(logNum)
		}
	}
	info.Duration, info.Err = time.Since(start), err
	d.events.flushEnd(info)
	return err
}

// writeTable writes mem's entries to the table numbered num with filters of
// bitsPerKey, syncs it and its directory entry, and returns its metadata;
// nil for an empty memtable. On failure it removes the file. job and reason
// are for the TableCreated event.
func (d *DB) writeTable(job int, reason string, num uint64, mem *memtable.Memtable, bitsPerKey float64) (*manifest.FileMetadata, error) {
	if mem.Empty() {
		return nil, nil
	}
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, num)
	f, err := d.fs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bloomkv: flush: %w", err)
	}
	d.events.tableCreated(TableCreateInfo{JobID: job, Reason: reason, Path: path, FileNum: num})
	fail := func(err error) (*manifest.FileMetadata, error) {
		f.Close()
		d.removeFile(job, manifest.FileTypeTable, num)
		return nil, fmt.Errorf("bloomkv: flush to %s: %w", path, err)
	}
	opts := d.opts.compaction.TableOptions
	opts.BitsPerKey = bitsPerKey
	w, err := sstable.NewWriter(f, opts)
	if err != nil {
		return fail(err)
	}
	it := mem.NewIter()
	for ok := it.First(); ok; ok = it.Next() {
		if err := w.Add(it.Key(), it.Value()); err != nil {
			return fail(err)
		}
	}
	it.Close()
	props, err := w.Finish()
	if err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	info, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := d.fs.SyncDir(d.dirname); err != nil {
		return fail(err)
	}
	return &manifest.FileMetadata{
		FileNum:          num,
		Size:             uint64(info.Size()),
		Smallest:         props.Smallest,
		Largest:          props.Largest,
		SmallestSeqNum:   props.SmallestSeqNum,
		LargestSeqNum:    props.LargestSeqNum,
		FilterBitsPerKey: props.FilterBitsPer,
	}, nil
}

// tableInfo describes the table meta records, at level; a zero TableInfo
// for nil.
func tableInfo(level int, meta *manifest.FileMetadata) TableInfo {
	if meta == nil {
		return TableInfo{}
	}
	return TableInfo{FileNum: meta.FileNum, Level: level, Size: meta.Size,
		Smallest: meta.Smallest.UserKey, Largest: meta.Largest.UserKey}
}

// applyEditLocked appends edit to the manifest and installs the version it
// makes. d.mu is held, and released during the manifest's fsync.
//
// The tables the edit adds are opened first, so that once the edit is
// durable nothing can fail: a flush or compaction that failed after its
// edit was appended would be retried over data already installed. A failed
// append breaks the manifest: the edit may or may not survive a crash, so
// its tables become orphans, deleted only once the next edit has replaced
// the manifest by one without it (replaceBrokenManifest).
//
// Flushes and compactions append concurrently, so the counters are filled
// in here, in manifest order (they must never go back), and a version is
// installed only if no later edit's version was installed first: each
// version contains every edit before it.
func (d *DB) applyEditLocked(edit *manifest.VersionEdit) error {
	var opened []uint64
	for _, nf := range edit.NewFiles {
		num := nf.Meta.FileNum
		if d.mu.tables[num] != nil || d.mu.pendingTables[num] != nil {
			continue // a trivial move's table, open already
		}
		t, err := d.openTable(nf.Meta)
		if err != nil {
			d.closePendingLocked(opened)
			return fmt.Errorf("bloomkv: opening the new table %06d: %w", num, err)
		}
		d.mu.pendingTables[num] = t
		opened = append(opened, num)
	}

	d.manifestMu.Lock() // lock order: d.mu, then manifestMu
	var replaceNum uint64
	broken := d.manifest.Err() != nil
	if broken {
		replaceNum = d.mu.nextFileNum
		d.mu.nextFileNum++
	}
	edit.NextFileNumber = d.mu.nextFileNum
	edit.LastSeqNum = d.mu.lastSeq
	d.mu.Unlock()
	var err error
	replaced, fatal := false, false
	if broken {
		replaced, fatal, err = d.replaceBrokenManifest(replaceNum, edit.NextFileNumber, edit.LastSeqNum)
	}
	var state manifest.State
	if err == nil {
		state, err = d.manifest.Append(edit)
		if err != nil {
			err = fmt.Errorf("bloomkv: manifest: %w", err)
		}
	}
	d.manifestEdits++
	ticket := d.manifestEdits
	d.manifestMu.Unlock()
	d.mu.Lock()
	if replaced {
		d.removeOrphansLocked() // the new manifest records none of them
	}
	if fatal {
		d.fatalLocked("manifest", err)
	}
	if err != nil {
		d.closePendingLocked(opened)
		for _, nf := range edit.NewFiles {
			if slices.Contains(opened, nf.Meta.FileNum) {
				d.mu.orphans = append(d.mu.orphans, nf.Meta.FileNum)
			}
		}
		return err
	}
	if ticket < d.mu.installedEdit {
		// A later edit's version, which includes this one, is in: it took
		// the tables it lists; any left are obsolete already.
		d.closePendingLocked(opened)
		return nil
	}
	d.mu.installedEdit = ticket
	d.installVersionLocked(state.Version)
	d.maybeRotateManifestLocked()
	return nil
}

// closePendingLocked closes the tables of nums still in d.mu.pendingTables:
// opened for an edit that failed or that no version lists. Their files are
// left to the caller. d.mu is held.
func (d *DB) closePendingLocked(nums []uint64) {
	for _, num := range nums {
		if t := d.mu.pendingTables[num]; t != nil {
			delete(d.mu.pendingTables, num)
			t.close()
		}
	}
}

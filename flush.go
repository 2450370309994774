package bloomkv

import (
	"fmt"

	"github.com/bloomkv/bloomkv/compaction"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/memtable"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/wal"
)

// makeRoomLocked makes sure the mutable memtable can take size more bytes,
// rotating it when full. When MaxImmutableMemtables full memtables already
// wait for their flush, or L0 has L0StopTrigger tables, the write waits (a
// write stall) until flush or compaction catches up; from
// L0SlowdownTrigger tables it waits a millisecond. So memory and L0 stay
// bounded under any write load. d.mu is held.
func (d *DB) makeRoomLocked(size int64) error {
	var stalled time.Time
	slowed := false
	for {
		switch {
		case d.mu.closed:
			return ErrClosed
		case d.mu.bgErr != nil:
			return d.mu.bgErr
		case l0Stop(d):
			// Every read probes every L0 table: past the stop trigger,
			// writes wait for compaction rather than let reads slow down
			// without bound.
			if stalled.IsZero() {
				stalled = time.Now()
			}
			d.mu.cond.Wait()
		case d.mu.mem.Empty() || d.mu.mem.ApproximateSize()+size <= d.opts.MemtableSize:
			if len(d.mu.current.Levels[0]) >= d.opts.L0SlowdownTrigger && !slowed {
				// Past the slowdown trigger each write group gives
				// compaction a millisecond, so that L0 rarely reaches
				// the stop trigger and writes slow down smoothly.
				slowed = true
				if stalled.IsZero() {
					stalled = time.Now()
				}
				d.mu.Unlock()
				time.Sleep(time.Millisecond)
				d.mu.Lock()
				continue
			}
			if !stalled.IsZero() {
				d.counters.stalls.Add(1)
				d.counters.stallNanos.Add(uint64(time.Since(stalled)))
			}
			return nil
		case len(d.mu.imm) >= d.opts.MaxImmutableMemtables:
			if stalled.IsZero() {
				stalled = time.Now()
			}
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
		err = fmt.Errorf("bloomkv: WAL: %w", err)
		d.mu.bgErr = err
		return err
	}
	num := d.mu.nextFileNum
	d.mu.nextFileNum++
	f, err := d.fs.Create(manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeWAL, num))
	if err == nil {
		if err = d.fs.SyncDir(d.dirname); err != nil {
			f.Close()
		}
	}
	if err != nil {
		err = fmt.Errorf("bloomkv: new WAL: %w", err)
		d.mu.bgErr = err
		return err
	}
	// The old WAL is closed after the switch, so that, even if its Close
	// fails, Close of the DB closes the new one and not the old one again.
	old := d.mu.walFile
	d.mu.imm = append(d.mu.imm, &immutable{mem: d.mu.mem, walNum: d.mu.memWAL})
	d.mu.mem = memtable.New(d.opts.MemtableSize)
	d.mu.memWAL, d.mu.wal, d.mu.walFile = num, wal.NewWriter(f), f
	d.mu.cond.Broadcast() // wakes the flush loop
	if err := old.Close(); err != nil {
		d.mu.bgErr = fmt.Errorf("bloomkv: WAL: %w", err)
		return d.mu.bgErr
	}
	return nil
}

// flushLoop flushes immutable memtables, oldest first, until Close.
func (d *DB) flushLoop() {
	defer d.bgDone.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		for len(d.mu.imm) == 0 && !d.mu.closed && d.mu.bgErr == nil {
			d.mu.cond.Wait()
		}
		if d.mu.closed || d.mu.bgErr != nil {
			return
		}
		if err := d.flushOldestLocked(); err != nil {
			d.mu.bgErr = err
			d.mu.cond.Broadcast()
			return
		}
	}
}

// flushOldestLocked writes the oldest immutable memtable to an L0 table and
// installs it with one manifest edit. d.mu is held, and released while the
// table is written and the edit synced.
func (d *DB) flushOldestLocked() error {
	imm := d.mu.imm[0]
	num := d.mu.nextFileNum
	d.mu.nextFileNum++
	bitsPerKey := compaction.BitsPerKeyForLevel(d.mu.current.Version, 0, &d.opts.compaction)
	d.mu.Unlock()
	meta, err := d.writeTable(num, imm.mem, bitsPerKey)
	d.mu.Lock()
	if err != nil {
		return err
	}

	// WALs older than the next memtable's are no longer needed.
	logNum := d.mu.memWAL
	if len(d.mu.imm) > 1 {
		logNum = d.mu.imm[1].walNum
	}
	edit := &manifest.VersionEdit{LogNumber: logNum}
	if meta != nil {
		edit.NewFiles = []manifest.NewFile{{Level: 0, Meta: meta}}
	}
	if err := d.applyEditLocked(edit); err != nil {
		return err
	}
	d.mu.imm = d.mu.imm[1:]
	imm.mem.Unref() // the DB's reference; readers may still hold theirs
	d.counters.flushes.Add(1)
	if meta != nil {
		d.counters.compactions.bytesWritten[0].Add(meta.Size)
	}
	d.mu.cond.Broadcast()
	d.removeObsoleteWALsLocked(logNum)
	return nil
}

// writeTable writes mem's entries to the table numbered num with filters of
// bitsPerKey, syncs it and its directory entry, and returns its metadata;
// nil for an empty memtable.
func (d *DB) writeTable(num uint64, mem *memtable.Memtable, bitsPerKey float64) (*manifest.FileMetadata, error) {
	if mem.Empty() {
		return nil, nil
	}
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, num)
	f, err := d.fs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bloomkv: flush: %w", err)
	}
	fail := func(err error) (*manifest.FileMetadata, error) {
		f.Close()
		d.fs.Remove(path)
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

// applyEditLocked appends edit to the manifest and installs the version it
// makes, opening the tables it adds. d.mu is held, and released during the
// manifest's fsync. A failed append is sticky: the edit may or may not
// survive a crash, so nothing it adds or retires may be deleted after it.
//
// Flushes and compactions append concurrently, so the counters are filled
// in here, in manifest order (they must never go back), and a version is
// installed only if no later edit's version was installed first: each
// version contains every edit before it.
func (d *DB) applyEditLocked(edit *manifest.VersionEdit) error {
	d.manifestMu.Lock() // lock order: d.mu, then manifestMu
	edit.NextFileNumber = d.mu.nextFileNum
	edit.LastSeqNum = d.mu.lastSeq
	d.mu.Unlock()
	state, err := d.manifest.Append(edit)
	d.manifestEdits++
	ticket := d.manifestEdits
	d.manifestMu.Unlock()
	d.mu.Lock()
	if err != nil {
		return fmt.Errorf("bloomkv: manifest: %w", err)
	}
	if ticket < d.mu.installedEdit {
		return nil // a later edit's version, which includes this one, is in
	}
	d.mu.installedEdit = ticket
	for _, f := range state.Version.Files() {
		if err := d.openTableLocked(f); err != nil {
			return err
		}
	}
	d.installVersionLocked(state.Version)
	return nil
}

package bloomkv

import (
	"fmt"
	"slices"
	"time"

	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

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
	filter := compaction.FilterForLevel(d.mu.current.Version, 0, &d.opts.compaction, num)
	job := d.newJobID()
	d.events.flushBegin(FlushInfo{JobID: job})
	start := time.Now()
	d.mu.Unlock()
	meta, blobMeta, err := d.writeTable(job, "flush", num, imm.mem, filter)
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
		if blobMeta != nil {
			edit.NewBlobFiles = []*manifest.BlobFileMetadata{blobMeta}
		}
		if err = d.applyEditLocked(edit); err == nil {
			// Delete, not a reslice: the slot the flushed memtable leaves
			// must not keep it, and its tree, live for the garbage
			// collector (a 4 MiB memtable's tree is 1.7 MB of heap).
			d.mu.imm = slices.Delete(d.mu.imm, 0, 1)
			imm.mem.Unref() // the DB's reference; readers may still hold theirs
			d.updateReadStateLocked()
			d.counters.flushes.Add(1)
			if meta != nil {
				d.counters.compactions.bytesWritten[0].Add(meta.Size)
				d.counters.compactions.bytesFlushed.Add(meta.Size)
			}
			d.mu.cond.Broadcast()
			d.removeObsoleteWALsLocked(logNum)
		}
	}
	info.Duration, info.Err = time.Since(start), err
	d.events.flushEnd(info)
	return err
}

// writeTable writes mem's entries and range tombstones to the table
// numbered num with the filter filter, its values of at least
// Options.ValueSeparation.MinSize bytes to a blob file numbered when the
// first comes, syncs them and their directory entries, and returns their
// metadata; nil for an empty memtable (no entry and no range tombstone) or
// no blob file. On failure it hands the files to the deleter. job and
// reason are for the TableCreated and BlobFileCreated events. d.mu is not
// held.
func (d *DB) writeTable(job int, reason string, num uint64, mem *memtable.Memtable, filter sstable.FilterSpec) (*manifest.FileMetadata, *manifest.BlobFileMetadata, error) {
	if mem.Empty() {
		return nil, nil, nil
	}
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, num)
	f, err := d.fs.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("bloomkv: flush: %w", err)
	}
	d.events.tableCreated(TableCreateInfo{JobID: job, Reason: reason, Path: path, FileNum: num})
	sink := blobSink{d: d, job: job, reason: reason, minSize: d.opts.ValueSeparation.MinSize, compression: blobCompression(d.opts.Compression)}
	fail := func(err error) (*manifest.FileMetadata, *manifest.BlobFileMetadata, error) {
		f.Close()
		d.deleteObsolete(job, manifest.FileTypeTable, num)
		sink.abort()
		return nil, nil, fmt.Errorf("bloomkv: flush to %s: %w", path, err)
	}
	opts := d.opts.compaction.TableOptions
	opts.Compression = d.opts.compaction.TopLevelCompression
	opts.Filter = filter
	opts.PagedFilterBits = compaction.PagedFilterFor(filter, d.opts.compaction.PagedFilterBits)
	opts.RangeFilterBits = d.opts.compaction.RangeFilterBits[0]
	w, err := sstable.NewWriter(f, opts)
	if err != nil {
		return fail(err)
	}
	it := mem.NewIter()
	for ok := it.First(); ok; ok = it.Next() {
		k, v, err := sink.separate(it.Key(), it.Value())
		if err == nil {
			err = w.Add(k, v)
		}
		if err != nil {
			it.Close()
			return fail(err)
		}
	}
	it.Close()
	blobMeta, refs, blobSynced := sink.finish()
	err = w.SetRangeDels(mem.RangeDels())
	var props sstable.Properties
	if err == nil {
		props, err = w.Finish()
	}
	if err == nil {
		err = f.Sync()
	}
	if berr := blobSynced(); err == nil {
		err = berr
	}
	if err != nil {
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
	meta := compaction.TableMetadata(num, uint64(info.Size()), &props)
	meta.BlobRefs = refs
	return meta, blobMeta, nil
}

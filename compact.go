package bloomkv

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// Compactions run in the background, up to Options.MaxConcurrentCompactions
// at once, each on a compactionLoop goroutine of its own, or one at a time
// for DB.Compact. Each works on a referenced version, so its input tables
// stay open while it reads them; it installs its outputs with one manifest
// edit, and the inputs are deleted once no reader's version lists them.
// The running ones are in d.mu.compactions, from which the picker learns
// which tables are taken and which compactions a new one must not overlap
// (compaction.Pick).
//
// INVARIANT: tables of L1 and deeper are sorted and non-overlapping in every
// installed version (the manifest's Builder checks it on every edit).
//
// INVARIANT: no two compactions in d.mu.compactions share an input table or
// write overlapping key ranges into a level the other reads or writes; an
// edit therefore deletes only tables its own compaction holds, which are
// still in the current version when it is installed.

// compactionLoop runs the compactions the picker asks for until Close or a
// fatal error. A failed compaction is retried after a backoff (see
// background.go); one that found corruption is not. A loop that found
// nothing to do waits until the tree or the running set changes
// (d.mu.pickGen) before it asks the picker again: writes wake d.mu.cond far
// more often than they change anything the picker looks at.
func (d *DB) compactionLoop() {
	defer d.bgDone.Done()
	var idleGen uint64
	idle := false
	for {
		d.mu.Lock()
		var c *compaction.Compaction
		for {
			if d.mu.closed || d.mu.bgErr != nil {
				d.mu.Unlock()
				return
			}
			if !d.mu.manualCompacting && !d.mu.ingesting && d.mu.compactRetry.due() && (!idle || idleGen != d.mu.pickGen) {
				if c = compaction.Pick(d.mu.current.Version, &d.opts.compaction, d.mu.compactions); c != nil {
					break
				}
				idle, idleGen = true, d.mu.pickGen
			}
			d.mu.cond.Wait()
		}
		idle = false
		switch err := d.compactLocked(c); {
		case d.mu.closed: // Close interrupted it
		case err != nil:
			d.jobFailedLocked("compaction", &d.mu.compactRetry, err)
		default:
			d.jobSucceededLocked("compaction", &d.mu.compactRetry)
		}
		d.mu.Unlock()
	}
}

// compactLocked runs c on the current version and installs the result.
// d.mu is held, and released while the compaction runs, with c in
// d.mu.compactions.
func (d *DB) compactLocked(c *compaction.Compaction) error {
	d.mu.compactions = append(d.mu.compactions, c)
	d.mu.pickGen++
	v := d.refVersionLocked()
	d.mu.Unlock()
	start := time.Now()
	err := d.runCompaction(c, v)
	d.mu.Lock()
	d.mu.compactions = slices.DeleteFunc(d.mu.compactions, func(r *compaction.Compaction) bool { return r == c })
	d.mu.pickGen++
	if err == nil && c.Level == 0 && !c.Manual {
		d.l0CompactedLocked(c.Inputs[0], start, time.Now())
	}
	d.unrefVersionLocked(v)
	d.mu.cond.Broadcast()
	return err
}

// Compact compacts the key range [lo, hi] (nil: unbounded) down the levels,
// so that it ends up in one sorted run in the deepest level that holds it,
// with shadowed versions and collectable tombstones dropped, and versions
// whose time-to-live has ended (PutWithTTL) dropped as tombstones: the
// tables of the deepest level that hold any are rewritten in place. It
// waits for the background compactions in progress, and no new one starts
// until it returns. A failed step returns its error and leaves the DB as it
// was, its outputs removed; a corruption found also stops writes (see
// Resume).
func (d *DB) Compact(lo, hi []byte) error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if err := d.Flush(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// One DB.Compact at a time; the background loops hold off meanwhile.
	for d.mu.manualCompacting && !d.mu.closed {
		d.mu.cond.Wait()
	}
	d.mu.manualCompacting = true
	defer func() {
		d.mu.manualCompacting = false
		d.mu.pickGen++
		d.mu.cond.Broadcast()
	}()
	// Each step moves the range one level down; writes may add L0 tables
	// meanwhile, so bound the steps rather than chase them forever. Then,
	// the range in its deepest level, the tables there holding versions
	// expired by the clock's reading now are rewritten, a table a step
	// (compaction.PickExpired): their number bounds those steps.
	now, inDeepest := d.nowNanos(), false
	for steps := 0; ; steps++ {
		for (len(d.mu.compactions) > 0 || d.mu.ingesting) && !d.mu.closed && d.mu.bgErr == nil {
			d.mu.cond.Wait()
		}
		if d.mu.closed {
			return ErrClosed
		}
		if d.mu.bgErr != nil {
			return d.mu.bgErr
		}
		var c *compaction.Compaction
		if !inDeepest {
			if steps == 4*manifest.NumLevels {
				return nil
			}
			c = compaction.PickManual(d.mu.current.Version, lo, hi, &d.opts.compaction)
			inDeepest = c == nil
		}
		if inDeepest {
			c = compaction.PickExpired(d.mu.current.Version, lo, hi, now, d.earliestExpiryLocked, &d.opts.compaction)
		}
		if c == nil {
			return nil
		}
		if err := d.compactLocked(c); err != nil {
			if errors.Is(err, ErrCorruption) {
				d.fatalLocked("compaction", err)
			}
			return err
		}
	}
}

// runCompaction runs c over version v and installs the result. It is
// called without d.mu, by the goroutine that put c in d.mu.compactions.
func (d *DB) runCompaction(c *compaction.Compaction, v *version) (err error) {
	job := d.newJobID()
	info := CompactionInfo{JobID: job, Level: c.Level, OutputLevel: c.OutputLevel, TrivialMove: c.IsTrivialMove()}
	for i, files := range c.Inputs {
		for _, f := range files {
			info.Inputs = append(info.Inputs, tableInfo([2]int{c.Level, c.OutputLevel}[i], f))
		}
	}
	d.events.compactionBegin(info)
	start := time.Now()
	defer func() {
		info.Duration, info.Err = time.Since(start), err
		d.events.compactionEnd(info)
	}()

	var outputs []*manifest.FileMetadata
	var stats compaction.Stats
	if c.IsTrivialMove() {
		outputs = c.Inputs[0] // the table moves down a level, unchanged
	} else {
		outputs, stats, err = compaction.Run(d.compactCtx, c, d.compactionEnv(v, job), d.snapshotSeqNums(), &d.opts.compaction)
		if err != nil {
			if d.compactCtx.Err() != nil {
				return nil // Close interrupted it; the outputs are gone
			}
			return fmt.Errorf("bloomkv: compaction %v: %w", c, err)
		}
		if len(outputs) > 0 || stats.BlobFile != nil {
			if err := d.fs.SyncDir(d.dirname); err != nil {
				for _, f := range outputs {
					d.deleteObsolete(job, manifest.FileTypeTable, f.FileNum)
				}
				if stats.BlobFile != nil {
					d.deleteObsolete(job, manifest.FileTypeBlob, stats.BlobFile.FileNum)
				}
				return fmt.Errorf("bloomkv: compaction: %w", err)
			}
		}
	}
	for _, f := range outputs {
		info.Outputs = append(info.Outputs, tableInfo(c.OutputLevel, f))
	}
	edit := c.Edit(outputs)
	if stats.BlobFile != nil {
		edit.NewBlobFiles = []*manifest.BlobFileMetadata{stats.BlobFile}
		d.blobs.bytesWritten.Add(stats.BlobBytesWritten)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.applyEditLocked(edit); err != nil {
		return err
	}
	cs := &d.counters.compactions
	cs.count.Add(1)
	cs.bytesRead[c.Level].Add(bytesOf(c.Inputs[0]))
	cs.bytesRead[c.OutputLevel].Add(bytesOf(c.Inputs[1]))
	cs.bytesWritten[c.OutputLevel].Add(stats.BytesWritten)
	cs.tombstonesDropped.Add(stats.TombstonesDropped)
	cs.mergesFolded.Add(stats.MergesFolded)
	cs.expiredDropped.Add(stats.ExpiredDropped)
	return nil
}

func bytesOf(files []*manifest.FileMetadata) uint64 {
	var n uint64
	for _, f := range files {
		n += f.Size
	}
	return n
}

// inputTable returns the open table of f, a compaction input in v.
func (v *version) inputTable(f *manifest.FileMetadata) (*table, error) {
	for level, files := range v.Levels {
		if i := slices.Index(files, f); i >= 0 {
			return v.tables[level][i], nil
		}
	}
	return nil, fmt.Errorf("bloomkv: compaction input %06d is not in its version", f.FileNum)
}

// compactionEnv gives a compaction the tables of v to read and new
// numbered files to write.
func (d *DB) compactionEnv(v *version, job int) compaction.Env {
	return compaction.Env{
		Open: func(f *manifest.FileMetadata) (iterator.Iterator, error) {
			t, err := v.inputTable(f)
			if err != nil {
				return nil, err
			}
			return t.reader.NewScanIterator(), nil
		},
		RangeDels: func(f *manifest.FileMetadata) (rangedel.List, error) {
			t, err := v.inputTable(f)
			if err != nil {
				return nil, err
			}
			return t.reader.RangeDels(), nil
		},
		Create: func() (*compaction.Output, error) {
			return d.createOutput(job, manifest.FileTypeTable, d.allocFileNum(), "compaction")
		},
		CreateBlob: func() (*compaction.Output, error) {
			return d.createOutput(job, manifest.FileTypeBlob, d.allocFileNum(), "compaction")
		},
		ReadBlob:       func(dst []byte, h blob.Handle) ([]byte, error) { return d.readBlobAt(dst, h, nil) },
		ReadBlobStored: d.readBlobStored,
	}
}

// allocFileNum returns a new file number.
func (d *DB) allocFileNum() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.nextFileNum++
	return d.mu.nextFileNum - 1
}

// snapshotSeqNums returns the sequence numbers of the live snapshots,
// ascending: the read points whose versions a compaction must keep.
func (d *DB) snapshotSeqNums() []base.SeqNum {
	d.mu.Lock()
	defer d.mu.Unlock()
	seqs := make([]base.SeqNum, 0, len(d.mu.snapshots))
	for s := range d.mu.snapshots {
		seqs = append(seqs, s.seq)
	}
	slices.Sort(seqs)
	return slices.Compact(seqs)
}

// l0Stop reports that L0 has L0StopTrigger tables, so writes must wait for
// compaction. d.mu is held.
func l0Stop(d *DB) bool { return len(d.mu.current.Levels[0]) >= d.opts.L0StopTrigger }

package bloomkv

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Compactions run one at a time, in the background (compactionLoop) or for
// DB.Compact, serialized by d.mu.compacting. Each works on a referenced version,
// so its input tables stay open while it reads them; it installs its
// outputs with one manifest edit, and the inputs are deleted once no
// reader's version lists them.
//
// INVARIANT: tables of L1 and deeper are sorted and non-overlapping in every
// installed version (the manifest's Builder checks it on every edit).

// compactionLoop runs the compactions the picker asks for until Close or a
// fatal error. A failed compaction is retried after a backoff (see
// background.go); one that found corruption is not.
func (d *DB) compactionLoop() {
	defer d.bgDone.Done()
	for {
		d.mu.Lock()
		var c *compaction.Compaction
		for {
			if d.mu.closed || d.mu.bgErr != nil {
				d.mu.Unlock()
				return
			}
			if !d.mu.compacting && d.mu.compactRetry.due() {
				if c = compaction.Pick(d.mu.current.Version, &d.opts.compaction); c != nil {
					break
				}
			}
			d.mu.cond.Wait()
		}
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
// d.mu is held, and released while the compaction runs; d.mu.compacting
// keeps any other compaction from starting meanwhile.
func (d *DB) compactLocked(c *compaction.Compaction) error {
	d.mu.compacting = true
	v := d.refVersionLocked()
	d.mu.Unlock()
	err := d.runCompaction(c, v)
	d.mu.Lock()
	d.mu.compacting = false
	d.unrefVersionLocked(v)
	d.mu.cond.Broadcast()
	return err
}

// Compact compacts the key range [lo, hi] (nil: unbounded) down the levels,
// so that it ends up in one sorted run in the deepest level that holds it,
// with shadowed versions and collectable tombstones dropped. It waits for a
// background compaction in progress. A failed step returns its error and
// leaves the DB as it was, its outputs removed; a corruption found also
// stops writes (see Resume).
func (d *DB) Compact(lo, hi []byte) error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if err := d.Flush(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Each step moves the range one level down; writes may add L0 tables
	// meanwhile, so bound the steps rather than chase them forever.
	for range 4 * manifest.NumLevels {
		for d.mu.compacting && !d.mu.closed && d.mu.bgErr == nil {
			d.mu.cond.Wait()
		}
		if d.mu.closed {
			return ErrClosed
		}
		if d.mu.bgErr != nil {
			return d.mu.bgErr
		}
		c := compaction.PickManual(d.mu.current.Version, lo, hi, &d.opts.compaction)
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
	return nil
}

// runCompaction runs c over version v and installs the result. It is
// called without d.mu, by the one goroutine that set d.mu.compacting.
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
		if len(outputs) > 0 {
			if err := d.fs.SyncDir(d.dirname); err != nil {
				for _, f := range outputs {
					d.removeFile(job, manifest.FileTypeTable, f.FileNum)
				}
				return fmt.Errorf("bloomkv: compaction: %w", err)
			}
		}
	}
	for _, f := range outputs {
		info.Outputs = append(info.Outputs, tableInfo(c.OutputLevel, f))
	}
	edit := c.Edit(outputs)
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
	return nil
}

func bytesOf(files []*manifest.FileMetadata) uint64 {
	var n uint64
	for _, f := range files {
		n += f.Size
	}
	return n
}

// compactionEnv gives a compaction the tables of v to read and new
// numbered files to write.
func (d *DB) compactionEnv(v *version, job int) compaction.Env {
	return compaction.Env{
		Open: func(f *manifest.FileMetadata) (iterator.Iterator, error) {
			for level, files := range v.Levels {
				if i := slices.Index(files, f); i >= 0 {
					return v.tables[level][i].reader.NewScanIterator(), nil
				}
			}
			return nil, fmt.Errorf("bloomkv: compaction input %06d is not in its version", f.FileNum)
		},
		Create: func() (*compaction.Output, error) {
			d.mu.Lock()
			num := d.mu.nextFileNum
			d.mu.nextFileNum++
			d.mu.Unlock()
			path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, num)
			f, err := d.fs.Create(path)
			if err != nil {
				return nil, err
			}
			d.events.tableCreated(TableCreateInfo{JobID: job, Reason: "compaction", Path: path, FileNum: num})
			closed := false
			return &compaction.Output{
				FileNum: num,
				W:       f,
				Finish: func() error {
					closed = true
					if err := f.Sync(); err != nil {
						f.Close()
						return err
					}
					return f.Close()
				},
				Abort: func() {
					if !closed {
						f.Close()
					}
					d.removeFile(job, manifest.FileTypeTable, num)
				},
			}, nil
		},
	}
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

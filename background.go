package bloomkv

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/record"
)

// Background errors, and how the DB gets over them.
//
// A failed flush or compaction has removed its partial outputs (their files
// are deleted; an edit whose manifest append failed leaves its outputs until
// the manifest is replaced, since a crash may yet find them recorded). It is
// retried after a backoff, 10 ms doubling to a second, until it succeeds:
// the data it would have moved is still in a WAL or in its input tables, so
// retrying loses nothing and duplicates nothing. While a flush is failing,
// writes go on into the memtables until they are full, then fail with the
// flush's error instead of waiting; the same for a compaction and the L0
// stop trigger. Reads go on throughout.
//
// A failed WAL write or sync stops writes: the WAL may end in a torn record,
// after which nothing may be appended. To resume, the DB retires that WAL:
// the memtable it backs (which holds every write acknowledged through it,
// the failed one excepted) becomes immutable and is flushed, a manifest edit
// retires the WAL, and only then is a new WAL created — so a crash at any
// point finds the damaged WAL either the newest (its torn tail dropped) or
// retired. For a full disk (ENOSPC, EDQUOT) the DB does this by itself, on
// the flush's backoff, once space is freed; for any other WAL error it waits
// for DB.Resume, since a disk that fails writes for other reasons deserves
// a person's look.
//
// A failed manifest append breaks the manifest (manifest.Log.Append): the
// edit may or may not survive a crash. The next flush or compaction first
// replaces it with a new manifest holding the state without that edit
// (manifest.Log.Replace); the edit's outputs are then provably unreferenced
// and deleted.
//
// Corruption found by a flush or compaction, and a manifest failure after
// CURRENT was switched, are not retried: they become the sticky d.mu.bgErr,
// every later write fails with it, and Resume cannot clear it.
//
// INVARIANT: no write is acknowledged unless its WAL record was written (and
// synced, for Sync) to the WAL in d.mu.wal, and no WAL file is created while
// a WAL that ends in a failed write is the newest on disk and still needed.

// Backoff bounds for a failing flush or compaction.
const (
	minRetryDelay = 10 * time.Millisecond
	maxRetryDelay = time.Second
)

// retry is the state of a background job that is failing: its last error
// and when to try again.
type retry struct {
	err      error
	failures int       // in a row, for the backoff
	at       time.Time // zero: now
	total    uint64    // failures ever, never reset: callers wait on it
	// last is the latest failure's error, kept after a success clears
	// err: a caller that saw total move reports it, though the retry may
	// have succeeded before the caller woke.
	last error
}

// failed records err and returns how long until the next try.
func (r *retry) failed(err error) time.Duration {
	delay := min(minRetryDelay<<min(r.failures, 16), maxRetryDelay)
	r.err, r.failures, r.at = err, r.failures+1, time.Now().Add(delay)
	r.total++
	r.last = err
	return delay
}

// due reports whether the job may run now.
func (r *retry) due() bool { return r.at.IsZero() || !time.Now().Before(r.at) }

// wakeAt broadcasts d.mu.cond at t, so that a loop waiting for a retry that
// is due then runs it.
func (d *DB) wakeAt(t time.Time) {
	time.AfterFunc(time.Until(t), func() {
		d.mu.Lock()
		d.mu.pickGen++ // a compaction's retry may be due
		d.mu.cond.Broadcast()
		d.mu.Unlock()
	})
}

// noSpace reports whether err is a full disk or an exhausted quota: a
// failure that freeing space cures.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// writeErrLocked is the error every write fails with now, or nil. d.mu is
// held.
func (d *DB) writeErrLocked() error {
	switch {
	case d.mu.closed:
		return ErrClosed
	case d.opts.ReadOnly:
		return ErrReadOnly
	case d.mu.bgErr != nil:
		return d.mu.bgErr
	case d.mu.walErr != nil:
		return d.mu.walErr
	}
	return nil
}

// walFailedLocked records a failed WAL write, sync or switch: writes stop
// until the WAL is retired (see recoverWALLocked). d.mu is held.
func (d *DB) walFailedLocked(err error) error {
	err = fmt.Errorf("bloomkv: WAL: %w", err)
	if d.mu.walErr == nil {
		d.mu.walErr = err
		info := BackgroundErrorInfo{Op: "WAL", Err: err, WritesStopped: true}
		if noSpace(err) {
			// The flush loop retires the WAL; give the disk a moment.
			info.RetryIn = minRetryDelay
			d.mu.flushRetry.at = time.Now().Add(minRetryDelay)
			d.wakeAt(d.mu.flushRetry.at)
		}
		d.counters.backgroundErrors.Add(1)
		d.events.backgroundError(info)
	}
	d.mu.cond.Broadcast()
	return err
}

// fatalLocked makes err the DB's sticky error. d.mu is held.
func (d *DB) fatalLocked(op string, err error) {
	if d.mu.bgErr == nil {
		d.mu.bgErr = err
		d.counters.backgroundErrors.Add(1)
		d.events.backgroundError(BackgroundErrorInfo{Op: op, Err: err, WritesStopped: true})
	}
	d.mu.cond.Broadcast()
}

// jobFailedLocked handles the failure of a flush or compaction job (op):
// corruption is fatal; anything else is retried after the job's backoff.
// d.mu is held.
func (d *DB) jobFailedLocked(op string, r *retry, err error) {
	if errors.Is(err, ErrCorruption) {
		d.fatalLocked(op, err)
		return
	}
	delay := r.failed(err)
	d.wakeAt(r.at)
	d.counters.backgroundErrors.Add(1)
	d.events.backgroundError(BackgroundErrorInfo{Op: op, Err: err, RetryIn: delay})
	d.mu.cond.Broadcast()
}

// jobSucceededLocked clears a job's failure, if it had one. d.mu is held.
func (d *DB) jobSucceededLocked(op string, r *retry) {
	if r.err != nil {
		d.events.recovered(RecoveryInfo{Op: op, Err: r.err})
	}
	r.err, r.failures, r.at = nil, 0, time.Time{}
}

// walRecoveryDueLocked reports whether the flush loop should work on
// retiring a failed WAL now: a full disk is retried by itself, any other
// failure once Resume asks. d.mu is held.
func (d *DB) walRecoveryDueLocked() bool {
	return d.mu.walErr != nil && (d.mu.resume || noSpace(d.mu.walErr)) && d.mu.flushRetry.due()
}

// recoverWALLocked takes one step of retiring a failed WAL (see the top of
// this file), and reports whether writes flow again. The first step makes
// the memtable immutable, to be flushed with the others by the flush loop,
// and numbers the next WAL without creating it; once every memtable is
// flushed, an edit retires the old WALs and the new one is created. d.mu is
// held, and released during the manifest's fsync.
func (d *DB) recoverWALLocked() (bool, error) {
	if d.mu.wal != nil {
		d.mu.walFile.Close() // its errors are moot: the WAL is retired
		d.mu.wal, d.mu.walFile = nil, nil
		if !d.mu.mem.Empty() {
			d.mu.imm = append(d.mu.imm, &immutable{mem: d.mu.mem, walNum: d.mu.memWAL})
			d.mu.mem = d.memtables.New()
			d.updateReadStateLocked()
		}
		d.mu.memWAL = d.mu.nextFileNum
		d.mu.nextFileNum++
	}
	if len(d.mu.imm) > 0 {
		return false, nil // the flush loop flushes them first
	}
	d.manifestMu.Lock()
	retired := d.manifest.State().LogNumber >= d.mu.memWAL
	d.manifestMu.Unlock()
	if !retired {
		if err := d.applyEditLocked(&manifest.VersionEdit{LogNumber: d.mu.memWAL}); err != nil {
			return false, err
		}
	}
	f, err := d.createWAL(d.mu.memWAL)
	if err != nil {
		return false, err
	}
	d.mu.wal, d.mu.walFile = record.NewWriter(f), f
	d.events.recovered(RecoveryInfo{Op: "WAL", Err: d.mu.walErr})
	d.mu.walErr, d.mu.resume = nil, false
	d.removeObsoleteWALsLocked(d.mu.memWAL)
	d.mu.cond.Broadcast()
	return true, nil
}

// Resume makes the DB take writes again after a background error stopped
// them, and returns nil once it does. After a WAL failure it flushes the
// memtables and starts a new WAL (which the DB does by itself for a full
// disk); after a failing flush it retries at once rather than at the end of
// the backoff. It returns the error that still stops writes, if the attempt
// fails, and the sticky error of a corruption, which it cannot clear. A DB
// with no background error returns nil at once.
func (d *DB) Resume() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if d.mu.walErr == nil && d.mu.flushRetry.err == nil {
		return d.writeErrLocked()
	}
	// Only a WAL failure needs resume. It stays set until the WAL is
	// retired, so that a step of retiring it that fails is retried after
	// the backoff, as for a full disk.
	d.mu.resume = d.mu.walErr != nil
	d.mu.flushRetry.at = time.Time{}
	d.mu.cond.Broadcast()
	failures := d.mu.flushRetry.total
	for !d.mu.closed && d.mu.bgErr == nil && (d.mu.walErr != nil || d.mu.flushRetry.err != nil) &&
		d.mu.flushRetry.total == failures {
		d.mu.cond.Wait()
	}
	if err := d.writeErrLocked(); err != nil {
		return err
	}
	return d.mu.flushRetry.err
}

// replaceBrokenManifest replaces a manifest broken by a failed append with
// a new one, numbered num, holding the state without the failed edit
// (manifest.Log.Replace), so that edits can be appended again, and reports
// whether it did. manifestMu is held, d.mu is not: the caller makes a
// fatal error sticky once it holds d.mu again.
//
// A failure before CURRENT names the new manifest leaves the broken one
// live, and the next edit tries again; one after it, or a manifest a failed
// rotation left ambiguous, is fatal: CURRENT may then name either after a
// crash, and no manifest change is safe.
func (d *DB) replaceBrokenManifest(num, nextFileNum uint64, lastSeq base.SeqNum) (replaced, fatal bool, err error) {
	old := d.manifest
	l, err := old.Replace(num, nextFileNum, lastSeq)
	if err != nil {
		return false, !old.Replaceable(), fmt.Errorf("bloomkv: manifest: %w", err)
	}
	d.manifest = l
	d.deleteObsolete(0, manifest.FileTypeManifest, old.FileNum())
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeManifest, num)
	d.events.manifestCreated(ManifestCreateInfo{Path: path, FileNum: num})
	return true, false, nil
}

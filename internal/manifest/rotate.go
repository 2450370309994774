package manifest

import (
	"errors"
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
)

// retryFraction is how much a Log must grow, as a fraction 1/retryFraction
// of its size, after a Rotate that failed before its rename, before
// RotationDue says to try again: a disk that fails every rotation then
// costs a number of attempts logarithmic in the manifest's growth, not one
// per edit.
const retryFraction = 8

// RotationDue reports whether the DB should Rotate l, after an edit: l is
// at least maxSize bytes long (Size), the edits after its snapshot take at
// least as many bytes as the snapshot itself, and it is not within the
// growth a failed Rotate put off the next attempt by. A broken or closed Log
// is never due.
//
// The snapshot condition is what keeps a rotation worth its cost when the
// snapshot alone is near or above maxSize (many tables, a small maxSize):
// without it every edit would rewrite the whole state. The next snapshot is
// at most the old one plus what the edits since added, so with it a
// rotation never makes the manifest larger, and the bytes rotations write
// are at most twice the bytes of the edits that led to them.
func (l *Log) RotationDue(maxSize int64) bool {
	if l.closed || l.err != nil {
		return false
	}
	size := l.Size()
	return size >= maxSize && size-l.snapshotSize >= l.snapshotSize && size >= l.retryAt
}

// Rotate replaces l by a new manifest, MANIFEST-<fileNum> in l's directory,
// whose only record is the snapshot of l's state (State.SnapshotEdit) with
// NextFileNumber raised to nextFileNumber, and makes CURRENT name it: Create,
// with Create's steps and guarantees. The caller must hold whatever
// serializes l's appends for the whole call, so that the snapshot holds
// every acknowledged edit and none is appended to l meanwhile.
//
// fileNum must be at least l's NextFileNumber, since a number below it may
// be a table's or a WAL's; the DB allocates it from its file counter, which
// is never below, and passes the counter after that allocation as
// nextFileNumber, so that the new manifest records its own number as used.
//
// The outcomes:
//
//   - nil error: CURRENT durably names the new manifest, whose Log is
//     returned. l is closed (its Append returns ErrLogClosed) and its
//     file obsolete: the caller deletes it.
//   - an error from before the rename over CURRENT: CURRENT still names l's
//     manifest, which stays live and usable; Create removed what it made.
//     RotationDue is false until l has grown by another 1/retryFraction.
//   - an error from after the rename: after a crash CURRENT may name either
//     manifest. Both hold the same state, but an edit appended to one would
//     be lost if the crash left CURRENT naming the other, so l is broken
//     with the error (Err returns it, as does every later Append): the
//     DB must make no further manifest change.
//
// A broken or closed l is not rotated: Rotate returns its error.
//
// INVARIANT: after Rotate at most one of the two Logs takes appends — the
// new one on success, l after a failure before the rename, neither after a
// failure after it — and that one's manifest is what CURRENT durably names;
// so no edit is ever acknowledged by a manifest a crash could leave
// CURRENT not naming.
func (l *Log) Rotate(fileNum, nextFileNumber uint64) (*Log, error) {
	switch {
	case l.closed:
		return nil, ErrLogClosed
	case l.err != nil:
		return nil, l.err
	}
	next, renamed, err := l.rewrite(fileNum, nextFileNumber, 0, "rotating")
	if err != nil && !renamed {
		return nil, l.deferRotation(err)
	}
	return next, err
}

// rewrite is what Rotate and Replace share: it writes MANIFEST-<fileNum>
// holding l's state, with NextFileNumber raised to nextFileNumber and
// LastSeqNum to lastSeq, and makes CURRENT name it (Create). On success it
// closes l — every edit of l is durable in the new manifest, so a failed
// Close loses nothing. A failure after the rename over CURRENT breaks l
// for good (ambiguous: CURRENT may name either manifest); renamed reports
// it. what names the operation in errors.
func (l *Log) rewrite(fileNum, nextFileNumber uint64, lastSeq base.SeqNum, what string) (next *Log, renamed bool, err error) {
	if fileNum < l.state.NextFileNumber {
		return nil, false, fmt.Errorf("manifest: %s to %s, a number below the next file number %d, which may be in use",
			what, MakeFilename(FileTypeManifest, fileNum), l.state.NextFileNumber)
	}
	snap := l.state.SnapshotEdit()
	snap.NextFileNumber = max(snap.NextFileNumber, nextFileNumber)
	snap.LastSeqNum = max(snap.LastSeqNum, lastSeq)
	next, renamed, err = create(l.fs, l.dir, fileNum, snap)
	if err != nil {
		err = fmt.Errorf("manifest: %s %s to %s: %w",
			what, MakeFilename(FileTypeManifest, l.fileNum), MakeFilename(FileTypeManifest, fileNum), err)
		if renamed {
			l.ambiguous = true
			l.err = fmt.Errorf("%w (CURRENT may name either manifest: no further edit is safe)", err)
			return nil, true, l.err
		}
		return nil, false, err
	}
	_ = l.Close()
	return next, false, nil
}

// deferRotation makes RotationDue false until l grows by another
// 1/retryFraction, after a Rotate that failed leaving l live; it returns
// err.
func (l *Log) deferRotation(err error) error {
	size := l.Size()
	l.retryAt = size + max(size/retryFraction, 1)
	return err
}

// Replace is Rotate for a Log broken by a failed Append: it writes a new
// manifest, MANIFEST-<fileNum>, whose snapshot is l's state — every edit
// whose Append returned nil, without the one that failed, whatever of it
// reached l's file — with NextFileNumber raised to nextFileNumber and
// LastSeqNum to lastSeq, and makes CURRENT name it. Once it returns nil the
// failed edit is provably recorded nowhere a recovery reads, and its
// tables may be deleted.
//
// An error from before the rename over CURRENT leaves l as it was, broken,
// to be replaced by a later call; one from after it leaves CURRENT naming
// either manifest, and l can never be replaced. Replace refuses a Log that
// is not broken (Rotate is for that), that cannot be replaced, or that is
// closed. On success l is closed; the caller deletes its file.
func (l *Log) Replace(fileNum, nextFileNumber uint64, lastSeq base.SeqNum) (*Log, error) {
	switch {
	case l.closed:
		return nil, ErrLogClosed
	case l.err == nil:
		return nil, errors.New("manifest: Replace of a Log that is not broken")
	case l.ambiguous:
		return nil, l.err
	}
	broken := l.err
	next, _, err := l.rewrite(fileNum, nextFileNumber, lastSeq, "replacing the broken")
	if err != nil {
		return nil, fmt.Errorf("%w (broken by: %v)", err, broken)
	}
	return next, nil
}

// Replaceable reports whether Replace may be tried on l: it is broken by a
// failed Append, and no rename over CURRENT has failed after it happened.
func (l *Log) Replaceable() bool { return !l.closed && l.err != nil && !l.ambiguous }

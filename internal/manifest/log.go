package manifest

import (
	"errors"
	"fmt"

	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// Log is the live manifest of an open DB: it appends edits durably and keeps
// the state they add up to. Create starts one; a DB opens by Recover, then
// Create of a fresh manifest holding the recovered state, since the old one
// may end in a torn tail that must not be appended to. While the DB is open,
// Rotate replaces a Log grown large (RotationDue) by a fresh one holding its
// state.
//
// A Log is not safe for concurrent use: the DB serializes its edits (flush
// and compaction) through one lock, which also orders them.
type Log struct {
	fs      vfs.FS
	dir     string
	path    string
	fileNum uint64
	f       vfs.File
	w       *record.Writer
	state   State
	buf     []byte
	// err is sticky: set by the first failed write or sync, or by a Rotate
	// that failed after its rename over CURRENT.
	err    error
	closed bool
	// ambiguous is set when a rename over CURRENT happened in a Rotate or
	// Replace that then failed: CURRENT may name either manifest after a
	// crash, so no manifest change is safe any more, Replace included.
	ambiguous bool
	// snapshotSize is the length of the first record, the snapshot, as
	// written (framing included): what RotationDue weighs the edits after
	// it against.
	snapshotSize int64
	// retryAt is the size below which RotationDue is false, set by a
	// Rotate that failed before its rename; 0 until then.
	retryAt int64
}

// ErrLogClosed is returned by Append after Close.
var ErrLogClosed = errors.New("manifest: log closed")

// Create writes a new manifest, MANIFEST-<fileNum> in dir, whose only record
// is initial, and makes CURRENT name it. initial must apply to the empty
// state (typically State.SnapshotEdit of the state to carry over) and set a
// NextFileNumber above fileNum, which the DB allocated from that counter.
//
// The steps, each durable before the next begins: the manifest is written,
// synced and its directory entry synced; then CURRENT is replaced atomically
// (a temporary file "<fileNum>.tmp" holding "MANIFEST-<fileNum>\n" is
// synced and renamed over CURRENT, and dir is synced). So after a crash at
// any point CURRENT names the old manifest or the new one, complete.
//
// On success the old manifest, if any, is obsolete and the DB may delete it
// and close its Log. On error Create removes what it made, unless the
// rename already happened: then CURRENT may name either manifest after a
// crash, both are kept, and the DB must make no further manifest changes
// (its manifest state is as broken as after a failed Append).
func Create(fs vfs.FS, dir string, fileNum uint64, initial *VersionEdit) (*Log, error) {
	l, _, err := create(fs, dir, fileNum, initial)
	return l, err
}

// create is Create; renamed reports, on error, whether the rename over
// CURRENT had happened (so that CURRENT may name either manifest).
func create(fs vfs.FS, dir string, fileNum uint64, initial *VersionEdit) (l *Log, renamed bool, err error) {
	if fileNum == 0 {
		return nil, false, errors.New("manifest: Create with file number 0")
	}
	state, err := State{}.Apply(initial)
	if err != nil {
		return nil, false, fmt.Errorf("manifest: initial edit: %w", err)
	}
	if fileNum >= state.NextFileNumber {
		return nil, false, fmt.Errorf("manifest: initial edit's next file number %d is not above the manifest's number %d",
			state.NextFileNumber, fileNum)
	}
	path := MakeFilepath(fs, dir, FileTypeManifest, fileNum)
	f, err := fs.Create(path)
	if err != nil {
		return nil, false, fmt.Errorf("manifest: %w", err)
	}
	l = &Log{fs: fs, dir: dir, path: path, fileNum: fileNum, f: f, w: record.NewWriter(f), state: state}
	abandon := func(err error) (*Log, bool, error) {
		_ = f.Close()
		_ = fs.Remove(path)
		return nil, false, err
	}
	l.buf = initial.Encode(l.buf)
	if _, err := l.w.WriteRecord(l.buf); err != nil {
		return abandon(fmt.Errorf("manifest: writing %s: %w", path, err))
	}
	if err := l.w.Sync(); err != nil {
		return abandon(fmt.Errorf("manifest: syncing %s: %w", path, err))
	}
	l.snapshotSize = l.w.Size()
	// The manifest's name must be durable before CURRENT names it: the
	// vfs contract orders no two directory changes without a SyncDir.
	if err := fs.SyncDir(dir); err != nil {
		return abandon(fmt.Errorf("manifest: syncing directory %s: %w", dir, err))
	}
	if renamed, err := setCurrent(fs, dir, fileNum); err != nil {
		if !renamed {
			return abandon(err)
		}
		_ = f.Close()
		return nil, true, err
	}
	return l, false, nil
}

// setCurrent points CURRENT at MANIFEST-<fileNum>, atomically. renamed
// reports whether the rename over CURRENT happened, after which a failure
// (of the directory sync) leaves CURRENT naming either manifest.
func setCurrent(fs vfs.FS, dir string, fileNum uint64) (renamed bool, err error) {
	tmp := MakeFilepath(fs, dir, FileTypeTemp, fileNum)
	current := MakeFilepath(fs, dir, FileTypeCurrent, 0)
	err = writeSynced(fs, tmp, MakeFilename(FileTypeManifest, fileNum)+"\n")
	if err == nil {
		err = fs.Rename(tmp, current)
	}
	if err != nil {
		_ = fs.Remove(tmp)
		return false, fmt.Errorf("manifest: setting %s: %w", current, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return true, fmt.Errorf("manifest: syncing directory %s after renaming %s: %w", dir, current, err)
	}
	return true, nil
}

// writeSynced creates the file name holding contents, durable (though its
// name is not).
func writeSynced(fs vfs.FS, name, contents string) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(contents))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Append checks edit against the current state (State.Apply), writes it as
// one record and syncs the manifest. When it returns nil the edit is
// durable, and the returned state, which State reports from then on,
// includes it.
//
// An edit that does not apply is rejected before anything is written; the
// Log stays usable. A failed write or sync breaks the Log for good: every
// later Append returns the same error, since an edit written after a failed
// one would be intact data after damage, which recovery reports as
// corruption. The failed edit itself may or may not survive a crash, so
// the DB must then delete no file that the edit adds or makes obsolete.
// On error the returned state is the unchanged current state.
func (l *Log) Append(edit *VersionEdit) (State, error) {
	if l.closed {
		return l.state, ErrLogClosed
	}
	if l.err != nil {
		return l.state, l.err
	}
	next, err := l.state.Apply(edit)
	if err != nil {
		return l.state, err
	}
	l.buf = edit.Encode(l.buf[:0])
	if _, err := l.w.WriteRecord(l.buf); err != nil {
		l.err = fmt.Errorf("manifest: writing %s: %w", l.path, err)
		return l.state, l.err
	}
	if err := l.w.Sync(); err != nil {
		l.err = fmt.Errorf("manifest: syncing %s: %w", l.path, err)
		return l.state, l.err
	}
	l.state = next
	return next, nil
}

// State returns the state of every edit appended so far.
func (l *Log) State() State { return l.state }

// FileNum returns the manifest's file number.
func (l *Log) FileNum() uint64 { return l.fileNum }

// Size returns the manifest's length in bytes: every record written, with
// its framing. RotationDue decides from it when the DB rotates to a new one.
func (l *Log) Size() int64 { return l.w.Size() }

// Err returns the error that broke the Log, or nil.
func (l *Log) Err() error { return l.err }

// Close closes the manifest file. Every appended edit is already durable, so
// Close syncs nothing.
func (l *Log) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	return l.f.Close()
}

package bloomkv

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"
	"strings"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// Checkpoints. A checkpoint is a DB directory of its own holding the DB as
// of one point in its history, taken while the DB goes on serving reads and
// writes: the backup an application takes without stopping.
//
// The point is a cut between two groups of the commit pipeline: a request
// whose cut function the pipeline's leader runs once the group ending with
// it, and every group before, is in the WAL writer and the memtable, and
// before the next group begins (commitRequest.cut). There, under d.mu,
// the cut flushes the WAL writer's buffer to the file (no fsync: the copy
// is synced instead) and records
//
//   - the current version, referenced, and its log number: the version's
//     tables hold every write before the WALs numbered from it;
//   - those WALs, opened, with their lengths: the sealed ones whole, the
//     one being written up to its end at the cut, a record boundary;
//   - the last sequence number and the next file number.
//
// That is a state recovery would rebuild after a crash at the cut, so the
// checkpoint holds exactly the writes committed before the cut: every one
// acknowledged before Checkpoint was called (they were committed before
// its request queued), none that began after the cut, and of the writes
// racing with the call, a prefix of the history, as a crash keeps.
//
// Then, with no lock held, the tables are hard-linked into the target
// (copied where the file system makes no links: vfs.Link, LinkUnsupported),
// the WALs copied up to their cut lengths, a LOCK file made, and a fresh
// manifest holding the version written, and CURRENT naming it, by
// manifest.Create — last, so that a directory without CURRENT is a
// checkpoint a crash interrupted, which Open refuses once any of its tables
// or WALs is there (see checkNewDBDir) rather than mistake it for a DB.
//
// INVARIANT: nothing the checkpoint reads goes away before it is copied:
// the referenced version keeps its tables on disk (unrefVersionLocked),
// and each WAL is read through a handle opened at the cut, which a
// deletion of the file does not close (vfs.FS.Remove; a file system that
// refuses to remove an open file leaves it to the next Open's cleanup).
//
// INVARIANT: in the DB's directory Checkpoint writes only what a write with
// Sync would — the WAL writer's buffer of acknowledged records, to the WAL —
// and in a read-only DB nothing; in the target it writes only the files it
// creates, and on failure it removes those, and the directory if it made
// it.

// CheckpointOptions are the choices of DB.Checkpoint; the zero value, or a
// nil pointer, is the default.
type CheckpointOptions struct {
	// Flush flushes the memtables to tables first, as DB.Flush does, so
	// that the checkpoint's WALs hold only the writes that came after the
	// flush, and its first Open has little to replay; it costs the DB an
	// L0 table. A read-only DB refuses it with ErrReadOnly.
	Flush bool
}

// Checkpoint writes a consistent copy of the DB as of now into the
// directory dir, which must not exist or must be empty (anything else is
// refused with an error wrapping fs.ErrExist, and left untouched), while
// the DB goes on serving reads and writes. The copy opens with Open as a
// DB of its own holding every write acknowledged before Checkpoint was
// called, and none of the writes that began after the point it copied at;
// of the writes in flight meanwhile, it holds those committed before that
// point, a prefix of the history, as a crash would keep. nil opts gives
// the defaults.
//
// The tables are hard links to the DB's own where the file system allows
// (they are never changed once written, so sharing them is safe; the
// space is shared until one side deletes its name), and copies otherwise,
// as across file systems; the WALs the copy needs are copied, the one
// being written up to the point. A fresh manifest records the tables; the
// DB writes no OPTIONS file, so none is copied: open the checkpoint with
// the options the DB uses. Everything is synced before Checkpoint
// returns, so a crash after it keeps the checkpoint whole; a crash during
// it leaves the DB as it was and, in dir, a directory without CURRENT,
// which Open refuses once any table or WAL of the checkpoint is in it. On
// failure Checkpoint removes what it wrote.
//
// A read-only DB checkpoints too, as the bloomkv checkpoint command does:
// it backs up a DB no process has open for writing, beside other readers
// and changing nothing in its directory; its state does not change, so the
// copy holds what it recovered. While a checkpoint is being written, the
// tables it links stay on the DB's disk even if compactions replace them. A DB whose writes are stopped (see
// Resume) refuses with that error.
func (d *DB) Checkpoint(dir string, opts *CheckpointOptions) error {
	if dir == "" {
		return argError("dir", "empty: a checkpoint needs a directory")
	}
	var o CheckpointOptions
	if opts != nil {
		o = *opts
	}
	if o.Flush {
		if err := d.Flush(); err != nil {
			return fmt.Errorf("bloomkv: checkpoint: flush: %w", err)
		}
	}
	// The cut first, as close to the call as it can be; then the target.
	cut, err := d.checkpointCut()
	if err != nil {
		return fmt.Errorf("bloomkv: checkpoint %s: %w", dir, err)
	}
	defer d.releaseCut(cut)
	w := &checkpointWriter{fs: d.fs, dir: dir}
	if err = w.prepareDir(); err == nil {
		err = w.write(d, cut)
	}
	if err != nil {
		w.abandon()
		return fmt.Errorf("bloomkv: checkpoint %s: %w", dir, err)
	}
	return nil
}

// checkpointCut is the state at a checkpoint's point in the history.
type checkpointCut struct {
	version *version // referenced; its logNum is the oldest WAL needed
	wals    []cutWAL // oldest first
	lastSeq base.SeqNum
	// nextFileNum is above every file number in use at the cut.
	nextFileNum uint64
}

// cutWAL is a WAL the checkpoint copies: its first size bytes.
type cutWAL struct {
	num  uint64
	f    vfs.File
	size int64
}

// testHookCheckpointCut, if set, runs after a checkpoint's cut, with no
// lock held, before anything is copied (tests only).
var testHookCheckpointCut func()

// checkpointCut takes the cut: for a read-write DB through the commit
// pipeline, between two groups; for a read-only one, whose state never
// changes, at once.
func (d *DB) checkpointCut() (*checkpointCut, error) {
	c := &checkpointCut{}
	if d.opts.ReadOnly {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.mu.closed {
			return nil, ErrClosed
		}
		return c, d.cutLocked(c, -1)
	}
	if err := d.enterWriter(); err != nil {
		return nil, err
	}
	defer d.exitWriter()
	req := &commitRequest{cut: func() error {
		// The leader runs this: no other goroutine touches the WAL writer.
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		if err := d.mu.wal.Flush(); err != nil {
			return d.walFailedLocked(err)
		}
		return d.cutLocked(c, d.mu.wal.Size())
	}}
	if err := d.commit.commit(req, d.applyGroup); err != nil {
		return nil, err
	}
	if testHookCheckpointCut != nil {
		testHookCheckpointCut()
	}
	return c, nil
}

// cutLocked fills in c from the DB's state now. liveSize is the length of
// the WAL being written (d.mu.memWAL), all of it flushed to the file; -1
// for a read-only DB, whose WALs are the ones it replayed, whole. d.mu is
// held.
func (d *DB) cutLocked(c *checkpointCut, liveSize int64) error {
	v := d.mu.current
	var nums []uint64
	if d.opts.ReadOnly {
		// No writer has the directory (the shared lock keeps one out), so
		// its WALs are the ones Open replayed, as they were.
		names, err := d.fs.List(d.dirname)
		if err != nil {
			return err
		}
		for _, name := range names {
			if t, num, ok := manifest.ParseFilename(name); ok && t == manifest.FileTypeWAL && num >= v.logNum {
				nums = append(nums, num)
			}
		}
		slices.Sort(nums)
	} else {
		// An immutable memtable whose WAL is below the version's log
		// number is in the version already (its flush's edit is
		// installed; it leaves d.mu.imm just after).
		for _, imm := range d.mu.imm {
			if imm.walNum >= v.logNum {
				nums = append(nums, imm.walNum)
			}
		}
		nums = append(nums, d.mu.memWAL)
	}
	for _, num := range nums {
		f, err := d.fs.Open(manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeWAL, num))
		size := liveSize
		if err == nil && (liveSize < 0 || num != d.mu.memWAL) {
			var info iofs.FileInfo
			if info, err = f.Stat(); err == nil {
				size = info.Size()
			} else {
				f.Close()
			}
		}
		if err != nil {
			closeCutWALs(c.wals)
			c.wals = nil
			return err
		}
		c.wals = append(c.wals, cutWAL{num: num, f: f, size: size})
	}
	v.refs++
	c.version = v
	c.lastSeq = d.mu.lastSeq
	c.nextFileNum = d.mu.nextFileNum
	return nil
}

// releaseCut drops what the cut pinned.
func (d *DB) releaseCut(c *checkpointCut) {
	closeCutWALs(c.wals)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unrefVersionLocked(c.version)
}

func closeCutWALs(wals []cutWAL) {
	for _, w := range wals {
		w.f.Close()
	}
}

// checkpointWriter writes a checkpoint's directory, remembering what it
// made there so that a failure can take it back.
type checkpointWriter struct {
	fs         vfs.FS
	dir        string
	createdDir bool
	created    []string // paths of the files made in dir
	buf        []byte   // copy buffer
}

// prepareDir makes the target directory, or checks that it is empty.
func (w *checkpointWriter) prepareDir() error {
	info, err := w.fs.Stat(w.dir)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		w.createdDir = true // if MkdirAll fails after making it, abandon removes it
		if err := mkdirAllAndSyncParents(w.fs, w.dir); err != nil {
			return err
		}
	case err != nil:
		return err
	case !info.IsDir():
		return &markedError{msg: "not a directory: a checkpoint needs a missing or empty directory", errs: []error{iofs.ErrExist}}
	}
	// Checked after MkdirAll too, which also succeeds on a directory just
	// made by someone else.
	names, err := w.fs.List(w.dir)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return &markedError{
			msg:  fmt.Sprintf("not empty (%s): a checkpoint needs a missing or empty directory; nothing in it was changed", listNames(names)),
			errs: []error{iofs.ErrExist},
		}
	}
	if !w.createdDir {
		// The directory's own entry may be new and not yet durable.
		return w.fs.SyncDir(w.fs.PathDir(w.dir))
	}
	return nil
}

// write writes the checkpoint of cut, from DB d.
func (w *checkpointWriter) write(d *DB, cut *checkpointCut) error {
	for _, files := range cut.version.Levels {
		for _, f := range files {
			src := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, f.FileNum)
			if err := w.linkOrCopy(src, manifest.MakeFilename(manifest.FileTypeTable, f.FileNum)); err != nil {
				return err
			}
		}
	}
	for _, b := range cut.version.Blobs {
		name := manifest.MakeFilename(manifest.FileTypeBlob, b.FileNum)
		if err := w.linkOrCopy(d.fs.PathJoin(d.dirname, name), name); err != nil {
			return err
		}
	}
	for _, wal := range cut.wals {
		if err := w.copyFile(io.NewSectionReader(wal.f, 0, wal.size), wal.size, manifest.MakeFilename(manifest.FileTypeWAL, wal.num)); err != nil {
			return err
		}
	}
	// A LOCK file, as every DB directory bloomkv makes has one: a
	// read-only Open needs it.
	if err := w.copyFile(strings.NewReader(""), 0, manifest.MakeFilename(manifest.FileTypeLock, 0)); err != nil {
		return err
	}
	// manifest.Create syncs the directory after writing the manifest and
	// before CURRENT: every entry made so far is durable before CURRENT
	// names the manifest that lists them.
	num := cut.nextFileNum
	state := manifest.State{
		Version:        cut.version.Version,
		LogNumber:      cut.version.logNum,
		NextFileNumber: num + 1,
		LastSeqNum:     cut.lastSeq,
	}
	for _, name := range []string{
		manifest.MakeFilename(manifest.FileTypeManifest, num),
		manifest.MakeFilename(manifest.FileTypeTemp, num),
		manifest.MakeFilename(manifest.FileTypeCurrent, 0),
	} {
		w.created = append(w.created, w.fs.PathJoin(w.dir, name))
	}
	l, err := manifest.Create(w.fs, w.dir, num, state.SnapshotEdit())
	if err != nil {
		return err
	}
	return l.Close()
}

// linkOrCopy makes the table src the file name in the target: a hard link,
// or a copy where the file system cannot link the two.
func (w *checkpointWriter) linkOrCopy(src, name string) error {
	dst := w.fs.PathJoin(w.dir, name)
	err := vfs.Link(w.fs, src, dst)
	if err == nil {
		w.created = append(w.created, dst)
		return nil
	}
	if !vfs.LinkUnsupported(err) {
		return err
	}
	f, err := w.fs.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	return w.copyFile(io.NewSectionReader(f, 0, info.Size()), info.Size(), name)
}

// copyFile writes the size bytes of r as the file name in the target, and
// syncs it.
func (w *checkpointWriter) copyFile(r io.Reader, size int64, name string) error {
	dst := w.fs.PathJoin(w.dir, name)
	f, err := w.fs.Create(dst)
	if err != nil {
		return err
	}
	w.created = append(w.created, dst)
	if w.buf == nil {
		w.buf = make([]byte, 256<<10)
	}
	n, err := io.CopyBuffer(f, r, w.buf)
	if err == nil && n != size {
		err = fmt.Errorf("copying %s: %d bytes, want %d: %w", name, n, size, io.ErrUnexpectedEOF)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abandon removes what the checkpoint made, after a failure: its files,
// then the directory if it made it (only if empty: a file someone else
// put there stays).
func (w *checkpointWriter) abandon() {
	for _, path := range slices.Backward(w.created) {
		w.fs.Remove(path)
	}
	if w.createdDir {
		w.fs.Remove(w.dir)
	}
}

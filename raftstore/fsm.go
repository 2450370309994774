package raftstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/vfs"
)

// ErrBadCommand is wrapped by the response FSM.Apply gives to a log entry
// that is not a well-formed command (AppendSet, AppendDelete,
// AppendCompare). Such an entry changes nothing, on every node alike.
var ErrBadCommand = errors.New("raftstore: bad command")

// ErrCompareFailed is the response FSM.Apply gives to a command one of
// whose conditions (AppendCompare) did not hold: the command changed
// nothing, on every node alike.
var ErrCompareFailed = errors.New("raftstore: compare failed")

// The keys of a state DB: the user's keys under statePrefix, the applied
// index (8 bytes, big-endian) under appliedKey, which sorts before them.
var (
	appliedKey  = []byte("a")
	statePrefix = []byte("k")
	stateUpper  = []byte("l")
)

func stateKey(k []byte) []byte {
	return append(append(make([]byte, 0, len(statePrefix)+len(k)), statePrefix...), k...)
}

// The files of an FSM directory: stateFile names the current state
// directory, stateDirPrefix + 6 digits; snapshotDirPrefix + 6 or more
// digits is the checkpoint of a snapshot not yet released (see
// snapshotName).
const (
	stateFile         = "STATE"
	stateTmpFile      = "STATE.tmp"
	stateDirPrefix    = "state-"
	snapshotDirPrefix = "snapshot-"
)

// FSMOptions configure an FSM. The zero value is the default.
type FSMOptions struct {
	// DB are the options of the state DBs; nil means bloomkv's defaults.
	// ErrorIfNotExists, ErrorIfExists and ReadOnly are the FSM's to set.
	DB *bloomkv.Options
	// Sync makes every Apply durable before it returns. Without it (the
	// default) a crash may lose the last entries applied, with their applied
	// index (bloomkv keeps the history a prefix), and raft applies them
	// again from its log on restart; the state is made durable at every
	// Snapshot, so it never falls behind a snapshot raft holds.
	Sync bool
}

// FSM is a raft.BatchingFSM keeping a replicated key-value state in a bloomkv
// DB: each command (AppendSet, AppendDelete; AppendCompare makes it
// conditional) is applied in one batch together with the entry's index,
// Snapshot takes a checkpoint of the DB (a point-in-time copy, its tables
// hard-linked) that Persist streams, and Restore builds a new DB from a
// snapshot and swaps it in. Get and Scan read
// the local state, which on a follower may be behind the leader's; read
// through the leader after raft's VerifyLeader or Barrier for linearizable
// reads.
//
// Apply, ApplyBatch, Snapshot and Restore are raft's to call (from one
// goroutine, as raft does); Get, Scan and AppliedIndex are safe to call
// concurrently with them and each other.
type FSM struct {
	dir  string
	opts FSMOptions
	fs   vfs.FS // opts.DB.FS, or vfs.Default

	// mu guards cur: held for reading by Get and Scan while they read it,
	// for writing by Restore to swap it.
	mu  sync.RWMutex
	cur *state

	// applied is the index of the last entry applied (0 for none). Written
	// only by raft's FSM goroutine.
	applied atomic.Uint64
	// failed is the write error that stopped ApplyBatch: the state no
	// longer follows the log, so every later entry fails with it until a
	// Restore, or a restart that rebuilds the state from raft.
	failed error
	// snapshots numbers the checkpoint directories of Snapshot. Written
	// only by raft's FSM goroutine.
	snapshots int
}

var _ raft.BatchingFSM = (*FSM)(nil)

// state is one state directory and its open DB, shared by the FSM and the
// snapshots taken of it.
type state struct {
	seq  int
	path string
	db   *bloomkv.DB
	fs   vfs.FS

	mu      sync.Mutex
	refs    int  // Snapshots checkpointing it
	retired bool // replaced by a Restore, or the FSM closed
	remove  bool // retired by a Restore: remove the directory once closed
	closed  bool
}

func (s *state) acquire() {
	s.mu.Lock()
	s.refs++
	s.mu.Unlock()
}

// release drops a reference taken by acquire.
func (s *state) release() error {
	s.mu.Lock()
	s.refs--
	return s.closeIfDoneLocked()
}

// retire marks the state as no longer the FSM's: once no Snapshot holds it,
// its DB is closed, and its directory removed if remove.
func (s *state) retire(remove bool) error {
	s.mu.Lock()
	s.retired, s.remove = true, remove
	return s.closeIfDoneLocked()
}

func (s *state) closeIfDoneLocked() error {
	done := s.retired && s.refs == 0 && !s.closed
	if done {
		s.closed = true
	}
	remove := s.remove
	s.mu.Unlock()
	if !done {
		return nil
	}
	err := s.db.Close()
	if remove {
		err = errors.Join(err, removeAll(s.fs, s.path))
	}
	return err
}

func stateName(seq int) string { return fmt.Sprintf("%s%06d", stateDirPrefix, seq) }

// parseStateName returns the sequence number of a state directory's name.
func parseStateName(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, stateDirPrefix)
	if !ok || len(digits) != 6 {
		return 0, false
	}
	seq, err := strconv.Atoi(digits)
	return seq, err == nil && seq > 0
}

// OpenFSM opens the FSM in dir, creating it if dir is missing or empty. A
// directory that holds anything but an FSM's files is refused untouched.
// The state is the one the last FSM in dir left, with its AppliedIndex;
// raft's default restore of the latest snapshot at start replaces it, while
// with raft.Config.NoSnapshotRestoreOnStart raft applies the log entries
// after the snapshot and the FSM skips those at or below AppliedIndex.
//
// INVARIANT: STATE names a complete state directory: one holding the whole
// state of some snapshot, or of the empty state, with every entry after it
// up to its applied index. Restore builds the new state beside it and only
// then renames a new STATE over the old, so a crash at any point leaves the
// old state or the new one, whole. Directories of other states are leftovers
// of such a crash, and are removed at Open, as are the checkpoint
// directories of snapshots a crash kept from being released — each only
// once proven a DB directory of the FSM's (see ownDBDir); a directory named
// as one that holds anything else makes OpenFSM refuse the whole directory
// and remove nothing.
func OpenFSM(dir string, opts *FSMOptions) (*FSM, error) {
	f := &FSM{dir: dir, fs: vfs.Default}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.DB != nil && f.opts.DB.FS != nil {
		f.fs = f.opts.DB.FS
	}
	if err := f.fs.MkdirAll(dir); err != nil {
		return nil, err
	}
	if err := f.fs.SyncDir(f.fs.PathDir(dir)); err != nil {
		return nil, err
	}
	entries, err := f.fs.List(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range entries {
		if _, ok := parseStateName(name); ok || name == stateFile || name == stateTmpFile {
			continue
		}
		if isSnapshotName(name) {
			if err := ownSnapshotDir(f.fs, f.fs.PathJoin(dir, name)); err != nil {
				return nil, fmt.Errorf("raftstore: %w: refusing to use %s", err, dir)
			}
			continue
		}
		return nil, fmt.Errorf("raftstore: %s holds %q, which is not an FSM's file: refusing to use it", dir, name)
	}
	seq, err := f.readStateFile()
	if errors.Is(err, fs.ErrNotExist) {
		// A new FSM, or one that crashed in its first OpenFSM before
		// naming its first state (so that state-000001 is empty).
		for _, name := range entries {
			if name != stateName(1) && name != stateTmpFile {
				return nil, fmt.Errorf("raftstore: %s holds %q but no %s: %w", dir, entries, stateFile, bloomkv.ErrCorruption)
			}
		}
		seq = 1
		if err = f.removeAll(f.fs.PathJoin(dir, stateName(1))); err == nil {
			err = f.createState(seq)
		}
		if err == nil {
			err = f.writeStateFile(seq)
		}
	}
	if err != nil {
		return nil, err
	}
	st, applied, err := f.openState(seq, false)
	if err != nil {
		return nil, err
	}
	f.cur = st
	f.applied.Store(applied)
	// Holding the current state's lock, remove the leftovers, once every
	// leftover state directory is proven the FSM's (the checkpoints were
	// above).
	for _, name := range entries {
		if other, ok := parseStateName(name); ok && other != seq {
			if err := ownStateDir(f.fs, f.fs.PathJoin(dir, name)); err != nil {
				_ = st.db.Close()
				return nil, fmt.Errorf("raftstore: %w: refusing to use %s", err, dir)
			}
		}
	}
	for _, name := range entries {
		if other, ok := parseStateName(name); ok && other != seq || name == stateTmpFile || isSnapshotName(name) {
			if err := f.removeAll(f.fs.PathJoin(dir, name)); err != nil {
				_ = st.db.Close()
				return nil, err
			}
		}
	}
	return f, nil
}

// createState creates the empty state directory seq.
func (f *FSM) createState(seq int) error {
	st, _, err := f.openState(seq, true)
	if err != nil {
		return err
	}
	return st.db.Close()
}

// openState opens the DB of state directory seq (creating it if create) and
// returns it with its applied index.
func (f *FSM) openState(seq int, create bool) (*state, uint64, error) {
	var o bloomkv.Options
	if f.opts.DB != nil {
		o = *f.opts.DB
	}
	o.ReadOnly = false
	o.ErrorIfExists, o.ErrorIfNotExists = create, !create
	o.FS = f.fs
	path := f.fs.PathJoin(f.dir, stateName(seq))
	db, err := bloomkv.Open(path, &o)
	if err != nil {
		return nil, 0, err
	}
	applied, err := readApplied(db)
	if err != nil {
		_ = db.Close()
		return nil, 0, err
	}
	return &state{seq: seq, path: path, db: db, fs: f.fs}, applied, nil
}

func readApplied(db *bloomkv.DB) (uint64, error) {
	v, err := db.Get(appliedKey)
	if errors.Is(err, bloomkv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raftstore: applied index of %d bytes: %w", len(v), bloomkv.ErrCorruption)
	}
	return binary.BigEndian.Uint64(v), nil
}

func (f *FSM) readStateFile() (int, error) {
	name := f.fs.PathJoin(f.dir, stateFile)
	file, err := f.fs.Open(name)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(io.LimitReader(file, 64))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	seq, ok := parseStateName(strings.TrimSuffix(string(b), "\n"))
	if !ok || !strings.HasSuffix(string(b), "\n") {
		return 0, fmt.Errorf("raftstore: %s holds %q, not a state directory's name: %w", name, b, bloomkv.ErrCorruption)
	}
	return seq, nil
}

// writeStateFile makes STATE name state seq, atomically and durably: a
// synced temporary file renamed over it, then the directory synced.
func (f *FSM) writeStateFile(seq int) error {
	tmp := f.fs.PathJoin(f.dir, stateTmpFile)
	t, err := f.fs.Create(tmp)
	if err != nil {
		return err
	}
	_, err = t.Write([]byte(stateName(seq) + "\n"))
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.fs.Rename(tmp, f.fs.PathJoin(f.dir, stateFile))
	}
	if err == nil {
		err = f.fs.SyncDir(f.dir)
	}
	return err
}

// ownDBDir returns nil if path, named as the FSM names its directories of
// kind named, is provably a DB directory the FSM made: a directory
// holding nothing but regular files named as bloomkv names a DB's files.
// Otherwise it returns an error naming what is not, and the directory must
// stay untouched.
func ownDBDir(fsys vfs.FS, path, named string) error {
	info, err := fsys.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is named as %s but is not a directory", path, named)
	}
	names, err := fsys.List(path)
	if err != nil {
		return err
	}
	for _, name := range names {
		if !bloomkv.IsDBFileName(name) {
			return fmt.Errorf("%s is named as %s but holds %q, which bloomkv never writes", path, named, name)
		}
		info, err := fsys.Stat(fsys.PathJoin(path, name))
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is named as %s but its %q is not a regular file", path, named, name)
		}
	}
	return nil
}

// ownStateDir is ownDBDir for a state directory that is not the current
// one: the leftover of a Restore a crash or a failure cut short.
func ownStateDir(fsys vfs.FS, path string) error {
	return ownDBDir(fsys, path, "a state directory")
}

// removeAll removes path and everything below it, if it exists; it is only
// called on the FSM's own state and checkpoint directories and STATE.tmp.
func (f *FSM) removeAll(path string) error {
	return removeAll(f.fs, path)
}

func removeAll(fsys vfs.FS, path string) error {
	info, err := fsys.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		names, err := fsys.List(path)
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := removeAll(fsys, fsys.PathJoin(path, name)); err != nil {
				return err
			}
		}
	}
	if err := fsys.Remove(path); err != nil {
		return err
	}
	return fsys.SyncDir(fsys.PathDir(path))
}

// AppliedIndex returns the index of the last log entry applied to the state.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// Get returns the value of key in the local state, or an error wrapping
// bloomkv.ErrNotFound.
func (f *FSM) Get(key []byte) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.cur == nil {
		return nil, bloomkv.ErrClosed
	}
	return f.cur.db.Get(stateKey(key))
}

// Metrics returns the counters of the current state DB (a Restore starts a
// new one, with its own).
func (f *FSM) Metrics() (bloomkv.Metrics, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.cur == nil {
		return bloomkv.Metrics{}, bloomkv.ErrClosed
	}
	return f.cur.db.Metrics(), nil
}

// Scan calls fn with each key and value of the local state in [lower, upper)
// in key order, at one point in time; nil bounds are open. The slices are
// valid only during the call. It stops at fn's first error and returns it.
func (f *FSM) Scan(lower, upper []byte, fn func(key, value []byte) error) error {
	lo, hi := stateKey(lower), stateUpper
	if upper != nil {
		hi = stateKey(upper)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.cur == nil {
		return bloomkv.ErrClosed
	}
	return f.cur.db.Scan(lo, hi, func(k, v []byte) error { return fn(k[len(statePrefix):], v) })
}

// Close closes the state DB. Snapshots taken before it stay valid: each
// persists from its own checkpoint, which its Release removes.
func (f *FSM) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		return bloomkv.ErrClosed
	}
	err := f.cur.retire(false)
	f.cur = nil
	return err
}

// Apply applies one log entry; see ApplyBatch.
func (f *FSM) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// ApplyBatch applies committed log entries in order, in as few batches as
// fit bloomkv.MaxBatchSize, each batch with the index of its last entry, so
// that the state and its applied index move together. A command's response
// is nil, ErrCompareFailed for one whose conditions do not hold, or an
// error wrapping ErrBadCommand for a malformed one (both change nothing); other entries' (configurations) are nil. Entries at or
// below AppliedIndex were applied before a restart and are skipped.
//
// A failed write leaves the state behind the log for good: that entry and
// every later one respond with the error, until raft restores a snapshot
// (Restore) or the node restarts.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	resp := make([]any, len(logs))
	if f.failed != nil {
		for i := range resp {
			resp[i] = f.failed
		}
		return resp
	}
	f.mu.RLock()
	cur := f.cur
	f.mu.RUnlock()
	if cur == nil {
		for i := range resp {
			resp[i] = bloomkv.ErrClosed
		}
		return resp
	}
	db := cur.db
	wo := &bloomkv.WriteOptions{Sync: f.opts.Sync}
	b := bloomkv.NewBatch()
	applied := f.applied.Load()
	pending := 0 // the first entry of logs in b
	commit := func(next int) error {
		if next == pending {
			return nil
		}
		if err := b.Set(appliedKey, binary.BigEndian.AppendUint64(nil, applied)); err != nil {
			return err
		}
		if err := db.Apply(b, wo); err != nil {
			return err
		}
		f.applied.Store(applied)
		b.Reset()
		pending = next
		return nil
	}
	for i, l := range logs {
		if l.Index <= applied {
			continue // applied before a restart
		}
		if l.Type == raft.LogCommand {
			// INVARIANT: a command's ops go into a batch with room for
			// them all (maxCommandSize), so addCommand adds all of a
			// well-formed command or, for a malformed one, nothing.
			if b.Size()+2*len(l.Data)+64 > bloomkv.MaxBatchSize {
				if err := commit(i); err != nil {
					return f.fail(resp, pending, err)
				}
			}
			if err := f.applyCommand(b, db, l.Data, func() error { return commit(i) }); err != nil {
				if !errors.Is(err, ErrBadCommand) && !errors.Is(err, ErrCompareFailed) {
					return f.fail(resp, pending, err)
				}
				resp[i] = err
			}
		}
		applied = l.Index
	}
	if err := commit(len(logs)); err != nil {
		return f.fail(resp, pending, err)
	}
	return resp
}

// applyCommand adds the ops of cmd to b. A command with conditions is
// decided against db once flush has written b's earlier commands, so that
// it sees every entry before it; one whose conditions fail adds nothing and
// returns ErrCompareFailed, a malformed one an error wrapping ErrBadCommand.
// Any other error is a failed read or write of db.
func (f *FSM) applyCommand(b *bloomkv.Batch, db *bloomkv.DB, cmd []byte, flush func() error) error {
	ops, err := parseCommand(cmd)
	if err != nil {
		return err
	}
	if hasCompare(ops) {
		if err := flush(); err != nil {
			return err
		}
		for _, o := range ops {
			if o.code != opCompare {
				continue
			}
			v, err := db.Get(stateKey(o.key))
			switch {
			case errors.Is(err, bloomkv.ErrNotFound):
				if o.value != nil {
					return ErrCompareFailed
				}
			case err != nil:
				return err
			case o.value == nil || !bytes.Equal(v, o.value):
				return ErrCompareFailed
			}
		}
	}
	return addCommand(b, ops)
}

// fail records err as the FSM's failure and makes it the response of the
// entries from first on.
func (f *FSM) fail(resp []any, first int, err error) []any {
	f.failed = fmt.Errorf("raftstore: FSM stopped at a failed write, the state is behind the log: %w", err)
	for i := first; i < len(resp); i++ {
		resp[i] = f.failed
	}
	return resp
}

// Snapshot makes the state durable up to AppliedIndex and takes a
// checkpoint of it, in a directory of its own beside the state, which
// Persist streams while entries go on being applied and Release removes.
// It costs one synced write and the checkpoint — hard links to the tables,
// copies of the WALs of the memtables (a few MB at most with the default
// memtable size), a few syncs — not a pass over the state, which Persist
// makes, off raft's FSM goroutine. That is more than the in-memory view a
// bloomkv Snapshot would be (BenchmarkFSMSnapshot), and bounded by the
// memtables' size whatever the state's.
//
// INVARIANT: the checkpoint holds exactly the state at the applied index
// the snapshot reports. Every batch ApplyBatch writes carries the index of
// its last entry, and raft calls Snapshot on the goroutine that applies,
// so no write is in flight: the checkpoint holds every write acknowledged
// before it, the last of which is that index (Persist checks it).
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	if f.failed != nil {
		return nil, f.failed
	}
	f.mu.RLock()
	st := f.cur
	if st != nil {
		st.acquire()
	}
	f.mu.RUnlock()
	if st == nil {
		return nil, bloomkv.ErrClosed
	}
	applied := f.applied.Load()
	// INVARIANT: the durable applied index is at least that of every
	// snapshot raft may keep. A synced write makes every earlier write
	// durable too.
	err := st.db.Put(appliedKey, binary.BigEndian.AppendUint64(nil, applied), bloomkv.Sync)
	f.snapshots++
	path := f.fs.PathJoin(f.dir, snapshotName(f.snapshots))
	if err == nil {
		err = st.db.Checkpoint(path, nil)
	}
	// The checkpoint is a DB of its own: the state may be retired and
	// closed from now on (its close error is Close's or Restore's to see).
	_ = st.release()
	if err != nil {
		return nil, fmt.Errorf("raftstore: snapshot: %w", err)
	}
	return &fsmSnapshot{path: path, fs: f.fs, opts: f.opts.DB, applied: applied}, nil
}

// Restore replaces the state with the one of a snapshot stream: it builds a
// new state directory from the stream, makes it durable, names it in STATE
// and swaps it in, then removes the old one (once its snapshots are
// released). Until the swap, readers see the old state; a stream that fails
// to read or to check leaves the old state in place.
func (f *FSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	f.mu.RLock()
	cur := f.cur
	f.mu.RUnlock()
	if cur == nil {
		return bloomkv.ErrClosed
	}
	seq := cur.seq + 1
	path := f.fs.PathJoin(f.dir, stateName(seq))
	// A directory of this name is a leftover of a Restore that failed and
	// could not remove it (OpenFSM removes those a crash left); it is
	// removed only once proven the FSM's.
	if err := ownStateDir(f.fs, path); err == nil {
		if err := f.removeAll(path); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("raftstore: restore: %w", err)
	}
	st, _, err := f.openState(seq, true)
	if err != nil {
		return err
	}
	applied, err := readSnapshot(r, st.db)
	if err == nil {
		err = f.writeStateFile(seq)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("raftstore: restore: %w", err), st.db.Close(), f.removeAll(path))
	}
	f.mu.Lock()
	old := f.cur
	f.cur = st
	f.applied.Store(applied)
	f.failed = nil
	f.mu.Unlock()
	// The new state is the FSM's, durably: failing to close or remove the
	// old one is no failure of the restore, and OpenFSM removes what is left.
	_ = old.retire(true)
	return nil
}

// stateSeq returns the number of the current state directory; it grows by
// one with each Restore.
func (f *FSM) stateSeq() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.cur.seq
}

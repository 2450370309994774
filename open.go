package bloomkv

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// Open opens the DB in directory dirname, creating it if it does not exist.
// A nil opts gives the defaults.
//
// Recovery: Open replays the manifest, then the WALs newer than its last
// flush, in order. The newest WAL may end in a torn tail — a write a crash
// cut short, never acknowledged — which is dropped; damage anywhere else is
// an error wrapping ErrCorruption that names the file and offset. What the
// WALs held is written to L0 tables, a new manifest records them, and only
// then are the old WALs and manifest deleted. With Options.ReadOnly the
// WALs are replayed into memory and nothing is written.
//
// Open creates a DB only in a missing or empty directory. A directory
// without CURRENT that holds a DB's files (tables, WALs, a manifest that
// records data) is refused with an error wrapping ErrCorruption, one that
// holds other files with an error wrapping fs.ErrExist; either way nothing
// in it is written or deleted.
//
// A second Open of a directory already open, in this process or another,
// fails at once with an error wrapping ErrLocked, unless both are
// read-only.
func Open(dirname string, opts *Options) (*DB, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &DB{dirname: dirname, opts: o, fs: o.FS, events: newEvents(o.EventListener, o.Logger)}
	// A table's filter and index are freed when a compaction deletes the
	// table, seldom, and may wait long for the next table of their size:
	// their pages go back to the system, from a page up.
	d.tableMemory.ReleaseFrom = tableMemoryReleaseFrom
	d.memtables = memtable.NewPool(o.MemtableSize)
	d.oracle.limit = o.TxnConflictMemory
	if err := d.checkDir(); err != nil {
		return nil, fmt.Errorf("bloomkv: open %s: %w", dirname, err)
	}
	if o.BlockCacheSize > 0 {
		d.cache = cache.New(o.BlockCacheSize)
	}
	if o.memory.limit > 0 {
		d.opts.compaction.FilterBudget = filterBudget{d}
		d.budget.goBase = goMemory()
	}
	if o.memory.limit > 0 && !o.DisablePagedFilters || o.pagedFiltersWithoutLimit {
		d.opts.compaction.PagedFilterBits = o.BitsPerKey // 0 under DisableFilters
	}
	d.opts.compaction.Clock = d.opts.Clock
	d.tableCache = newTableCache(d.fs, tableCacheCapacity(o.MaxOpenFiles, processFileLimit()))
	d.mu.cond.L = &d.mu.Mutex
	d.mu.versions = make(map[*version]struct{})
	d.mu.tables = make(map[uint64]*table)
	d.mu.pendingTables = make(map[uint64]*table)
	d.mu.snapshots = make(map[*Snapshot]struct{})

	lockPath := manifest.MakeFilepath(d.fs, dirname, manifest.FileTypeLock, 0)
	if o.ReadOnly {
		d.lock, err = d.fs.LockShared(lockPath)
		if errors.Is(err, iofs.ErrNotExist) {
			err = fmt.Errorf("%w: the directory has no LOCK file, which every DB bloomkv made has; open it read-write once to add one", err)
		}
	} else {
		if err = mkdirAllAndSyncParents(d.fs, dirname); err == nil {
			d.lock, err = d.fs.Lock(lockPath)
		}
	}
	if err != nil {
		d.cache.Close()
		return nil, fmt.Errorf("bloomkv: open %s: %w", dirname, err)
	}
	d.deleter.start(d.removeObsolete)
	if err := d.recover(); err != nil {
		d.closeFiles()
		return nil, err
	}
	if !o.ReadOnly {
		d.compactCtx, d.cancelCompact = context.WithCancel(context.Background())
		d.bgDone.Add(1 + d.opts.MaxConcurrentCompactions)
		go d.flushLoop()
		for range d.opts.MaxConcurrentCompactions {
			go d.compactionLoop()
		}
	}
	return d, nil
}

// errNoDB and errDBExists are the errors of ErrorIfNotExists and
// ErrorIfExists.
func errNoDB() error {
	return &markedError{msg: "no DB (no CURRENT file)", errs: []error{ErrDBDoesNotExist, iofs.ErrNotExist}}
}

func errDBExists() error {
	return &markedError{msg: "a DB exists, and ErrorIfExists is set", errs: []error{ErrDBAlreadyExists, iofs.ErrExist}}
}

// checkDir applies ErrorIfExists and ErrorIfNotExists, and refuses a
// directory without CURRENT that Open may not create a DB in, before Open
// writes anything (see checkNewDBDir). recover checks again under the lock.
func (d *DB) checkDir() error {
	st, err := probeDir(d.fs, d.dirname)
	switch {
	case err != nil:
		return err
	case st.hasCurrent && d.opts.ErrorIfExists:
		return errDBExists()
	case !st.hasCurrent && (d.opts.ErrorIfNotExists || d.opts.ReadOnly):
		return errNoDB()
	case !st.hasCurrent && st.exists:
		return checkNewDBDir(d.fs, d.dirname, st.names)
	}
	return nil
}

// mkdirAllAndSyncParents creates dir and any missing parents, and makes
// their entries durable: it syncs the closest existing ancestor and every
// directory it created but dir. Without that, a crash could take a new DB's
// directory, and every write acknowledged in it, along.
func mkdirAllAndSyncParents(fs vfs.FS, dir string) error {
	var created []string
	for d := dir; ; {
		if _, err := fs.Stat(d); err == nil {
			break
		} else if !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		created = append(created, d)
		parent := fs.PathDir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(created) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir); err != nil {
		return err
	}
	for _, d := range created {
		if err := fs.SyncDir(fs.PathDir(d)); err != nil {
			return err
		}
	}
	return nil
}

// closeFiles releases what a failed Open had opened.
func (d *DB) closeFiles() {
	for _, t := range d.mu.tables {
		t.close()
	}
	d.tableMemory.Release()
	d.closeBlobs()
	if d.mu.walFile != nil {
		d.mu.walFile.Close()
	}
	if d.manifest != nil {
		d.manifest.Close()
	}
	if d.mu.mem != nil {
		d.mu.mem.Unref()
	}
	if rs := d.mu.readState; rs != nil { // its version's tables are closed above
		rs.mem.Unref()
		for _, m := range rs.imm {
			m.Unref()
		}
	}
	d.memtables.Close()
	d.cache.Close()
	d.deleter.stop()
	d.lock.Close()
}

// recover rebuilds the DB's state from the directory; see Open. Its steps:
// the manifest (recoverManifest), the directory's files (scanFiles), the
// WALs (replayWALs), then, unless read-only, a fresh manifest and WAL
// (startFresh).
func (d *DB) recover() error {
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	rec, state, err := d.recoverManifest(names)
	if err != nil {
		return err
	}
	wals, err := d.scanFiles(names, rec, state)
	if err != nil {
		return err
	}
	edit, err := d.replayWALs(state, wals)
	if err != nil {
		return err
	}
	if d.opts.ReadOnly {
		d.installVersionLocked(state)
		d.visibleSeq.Store(uint64(d.mu.lastSeq))
		return nil
	}
	return d.startFresh(names, state, edit)
}

// recoverManifest recovers the state the manifest records, or, for a new
// DB (no manifest, neither read-only nor ErrorIfNotExists), the empty
// state of a directory checked to hold nothing of a DB's; names is the
// directory's listing. It checks Options.ErrorIfExists and the merger's
// name.
func (d *DB) recoverManifest(names []string) (manifest.Recovered, manifest.State, error) {
	rec, err := manifest.Recover(d.fs, d.dirname)
	state := rec.State
	switch {
	case errors.Is(err, manifest.ErrNoManifest) && !d.opts.ReadOnly && !d.opts.ErrorIfNotExists:
		// Checked before the lock too, but a DB may have been created or
		// CURRENT removed since: only now, under the lock, is it certain.
		if err := checkNewDBDir(d.fs, d.dirname, names); err != nil {
			return rec, state, fmt.Errorf("bloomkv: open %s: %w", d.dirname, err)
		}
		state = manifest.State{Version: &manifest.Version{}, NextFileNumber: 1}
	case errors.Is(err, manifest.ErrNoManifest):
		return rec, state, fmt.Errorf("bloomkv: open %s: %w", d.dirname, errNoDB())
	case err != nil:
		return rec, state, err
	case d.opts.ErrorIfExists:
		return rec, state, fmt.Errorf("bloomkv: open %s: %w", d.dirname, errDBExists())
	}
	if err := checkMergerName(state.MergerName, d.opts.Merger); err != nil {
		return rec, state, err
	}
	return rec, state, nil
}

// scanFiles moves the file counter past every numbered file of names,
// returns the WALs the state has not retired, oldest first, and opens the
// blob files and tables the state's version records, so that a missing
// or damaged one fails Open. A torn last edit of the manifest whose
// previous edit's WAL is gone is corruption.
func (d *DB) scanFiles(names []string, rec manifest.Recovered, state manifest.State) ([]uint64, error) {
	// WALs are created without a manifest edit: move the file counter past
	// every numbered file, so that no number is handed out twice.
	var wals []uint64
	d.mu.nextFileNum = state.NextFileNumber
	for _, name := range names {
		t, num, ok := manifest.ParseFilename(name)
		if !ok {
			continue
		}
		d.mu.nextFileNum = max(d.mu.nextFileNum, num+1)
		if t == manifest.FileTypeWAL && num >= state.LogNumber {
			wals = append(wals, num)
		}
	}
	slices.Sort(wals)

	manifestPath := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeManifest, rec.ManifestFileNum)
	if rec.TornTail && state.LogNumber != 0 && !slices.Contains(wals, state.LogNumber) {
		// A crash that tears the manifest's last edit leaves the WAL of the
		// edit before it: WALs are deleted only after a later edit is
		// durable. Missing, it says the dropped "tail" was a synced edit
		// that damage made unreadable, and the writes it retired are gone.
		return nil, base.Corruptf(manifestPath, 0, "its last edit is unreadable, and the WAL %s of the edit before is gone",
			manifest.MakeFilename(manifest.FileTypeWAL, state.LogNumber))
	}
	for _, b := range state.Version.Blobs {
		// Its footer read now (its handle left to the table cache), so
		// that a missing or damaged blob file fails Open as a table does,
		// not a read later.
		if _, err := d.blobFile(b.FileNum); err != nil {
			return nil, fmt.Errorf("bloomkv: open: the version %s records: %w", manifestPath, err)
		}
	}
	for _, files := range state.Version.Levels {
		for _, f := range files {
			if err := d.openTableLocked(f); err != nil {
				if errors.Is(err, ErrCorruption) && rec.ManifestFileNum != 0 {
					err = fmt.Errorf("bloomkv: open: the version %s records: %w", manifestPath, err)
				}
				return nil, err
			}
		}
	}
	return wals, nil
}

// replayWALs replays wals, oldest first, into memtables from the state's
// last seqnum, writing each full one to an L0 table, and returns the edit
// that adds those tables, newest first. Read-only, it keeps each full
// memtable as an immutable one instead, and the last as the mutable one,
// which no write will reach.
func (d *DB) replayWALs(state manifest.State, wals []uint64) (*manifest.VersionEdit, error) {
	d.mu.lastSeq = state.LastSeqNum
	edit := &manifest.VersionEdit{}
	mem := d.memtables.New()
	defer func() {
		if mem != nil {
			mem.Unref()
		}
	}()
	var replayedWAL uint64 // read-only: the WAL being replayed
	flushReplayed := func() error {
		if d.opts.ReadOnly {
			if !mem.Empty() {
				d.mu.imm = append(d.mu.imm, &immutable{mem: mem, walNum: replayedWAL})
				mem = d.memtables.New()
			}
			return nil
		}
		num := d.mu.nextFileNum
		d.mu.nextFileNum++
		meta, blobMeta, err := d.writeTable(0, "recovery", num, mem, compaction.FilterForLevel(state.Version, 0, &d.opts.compaction, num))
		if err != nil {
			return err
		}
		if meta != nil {
			edit.NewFiles = append(edit.NewFiles, manifest.NewFile{Level: 0, Meta: meta})
		}
		if blobMeta != nil {
			edit.NewBlobFiles = append(edit.NewBlobFiles, blobMeta)
		}
		mem.Unref()
		mem = d.memtables.New()
		return nil
	}
	for i, num := range wals {
		replayedWAL = num
		if err := d.replayWAL(num, i == len(wals)-1, &mem, flushReplayed); err != nil {
			return nil, err
		}
	}
	if d.opts.ReadOnly {
		d.mu.mem, mem = mem, nil
		return edit, nil
	}
	if err := flushReplayed(); err != nil {
		return nil, err
	}
	// A newer table must come first in L0: flushes above went oldest first.
	slices.Reverse(edit.NewFiles)
	return edit, nil
}

// startFresh writes a fresh manifest naming the state with edit applied,
// then a fresh WAL for new writes, installs the version and removes the
// files it retired (names is the directory's listing). In that order:
// until the manifest retires the WALs just replayed, the newest of them,
// which may end in a torn tail, must stay the newest.
func (d *DB) startFresh(names []string, state manifest.State, edit *manifest.VersionEdit) error {
	walNum := d.mu.nextFileNum
	d.mu.nextFileNum++
	manifestNum := d.mu.nextFileNum
	d.mu.nextFileNum++
	edit.LogNumber = walNum
	edit.NextFileNumber = d.mu.nextFileNum
	edit.LastSeqNum = d.mu.lastSeq // zero, in a fresh DB, means "unchanged"
	if state.MergerName == "" && d.opts.Merger != nil {
		edit.MergerName = d.opts.Merger.Name // before any write can merge
	}
	state, err := state.Apply(edit)
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	d.manifest, err = manifest.Create(d.fs, d.dirname, manifestNum, state.SnapshotEdit())
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	d.events.manifestCreated(ManifestCreateInfo{Path: manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeManifest, manifestNum), FileNum: manifestNum})
	f, err := d.createWAL(walNum)
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	d.mu.walFile = f
	d.mu.mem, d.mu.memWAL, d.mu.wal = d.memtables.New(), walNum, record.NewWriter(f)
	for _, nf := range edit.NewFiles {
		if err := d.openTableLocked(nf.Meta); err != nil {
			return err
		}
	}
	d.installVersionLocked(state)
	d.visibleSeq.Store(uint64(d.mu.lastSeq))
	d.removeObsoleteFiles(names, walNum)
	return nil
}

// replayWAL applies the batches of WAL num to *mem, calling flush whenever
// the memtable is full. Only the newest WAL (last) may end in a torn tail.
func (d *DB) replayWAL(num uint64, last bool, mem **memtable.Memtable, flush func() error) error {
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeWAL, num)
	f, err := d.fs.Open(path)
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	defer f.Close()
	r := record.NewReader(f, path)
	for {
		record, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if (*mem).ApproximateSize() >= d.opts.MemtableSize {
			if err := flush(); err != nil {
				return err
			}
		}
		// Check the whole batch before applying any of it: a batch is
		// all or nothing, in recovery too.
		if err := batchrepr.Decode(record, func(batchrepr.Entry) {}); err != nil {
			return base.Corruptf(path, r.Offset(), "%v", err)
		}
		m := *mem
		batchrepr.Decode(record, func(e batchrepr.Entry) {
			applyEntry(m, e)
			d.mu.lastSeq = max(d.mu.lastSeq, e.Seq)
		})
	}
	if off, torn := r.TornTail(); torn && !last {
		// Every WAL but the newest was synced when the next one began.
		return base.Corruptf(path, off, "a WAL older than the newest ends in a torn tail")
	}
	return nil
}

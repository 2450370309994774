package bloomkv

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"

	"github.com/bloomkv/bloomkv/compaction"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/vfs"
	"github.com/bloomkv/bloomkv/memtable"
	"github.com/bloomkv/bloomkv/wal"
)

// Open opens the DB in directory dirname, creating it if it does not exist.
// A nil opts gives the defaults.
//
// Recovery: Open replays the manifest, then the WALs newer than its last
// flush, in order. The newest WAL may end in a torn tail — a write a crash
// cut short, never acknowledged — which is dropped; damage anywhere else is
// an error wrapping ErrCorruption that names the file and offset. What the
// WALs held is written to L0 tables, a new manifest records them, and only
// then are the old WALs and manifest deleted.
//
// A second Open of a directory already open, in this process or another,
// fails at once with an error wrapping ErrLocked.
func Open(dirname string, opts *Options) (*DB, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &DB{dirname: dirname, opts: o, fs: o.FS}
	if o.BlockCacheSize > 0 {
		d.cache = cache.New(o.BlockCacheSize)
	}
	d.mu.cond.L = &d.mu.Mutex
	d.mu.versions = make(map[*version]struct{})
	d.mu.tables = make(map[uint64]*table)
	d.mu.snapshots = make(map[*Snapshot]struct{})

	if err := mkdirAllAndSyncParents(d.fs, dirname); err != nil {
		return nil, fmt.Errorf("bloomkv: open %s: %w", dirname, err)
	}
	lock, err := d.fs.Lock(manifest.MakeFilepath(d.fs, dirname, manifest.FileTypeLock, 0))
	if err != nil {
		return nil, fmt.Errorf("bloomkv: open %s: %w", dirname, err)
	}
	d.lock = lock
	if err := d.recover(); err != nil {
		d.closeFiles()
		return nil, err
	}
	d.compactCtx, d.cancelCompact = context.WithCancel(context.Background())
	d.bgDone.Add(2)
	go d.flushLoop()
	go d.compactionLoop()
	return d, nil
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
	if d.mu.walFile != nil {
		d.mu.walFile.Close()
	}
	if d.manifest != nil {
		d.manifest.Close()
	}
	if d.mu.mem != nil {
		d.mu.mem.Unref()
	}
	d.cache.Close()
	d.lock.Close()
}

// recover rebuilds the DB's state from the directory; see Open.
func (d *DB) recover() error {
	rec, err := manifest.Recover(d.fs, d.dirname)
	state := rec.State
	switch {
	case errors.Is(err, manifest.ErrNoManifest):
		state = manifest.State{Version: &manifest.Version{}, NextFileNumber: 1}
	case err != nil:
		return err
	}

	// WALs are created without a manifest edit: move the file counter past
	// every numbered file, so that no number is handed out twice.
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
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
		return base.Corruptf(manifestPath, 0, "its last edit is unreadable, and the WAL %s of the edit before is gone",
			manifest.MakeFilename(manifest.FileTypeWAL, state.LogNumber))
	}
	for _, files := range state.Version.Levels {
		for _, f := range files {
			if err := d.openTableLocked(f); err != nil {
				if errors.Is(err, ErrCorruption) && rec.ManifestFileNum != 0 {
					err = fmt.Errorf("bloomkv: open: the version %s records: %w", manifestPath, err)
				}
				return err
			}
		}
	}

	// Replay the WALs into memtables, writing each full one to L0.
	d.mu.lastSeq = state.LastSeqNum
	edit := &manifest.VersionEdit{}
	mem := memtable.New(d.opts.MemtableSize)
	defer func() { mem.Unref() }() // whichever replay memtable is current
	flushReplayed := func() error {
		num := d.mu.nextFileNum
		d.mu.nextFileNum++
		meta, err := d.writeTable(num, mem, compaction.BitsPerKeyForLevel(state.Version, 0, &d.opts.compaction))
		if err != nil {
			return err
		}
		if meta != nil {
			edit.NewFiles = append(edit.NewFiles, manifest.NewFile{Level: 0, Meta: meta})
		}
		mem.Unref()
		mem = memtable.New(d.opts.MemtableSize)
		return nil
	}
	for i, num := range wals {
		if err := d.replayWAL(num, i == len(wals)-1, &mem, flushReplayed); err != nil {
			return err
		}
	}
	if err := flushReplayed(); err != nil {
		return err
	}
	// A newer table must come first in L0: flushes above went oldest first.
	slices.Reverse(edit.NewFiles)

	// A fresh manifest naming everything, then a fresh WAL for new writes.
	// In that order: until the manifest retires the WALs just replayed, the
	// newest of them, which may end in a torn tail, must stay the newest.
	walNum := d.mu.nextFileNum
	d.mu.nextFileNum++
	manifestNum := d.mu.nextFileNum
	d.mu.nextFileNum++
	edit.LogNumber = walNum
	edit.NextFileNumber = d.mu.nextFileNum
	edit.LastSeqNum = d.mu.lastSeq // zero, in a fresh DB, means "unchanged"
	state, err = state.Apply(edit)
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	d.manifest, err = manifest.Create(d.fs, d.dirname, manifestNum, state.SnapshotEdit())
	if err != nil {
		return fmt.Errorf("bloomkv: open: %w", err)
	}
	f, err := d.fs.Create(manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeWAL, walNum))
	if err == nil {
		d.mu.walFile = f
		err = d.fs.SyncDir(d.dirname)
	}
	if err != nil {
		return fmt.Errorf("bloomkv: open: new WAL: %w", err)
	}
	d.mu.mem, d.mu.memWAL, d.mu.wal = memtable.New(d.opts.MemtableSize), walNum, wal.NewWriter(f)
	for _, nf := range edit.NewFiles {
		if err := d.openTableLocked(nf.Meta); err != nil {
			return err
		}
	}
	d.installVersionLocked(state.Version)
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
	r := wal.NewReader(f, path)
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
			m.Add(e.Seq, e.Kind, e.Key, e.Value)
			d.mu.lastSeq = max(d.mu.lastSeq, e.Seq)
		})
	}
	if off, torn := r.TornTail(); torn && !last {
		// Every WAL but the newest was synced when the next one began.
		return base.Corruptf(path, off, "a WAL older than the newest ends in a torn tail")
	}
	return nil
}

// removeObsoleteFiles deletes, after a successful recovery, the files no
// longer needed: older manifests, WALs before walNum, tables the version
// does not list, and temporary files.
func (d *DB) removeObsoleteFiles(names []string, walNum uint64) {
	live := make(map[uint64]bool)
	for num := range d.mu.current.FileNums() {
		live[num] = true
	}
	for _, name := range names {
		t, num, ok := manifest.ParseFilename(name)
		if !ok {
			continue
		}
		obsolete := false
		switch t {
		case manifest.FileTypeManifest:
			obsolete = num != d.manifest.FileNum()
		case manifest.FileTypeWAL:
			obsolete = num < walNum
		case manifest.FileTypeTable:
			obsolete = !live[num]
		case manifest.FileTypeTemp:
			obsolete = true
		}
		if obsolete && d.fs.Remove(d.fs.PathJoin(d.dirname, name)) == nil {
			d.counters.obsoletePurged.Add(1)
		}
	}
}

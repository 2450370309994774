package bloomkv

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// version is a manifest.Version with the references readers hold on it.
// A table stays open, and its file on disk, while any version with
// references, or the current one, lists it.
type version struct {
	*manifest.Version
	// tables are the open tables of Levels, index for index, so that a
	// reader finds a table without the DB's lock.
	tables [manifest.NumLevels][]*table
	// bounds are the key ranges of the levels' tables from L1 down, packed
	// for findTable and plan.
	bounds [manifest.NumLevels]levelBounds
	// probes are what lookups ask of tables first, index for index.
	probes [manifest.NumLevels][]tableProbe
	// logNum is the manifest's log number with this version: the WALs
	// numbered from it on hold every write the version's tables do not.
	logNum uint64
	refs   int // guarded by DB.mu
	// rangeFiltered counts the tables with a range filter: without one,
	// range scans of iterators have no table to leave out.
	rangeFiltered int
	// levelRangeDels are, per level from L1 down, the range tombstones of
	// the level's tables end to end: one list, since the tables do not
	// overlap and each table's tombstones lie within its bounds. Built on
	// an iterator's first need of them; a version never changes, so
	// neither do they.
	levelRangeDels func() [manifest.NumLevels]rangedel.List
}

// concatRangeDels returns, per level from L1 down, its tables' range
// tombstones end to end.
func concatRangeDels(tables *[manifest.NumLevels][]*table) [manifest.NumLevels]rangedel.List {
	var lists [manifest.NumLevels]rangedel.List
	for level := 1; level < manifest.NumLevels; level++ {
		for _, t := range tables[level] {
			lists[level] = append(lists[level], t.reader.RangeDels()...)
		}
	}
	return lists
}

// findTable returns the table of level ≥ 1 whose key range holds userKey,
// or nil: a binary search, since the level's tables do not overlap.
func (v *version) findTable(level int, userKey []byte) *table {
	if i := v.bounds[level].find(userKey); i >= 0 {
		return v.tables[level][i]
	}
	return nil
}

// installVersionLocked makes the version of s current, with s's log
// number; every table it lists must be open, in d.mu.tables or, opened for
// an edit being appended, d.mu.pendingTables, from which it moves them. The
// previous version is retired once its last reader lets go of it.
func (d *DB) installVersionLocked(s manifest.State) {
	v := s.Version
	old := d.mu.current
	nv := &version{Version: v, logNum: s.LogNumber, refs: 1}
	for level, files := range v.Levels {
		for _, f := range files {
			t := d.mu.tables[f.FileNum]
			if t == nil {
				t = d.mu.pendingTables[f.FileNum]
				delete(d.mu.pendingTables, f.FileNum)
				d.mu.tables[f.FileNum] = t
			}
			nv.tables[level] = append(nv.tables[level], t)
			nv.probes[level] = append(nv.probes[level], newTableProbe(t))
			if t.reader.RangeFilter() != nil {
				nv.rangeFiltered++
			}
		}
		switch {
		case level == 0:
		case old != nil && slices.Equal(old.Levels[level], files):
			nv.bounds[level] = old.bounds[level] // most edits change a level or two
		default:
			nv.bounds[level] = newLevelBounds(files)
		}
	}
	nv.levelRangeDels = sync.OnceValue(func() [manifest.NumLevels]rangedel.List { return concatRangeDels(&nv.tables) })
	d.mu.current = nv
	d.budgetLocked(nv)
	d.updateReadStateLocked()
	d.mu.pickGen++
	d.l0DueLocked(v, time.Now())
	d.mu.versions[d.mu.current] = struct{}{}
	if old != nil {
		d.unrefVersionLocked(old)
	}
}

func (d *DB) refVersionLocked() *version {
	d.mu.current.refs++
	return d.mu.current
}

// unrefVersionLocked drops a reference; when a version loses its last one,
// the tables no live version lists are closed and, while the DB is open,
// deleted. (Once it is closed, the DB's reference to the current version
// has been dropped too, and its tables are closed but stay on disk.) Once
// the DB is closed and its last table too, the tables' memory is released.
// Blob files no live version lists go the same way (obsoleteBlobsLocked).
// It returns the first error closing a table's file.
func (d *DB) unrefVersionLocked(v *version) error {
	if v.refs--; v.refs > 0 {
		return nil
	}
	delete(d.mu.versions, v)
	live := make(map[uint64]bool)
	for lv := range d.mu.versions {
		for num := range lv.FileNums() {
			live[num] = true
		}
	}
	var err error
	for num, t := range d.mu.tables {
		if live[num] {
			continue
		}
		delete(d.mu.tables, num)
		if cerr := t.close(); err == nil {
			err = cerr
		}
		if d.mu.closed {
			continue
		}
		d.removeFile(0, manifest.FileTypeTable, num)
	}
	d.obsoleteBlobsLocked(v)
	if !d.mu.closed {
		d.resizeCache() // the closed tables' memory is the cache's now
	}
	if d.mu.closed && len(d.mu.tables) == 0 {
		d.tableMemory.Release()
	}
	return err
}

// applyEditLocked appends edit to the manifest and installs the version it
// makes. d.mu is held, and released during the manifest's fsync.
//
// The tables the edit adds are opened first, so that once the edit is
// durable nothing can fail: a flush or compaction that failed after its
// edit was appended would be retried over data already installed. A failed
// append breaks the manifest: the edit may or may not survive a crash, so
// its tables become orphans, deleted only once the next edit has replaced
// the manifest by one without it (replaceBrokenManifest).
//
// Flushes and compactions append concurrently, so the counters are filled
// in here, in manifest order (they must never go back), and a version is
// installed only if no later edit's version was installed first: each
// version contains every edit before it.
func (d *DB) applyEditLocked(edit *manifest.VersionEdit) error {
	var opened []uint64
	for _, nf := range edit.NewFiles {
		num := nf.Meta.FileNum
		if d.mu.tables[num] != nil || d.mu.pendingTables[num] != nil {
			continue // a trivial move's table, open already
		}
		t, err := d.openTable(nf.Meta)
		if err != nil {
			d.closePendingLocked(opened)
			return fmt.Errorf("bloomkv: opening the new table %06d: %w", num, err)
		}
		d.mu.pendingTables[num] = t
		opened = append(opened, num)
	}

	d.manifestMu.Lock() // lock order: d.mu, then manifestMu
	var replaceNum uint64
	broken := d.manifest.Err() != nil
	if broken {
		replaceNum = d.mu.nextFileNum
		d.mu.nextFileNum++
	}
	edit.NextFileNumber = d.mu.nextFileNum
	edit.LastSeqNum = d.mu.lastSeq
	d.mu.Unlock()
	var err error
	replaced, fatal := false, false
	if broken {
		replaced, fatal, err = d.replaceBrokenManifest(replaceNum, edit.NextFileNumber, edit.LastSeqNum)
	}
	var state manifest.State
	if err == nil {
		state, err = d.manifest.Append(edit)
		if err != nil {
			err = fmt.Errorf("bloomkv: manifest: %w", err)
		}
	}
	d.manifestEdits++
	ticket := d.manifestEdits
	d.manifestMu.Unlock()
	d.mu.Lock()
	if replaced {
		d.removeOrphansLocked() // the new manifest records none of them
	}
	if fatal {
		d.fatalLocked("manifest", err)
	}
	if err != nil {
		d.closePendingLocked(opened)
		for _, nf := range edit.NewFiles {
			if slices.Contains(opened, nf.Meta.FileNum) {
				d.mu.orphans = append(d.mu.orphans, nf.Meta.FileNum)
			}
		}
		for _, b := range edit.NewBlobFiles {
			d.mu.blobOrphans = append(d.mu.blobOrphans, b.FileNum)
		}
		return err
	}
	if ticket < d.mu.installedEdit {
		// A later edit's version, which includes this one, is in: it took
		// the tables it lists; any left are obsolete already.
		d.closePendingLocked(opened)
		return nil
	}
	d.mu.installedEdit = ticket
	d.installVersionLocked(state)
	d.maybeRotateManifestLocked()
	return nil
}

// closePendingLocked closes the tables of nums still in d.mu.pendingTables:
// opened for an edit that failed or that no version lists. Their files are
// left to the caller. d.mu is held.
func (d *DB) closePendingLocked(nums []uint64) {
	for _, num := range nums {
		if t := d.mu.pendingTables[num]; t != nil {
			delete(d.mu.pendingTables, num)
			t.close()
		}
	}
}

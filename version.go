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
//
// A version shares with the one it replaces everything of the levels an
// edit left alone — the slices of tables, probes and bounds — so that
// installing it costs what the edit changed and a copy of the slices of
// the levels it changed, not a pass over the tree.
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
	// seq is the version's place in the order versions were installed,
	// from 1: what a table's born and died refer to.
	seq uint64
	// rangeFiltered counts the tables with a range filter: without one,
	// range scans of iterators have no table to leave out. levelFiltered
	// counts them per level.
	rangeFiltered int
	levelFiltered [manifest.NumLevels]int
	// pinned sums what the tables pin for the memory budget.
	pinned tableCost
	// rangeDels are, per level from L1 down, the range tombstones of the
	// level's tables end to end: one list, since the tables do not
	// overlap and each table's tombstones lie within its bounds. Built on
	// an iterator's first need of them, and shared by the versions after
	// while the level stays; a version never changes, so neither do they.
	rangeDels [manifest.NumLevels]func() rangedel.List
}

// levelRangeDels returns, per level from L1 down, its tables' range
// tombstones end to end.
func (v *version) levelRangeDels() [manifest.NumLevels]rangedel.List {
	var lists [manifest.NumLevels]rangedel.List
	for level := 1; level < manifest.NumLevels; level++ {
		lists[level] = v.rangeDels[level]()
	}
	return lists
}

// concatRangeDels returns tables' range tombstones end to end, in a list
// of their length, which the memory budget counts (rangeDelBytesOf).
func concatRangeDels(tables []*table) rangedel.List {
	n := 0
	for _, t := range tables {
		n += len(t.reader.RangeDels())
	}
	if n == 0 {
		return nil
	}
	list := make(rangedel.List, 0, n)
	for _, t := range tables {
		list = append(list, t.reader.RangeDels()...)
	}
	return list
}

// findTable returns the table of level ≥ 1 whose key range holds userKey,
// or nil: a binary search, since the level's tables do not overlap.
func (v *version) findTable(level int, userKey []byte) *table {
	if i := v.bounds[level].find(userKey); i >= 0 {
		return v.tables[level][i]
	}
	return nil
}

// sameFiles reports whether a and b are one slice: a level a Builder left
// alone, which the new version shares with the old.
func sameFiles(a, b []*manifest.FileMetadata) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// installVersionLocked makes the version of s current, with s's log
// number; every table it lists must be open, in d.mu.tables or, opened for
// an edit being appended, d.mu.pendingTables, from which it moves them. The
// previous version is retired once its last reader lets go of it.
func (d *DB) installVersionLocked(s manifest.State) {
	v := s.Version
	old := d.mu.current
	d.mu.versionSeq++
	nv := &version{Version: v, logNum: s.LogNumber, refs: 1, seq: d.mu.versionSeq}
	if old != nil {
		nv.pinned = old.pinned
	}
	var added, removed []*table
	for level, files := range v.Levels {
		if old != nil && sameFiles(old.Levels[level], files) { // most edits change a level or two
			nv.tables[level], nv.probes[level], nv.bounds[level] = old.tables[level], old.probes[level], old.bounds[level]
			nv.levelFiltered[level], nv.rangeDels[level] = old.levelFiltered[level], old.rangeDels[level]
		} else {
			var runs []levelRun
			nAdded, nRemoved := len(added), len(removed)
			added, removed, runs = d.spliceLevelLocked(nv, old, level, added, removed)
			// What a table pins depends on its level (table.cost).
			for _, t := range removed[nRemoved:] {
				nv.pinned.sub(t.cost(level))
			}
			for _, t := range added[nAdded:] {
				nv.pinned.add(t.cost(level))
			}
			if level > 0 {
				if old != nil {
					nv.bounds[level] = spliceLevelBounds(&old.bounds[level], len(old.Levels[level]), files, runs)
				} else {
					nv.bounds[level] = newLevelBounds(files)
				}
				tables := nv.tables[level]
				nv.rangeDels[level] = sync.OnceValue(func() rangedel.List { return concatRangeDels(tables) })
			}
		}
		nv.rangeFiltered += nv.levelFiltered[level]
	}
	// A table that moved between levels is in both lists: it leaves, then
	// comes back in the same version.
	for _, t := range removed {
		t.died = nv.seq
		if !t.retired {
			t.retired = true
			d.mu.retired = append(d.mu.retired, t)
		}
	}
	for _, t := range added {
		if t.born == 0 {
			t.born = nv.seq
		}
		t.died = 0
	}
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

// spliceLevelLocked fills level of nv — its tables, probes and range
// filters' count — from old's (nil for none), taking over the runs of
// tables both list and opening the way for the others: a walk of the two
// levels in the level's order, which compares pointers along the runs the
// edit left alone. It appends the tables that entered the level to added
// and those that left it to removed, and returns both, and the level's
// runs (see levelRun).
func (d *DB) spliceLevelLocked(nv, old *version, level int, added, removed []*table) ([]*table, []*table, []levelRun) {
	files := nv.Levels[level]
	var oldFiles []*manifest.FileMetadata
	var oldTables []*table
	var oldProbes []tableProbe
	if old != nil {
		oldFiles, oldTables, oldProbes = old.Levels[level], old.tables[level], old.probes[level]
		nv.levelFiltered[level] = old.levelFiltered[level]
	}
	tables := make([]*table, 0, len(files))
	probes := make([]tableProbe, 0, len(files))
	var runs []levelRun
	i, j := 0, 0
	for i < len(files) {
		r := 0
		for i+r < len(files) && j+r < len(oldFiles) && files[i+r] == oldFiles[j+r] {
			r++
		}
		if r > 0 {
			tables, probes = append(tables, oldTables[j:j+r]...), append(probes, oldProbes[j:j+r]...)
			runs = append(runs, levelRun{old: j, n: r})
			i, j = i+r, j+r
			continue
		}
		f := files[i]
		// Both levels are in the level's order, so an old table that sorts
		// at or before f and is not f is in none of files[i:], and was
		// in none of files[:i]: it left.
		if j < len(oldFiles) && manifest.CompareInLevel(level, oldFiles[j], f) <= 0 {
			removed = append(removed, oldTables[j])
			if oldTables[j].reader.RangeFilter() != nil {
				nv.levelFiltered[level]--
			}
			j++
			continue
		}
		t := d.mu.tables[f.FileNum]
		if t == nil {
			t = d.mu.pendingTables[f.FileNum]
			delete(d.mu.pendingTables, f.FileNum)
			d.mu.tables[f.FileNum] = t
		}
		tables, probes = append(tables, t), append(probes, newTableProbe(t))
		if t.reader.RangeFilter() != nil {
			nv.levelFiltered[level]++
		}
		added = append(added, t)
		runs = append(runs, levelRun{old: -1, n: 1})
		i++
	}
	for _, t := range oldTables[j:] {
		removed = append(removed, t)
		if t.reader.RangeFilter() != nil {
			nv.levelFiltered[level]--
		}
	}
	nv.tables[level], nv.probes[level] = tables, probes
	return added, removed, runs
}

func (d *DB) refVersionLocked() *version {
	d.mu.current.refs++
	return d.mu.current
}

// unrefVersionLocked drops a reference; when a version loses its last one,
// the tables no live version lists are closed and, while the DB is open,
// handed to the deleter (deleteObsolete), which removes them off d.mu.
// Those are among the tables versions have left (d.mu.retired): one is
// listed by no version with references once none has its seq within the
// table's [born, died) (see table's invariant), so that the cost is the
// retired tables', not the tree's. (Once the DB is closed, the DB's
// reference to the current version has been dropped too, and the tables no
// version with references lists are closed but stay on disk.) Once the DB
// is closed and its last table too, the tables' memory is released. Blob
// files no live version lists go the same way (obsoleteBlobsLocked). It
// returns the first error closing a table's file.
func (d *DB) unrefVersionLocked(v *version) error {
	if v.refs--; v.refs > 0 {
		return nil
	}
	delete(d.mu.versions, v)
	var err error
	closeTable := func(t *table) {
		delete(d.mu.tables, t.meta.FileNum)
		if cerr := t.close(); err == nil {
			err = cerr
		}
	}
	if d.mu.closed {
		live := make(map[uint64]bool)
		for lv := range d.mu.versions {
			for num := range lv.FileNums() {
				live[num] = true
			}
		}
		for num, t := range d.mu.tables {
			if !live[num] {
				closeTable(t)
			}
		}
	} else {
		seqs := make([]uint64, 0, len(d.mu.versions))
		for lv := range d.mu.versions {
			seqs = append(seqs, lv.seq)
		}
		slices.Sort(seqs)
		kept := d.mu.retired[:0]
		for _, t := range d.mu.retired {
			if t.died == 0 { // a version lists it again
				t.retired = false
				continue
			}
			if i, _ := slices.BinarySearch(seqs, t.born); i < len(seqs) && seqs[i] < t.died {
				kept = append(kept, t)
				continue
			}
			t.retired = false
			closeTable(t)
			d.deleteObsolete(0, manifest.FileTypeTable, t.meta.FileNum)
		}
		clear(d.mu.retired[len(kept):])
		d.mu.retired = kept
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
// makes. d.mu is held, and released while the new tables are opened and
// during the manifest's fsync.
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
	var toOpen []*manifest.FileMetadata
	for _, nf := range edit.NewFiles {
		num := nf.Meta.FileNum
		if d.mu.tables[num] != nil || d.mu.pendingTables[num] != nil {
			continue // a trivial move's table, open already
		}
		toOpen = append(toOpen, nf.Meta)
	}
	// Opening a table reads its footer, index and filter: d.mu is released
	// meanwhile, as for the append below, since a writer that waits for
	// d.mu would wait for every table a compaction wrote (in a mutex
	// profile of a 10M-key fill, the hold of d.mu that others waited for
	// most). The new tables are the edit's own, which nothing else opens.
	d.mu.Unlock()
	var opened []uint64
	tables := make([]*table, 0, len(toOpen))
	var err error
	for _, meta := range toOpen {
		var t *table
		if t, err = d.openTable(meta); err != nil {
			err = fmt.Errorf("bloomkv: opening the new table %06d: %w", meta.FileNum, err)
			break
		}
		tables = append(tables, t)
	}
	d.mu.Lock()
	for i, t := range tables {
		d.mu.pendingTables[toOpen[i].FileNum] = t
		opened = append(opened, toOpen[i].FileNum)
	}
	if err != nil {
		d.closePendingLocked(opened)
		return err
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

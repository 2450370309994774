package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// Bulk ingest. DB.Ingest adds tables written outside the DB with package
// sstable's Writer, which built their filters, in one step:
//
//  1. Validate every file before anything changes: the footer and every
//     block's checksum (a full read), the filter's family (one this
//     reader decodes), user keys strictly increasing (one version of a
//     key per table: they will all share one seqnum), no point key under
//     the table's own range tombstones (which, at the same seqnum, would
//     delete it or not depending on a tie), only the kinds a table of its
//     own may hold (no blob handles, which point into a DB's blob files;
//     merge operands only with an Options.Merger), and no two files
//     overlapping.
//  2. Link each file into the directory under a fresh file number (a
//     copy where the file system cannot link the two), sync it, sync the
//     directory.
//  3. At a cut of the commit pipeline (commitRequest.cut: no write runs
//     meanwhile): if a memtable holds a key in a table's range, or a
//     table goes to L0 and a memtable holds anything, flush the
//     memtables and wait, so that no older version of an ingested key
//     stays above the tables in the read order, and no memtable flushed
//     later into L0 holds seqnums on both sides of theirs; sync the WAL,
//     so that a crash never keeps the tables and loses a write before
//     them, and so that Ingest returns with every write before it
//     durable (with no tables, the cut stops here); take the next
//     seqnum G, newer than every write before the call; place each table
//     at the deepest level at which neither it nor any level above it
//     overlaps a table, nor a running compaction writes around it;
//     append one manifest edit adding them all, each with G
//     (manifest.FileMetadata.GlobalSeqNum); publish G.
//
// The seqnum G lives in the manifest, not in the files: a linked file is
// the user's file under a second name, so writing G into its properties
// (as RocksDB once did) would change the user's file; and the manifest
// edit that adds the table is the one place that makes it part of the DB
// anyway. The reader applies G to every key of the table
// (sstable.ReaderOptions.GlobalSeqNum), whatever seqnums the file's keys
// carry: a snapshot older than G sees none of them, a later write
// shadows them.
//
// INVARIANT: a crash at any step leaves all of the tables in the DB or
// none: they join in one edit, appended (and synced) after the files and
// their names are durable. A file linked before a crash but in no edit is
// a table the manifest does not list, under the DB's numbering, in the DB
// directory: the next Open deletes it as obsolete (removeObsoleteFiles),
// which removes a name, never the user's source file.

// Ingest adds the tables at paths to the DB atomically: after it returns
// nil, every key of every table reads as written by one write newer than
// every write that returned before the call, and every such write is
// durable, NoSync ones too (the WAL is synced) — with no paths as well,
// when Ingest adds nothing and only syncs; after an error, the DB holds
// none of the tables, and a crash at any point leaves either all or none.
//
// Each path is a table written with package sstable's Writer (so it
// carries its filter), holding at most one version of each user key, of
// kinds KindSet, KindSetTTL, KindDelete, or KindMerge with an
// Options.Merger, and any range tombstones, none covering the table's own
// keys; the seqnums it was written with are ignored. The tables must not
// overlap one another. Every file is read whole and checked before
// anything changes: a damaged one is an error wrapping ErrCorruption with
// its name and the offset; any other refusal names the file and why.
//
// The DB hard-links each file into its directory (copies it where the file
// system cannot link the two) and never changes or removes the file at
// the path given: deleting it afterwards is safe, but writing to it would
// change the DB's table through the shared link — replace it by a rename
// instead. A table whose key range holds a key of a memtable makes
// Ingest flush the memtables first, holding writes meanwhile; each table
// goes to the deepest level where it overlaps no table of that level or
// any level above. A read-only DB returns ErrReadOnly.
func (d *DB) Ingest(paths []string) error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if err := d.checkOpen(); err != nil {
		return err
	}
	files := make([]*ingestFile, 0, len(paths))
	for _, path := range paths {
		f, err := d.validateIngest(path)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b *ingestFile) int { return bytes.Compare(a.meta.Smallest.UserKey, b.meta.Smallest.UserKey) })
	for i := 1; i < len(sorted); i++ {
		if a, b := sorted[i-1], sorted[i]; bytes.Compare(a.meta.Largest.UserKey, b.meta.Smallest.UserKey) >= 0 {
			return fmt.Errorf("bloomkv: ingest: %s and %s overlap: [%q, %q] and [%q, %q]", a.path, b.path,
				a.meta.Smallest.UserKey, a.meta.Largest.UserKey, b.meta.Smallest.UserKey, b.meta.Largest.UserKey)
		}
	}

	linked, err := d.linkIngested(files)
	if err != nil {
		return err
	}
	if err := d.enterWriter(); err != nil {
		d.removeIngested(files, linked)
		return err
	}
	defer d.exitWriter()
	req := &commitRequest{cut: func() error { return d.ingestCut(files) }}
	if err := d.commit.commit(req, d.applyGroup); err != nil {
		d.removeIngested(files, linked)
		return err
	}
	if len(files) == 0 {
		return nil // no table added: not counted in Metrics.Ingests
	}
	var size uint64
	for _, f := range files {
		size += f.meta.Size
	}
	d.counters.ingests.Add(1)
	d.counters.tablesIngested.Add(uint64(len(files)))
	d.counters.bytesIngested.Add(size)
	return nil
}

// ingestFile is a table Ingest validated: the path given, and its record
// as the manifest will hold it once it has a file number and a seqnum.
type ingestFile struct {
	path string
	meta *manifest.FileMetadata
}

// validateIngest reads the table at path whole and checks what Ingest
// requires of it (see the steps above).
func (d *DB) validateIngest(path string) (*ingestFile, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("bloomkv: ingest %s: %s", path, fmt.Sprintf(format, args...))
	}
	info, err := d.fs.Stat(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil, fmt.Errorf("bloomkv: ingest %s: no such file: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("bloomkv: ingest %s: %w", path, err)
	case info.IsDir():
		return nil, fail("a directory, not a table")
	}
	if d.inDBDir(path) {
		return nil, fail("a file of the DB's own directory; ingest a table from elsewhere")
	}
	file, err := d.fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bloomkv: ingest %s: %w", path, err)
	}
	defer file.Close()
	r, err := sstable.Open(file, info.Size(), sstable.ReaderOptions{FileName: path})
	if err != nil {
		return nil, fmt.Errorf("bloomkv: ingest: %w", err)
	}
	defer r.Close()
	props := r.Properties()
	if props.Compression == 0 {
		return nil, fail("its properties record no compression: a table written before they did")
	}
	rangeDels := r.RangeDels()
	it := r.NewScanIterator()
	defer it.Close()
	var prev []byte
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		switch kind := k.Kind(); {
		case kind == base.KindSetBlob || kind == base.KindSetBlobTTL:
			return nil, fail("key %q is a blob handle (%v), which points into another DB's blob files", k.UserKey, kind)
		case kind == base.KindMerge && d.opts.Merger == nil:
			return nil, fail("key %q is a merge operand, and the DB has no Options.Merger", k.UserKey)
		case kind != base.KindSet && kind != base.KindSetTTL && kind != base.KindDelete && kind != base.KindMerge:
			return nil, fail("key %q has kind %v, which a table to ingest may not hold", k.UserKey, kind)
		}
		if n > 0 && bytes.Compare(prev, k.UserKey) >= 0 {
			return nil, fail("key %q follows %q: user keys must be strictly increasing, one version of a key per table", k.UserKey, prev)
		}
		if f := rangeDels.Find(k.UserKey); f != nil {
			return nil, fail("key %q lies under the table's own range tombstone [%q, %q)", k.UserKey, f.Start, f.End)
		}
		prev = append(prev[:0], k.UserKey...)
		n++
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("bloomkv: ingest: %w", err)
	}
	if n == 0 && len(rangeDels) == 0 {
		return nil, fail("the table holds no keys")
	}
	meta := compaction.TableMetadata(0, uint64(info.Size()), &props)
	meta.Smallest.UserKey = bytes.Clone(meta.Smallest.UserKey)
	meta.Largest.UserKey = bytes.Clone(meta.Largest.UserKey)
	return &ingestFile{path: path, meta: meta}, nil
}

// inDBDir reports whether path names a file of the DB's directory by a
// name the DB gives its files: ingesting one would hand the DB a file it
// may delete as its own.
func (d *DB) inDBDir(path string) bool {
	if !IsDBFileName(d.fs.PathBase(path)) {
		return false
	}
	dir, err1 := filepath.Abs(d.fs.PathDir(path))
	db, err2 := filepath.Abs(d.dirname)
	return err1 != nil || err2 != nil || dir == db
}

// linkIngested gives each file a file number and links (or copies) it into
// the directory under that number, syncs it and then the directory. On
// failure it removes what it made. It returns the paths it made, for
// removeIngested.
func (d *DB) linkIngested(files []*ingestFile) ([]string, error) {
	d.mu.Lock()
	for _, f := range files {
		f.meta.FileNum = d.mu.nextFileNum
		d.mu.nextFileNum++
	}
	d.mu.Unlock()
	w := &checkpointWriter{fs: d.fs, dir: d.dirname}
	err := func() error {
		for _, f := range files {
			name := manifest.MakeFilename(manifest.FileTypeTable, f.meta.FileNum)
			if err := w.linkOrCopy(f.path, name); err != nil {
				return err
			}
			// A copy is synced; a link shares the source's bytes, durable
			// only as far as its writer synced them.
			if err := syncFile(d, w.fs.PathJoin(d.dirname, name)); err != nil {
				return err
			}
		}
		return d.fs.SyncDir(d.dirname)
	}()
	if err != nil {
		w.abandon()
		return nil, fmt.Errorf("bloomkv: ingest: %w", err)
	}
	return w.created, nil
}

// syncFile syncs the file at path.
func syncFile(d *DB, path string) error {
	f, err := d.fs.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeIngested removes the links (or copies) of a failed Ingest, unless
// a failed manifest append made them orphans, which the DB removes once
// no manifest can record them (removeOrphansLocked).
func (d *DB) removeIngested(files []*ingestFile, linked []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range files {
		if slices.Contains(d.mu.orphans, f.meta.FileNum) {
			return
		}
	}
	for _, path := range linked {
		d.fs.Remove(path)
	}
}

// ingestCut adds the tables, linked and synced, to the tree, after it has
// synced the WAL (all it does for no tables): the leader of the commit
// pipeline runs it between two groups (commitRequest.cut).
func (d *DB) ingestCut(files []*ingestFile) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.writeErrLocked(); err != nil {
		return err
	}
	levels := d.ingestLevelsLocked(files)
	if d.memtablesOverlapLocked(files) || slices.Contains(levels, 0) && !d.memtablesEmptyLocked() {
		if err := d.flushMemtablesLocked(); err != nil {
			return err
		}
		levels = d.ingestLevelsLocked(files) // the flush added to L0
	}
	// Every write before the tables durable before them: a crash then
	// loses, at most, writes after them, never some before and not them.
	// (Not counted in Metrics.WALSyncs, which counts the syncs writes
	// ask for; a rotation's is not either.)
	if err := d.mu.wal.Sync(); err != nil {
		return d.walFailedLocked(err)
	}
	if len(files) == 0 {
		return nil // an Ingest of nothing: only the sync, no seqnum, no edit
	}
	d.mu.ingesting = true
	defer func() {
		d.mu.ingesting = false
		d.mu.pickGen++
		d.mu.cond.Broadcast()
	}()
	seq := d.mu.lastSeq + 1
	d.mu.lastSeq = seq
	edit := &manifest.VersionEdit{}
	for i, f := range files {
		m := f.meta
		m.GlobalSeqNum, m.SmallestSeqNum, m.LargestSeqNum = seq, seq, seq
		m.Smallest.Trailer = base.MakeTrailer(seq, m.Smallest.Kind())
		m.Largest.Trailer = base.MakeTrailer(seq, m.Largest.Kind())
		edit.NewFiles = append(edit.NewFiles, manifest.NewFile{Level: levels[i], Meta: m})
	}
	if err := d.applyEditLocked(edit); err != nil {
		return err
	}
	// INVARIANT: published only once the tables are in the current
	// version, as a group's seqnum once its writes are in the memtable.
	d.visibleSeq.Store(uint64(seq))
	rec := &writeRecord{}
	for _, f := range files {
		// A range holding every key the table writes or deletes, for the
		// transactions that read any of them (oracle.go).
		span := keySpan{lo: f.meta.Smallest.UserKey, hi: append(bytes.Clone(f.meta.Largest.UserKey), 0)}
		rec.rangeDels = append(rec.rangeDels, span)
		rec.size += int64(len(span.lo)+len(span.hi)) + recordOverhead
	}
	d.oracle.committed(nil, seq, rec)
	return nil
}

// memtablesOverlapLocked reports whether a memtable holds a key, or a
// range tombstone, within a table's range: its versions are older than the
// tables', and reads look in the memtables first, so they must be flushed
// first. d.mu is held.
func (d *DB) memtablesOverlapLocked(files []*ingestFile) bool {
	mems := []*memtable.Memtable{d.mu.mem}
	for _, imm := range d.mu.imm {
		mems = append(mems, imm.mem)
	}
	return slices.ContainsFunc(mems, func(m *memtable.Memtable) bool {
		return slices.ContainsFunc(files, func(f *ingestFile) bool {
			return memtableOverlaps(m, f.meta.Smallest.UserKey, f.meta.Largest.UserKey)
		})
	})
}

// memtablesEmptyLocked reports whether no memtable holds a write. A table
// ingested into L0 needs that: a memtable flushed after it would hold
// seqnums on both sides of its seqnum, and, once later writes overlap it,
// break L0's order (overlapping L0 tables have disjoint seqnum ranges).
// d.mu is held.
func (d *DB) memtablesEmptyLocked() bool {
	return d.mu.mem.Empty() && len(d.mu.imm) == 0
}

// flushMemtablesLocked rotates the mutable memtable, unless empty, and
// waits until every memtable is flushed. d.mu is held, by the commit
// pipeline's leader (which alone may rotate the memtable, and so no write
// refills it meanwhile), and released while it waits.
func (d *DB) flushMemtablesLocked() error {
	failures := d.mu.flushRetry.total
	if !d.mu.mem.Empty() {
		if err := d.rotateMemtableLocked(); err != nil {
			return err
		}
	}
	err := d.waitFlushedLocked(failures)
	if err != nil && err != ErrClosed && err != d.mu.bgErr { // a failed flush
		err = fmt.Errorf("bloomkv: ingest: flushing the memtables: %w", err)
	}
	return err
}

// memtableOverlaps reports whether m holds a version of a key in [lo, hi],
// or a range tombstone covering one.
func memtableOverlaps(m *memtable.Memtable, lo, hi []byte) bool {
	it := m.NewIter()
	found := it.SeekGE(lo) && bytes.Compare(it.Key().UserKey, hi) <= 0
	it.Close()
	if found {
		return true
	}
	for _, f := range m.RangeDels() {
		if bytes.Compare(f.Start, hi) <= 0 && bytes.Compare(lo, f.End) < 0 {
			return true
		}
	}
	return false
}

// ingestLevelsLocked returns the level of each file (ingestLevelLocked).
func (d *DB) ingestLevelsLocked(files []*ingestFile) []int {
	levels := make([]int, len(files))
	for i, f := range files {
		levels[i] = d.ingestLevelLocked(f.meta)
	}
	return levels
}

// ingestLevelLocked returns the level an ingested table goes to: the
// deepest at which no table of it or of a level above overlaps m — L0 if
// an L0 table does — and above the output level of every running
// compaction whose range overlaps m (its outputs, older than m, would
// otherwise land at or above m's level around it), or L0 for one writing
// into L0. d.mu is held.
func (d *DB) ingestLevelLocked(m *manifest.FileMetadata) int {
	v := d.mu.current.Version
	lo, hi := m.Smallest.UserKey, m.Largest.UserKey
	level := 0
	for l := range manifest.NumLevels {
		if len(v.Overlapping(l, lo, hi)) > 0 {
			break
		}
		level = l
	}
	for _, c := range d.mu.compactions {
		if bytes.Compare(c.Smallest, hi) <= 0 && bytes.Compare(lo, c.Largest) <= 0 {
			level = min(level, max(c.OutputLevel-1, 0))
		}
	}
	return level
}

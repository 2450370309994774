package bloomkv

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/memtable"
	"github.com/bloomkv/bloomkv/sstable"
)

// version is a manifest.Version with the references readers hold on it.
// A table stays open, and its file on disk, while any version with
// references, or the current one, lists it.
type version struct {
	*manifest.Version
	// tables are the open tables of Levels, index for index, so that a
	// reader finds a table without the DB's lock.
	tables [manifest.NumLevels][]*table
	refs   int // guarded by DB.mu
}

// findTable returns the table of level ≥ 1 whose key range holds userKey,
// or nil: a binary search, since the level's tables do not overlap.
func (v *version) findTable(level int, userKey []byte) *table {
	files := v.Levels[level]
	i := sort.Search(len(files), func(i int) bool { return bytes.Compare(files[i].Largest.UserKey, userKey) >= 0 })
	if i < len(files) && files[i].ContainsUserKey(userKey) {
		return v.tables[level][i]
	}
	return nil
}

// table is an open table: its reader, with the filter and index in memory
// for the table's life, and the file the reader reads data blocks from,
// whose handle the DB's table cache closes and reopens as it needs to.
//
// INVARIANT: file is the io.ReaderAt reader was opened on, and is closed by
// close alone, after which neither is used.
type table struct {
	meta   *manifest.FileMetadata
	file   *tableFile
	reader *sstable.Reader
}

// openTableLocked opens the table meta describes and adds it to d.mu.tables.
func (d *DB) openTableLocked(meta *manifest.FileMetadata) error {
	if _, ok := d.mu.tables[meta.FileNum]; ok {
		return nil
	}
	t, err := d.openTable(meta)
	if err != nil {
		return err
	}
	d.mu.tables[meta.FileNum] = t
	return nil
}

// openTable opens the table meta describes through the table cache. The file's first open
// makes the same calls, in the same order, as the handle of its own it
// used to keep: Open, Stat, then sstable.Open's reads.
func (d *DB) openTable(meta *manifest.FileMetadata) (*table, error) {
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, meta.FileNum)
	tf := d.tableCache.newFile(path)
	// Tables are deleted only once no version lists them: a missing one is
	// damage, not an I/O error to retry (acquire reports it so).
	h, err := tf.acquire()
	if err != nil {
		tf.close()
		return nil, err
	}
	info, err := h.file.Stat()
	h.unref()
	if err == nil && uint64(info.Size()) != meta.Size {
		err = fmt.Errorf("%w: %s is %d bytes, the manifest says %d", ErrCorruption, path, info.Size(), meta.Size)
	}
	var r *sstable.Reader
	if err == nil {
		r, err = sstable.Open(tf, info.Size(), sstable.ReaderOptions{FileName: path, FileNum: meta.FileNum, Cache: d.cache, Memory: &d.tableMemory})
	}
	if err != nil {
		tf.close()
		return nil, err
	}
	return &table{meta: meta, file: tf, reader: r}, nil
}

// close returns the memory the table's reader pinned and closes its file
// for good: the handle the table cache holds, if any, now, or when the
// read using it returns.
func (t *table) close() error {
	t.reader.Close()
	return t.file.close()
}

// installVersionLocked makes v current; every table it lists must be open,
// in d.mu.tables or, opened for an edit being appended, d.mu.pendingTables,
// from which it moves them. The previous version is retired once its last
// reader lets go of it.
func (d *DB) installVersionLocked(v *manifest.Version) {
	old := d.mu.current
	nv := &version{Version: v, refs: 1}
	for level, files := range v.Levels {
		for _, f := range files {
			t := d.mu.tables[f.FileNum]
			if t == nil {
				t = d.mu.pendingTables[f.FileNum]
				delete(d.mu.pendingTables, f.FileNum)
				d.mu.tables[f.FileNum] = t
			}
			nv.tables[level] = append(nv.tables[level], t)
		}
	}
	d.mu.current = nv
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
	if d.mu.closed && len(d.mu.tables) == 0 {
		d.tableMemory.Release()
	}
	return err
}

// readState is what one read looks at: the memtables and the version as
// they were when it started, referenced so that nothing it needs goes away.
type readState struct {
	mem     *memtable.Memtable
	imm     []*memtable.Memtable // newest first
	version *version
	// seq is the published sequence number when the state was taken, under
	// d.mu: every write up to it is in the memtables or the version. A read
	// of "now" must use it, not a seqnum loaded before: in between, newer
	// writes could be flushed and compacted, dropping the versions that
	// seqnum sees, since no snapshot protects them.
	seq base.SeqNum
}

// liveSeq, passed to get or newIter, reads at the state's own seq: "now".
const liveSeq = base.SeqNumMax

// testHookAcquireReadState, if set, runs at the start of acquireReadState
// (tests only).
var testHookAcquireReadState func()

// acquireReadState returns the read state now; release it with
// releaseReadState.
func (d *DB) acquireReadState() (*readState, error) {
	if testHookAcquireReadState != nil {
		testHookAcquireReadState()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	rs := &readState{mem: d.mu.mem, version: d.refVersionLocked(), seq: base.SeqNum(d.visibleSeq.Load())}
	rs.mem.Ref()
	for _, imm := range slices.Backward(d.mu.imm) {
		imm.mem.Ref()
		rs.imm = append(rs.imm, imm.mem)
	}
	return rs, nil
}

func (d *DB) releaseReadState(rs *readState) {
	d.mu.Lock()
	d.unrefVersionLocked(rs.version)
	d.mu.Unlock()
	rs.mem.Unref()
	for _, m := range rs.imm {
		m.Unref()
	}
}

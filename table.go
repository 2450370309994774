package bloomkv

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

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
	// born and died bound the versions that list the table, by their
	// seq: the first to list it and the first after it that does not, 0
	// while the current one does. retired reports that it is on
	// DB.mu.retired. Guarded by DB.mu.
	//
	// INVARIANT: every version with seq in [born, died) lists the table,
	// and no other (a table that leaves and comes back counts the versions
	// between as listing it, which keeps it longer, never less): so once
	// no version with references has its seq in that range, no reader can
	// reach the table.
	born, died uint64
	retired    bool
	// fpr is the expected false-positive rate of the table's filter (1
	// without one), by its family's formula: computed once, at open, for
	// Metrics sums it over every table, and the formula of a Bloom filter
	// costs microseconds a table, whose bits per key differ by table.
	fpr float64
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

// mapsTable reports whether the DB reads the table meta describes through
// a mapping of its file (Options.MmapTables): under the default, a table
// whose handles reference more bytes in blob files than the table holds.
func (d *DB) mapsTable(meta *manifest.FileMetadata) bool {
	switch d.opts.MmapTables {
	case MapAllTables:
		return true
	case MapHandleTables:
		return blobBytes(meta.BlobRefs) > meta.Size
	}
	return false
}

// openTable opens the table meta describes through the table cache. The
// file's first open makes the calls of opening a table file, in this
// order: Open, Stat, then sstable.Open's reads.
func (d *DB) openTable(meta *manifest.FileMetadata) (*table, error) {
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeTable, meta.FileNum)
	tf := d.tableCache.newFile(path)
	if d.mapsTable(meta) {
		tf = d.tableCache.newMappedFile(path)
	}
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
		r, err = sstable.Open(tf, info.Size(), sstable.ReaderOptions{FileName: path, FileNum: meta.FileNum, Cache: d.cache, Memory: &d.tableMemory, GlobalSeqNum: meta.GlobalSeqNum})
	}
	if err != nil {
		tf.close()
		return nil, err
	}
	family, bits := meta.Filter()
	fpr := sstable.FilterSpec{Family: sstable.FilterFamily(family), Bits: bits}.ExpectedFalsePositiveRate()
	return &table{meta: meta, file: tf, reader: r, fpr: fpr}, nil
}

// close returns the memory the table's reader pinned and closes its file
// for good: the handle the table cache holds, if any, now, or when the
// read using it returns.
func (t *table) close() error {
	t.reader.Close()
	return t.file.close()
}

// tableInfo describes the table meta records, at level; a zero TableInfo
// for nil.
func tableInfo(level int, meta *manifest.FileMetadata) TableInfo {
	if meta == nil {
		return TableInfo{}
	}
	return TableInfo{FileNum: meta.FileNum, Level: level, Size: meta.Size,
		Smallest: meta.Smallest.UserKey, Largest: meta.Largest.UserKey}
}

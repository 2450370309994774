package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// LiveTable describes one table of the DB's current version: what tools
// that draw the tree (bloomkv web, for one) show of it.
type LiveTable struct {
	TableInfo
	// Entries counts the table's entries (sets and tombstones); 0 for a
	// table recorded before entries were counted.
	Entries uint64
	// SmallestSeqNum and LargestSeqNum bound its entries' sequence numbers.
	SmallestSeqNum, LargestSeqNum uint64
	// Filter is the table's filter, its family and parameter; the zero
	// FilterSpec for none. FilterBitsPerKey is the memory it spends per key.
	Filter           FilterSpec
	FilterBitsPerKey float64
	// PagedFilterBitsPerKey is the bits per key of the table's paged
	// filter (Options.DisablePagedFilters), kept in its file; 0 for none.
	PagedFilterBitsPerKey float64
	// Compression is the compression of its data blocks (blocks that do
	// not shrink are stored raw whatever it says); DefaultCompression for
	// a table recorded before compressions were.
	Compression Compression
	// Ingested reports a table DB.Ingest added, read at the one sequence
	// number SmallestSeqNum (= LargestSeqNum) it was given.
	Ingested bool
}

// Tables returns the tables of the DB's current version, level by level
// from L0 down, each level in its own order: L0 newest first, the deeper
// levels by key. The result is the caller's: its key bounds are copies.
// After Close it returns ErrClosed.
func (d *DB) Tables() ([]LiveTable, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	v := d.mu.current
	if v == nil {
		return nil, nil
	}
	var n int
	for _, files := range v.Levels {
		n += len(files)
	}
	out := make([]LiveTable, 0, n)
	for level, files := range v.Levels {
		for _, m := range files {
			lt := liveTable(level, m)
			if t, ok := d.mu.tables[m.FileNum]; ok {
				lt.PagedFilterBitsPerKey = t.reader.PagedFilterBitsPerKey()
			}
			out = append(out, lt)
		}
	}
	return out, nil
}

func liveTable(level int, m *manifest.FileMetadata) LiveTable {
	family, param := m.Filter()
	info := tableInfo(level, m)
	info.Smallest, info.Largest = bytes.Clone(info.Smallest), bytes.Clone(info.Largest)
	return LiveTable{
		TableInfo:        info,
		Entries:          m.Entries,
		SmallestSeqNum:   uint64(m.SmallestSeqNum),
		LargestSeqNum:    uint64(m.LargestSeqNum),
		Filter:           FilterSpec{Family: FilterFamily(family), Bits: param},
		FilterBitsPerKey: m.FilterBitsPerKey,
		Compression:      Compression(m.Compression),
		Ingested:         m.GlobalSeqNum != 0,
	}
}

package bloomkv

import (
	"bytes"
)

// EstimateDiskUsage returns about how many bytes of the DB's tables hold
// the keys in [lo, hi) (nil: unbounded), as of now: the size of each table
// whose keys all lie in the range, and of each table that straddles a
// bound the share of its file its index attributes to the range (its data
// blocks that may hold such keys, with their part of the table's filter
// and index; see sstable.Reader.EstimateDiskUsage), so that the error is
// at most a data block at each bound per table straddling it. It reads no
// file: the indexes are in memory.
//
// Every version a table holds counts, overwritten and deleted ones too,
// until a compaction drops them: it is the space the range takes on disk,
// not the size of its live data. The memtables are not counted — they are
// not in tables yet; their writes are in the WALs — so a Flush first makes
// recent writes count. Obsolete tables a reader still holds are not
// counted either.
//
// lo after hi is refused with an *ArgumentError; lo equal to hi is an
// empty range.
func (d *DB) EstimateDiskUsage(lo, hi []byte) (uint64, error) {
	if lo != nil && hi != nil && bytes.Compare(lo, hi) > 0 {
		return 0, argError("lo", "%q is after hi %q", lo, hi)
	}
	rs, _, err := d.acquireReadState()
	if err != nil {
		return 0, err
	}
	defer d.releaseReadState(rs)
	var total uint64
	for _, tables := range rs.version.tables {
		for _, t := range tables {
			smallest, largest := t.meta.Smallest.UserKey, t.meta.Largest.UserKey
			switch {
			case hi != nil && bytes.Compare(smallest, hi) >= 0, lo != nil && bytes.Compare(largest, lo) < 0:
				// Wholly outside.
			case (lo == nil || bytes.Compare(smallest, lo) >= 0) && (hi == nil || bytes.Compare(largest, hi) < 0):
				total += t.meta.Size
			default:
				total += t.reader.EstimateDiskUsage(lo, hi)
			}
		}
	}
	return total, nil
}

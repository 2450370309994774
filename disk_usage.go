package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// EstimateDiskUsage returns about how many bytes of the DB's tables hold
// the keys in [lo, hi) (nil: unbounded), as of now: the size of each table
// whose keys all lie in the range, and of each table that straddles a
// bound the share of its file its index attributes to the range (its data
// blocks that may hold such keys, with their part of the table's filter
// and index; see sstable.Reader.EstimateDiskUsage), so that the error is
// at most a data block at each bound per table straddling it. A table's
// separated values (in blob files), the value bytes its handles
// reference, count with it in the same share — of a table straddling a
// bound, an estimate as good as its values are even in size. It reads no
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
				total += t.meta.Size + blobBytes(t.meta.BlobRefs)
			default:
				part := t.reader.EstimateDiskUsage(lo, hi)
				total += part
				if b := blobBytes(t.meta.BlobRefs); b > 0 && t.meta.Size > 0 {
					total += uint64(float64(b) * float64(part) / float64(t.meta.Size))
				}
			}
		}
	}
	return total, nil
}

// blobBytes is the value bytes a table's handles reference.
func blobBytes(refs []manifest.BlobRef) uint64 {
	var n uint64
	for _, r := range refs {
		n += r.Bytes
	}
	return n
}

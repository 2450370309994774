package blob

import "github.com/bloomkv/bloomkv/internal/compress"

// Read-ahead sizes of ReadValueAhead: a read of a record not read ahead
// already reads minReadahead bytes from it, or, if it is near after the
// last record read, twice the last read's, up to maxReadahead (or the
// Readahead's own bound, SetMax).
const (
	minReadahead = 4 << 10
	maxReadahead = 256 << 10
)

// Readahead is the state of a reader going through one blob file's values
// in file order, as a forward scan of the keys of one flush does: the
// bytes read ahead of the last value, and where it ended. The zero value
// is ready to use; it belongs to one goroutine.
type Readahead struct {
	r *Reader
	// buf holds the file's bytes [start, start+len(buf)).
	buf   []byte
	start uint64
	// next is the offset just past the last record read; size the length
	// of the last read from the file.
	next uint64
	size int
	// max bounds a read ahead: maxReadahead if 0.
	max int
	// value holds the last value read if it was compressed.
	value []byte
}

// SetMax bounds the bytes a read ahead reads at n, no fewer than 4 KiB (a
// record longer than that is read whole): the owner of many Readaheads
// keeps their buffers within a budget of its own. 0 sets the default, 256
// KiB.
func (ra *Readahead) SetMax(n int) {
	if n != 0 {
		n = min(max(n, minReadahead), maxReadahead)
	}
	ra.max = n
}

// Reset forgets the file ra read ahead in, keeping its buffer for the
// next file's reads.
func (ra *Readahead) Reset() { *ra = Readahead{buf: ra.buf[:0], max: ra.max, value: ra.value[:0]} }

// ReadValueAhead is ReadValue for a reader that goes through the file in
// order, and returns the value within ra's buffers (the bytes read ahead,
// or, decompressed, a buffer of its own), valid until ra's next read: a
// record in the bytes ra read ahead is taken from them, and any
// other is read with the bytes after it — minReadahead of them, or twice
// the last read's, up to ra's bound, when the record is at most the last
// read's length after the last record read — so that a run of values in
// file order, some skipped (overwritten or deleted) between them, takes
// one system call for many. Each record is checked when it is taken, as
// ReadValue checks it.
func (r *Reader) ReadValueAhead(off, n uint64, ra *Readahead) ([]byte, error) {
	if ra.r != r {
		ra.Reset()
		ra.r = r
	}
	if err := r.checkHandle(off, n); err != nil {
		return nil, err
	}
	recLen := r.RecordLen(n)
	near := ra.size > 0 && off >= ra.next && off-ra.next < uint64(ra.size)
	ra.next = off + recLen
	if off < ra.start || off+recLen > ra.start+uint64(len(ra.buf)) {
		limit := ra.max
		if limit == 0 {
			limit = maxReadahead
		}
		if near {
			ra.size = min(2*ra.size, limit)
		} else {
			ra.size = minReadahead
		}
		want := min(max(uint64(ra.size), recLen), r.end-off)
		// A buffer grown under a looser bound is let go, so that the
		// bound holds the owner's memory too.
		if c := uint64(cap(ra.buf)); c < want || c > 2*max(want, uint64(limit)) {
			ra.buf = make([]byte, want)
		}
		ra.buf, ra.start = ra.buf[:want], off
		if _, err := r.r.ReadAt(ra.buf, int64(off)); err != nil {
			ra.buf = ra.buf[:0]
			return nil, readError(r.name, int64(off), err)
		}
	}
	stored, c, err := r.checkRecord(off, ra.buf[off-ra.start:off-ra.start+recLen], n, false)
	if err != nil || c == compress.None {
		return stored, err
	}
	ra.value, err = r.decode(ra.value[:0], off, c, stored)
	return ra.value, err
}

package blob

// Read-ahead sizes of ReadValueAhead: a read of a record not read ahead
// already reads minReadahead bytes from it, or, if it is near after the
// last record read, twice the last read's, up to maxReadahead.
const (
	minReadahead = 4 << 10
	maxReadahead = 64 << 10
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
}

// ReadValueAhead is ReadValue for a reader that goes through the file in
// order: a record in the bytes ra read ahead is taken from them, and any
// other is read with the bytes after it — minReadahead of them, or twice
// the last read's, up to maxReadahead, when the record is at most the
// last read's length after the last record read — so that a run of
// values in file order, some skipped (overwritten or deleted) between
// them, takes one system call for many. Each record is checked when it is
// taken, as ReadValue checks it.
func (r *Reader) ReadValueAhead(dst []byte, off, n uint64, ra *Readahead) ([]byte, error) {
	if ra.r != r {
		*ra = Readahead{r: r, buf: ra.buf[:0]}
	}
	hdr := uint64(recordHeaderLen(n))
	if off > r.end || n > r.end || hdr+n > r.end-off {
		return dst, badHandle(r, off, n)
	}
	recLen := hdr + n
	near := ra.size > 0 && off >= ra.next && off-ra.next < uint64(ra.size)
	ra.next = off + recLen
	if off < ra.start || off+recLen > ra.start+uint64(len(ra.buf)) {
		if near {
			ra.size = min(2*ra.size, maxReadahead)
		} else {
			ra.size = minReadahead
		}
		want := min(max(uint64(ra.size), recLen), r.end-off)
		if uint64(cap(ra.buf)) < want {
			ra.buf = make([]byte, want)
		}
		ra.buf, ra.start = ra.buf[:want], off
		if _, err := r.r.ReadAt(ra.buf, int64(off)); err != nil {
			ra.buf = ra.buf[:0]
			return dst, readError(r.name, int64(off), err)
		}
	}
	rec := ra.buf[off-ra.start : off-ra.start+recLen]
	if err := checkRecord(r.name, off, rec, n); err != nil {
		return dst, err
	}
	return append(dst, rec[hdr:]...), nil
}

// Reader is the Reader ra last read for, nil if none.
func (ra *Readahead) Reader() *Reader { return ra.r }

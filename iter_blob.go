package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/blob"
)

// blobReadaheads is the number of blob files an Iterator reads ahead in
// at once: a forward scan meets the values of many flushes' blob files
// interleaved, each file's in its order. A read-ahead's buffer is 4 KiB,
// and grows, up to 64 KiB, only while the scan reads its file's values
// near each other.
const blobReadaheads = 64

// iterBlob is an Iterator's view of a value kept in a blob file.
type iterBlob struct {
	// backward reports that the value the backward direction copied
	// (Iterator.value) is a handle.
	backward bool
	// handle and value are the last value read and its encoded handle:
	// a second Value at the same key reads nothing.
	handle, value []byte
	// ra are the forward direction's read-aheads, made on its first read
	// of a blob: an Iterator over values kept in the tables pays nothing
	// for them.
	ra *blobReadaheadSet
}

// blobValue returns the value the encoded handle enc locates, read from
// its blob file on the first ask at this key — reading ahead in the file if
// forward — and on a failure stops the iterator with the error and returns
// nil.
func (it *Iterator) blobValue(enc []byte, forward bool) []byte {
	b := &it.blob
	if b.handle != nil && bytes.Equal(b.handle, enc) {
		return nonNil(b.value)
	}
	var (
		v   []byte
		err error
	)
	if forward {
		v, err = it.db.readBlobAhead(b.value[:0], enc, b.readahead)
	} else {
		v, err = it.db.readBlob(b.value[:0], enc, nil)
	}
	if err != nil {
		it.err = err
		b.handle = nil
		return nil
	}
	b.value = v
	b.handle = append(b.handle[:0], enc...)
	return nonNil(b.value)
}

// blobReadaheadSet is an Iterator's read-aheads, one a blob file, the least
// recently used (used, by clock) given to a new file.
type blobReadaheadSet struct {
	ra    [blobReadaheads]blob.Readahead
	used  [blobReadaheads]uint64
	clock uint64
}

// readahead returns the read-ahead of r's file: its own, or the least
// recently used one, which starts afresh on r.
func (b *iterBlob) readahead(r *blob.Reader) *blob.Readahead {
	if b.ra == nil {
		b.ra = new(blobReadaheadSet)
	}
	return b.ra.get(r)
}

func (b *blobReadaheadSet) get(r *blob.Reader) *blob.Readahead {
	b.clock++
	victim := 0
	for i := range b.ra {
		if b.ra[i].Reader() == r {
			victim = i
			break
		}
		if b.used[i] < b.used[victim] {
			victim = i
		}
	}
	b.used[victim] = b.clock
	return &b.ra[victim]
}

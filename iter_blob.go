package bloomkv

import (
	"bytes"
	"sync"

	"github.com/bloomkv/bloomkv/internal/blob"
)

// The read-aheads of an Iterator: a forward scan meets the values of many
// flushes' blob files interleaved, each file's in its order, so it reads
// ahead in each file it meets — in up to blobReadaheadFiles at once, a
// file's read-ahead 4 KiB, growing, while the scan reads the file's values
// near each other, to blobReadaheadBudget over the files in use, at most
// 256 KiB. A full scan of a DB filled at random (its values in every
// flush's file, in key order within each) so reads each file in one pass.
// Fewer read-aheads than files would each be lost to other files before
// their file's next value, and read a record a call.
const (
	blobReadaheadFiles  = 1024
	blobReadaheadBudget = 4 << 20
)

// iterBlob is an Iterator's view of a value kept in a blob file.
type iterBlob struct {
	// backward reports that the value the backward direction copied
	// (Iterator.value) is a handle.
	backward bool
	// handle and value are the last value read and its encoded handle:
	// a second Value at the same key reads nothing. value is in a
	// read-ahead's buffer (forward) or in own (backward), and valid until
	// the next read.
	handle, value, own []byte
	// ra are the forward direction's read-aheads, taken from
	// blobReadaheadSets on its first read of a blob and put back by
	// release: an Iterator over values kept in the tables pays nothing
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
		if b.ra == nil {
			b.ra = blobReadaheadSets.Get().(*blobReadaheadSet)
		}
		v, err = it.db.readBlobAhead(enc, b.ra)
	} else {
		v, err = it.db.readBlob(b.own[:0], enc, nil)
		b.own = v
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

// release puts b's read-aheads back in their pool.
func (b *iterBlob) release() {
	if b.ra != nil {
		b.ra.reset()
		blobReadaheadSets.Put(b.ra)
		b.ra = nil
	}
}

// blobReadaheadSets are read-ahead sets with their buffers, kept from one
// Iterator to the next: a scan of 100 entries over as many blob files
// allocates no 4 KiB buffer for each.
var blobReadaheadSets = sync.Pool{New: func() any {
	return &blobReadaheadSet{files: map[uint64]int{}}
}}

// blobReadaheadSet is an Iterator's read-aheads, one a blob file, the least
// recently used (used, by clock) given to a new file once there are
// blobReadaheadFiles. It keeps each one's blob file with it: a value's read
// looks its file number up once, here, rather than in the DB's map of open
// blob files too.
//
// INVARIANT: files maps the number of the blob file of each of ra[:n] that
// has read to its index, and bf holds that file; ra[n:] have read for no
// file (their buffers are kept for reuse). A file in bf stays open while
// the Iterator holds its version, which lists it.
type blobReadaheadSet struct {
	ra    []*blob.Readahead
	bf    []*blobFile
	used  []uint64
	n     int
	files map[uint64]int
	clock uint64
	// last is the index of the read-ahead last returned, asked first.
	last int
}

// get returns blob file num and its read-ahead: its own, or one that
// starts afresh on it, bounded to its share of blobReadaheadBudget. A file
// not in s is opened by d.blobFile, whose error it returns.
func (s *blobReadaheadSet) get(d *DB, num uint64) (*blobFile, *blob.Readahead, error) {
	s.clock++
	i := s.last
	if s.n == 0 || s.bf[i].num != num {
		var ok bool
		if i, ok = s.files[num]; !ok {
			bf, err := d.blobFile(num)
			if err != nil {
				return nil, nil, err
			}
			i = s.slot()
			s.files[num], s.bf[i] = i, bf
		}
		s.last = i
	}
	s.used[i] = s.clock
	ra := s.ra[i]
	ra.SetMax(blobReadaheadBudget / s.n)
	return s.bf[i], ra, nil
}

// slot returns the index of a read-ahead for a file not in s: a kept one,
// a new one, or the least recently used, which forgets its file.
func (s *blobReadaheadSet) slot() int {
	switch {
	case s.n < len(s.ra):
	case s.n < blobReadaheadFiles:
		s.ra = append(s.ra, new(blob.Readahead))
		s.bf = append(s.bf, nil)
		s.used = append(s.used, 0)
	default:
		victim := 0
		for i, u := range s.used {
			if u < s.used[victim] {
				victim = i
			}
		}
		delete(s.files, s.bf[victim].num)
		s.ra[victim].Reset()
		return victim
	}
	s.n++
	return s.n - 1
}

// reset forgets every file, keeping the buffers.
func (s *blobReadaheadSet) reset() {
	for _, ra := range s.ra[:s.n] {
		ra.Reset()
	}
	clear(s.files)
	clear(s.bf)
	clear(s.used)
	s.n, s.clock, s.last = 0, 0, 0
}

package bloomkv

import "bytes"

// iterBlob is an Iterator's view of a value kept in a blob file.
type iterBlob struct {
	// backward reports that the value the backward direction copied
	// (Iterator.value) is a handle.
	backward bool
	// handle and value are the last value read and its encoded handle:
	// a second Value at the same key reads nothing.
	handle, value []byte
}

// blobValue returns the value the encoded handle enc locates, read from
// its blob file on the first ask at this key; on a failure it stops the
// iterator with the error and returns nil.
func (it *Iterator) blobValue(enc []byte) []byte {
	b := &it.blob
	if b.handle != nil && bytes.Equal(b.handle, enc) {
		return nonNil(b.value)
	}
	v, err := it.db.readBlob(b.value[:0], enc, nil)
	if err != nil {
		it.err = err
		b.handle = nil
		return nil
	}
	b.value = v
	b.handle = append(b.handle[:0], enc...)
	return nonNil(b.value)
}

package blob

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the format version this package writes and reads.
const FormatVersion = 1

// FooterLen is the length of a blob file's footer.
const FooterLen = 32

// Magic ends every blob file.
const Magic = "bloomBLB"

// crcLen is the length of a record's checksum.
const crcLen = 4

// minRecordOverhead and maxRecordOverhead bound what a record adds to its
// value: the checksum and a length uvarint of 1 to 10 bytes.
const (
	minRecordOverhead = crcLen + 1
	maxRecordOverhead = crcLen + binary.MaxVarintLen64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Handle locates a value in a blob file: the file's number, its record's
// offset and the value's length.
type Handle struct {
	FileNum uint64
	Offset  uint64
	Length  uint64
}

// AppendHandle appends the encoding of h — three uvarints: file number,
// offset, length — to dst and returns the extended slice. It is the value
// of a table entry of kind base.KindSetBlob.
func AppendHandle(dst []byte, h Handle) []byte {
	dst = binary.AppendUvarint(dst, h.FileNum)
	dst = binary.AppendUvarint(dst, h.Offset)
	return binary.AppendUvarint(dst, h.Length)
}

// DecodeHandle decodes an encoded Handle, which must be the whole of b. It
// reports false for anything AppendHandle did not write: a truncated or
// overlong uvarint, trailing bytes, file number 0.
func DecodeHandle(b []byte) (Handle, bool) {
	var h Handle
	var n int
	for _, p := range []*uint64{&h.FileNum, &h.Offset, &h.Length} {
		*p, n = binary.Uvarint(b)
		if n <= 0 {
			return Handle{}, false
		}
		b = b[n:]
	}
	return h, len(b) == 0 && h.FileNum != 0
}

// String renders h for tools and tests, e.g. "000012.blob@4096+1024".
func (h Handle) String() string {
	return fmt.Sprintf("%06d.blob@%d+%d", h.FileNum, h.Offset, h.Length)
}

// recordHeaderLen is the length of the header of a record of a value of
// length n: the checksum and the length's uvarint.
func recordHeaderLen(n uint64) int {
	var buf [binary.MaxVarintLen64]byte
	return crcLen + binary.PutUvarint(buf[:], n)
}

// Properties describe a finished blob file.
type Properties struct {
	// Values is the number of values; ValueBytes the sum of their lengths.
	Values, ValueBytes uint64
	// Size is the file's length, footer included.
	Size uint64
}

func appendFooter(dst []byte, values, valueBytes uint64) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint64(dst, values)
	dst = binary.LittleEndian.AppendUint64(dst, valueBytes)
	dst = binary.LittleEndian.AppendUint32(dst, FormatVersion)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return append(dst, Magic...)
}

package blob

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the format version this package writes; it reads it and
// every version before it (see the package doc).
const FormatVersion = formatVersion2

// The format versions: 1 stores every value as given, 2 adds a record's
// compression byte.
const (
	formatVersion1 = 1
	formatVersion2 = 2
)

// FooterLen is the length of a blob file's footer.
const FooterLen = 32

// Magic ends every blob file.
const Magic = "bloomBLB"

// crcLen is the length of a record's checksum.
const crcLen = 4

// MaxValueLen bounds the length of a value as a compressed record claims
// it before it is decompressed, so that a record whose checksum holds but
// whose claim is absurd (a damaged writer's, a forged file's) is an error,
// not an allocation of gigabytes. It is the DB's MaxValueSize, the largest
// value a DB stores.
const MaxValueLen = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Handle locates a value in a blob file: the file's number, its record's
// offset and the length of the value as stored (compressed or not), the
// record's bytes past its header.
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

// recordHeaderLen is the length of the header of a record of version v
// that stores n bytes: the checksum, the length's uvarint and, from
// version 2, the compression byte.
func recordHeaderLen(v uint32, n uint64) int {
	var buf [binary.MaxVarintLen64]byte
	return crcLen + binary.PutUvarint(buf[:], n) + compressionLen(v)
}

// compressionLen is the length of a record's compression byte in version
// v: 0 or 1.
func compressionLen(v uint32) int {
	if v >= formatVersion2 {
		return 1
	}
	return 0
}

// recordOverhead bounds what a record of version v adds to its stored
// bytes: the checksum, a length uvarint of 1 to 10 bytes and, from version
// 2, the compression byte.
func recordOverhead(v uint32) (lo, hi uint64) {
	c := uint64(compressionLen(v))
	return crcLen + 1 + c, crcLen + binary.MaxVarintLen64 + c
}

// Properties describe a finished blob file.
type Properties struct {
	// Values is the number of values; ValueBytes the sum of their stored
	// lengths (their Handles' Lengths).
	Values, ValueBytes uint64
	// Size is the file's length, footer included.
	Size uint64
	// Version is the file's format version.
	Version uint32
}

func appendFooter(dst []byte, values, valueBytes uint64) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint64(dst, values)
	dst = binary.LittleEndian.AppendUint64(dst, valueBytes)
	dst = binary.LittleEndian.AppendUint32(dst, FormatVersion)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return append(dst, Magic...)
}

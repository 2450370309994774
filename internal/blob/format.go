package blob

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// FormatVersion is the newest format version this package writes (a file
// is written in the oldest version that holds it: 2 or 3); it reads it
// and every version before it (see the package doc).
const FormatVersion = formatVersion3

// The format versions: 1 stores every value as given, 2 adds a record's
// compression byte, 3 padding records, so that a record that fits in a
// page starts a page rather than cross into the next (see the package
// doc).
const (
	formatVersion1 = 1
	formatVersion2 = 2
	formatVersion3 = 3
)

// Padding, from version 3: a record of at most pageSize bytes that would
// cross a page boundary follows padding to the boundary instead, if that
// takes from minPadding to maxPadding bytes. A read of the record then
// reads one page of the device, where a crossing record reads two.
const (
	pageSize = 4096
	// maxPadding bounds the padding before a record: a quarter of a page.
	// Records of about the same length fill a page alike, so the gap
	// padded is much the same on every page: with an eighth of a page,
	// records of 588 bytes (1 KiB values stored in half) left gaps of
	// about 550 bytes, and two in three of the crossings stayed.
	maxPadding = 1024
	// minPadding is the shortest padding record: a checksum, a one-byte
	// length and the compression byte.
	minPadding = crcLen + 2
	// paddingCodec is a padding record's compression byte: no codec's.
	paddingCodec = 0xff
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
// bytes: the checksum, a length uvarint of 1 to 10 bytes, from version 2
// the compression byte, and from version 3 the padding before it.
func recordOverhead(v uint32) (lo, hi uint64) {
	c := uint64(compressionLen(v))
	lo, hi = crcLen+1+c, crcLen+binary.MaxVarintLen64+c
	if v >= formatVersion3 {
		hi += maxPadding
	}
	return lo, hi
}

// paddingBefore returns the padding a record of recLen bytes at off takes
// first (version 3): the rest of off's page if the record would cross
// into the next, fits in a page, and the rest is from minPadding to
// maxPadding bytes; 0 otherwise.
func paddingBefore(off, recLen uint64) uint64 {
	in := off % pageSize
	gap := pageSize - in
	if in+recLen <= pageSize || recLen > pageSize || gap < minPadding || gap > maxPadding {
		return 0
	}
	return gap
}

// appendPadding appends n bytes (at least minPadding) of padding records:
// one, but for n = 134, which no record takes (a record storing 127 bytes
// takes 133, one storing 128 has a two-byte length and takes 135): then a
// record of minPadding bytes and one of the rest.
func appendPadding(dst []byte, n uint64) []byte {
	if n == 134 {
		dst = appendPaddingRecord(dst, minPadding)
		n -= minPadding
	}
	return appendPaddingRecord(dst, n)
}

// appendPaddingRecord appends a padding record of n bytes in all: zeros
// stored, of compression paddingCodec, checksummed as any record.
func appendPaddingRecord(dst []byte, n uint64) []byte {
	stored := n - minPadding
	if stored >= 0x80 {
		stored-- // the length's uvarint takes two bytes
	}
	zeros := paddingZeros[:stored]
	return append(appendRecordHeader(dst, zeros, paddingCodec), zeros...)
}

// paddingZeros are the bytes a padding record stores.
var paddingZeros [maxPadding]byte

// appendRecordHeader appends the header of a record of version 2 or 3 that
// stores stored with compression byte c: its checksum, of the rest of the
// header and of stored, the length and c.
func appendRecordHeader(dst, stored []byte, c byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.AppendUvarint(dst, uint64(len(stored)))
	dst = append(dst, c)
	crc := crc32.Update(crc32.Checksum(dst[start+crcLen:], castagnoli), castagnoli, stored)
	binary.LittleEndian.PutUint32(dst[start:], crc)
	return dst
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

func appendFooter(dst []byte, values, valueBytes uint64, version uint32) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint64(dst, values)
	dst = binary.LittleEndian.AppendUint64(dst, valueBytes)
	dst = binary.LittleEndian.AppendUint32(dst, version)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return append(dst, Magic...)
}

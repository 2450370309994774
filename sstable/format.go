package sstable

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/bloomkv/bloomkv/internal/compress"
)

// Sizes of the fixed parts of the format.
const (
	blockTrailerLen = 5  // compression type (1) + CRC-32C (4)
	footerLen       = 64 // see the package doc
	// formatVersion is the footer's version: 1 for a table without range
	// tombstones, readable by every reader; 2 for one with a range-deletion
	// block, which a reader that knows only 1 refuses rather than read the
	// table without its tombstones; 3 for one whose data blocks are
	// page-aligned (Properties.BlockAlign) or that has a range-filter
	// block, or both, with or without range tombstones: its properties
	// name which (the range-deletion block is optional in it). A reader
	// that knows only 1 and 2 refuses it rather than take its padding for
	// damage or miss a block; 4 for one whose index is partitioned
	// (Properties.IndexPartitions), whatever else it has: its properties
	// name which of version 3's features it has besides. A reader that
	// knows only 1 to 3 refuses it rather than take its top-level index for
	// the data blocks'.
	formatVersion1 = 1
	formatVersion2 = 2
	formatVersion3 = 3
	formatVersion4 = 4
	footerMagic    = "bloomSST"

	// alignPage is the page an aligned table's data blocks are fitted
	// to (WriterOptions.BlockAlign): the unit in which the kernel reads a
	// file into the page cache on the platforms bloomkv runs on.
	alignPage = 4096

	// maxBlockLen bounds a block's decoded size. A single entry can exceed
	// the block size option (one block per huge value), but a length past
	// this limit can only come from damage.
	maxBlockLen = 1 << 30
)

// Magic is the last 8 bytes of every table file, the end of its footer.
const Magic = footerMagic

// FormatVersion is the newest table format version this package writes
// and reads; it reads every version from 1 up to it, and writes the oldest
// one that holds what the table has (see the package doc).
const FormatVersion = formatVersion4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blockChecksum covers a block's stored bytes and its compression type, so
// a flipped type byte is caught as surely as a flipped content byte.
func blockChecksum(stored []byte, c compress.Codec) uint32 {
	return crc32.Update(crc32.Checksum(stored, castagnoli), castagnoli, []byte{byte(c)})
}

// alignedStart returns where a data block of the given stored length
// starts when written at end, the previous block's end, in a table aligned
// to page (0: not aligned): at end, unless the block with its trailer fits
// in a page but would cross a page boundary from end; then at the next
// boundary, the bytes between being padding. A block larger than a page
// spans pages wherever it starts, so it is never padded.
//
// It is the one rule both sides follow: the writer pads a block to where
// it says (Writer.writeStored), and the reader accepts a data block at
// end or where it says, nowhere else (Reader.decodeIndex).
func alignedStart(end, length, page uint64) uint64 {
	n := length + blockTrailerLen
	if page == 0 || n > page || end%page+n <= page {
		return end
	}
	return end + page - end%page
}

// BlockHandle locates a block in a table: its offset and the length of its
// stored bytes, the 5-byte trailer (which follows them) excluded.
type BlockHandle struct {
	Offset, Length uint64
}

// appendVarint appends h as an index entry's value holds it: the offset and
// the length as uvarints.
func (h BlockHandle) appendVarint(dst []byte) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(dst, h.Offset), h.Length)
}

// decodeHandle decodes an index entry's value, which must be exactly a
// handle as appendVarint writes it.
func decodeHandle(p []byte) (BlockHandle, bool) {
	off, n := binary.Uvarint(p)
	if n <= 0 {
		return BlockHandle{}, false
	}
	length, m := binary.Uvarint(p[n:])
	if m <= 0 || n+m != len(p) {
		return BlockHandle{}, false
	}
	return BlockHandle{off, length}, true
}

// footer is the fixed-size end of every table.
type footer struct {
	filter, index, properties BlockHandle // filter.Length == 0: no filter
	version                   uint32      // formatVersion1 to 4
}

func (f footer) encode() []byte {
	b := make([]byte, 0, footerLen)
	for _, h := range []BlockHandle{f.filter, f.index, f.properties} {
		b = binary.LittleEndian.AppendUint64(b, h.Offset)
		b = binary.LittleEndian.AppendUint64(b, h.Length)
	}
	b = binary.LittleEndian.AppendUint32(b, f.version)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, footerMagic...)
}

// decodeFooter returns the footer of b, or a reason it is not one.
func decodeFooter(b []byte) (footer, string) {
	if string(b[56:]) != footerMagic {
		return footer{}, fmt.Sprintf("bad magic %q: not a bloomkv table, or truncated", b[56:])
	}
	if got, want := binary.LittleEndian.Uint32(b[52:]), crc32.Checksum(b[:52], castagnoli); got != want {
		return footer{}, fmt.Sprintf("footer checksum %#08x, want %#08x", got, want)
	}
	v := binary.LittleEndian.Uint32(b[48:])
	if v < formatVersion1 || v > formatVersion4 {
		return footer{}, fmt.Sprintf("format version %d, this reader reads %d to %d", v, formatVersion1, formatVersion4)
	}
	f := footer{version: v}
	for i, h := range []*BlockHandle{&f.filter, &f.index, &f.properties} {
		h.Offset = binary.LittleEndian.Uint64(b[16*i:])
		h.Length = binary.LittleEndian.Uint64(b[16*i+8:])
	}
	return f, ""
}

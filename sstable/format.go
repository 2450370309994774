package sstable

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// Compression chooses how a table's data blocks are compressed: the option
// of a Writer, and of a DB (bloomkv.Compression is this type). Its values
// are not the format: a block trailer's first byte is a
// compressionIndicator, translated at the edges (writeBlock, readBlock,
// the properties' codec). The two are kept apart so that the zero value
// can mean "the default" for every layer that takes the option, without
// renumbering the bytes already on disk.
type Compression uint8

// The compressions. A block that does not shrink by at least an eighth is
// stored uncompressed whatever the option says, so readers skip the work.
const (
	// DefaultCompression leaves the choice to the layer that takes the
	// option: a Writer stores blocks uncompressed, a DB's Options resolve
	// it to SnappyCompression first.
	DefaultCompression Compression = iota
	NoCompression
	SnappyCompression
	ZstdCompression
)

// String returns the compression's name as the tools print it and the
// command line takes it: "none", "snappy", "zstd" ("default" unresolved).
func (c Compression) String() string {
	switch c {
	case DefaultCompression:
		return "default"
	case NoCompression:
		return "none"
	case SnappyCompression:
		return "snappy"
	case ZstdCompression:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// indicator returns the trailer byte of a block stored with c (which is
// resolved: not DefaultCompression, not unknown; those store none).
func (c Compression) indicator() compressionIndicator {
	switch c {
	case SnappyCompression:
		return snappyIndicator
	case ZstdCompression:
		return zstdIndicator
	}
	return noCompressionIndicator
}

// compressionIndicator is how a block is stored, as the format writes it:
// the first byte of every block trailer (0 none, 1 snappy, 2 zstd; see the
// package doc), and the value of the bloomkv.compression property.
type compressionIndicator uint8

// The indicators. Their values are part of the format.
const (
	noCompressionIndicator compressionIndicator = 0
	snappyIndicator        compressionIndicator = 1
	zstdIndicator          compressionIndicator = 2
)

// compression returns the Compression whose blocks are stored as i. A byte
// this version does not know, a newer writer's, maps past ZstdCompression
// (to i+1, as every indicator maps to the Compression one above it), so
// that it prints as unknown rather than as a compression it is not.
func (i compressionIndicator) compression() Compression {
	switch i {
	case noCompressionIndicator:
		return NoCompression
	case snappyIndicator:
		return SnappyCompression
	case zstdIndicator:
		return ZstdCompression
	}
	return Compression(min(int(i)+1, 0xff))
}

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
func blockChecksum(stored []byte, c compressionIndicator) uint32 {
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

var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err) // only invalid options fail, and these are constant
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxBlockLen))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// compress returns the bytes to store for raw and how they are stored; it
// falls back to none when compression saves under 1/8. The compressor
// writes into scratch when it is large enough; the buffer it wrote into is
// returned whether its output is kept or not, for the next block: were an
// incompressible block to drop it, every block after would allocate one
// anew (on random values, 70% of a fill's allocations).
func compress(c compressionIndicator, raw, scratch []byte) (stored []byte, ind compressionIndicator, buf []byte) {
	var out []byte
	switch c {
	case snappyIndicator:
		// s2's plain snappy encoder: the same format as snappy.Encode's
		// "better" one, and faster. On `bloomkv bench`'s values it made a
		// 2M-key fill 29% faster for 1.5% more bytes on disk.
		out = s2.EncodeSnappy(scratch[:cap(scratch)], raw)
	case zstdIndicator:
		out = zstdEncoder().EncodeAll(raw, scratch[:0])
	default:
		return raw, noCompressionIndicator, scratch
	}
	if len(out) > len(raw)-len(raw)/8 {
		return raw, noCompressionIndicator, out
	}
	return out, c, out
}

// decompress returns a block's contents from its stored bytes, in dst's
// memory when it is large enough.
func decompress(c compressionIndicator, stored, dst []byte) ([]byte, error) {
	switch c {
	case noCompressionIndicator:
		return stored, nil
	case snappyIndicator:
		n, err := snappy.DecodedLen(stored)
		if err != nil {
			return nil, err
		}
		if n > maxBlockLen {
			return nil, fmt.Errorf("snappy block claims %d bytes", n)
		}
		return snappy.Decode(slices.Grow(dst[:0], n)[:n], stored)
	case zstdIndicator:
		return zstdDecoder().DecodeAll(stored, dst[:0])
	}
	return nil, fmt.Errorf("unknown compression type %d", c)
}

package sstable

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/compress"
)

// Compression chooses how a table's data blocks are compressed: the option
// of a Writer, and of a DB (bloomkv.Compression is this type). Its values
// are not the format: a block trailer's first byte is a compress.Codec,
// translated at the edges (writeBlock, readBlock, the properties' codec).
// The two are kept apart so that the zero value can mean "the default" for
// every layer that takes the option, without renumbering the bytes already
// on disk.
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
	case NoCompression, SnappyCompression, ZstdCompression:
		return c.codec().String()
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// codec returns the codec of a block stored with c (which is resolved:
// not DefaultCompression, not unknown; those store none).
func (c Compression) codec() compress.Codec {
	switch c {
	case SnappyCompression:
		return compress.Snappy
	case ZstdCompression:
		return compress.Zstd
	}
	return compress.None
}

// compressionOf returns the Compression whose blocks are stored with c. A
// codec this version does not know, a newer writer's, maps past
// ZstdCompression (to c+1, as every codec maps to the Compression one
// above it), so that it prints as unknown rather than as a compression it
// is not.
func compressionOf(c compress.Codec) Compression {
	switch c {
	case compress.None:
		return NoCompression
	case compress.Snappy:
		return SnappyCompression
	case compress.Zstd:
		return ZstdCompression
	}
	return Compression(min(int(c)+1, 0xff))
}

var (
	// blockEncoder writes zstd frames with zstd's content checksum, as
	// tables always have, though the trailer's CRC covers them too.
	blockEncoder = compress.NewEncoder(true)
	// blockDecoder refuses a block that decodes past maxBlockLen.
	blockDecoder = compress.NewDecoder(maxBlockLen)
)

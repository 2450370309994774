package record

import "hash/crc32"

const (
	// BlockSize is the size of a log block. No chunk crosses a block
	// boundary, which bounds a chunk's length and lets a reader trust every
	// block start as a chunk start.
	BlockSize = 32 << 10

	// HeaderSize is the size of a chunk header: CRC (4), length (2), type (1).
	HeaderSize = 7
)

// Chunk types. Type 0 is reserved so that zeroed space never parses as a
// chunk.
const (
	fullChunk   = 1
	firstChunk  = 2
	middleChunk = 3
	lastChunk   = 4
	maxChunk    = lastChunk
)

var chunkNames = [...]string{"zero", "FULL", "FIRST", "MIDDLE", "LAST"}

func chunkName(t byte) string {
	if int(t) < len(chunkNames) {
		return chunkNames[t]
	}
	return "unknown"
}

// crcTable selects CRC-32C, which amd64 and arm64 compute in hardware.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is LevelDB's constant; keeping it keeps the format LevelDB's.
const maskDelta = 0xa282ead8

// maskCRC is LevelDB's mask of a stored checksum, rotated right by 15 bits
// plus maskDelta: LevelDB stores CRCs masked because a CRC of data that
// itself holds unmasked CRCs is weak.
func maskCRC(c uint32) uint32 { return (c>>15 | c<<17) + maskDelta }

// chunkCRC is the stored checksum of the chunk whose type byte starts
// typeAndPayload; type and payload are adjacent in a chunk, so one call
// covers both.
func chunkCRC(typeAndPayload []byte) uint32 {
	return maskCRC(crc32.Checksum(typeAndPayload, crcTable))
}

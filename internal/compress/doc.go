// Package compress is the codec of bloomkv's files: how a table's blocks
// and a blob file's values are stored compressed, and read back.
//
// A Codec is how a block is stored, its value the byte the formats write:
// 0 none (as given), 1 snappy (snappy's block format, unframed), 2 zstd
// (one frame, whose header claims its content size from 256 bytes on).
//
// An Encoder stores a block with the codec asked only when that saves at
// least an eighth of it (len/8, rounded down), and an empty block as
// given, so that reads skip work that does not pay. Whether its zstd
// frames carry zstd's own content checksum is the Encoder's parameter: the
// tables' do, the blob files' do not; the formats' CRCs cover the stored
// bytes either way.
//
// A Decoder reads frames with or without the checksum. It returns a stored
// block as it is, uncopied, and appends a compressed one to the caller's
// buffer; it refuses a block that claims or decodes to more than its
// bound, the caller's. Its errors are plain: the caller wraps them with
// its file and offset, as corruption.
package compress

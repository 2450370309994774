// Package record is the log record format shared by bloomkv's write-ahead logs
// and its manifest: a Writer that appends records to a log and a Reader that
// replays them, telling a torn tail (the unfinished last write of a crashed
// process, which recovery drops) from corruption in the middle of a log
// (which recovery must report, never silently skip).
//
// # Blocks and chunks
//
// A log is a sequence of 32 KiB blocks (BlockSize); only the last block may
// be short. A record is stored as one or more chunks, and a chunk never
// crosses a block boundary. A chunk is a 7-byte header (HeaderSize) followed
// by its payload:
//
//	0        4        6      7
//	+--------+--------+------+-------------------------+
//	| CRC    | length | type | payload (length bytes)  |
//	+--------+--------+------+-------------------------+
//
//	CRC     uint32, little-endian: masked CRC-32C (Castagnoli) of type ‖ payload
//	length  uint16, little-endian: payload length in bytes
//	type    1 FULL    the whole record
//	        2 FIRST   the first piece of a record that continues in the next block
//	        3 MIDDLE  an inner piece; fills its block
//	        4 LAST    the final piece
//	        0 is reserved: it is what zeroed (preallocated or never written)
//	          space reads as, so it never marks a chunk
//
// The stored CRC is masked as LevelDB masks it: rotated right by 15 bits,
// plus 0xa282ead8. LevelDB masks because computing the CRC of bytes that
// contain embedded CRCs is problematic, and a record may contain them too
// (a log stored as a value, checksummed data in a manifest edit).
// With the same block size, header and chunk types this makes the format
// byte-for-byte LevelDB's log format, so LevelDB's log readers can read
// the records.
//
// Three records, A (1,000 bytes), B (40,000 bytes) and C (empty), in a log:
//
//	offset 0      7          1007   1014                              32768
//	       +------+----------+------+---------------------------------+
//	block 0| FULL | A        | FIRST| B[0:31754]                      |
//	       +------+----------+------+---------------------------------+
//	offset 32768  32775      41021  41028
//	       +------+----------+------+
//	block 1| LAST | B[31754:]| FULL |  <- C: a header with no payload
//	       +------+----------+------+
//
// # Rules
//
// The writer fills the current block with the next chunk: if the record fits
// in what is left after a header, it is one FULL chunk; otherwise the chunk
// takes the rest of the block as FIRST and the record goes on as MIDDLE
// chunks (each filling a block) and ends with a LAST chunk. When fewer than
// HeaderSize bytes remain in a block, they are written as zeros (the block
// trailer) and the next chunk starts the next block. When exactly HeaderSize
// bytes remain, a record that does not fit gets a FIRST chunk with an empty
// payload, as in LevelDB. An empty record is a FULL chunk of length 0.
//
// A record's offset is the file offset of its first chunk's header. A log is
// read from offset 0; the trailer bytes carry no data and are not checked.
//
// INVARIANT: every block of a log begins with a chunk header. Chunks never
// cross a block boundary, so a block boundary is a point where parsing can
// start afresh without trusting anything before it.
//
// INVARIANT: a chunk is valid only if its type is 1..4, its payload ends
// within its block and within the file, and its CRC matches type ‖ payload.
// The length is not under the CRC, but a wrong length changes the bytes the
// CRC is computed over, so it fails the check all the same.
//
// INVARIANT: once a write or sync of a Writer fails, it writes nothing more.
// The log may end in part of a record, and a record appended after that
// would be intact data behind damage: corruption, not a torn tail.
//
// INVARIANT: a record is the chunk sequence FULL or FIRST MIDDLE* LAST, with
// every chunk valid. The Reader returns nothing else, never a partial or
// damaged record.
//
// # Torn tails and corruption
//
// A crash can leave the last write half done: a chunk cut short by the end
// of the file, a header or payload never written (zeros, or whatever the
// file system left there), a record whose FIRST chunk reached the disk and
// whose LAST did not. That write was never acknowledged, so recovery drops
// it. Damage followed by intact data is a different thing: bytes that were
// once written and synced have changed, and dropping them, with every later
// record, would silently lose acknowledged writes.
//
// When the Reader meets a damaged chunk (bad checksum, reserved or unknown
// type, a length past the end of its block or of the file), it decides
// between the two by reading ahead to the end of the file and searching for
// a valid chunk at any byte position:
//
//   - none: a torn tail. Next returns io.EOF, and TornTail reports the offset
//     just past the last intact record, where the log can be truncated.
//   - one: corruption. Next returns a *base.CorruptionError, wrapping
//     base.ErrCorruption, that names the file and the offset of the damaged
//     chunk.
//
// A valid chunk out of sequence (a MIDDLE or LAST with no record open, a
// FULL or FIRST while one is) is corruption at that chunk: it is itself the
// intact data after the damage. A file that simply ends, inside a record or
// a header, is a torn tail.
//
// The search starts after the damaged chunk's header when the header is
// implausible (reserved or unknown type, or a length past the block), and
// after the whole chunk when only its payload fails the checksum or runs
// past the end of the file. In the second case the header is very likely
// intact, and the payload it covers is a record's bytes: a value that
// happens to contain the image of a valid chunk (say, a log stored as a
// value) must not turn the torn tail of a crashed write into a log that
// cannot be opened. The length is the one header field the CRC does not
// cover: if the chunk is valid with one bit of its length flipped, which a
// crash never produces, the length is what is damaged, and the search starts
// after the chunk's true end, so that a flip pointing past the data cannot
// turn damage in the middle of a log into a torn tail.
//
// A file that ends exactly where its last record ends has no torn tail.
// Anything after the last intact record, even a block trailer or zeros left
// by preallocation, is reported by TornTail, and the caller decides what to
// do with it: the DB replays the newest WAL up to there and retires it
// once what it replayed is in a table.
//
// A file with no intact chunk at all reads as a torn tail at offset 0: the
// torn first write of a new log. NotALog tells the shapes such a write takes
// when the disk keeps a prefix of what it was given and zeros for the rest
// — zeros, or a first chunk with a plausible header cut short by the end of
// the file — from anything else, such as random bytes: recovery drops both,
// while a tool that examines a file outside recovery reports the second as
// corruption.
//
// The search computes a CRC at every position that holds a plausible header
// (type 1..4, a length that fits the block): a few dozen bytes of CRC per
// byte searched on random bytes, up to a block's worth on crafted ones. It
// runs at most once per log, and only when the log is damaged.
package record

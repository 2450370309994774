// Package blob writes and reads bloomkv's blob files: the large values of a
// DB, moved out of its tables so that compactions, which rewrite keys level
// after level, do not rewrite the values with them. A table keeps a Handle
// (blob file, offset, stored length) in place of each such value, as the
// value of an entry of kind base.KindSetBlob.
//
// # File layout
//
// A blob file, NNNNNN.blob, is a run of records, one per value, in the
// order they were added, from version 3 with padding records between
// some of them, and a fixed footer:
//
//	+--------------------------------------------+
//	| record 0                                    |
//	| record 1                                    |
//	| ...                                         |
//	| footer (32 bytes)                           |
//	+--------------------------------------------+
//
// A record of format version 2 or 3, the versions this package writes,
// byte by byte (n is the length of the stored bytes, whose
// uvarint takes k bytes):
//
//	offset    size  field
//	     0       4  crc: CRC-32C (Castagnoli) of bytes 4 to 5+k+n, LE
//	     4       k  n, the stored length (uvarint, k of 1 to 10)
//	   4+k       1  compression: 0 none, 1 snappy, 2 zstd
//	   5+k       n  stored: the value, compressed as byte 4+k says
//
// # Padding
//
// From version 3 a record never crosses a 4 KiB page boundary when it
// need not: a record of at most 4096 bytes that would cross one, with
// from 6 to 1024 bytes left before it, starts at the boundary, and the
// bytes before it are a padding record (two, for a gap of 134 bytes,
// which no one record fills: 6 and 128 bytes). A Get that reads a value
// from the device then reads one page, not two: with 1 KiB values stored
// in 588 bytes, one record in seven crossed a boundary, and one in 130
// does with the padding. The cost is the padding, at most a quarter of a
// page before a record: 10% of those records' file. A padding record is
// a record of compression byte 0xff that stores zeros:
//
//	offset    size  field
//	     0       4  crc: CRC-32C of bytes 4 to 5+k+n, LE
//	     4       k  n (uvarint, k of 1 or 2)
//	   4+k       1  0xff
//	   5+k       n  zeros
//
// No handle points at one (a handle's record of compression 0xff is
// corruption); Scan checks and skips them, and the footer's counts leave
// them out.
//
// A value is stored compressed, with the writer's compression, only when
// that saves at least an eighth of it (as a table's blocks are: both are
// package internal/compress's codecs); a zstd frame carries no checksum
// of its own. The checksum covers the stored bytes, their length and
// their compression, so it is checked before anything is decompressed,
// and a flipped compression byte is caught as surely as a flipped value
// byte. A compressed value claims its length
// (snappy's header, zstd's frame content size); a claim over MaxValueLen
// is corruption, as is a value that does not decode.
//
// A record of format version 1 has no compression byte and stores its
// value as given:
//
//	offset    size  field
//	     0       4  crc: CRC-32C of bytes 4 to 4+k+n, LE
//	     4       k  n, the value's length (uvarint)
//	   4+k       n  the value
//
// A Handle's Offset is its record's first byte and its Length the record's
// n, the stored bytes: the bytes a table's reference to the file counts,
// and a file's dead share weighs. A read checks that the record's own
// length agrees with the handle's and that the checksum holds, so a bit
// flip anywhere in a record is an error, never a wrong value.
//
// The footer:
//
//	offset  size
//	     0     8  values: the number of records (uint64 LE)
//	     8     8  value bytes: the sum of their stored lengths (uint64 LE)
//	    16     4  format version (uint32 LE; 1, 2 or 3)
//	    20     4  CRC-32C of bytes 0–19
//	    24     8  magic "bloomBLB"
//
// The footer's counts bound the records: the records end where the footer
// starts, and n records of b stored bytes take between b + 6n and b + 15n
// bytes (b + 5n and b + 14n in version 1; up to b + 1039n in version 3,
// with their padding). Open checks both, so a footer that does not
// describe its file is corruption too. A Reader reads every version; a
// Writer writes version 3 if the file has padding, else version 2, which
// a reader that knows nothing of padding reads. A value moved to a new blob file
// (Writer.AddStored) is copied as stored, so a version-1 value stays
// uncompressed.
//
// # Errors
//
// Damage — a bad checksum, a length that disagrees with the handle, a
// handle outside the records, an unknown compression, a compressed value
// that does not decode, a footer that does not check — is a
// *base.CorruptionError (wrapping base.ErrCorruption) naming the file and
// the offset of the record or footer.
package blob

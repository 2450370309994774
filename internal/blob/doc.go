// Package blob writes and reads bloomkv's blob files: the large values of a
// DB, moved out of its tables so that compactions, which rewrite keys level
// after level, do not rewrite the values with them. A table keeps a Handle
// (blob file, offset, length) in place of each such value, as the value of
// an entry of kind base.KindSetBlob.
//
// # File layout
//
// A blob file, NNNNNN.blob, is a run of records, one per value, in the
// order they were added, and a fixed footer:
//
//	+--------------------------------------------+
//	| record 0                                    |
//	| record 1                                    |
//	| ...                                         |
//	| footer (32 bytes)                           |
//	+--------------------------------------------+
//
//	record:  crc (4) | length (uvarint, 1–10) | value (length bytes)
//
// crc is the CRC-32C (Castagnoli) of the length's uvarint bytes and the
// value, little-endian. A Handle's Offset is its record's first byte and
// its Length the value's length; a read checks that the record's own
// length agrees with the handle's and that the checksum holds, so a bit
// flip anywhere in a record is an error, never a wrong value.
//
// The footer:
//
//	offset  size
//	     0     8  values: the number of records (uint64 LE)
//	     8     8  value bytes: the sum of their lengths (uint64 LE)
//	    16     4  format version (uint32 LE; 1)
//	    20     4  CRC-32C of bytes 0–19
//	    24     8  magic "bloomBLB"
//
// The footer's counts bound the records: the records end where the footer
// starts, and n records of b value bytes take between b + 5n and b + 14n
// bytes. Open checks both, so a footer that does not describe its file is
// corruption too.
//
// Values are stored as given, uncompressed: a read of a value is one read
// of its record, no more, and a value large enough to separate is often
// compressed already by the application (images, serialized documents). A
// later format version may compress records; the version field says which.
//
// # Errors
//
// Damage — a bad checksum, a length that disagrees with the handle, a
// handle outside the records, a footer that does not check — is a
// *base.CorruptionError (wrapping base.ErrCorruption) naming the file and
// the offset of the record or footer.
package blob

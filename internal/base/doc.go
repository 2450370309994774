// Package base is the vocabulary every layer of bloomkv shares: internal keys
// (a user key with its sequence number and kind) and the corruption error that
// every reader of an on-disk format returns.
//
// # Internal keys
//
// An internal key is the user key followed by an 8-byte trailer:
//
//	+--------------------+----------------------------------------+
//	| user key (n bytes) | trailer: uint64 little-endian (8 bytes) |
//	+--------------------+----------------------------------------+
//	                       trailer = seqnum<<8 | kind
//
// Internal keys order by user key ascending (bytes.Compare), then by trailer
// descending, so that for one user key the newest version comes first and a
// seek to (key, S) lands on the newest version visible at sequence number S.
//
// INVARIANT: a sequence number fits in 56 bits (SeqNumMax); the kind fits in
// the low 8 bits of the trailer.
package base

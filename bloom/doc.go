// Package bloom provides Bloom filters: compact sets that answer "definitely
// absent" or "maybe present" for an item, never forget an added item, and are
// wrong about absent items with a small, predictable false-positive rate.
//
// Three kinds share one hash (xxhash64, see Hash) and one serialized format:
//
//   - Classic: m bits, k probes by double hashing. Sized from the expected
//     items n and target rate p; supports TestAndAdd, Union, and estimates
//     of its item count and current false-positive rate.
//   - Blocked: all k probes of an item inside one 512-bit block, so a query
//     costs one cache miss. Built from a set of keys at a bits-per-key; the
//     filter every bloomkv SSTable embeds. Its blocks can also be stored
//     apart and a query answered from its one block (AppendBlocks, BlockOf,
//     BlockMayContainHash): a bloomkv table's paged filter is read a page
//     of blocks at a time so.
//   - Counting: counters instead of bits, so items can be removed. They
//     are 4 bits wide unless the CounterBits option makes them 8 or 16: a
//     counter saturates at its maximum (15, 255, 65,535) and then never
//     changes, so an item added more often than that can never be removed
//     — it stays present rather than risk a false negative for others.
//
// Every kind reports its LoadFactor, the fraction of bits set or counters
// non-zero: about 1 − e^(−kn/m) after n distinct items, near one half at
// the n a classic filter was sized for, and the false-positive rate is
// roughly its k-th power. It tells when a filter is fuller than it was
// sized for.
//
// Every filter is safe for concurrent use without locks: bits are set by
// atomic OR (counters by compare-and-swap) on 64-bit words and read by
// atomic loads. Invalid sizes or rates return an *ArgumentError naming the
// argument; nothing in this package panics on bad input.
//
// The sister package bloom/redisbloom keeps a classic filter's bits in Redis,
// at the same bit positions, so many processes can share one filter.
//
// # Choosing parameters
//
// For n items and rate p a classic filter needs m = −n·ln p / (ln 2)² bits
// (1.44·log2(1/p) bits per item) and k = (m/n)·ln 2 probes; no structure can
// do with fewer than log2(1/p) bits per item (MinBitsPerKey). A blocked
// filter needs a little more for the same rate (BlockedBitsPerKey) and uses
// fewer probes (BlockedProbes). At 10 bits per key the classic filter's rate
// is 0.82% and the blocked filter's 0.96%. `bloomkv calc` prints these.
//
// # Serialized format
//
// MarshalBinary and WriteTo write, and UnmarshalBinary and ReadFrom read, one
// format for all kinds (integers little-endian unless noted):
//
//	offset  size  field
//	     0     4  magic "BLMF"
//	     4     1  format version: 1, or 2 for a counting filter of 8- or
//	              16-bit counters
//	     5     1  kind: 1 classic, 2 blocked, 3 counting
//	     6     1  k, probes per item (1–64; blocked 1–32)
//	     7     1  version 1: reserved, 0 (a counting filter's counters are
//	              4 bits); version 2: counter width w in bits, 8 or 16
//	     8     8  m: bits (classic, blocked: a multiple of 512) or counters
//	    16     8  n: items sized for (classic, counting; 0 if sized by m)
//	              or items added (blocked)
//	    24     8  payload length in bytes: 8·⌈m/64⌉, or 8·⌈m·w/64⌉ for
//	              counting (w = 4 in version 1)
//	    32     4  CRC-32C (Castagnoli) of bytes 0–31
//	    36     …  payload: the filter's 64-bit words, each big-endian
//	     …     4  CRC-32C of the payload
//
// The header has its own checksum so that a reader validates the sizes before
// it allocates anything. A classic filter's payload, read as bytes, is its
// bitmap in Redis order: bit i is byte i/8, mask 0x80>>(i mod 8). A counting
// filter's counter i is the w bits at shift w·(i mod 64/w) of word
// i/(64/w), counted from the word's least significant bit.
//
// Version 2 exists only for counting filters of 8- or 16-bit counters; every
// other filter, a 4-bit counting filter included, is written as version 1,
// byte for byte as before counter widths existed, so earlier readers still
// read it and each filter has exactly one encoding. A version-2 header of
// another kind or width is refused.
//
// INVARIANT: decoding accepts only what encoding produces. Truncated,
// damaged or other-kind input returns an error wrapping ErrCorrupt — every
// single-bit flip is caught by a checksum — so a decoded filter never has a
// false negative for an item the encoded filter held.
package bloom

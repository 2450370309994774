// Package ribbon provides Standard Ribbon filters (Dillinger and Walzer,
// "Ribbon filter: practically smaller than Bloom and Xor", 2021; the
// Standard128Ribbon of RocksDB): immutable sets of 64-bit key hashes that
// answer "definitely absent" or "maybe present", are never wrong about a
// key they hold, and are wrong about an absent key with probability 2^−r
// for a result width r of 1 to 32 bits — at 1.03·r to 1.05·r bits per key
// from 10^4 to 10^6 keys, where a binary fuse filter (package fuse) needs
// 1.29·r to 1.13·r and a Bloom filter at least 1.44·r (a blocked one more).
//
// # How it works
//
// A filter of m slots (m a multiple of 64, at least 128) holds a solution
// S: r bits a slot. A key's hash h is mixed with the filter's seed, x =
// murmur64(h + seed), which gives the key a row of a linear system over
// GF(2): a start s = ⌊x·(m−127)/2^64⌋, 128 coefficients c_0…c_127 (from
// two further murmur64 rounds of x, c_0 always 1) and an r-bit fingerprint
// (x's low r bits). Building finds an S such that for every key of the set
//
//	⊕_{k < 128, c_k = 1} S[s+k] = fingerprint   (bit by bit, r equations)
//
// A query computes the row and the r parities, and compares: a key of the
// set always matches; any other key matches with probability 2^−r, its
// fingerprint being independent of its start and coefficients. The 128
// slots from s lie in three consecutive 64-slot blocks of r words each: a
// query reads at most 24·r contiguous bytes, and stops at the first parity
// that differs from its fingerprint (for an absent key, after two on
// average).
//
// Building adds the keys' rows one by one, in the order of their starts,
// to a band of m rows by Gaussian elimination on the fly: a row goes to
// the slot of its first coefficient if that is free, and otherwise is
// XORed with the row there, shifted to its next coefficient and tried
// again. A row that reduces to nothing is implied by the others if its
// fingerprint reduces to 0 too; otherwise the system has no solution with
// this seed. Back-substitution from the last slot down then gives each
// slot's r bits (an empty slot's are 0).
//
// All keys must be known when the filter is built, and none can be added
// afterwards. That is exactly a table of an LSM tree: immutable, its key
// set complete when its writer finishes.
//
// # Sizes and failures
//
// For n distinct keys a filter has SlotsFor(n) = n·(1+ε) slots rounded up
// to a multiple of 64 (and at least 128), with ε = 0 up to 631 keys and
// then (log10 n − 2.8)/60 but at least 0.05: 1.05 slots a key from 10^3
// to 6·10^5 keys before the rounding (1.088 at 10^3 keys after it, 1.056
// at 10^4), 1.053 at 10^6, 1.087 at 10^8. The serialized filter adds 52
// bytes (header and checksum): bits per key = (r·slots + 416)/n — 8.49 at
// 10^4 keys and r = 8, 8.43 at 10^6. SizeBytes and BitsPerKey give the
// exact size for n keys without building, so a planner can choose between
// a Ribbon and a Bloom filter per table.
//
// A Standard Ribbon system has no solution when some stretch of the band
// gets more rows than it can hold; the chance grows with n and falls with
// ε. The floor of 0.05 is for speed more than for failures: banding takes
// the rows in the order of their starts, and a row is reduced against the
// rows queued ahead of it, on the order of 1/ε of them, so a tighter band
// (RocksDB's configuration gives about 0.024 at 8,000 keys) builds about a
// third more slowly for 3% fewer slots (see minOverhead). The share of
// first attempts that failed, over random sets (400 of each size up to
// 10^5 keys, 100 of 3·10^5 and 10^6):
//
//	keys        300   10^3  3·10^3  10^4  3·10^4  10^5  3·10^5  10^6
//	slots/key  1.067  1.088  1.067  1.056  1.052  1.050  1.050   1.053
//	failures    0%     0%     0%     0%     0%    0.25%   0%      1%
//
// A failed attempt is retried with the next seed, up to 32 of them; the
// slot count stays SlotsFor(n), so the size is known in advance. Build
// returns an error wrapping ErrBuild only if all 32 fail, which at these
// rates is practically impossible; the caller then falls back to a Bloom
// filter.
//
// Keys are given as 64-bit hashes. Use bloom.Hash or bloom.HashString
// (xxhash64): a table then hashes each key once, whatever its filter's
// family (Bloom, fuse or Ribbon). Build mixes a copy of the hashes with
// the seed, sorts it by its top bytes (which orders the rows by start,
// so banding walks the band from its first slot to its last) and drops the repeats; Keys counts
// distinct hashes. Its working memory, some 36 bytes a key, is recycled
// from build to build for tables of up to 65,536 keys. An empty set
// returns ErrEmpty.
//
// # Serialized format
//
// MarshalBinary writes and UnmarshalBinary reads (integers little-endian):
//
//	offset  size  field
//	     0     4  magic "RIBF"
//	     4     1  format version (1)
//	     5     1  kind: 1, Standard Ribbon with 128-bit coefficient rows
//	     6     1  r: result bits (1–32)
//	     7     1  reserved, 0
//	     8     8  seed
//	    16     8  m: slots, a multiple of 64 in [128, 2^32]
//	    24     8  keys: distinct hashes built from, 1 to m
//	    32     8  payload length in bytes: 8·r·m/64
//	    40     4  reserved, 0
//	    44     4  CRC-32C (Castagnoli) of bytes 0–43
//	    48     …  payload: 64-bit words, little-endian
//	     …     4  CRC-32C of the payload
//
// The payload is the solution, column-major within blocks of 64 slots:
// the m/64 blocks in order, each r words, word j of block b holding bit j
// of slots 64b to 64b+63 (slot 64b+i at bit i). Every payload bit is part
// of the solution: there is no padding. The payload starts 8-byte aligned
// relative to the filter's start.
//
// The header has its own checksum so that a reader validates the sizes
// before it allocates anything. It validates every field and derived value
// (the lengths against each other and against the input's length), and
// only then asks for memory — UnmarshalBinaryInto lets the caller provide
// it, for filters kept pinned or outside the Go heap.
//
// INVARIANT: decoding accepts only well-formed encodings. Truncated or
// damaged input returns an error wrapping ErrCorruption that says what is
// wrong and at which byte offset — every single-bit flip is caught by a
// checksum — so a decoded filter never has a false negative for a key the
// encoded filter held, and never reads outside its payload.
package ribbon

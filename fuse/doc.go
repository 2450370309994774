// Package fuse provides binary fuse filters (Graf and Lemire, "Binary Fuse
// Filters: Fast and Smaller Than Xor Filters", 2022): immutable sets of
// 64-bit key hashes that answer "definitely absent" or "maybe present", are
// never wrong about a key they hold, and are wrong about an absent key with
// probability 2^−w for a fingerprint width w of 1 to 16 bits — at about
// 1.125·w bits per key, where a Bloom filter needs at least 1.44·w (a
// blocked one more).
//
// # How it works
//
// A filter is an array of w-bit slots F in S+2 segments of L slots each,
// L a power of two. A key's hash h is mixed with the filter's seed, hash =
// murmur64(h + seed), which picks three slots, one in each of three
// consecutive segments:
//
//	h0 = ⌊hash·S·L / 2^64⌋,  h1 = (h0 + L) ⊕ (hash>>18 mod L),  h2 = (h0 + 2L) ⊕ (hash mod L)
//
// Building assigns every slot a value so that for every key of the set
//
//	F[h0] ⊕ F[h1] ⊕ F[h2] = fingerprint = hash ⊕ hash>>32  (its low w bits)
//
// by peeling a random 3-hypergraph. A query computes the three slots and
// compares: a key of the set always matches, any other key matches with
// probability 2^−w. The three loads are independent, so a query costs about
// one memory access whatever w is.
//
// All keys must be known when the filter is built, and none can be added
// afterwards. That is exactly a table of an LSM tree: immutable, its key
// set complete when its writer finishes. There a fuse filter gives the rate
// of a blocked Bloom filter in a quarter less memory (at 0.39%, 9.04 bits
// per key for a million keys against 12.1), or a lower rate in less memory
// (the blocked Bloom filter bloomkv tables carry answers 0.96% falsely at
// 10 bits per key; an 8-bit fuse filter 0.39% at 9.04). A query reads three
// slots where a Bloom filter tests k bits.
//
// # Sizes
//
// For n distinct keys the library's rule (see SizeBytes) gives
//
//	L = min(2^⌊ln n / ln 3.33 + 2.25⌋, 262144)
//	c = round(n · max(1.125, 0.875 + 0.25·ln 10⁶ / ln n))   (0 for n = 1)
//	S = max(⌈c/L⌉, 3) − 2
//
// slots = (S+2)·L. The size factor c/n is 1.125 from 10⁶ keys up and
// larger below; with the rounding to whole segments the slots per key are
// 1.126 at 10⁸ keys, 1.13 at 10⁶, 1.19 at 10⁵, 1.28 at 10⁴, 1.41 at 10³
// and 1.92 at 100. The serialized filter adds 60 to 68 bytes (header,
// padding word, checksum, rounding to whole words), which dominate below a
// few hundred keys: bits per key = (w·slots + 8·overhead)/n, 9.04 at 10⁶
// keys and 8 bits, 20.2 at 100. SizeBytes returns the exact size for n keys
// without building, so a planner can choose between a fuse and a Bloom
// filter per table.
//
// # Widths from the library's filters
//
// The filters are built by github.com/FastFilter/xorfilter, which offers
// 8-, 16- and 32-bit fingerprints. Since XOR acts on each bit separately,
// the equation above holds bit by bit: the low w bits of every slot of a
// library filter with 16-bit fingerprints (8-bit ones when w ≤ 8, cheaper to
// build) form a valid filter of w-bit fingerprints, with rate 2^−w. This
// package keeps those bits, packed, in its own format, and queries them with
// its own code, which computes exactly the library's hashes: at w = 8 and 16
// a filter answers every query as the library's would.
//
// Keys are given as 64-bit hashes. Use bloom.Hash or bloom.HashString
// (xxhash64): a table then hashes each key once, whatever its filter's
// family (Bloom, fuse or Ribbon). Build drops repeats from a copy of the
// hashes — sorted by their top bytes, which for random hashes brings
// equal ones together in two or three passes — which the library would otherwise find only by failing
// and retrying; Keys counts distinct hashes. Its working memory is
// recycled from build to build for tables of up to 65,536 keys. An empty set returns ErrEmpty. With distinct hashes a
// build fails only if the library's 1024 seeds all fail, which is
// practically impossible; Build then returns an error wrapping ErrBuild and
// the caller falls back to a Bloom filter.
//
// # Serialized format
//
// MarshalBinary writes and UnmarshalBinary reads (integers little-endian):
//
//	offset  size  field
//	     0     4  magic "FUSF"
//	     4     1  format version (1)
//	     5     1  kind: 1, a 3-wise binary fuse filter
//	     6     1  w: fingerprint bits (1–16)
//	     7     1  reserved, 0
//	     8     8  seed
//	    16     4  L: segment length, a power of two in [1, 262144]
//	    20     4  S: segment count, ≥ 1; slots = (S+2)·L ≤ 2^32−1
//	    24     8  keys: distinct hashes built from, 1 to slots
//	    32     8  payload length in bytes: 8·(⌈slots·w/64⌉ + 1)
//	    40     4  reserved, 0
//	    44     4  CRC-32C (Castagnoli) of bytes 0–43
//	    48     …  payload: 64-bit words, little-endian
//	     …     4  CRC-32C of the payload
//
// The payload read as one little-endian number holds slot i in bits
// [i·w, i·w+w). Every bit after the last slot is 0, including the whole
// last word: that padding word lets a query read any slot with one 8-byte
// load. The payload starts 8-byte aligned relative to the filter's start.
//
// The header has its own checksum so that a reader validates the sizes
// before it allocates anything. It validates every field and derived value
// (the lengths against each other and against the input's length), and
// only then asks for memory — UnmarshalBinaryInto lets the caller provide
// it, for filters kept pinned or outside the Go heap.
//
// INVARIANT: decoding accepts only what encoding produces. Truncated or
// damaged input returns an error wrapping ErrCorruption that says what is
// wrong and at which byte offset — every single-bit flip is caught by a
// checksum — so a decoded filter never has a false negative for a key the
// encoded filter held, and never reads outside its payload.
package fuse

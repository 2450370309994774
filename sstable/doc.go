// Package sstable writes and reads bloomkv's sorted string tables: immutable
// files of internal keys and values in key order, each carrying a filter
// over its user keys so that a lookup for an absent key usually costs no
// read of the file at all.
//
// # File layout
//
//	+------------------------+
//	| data block 0 | trailer |  entries in internal-key order, ~BlockSize each,
//	| data block 1 | trailer |  each compressed on its own (none/snappy/zstd)
//	| (padding)              |  zero bytes up to a page boundary (version 3 only)
//	| data block 2 | trailer |
//	| ...                    |
//	| filter block | trailer |  the filter, serialized by its family (optional)
//	| (index partitions)     |  a partitioned index's, each with its trailer (version 4 only)
//	| index block  | trailer |  one entry per data block: its last key → handle;
//	|                        |  of a partitioned index, its top level
//	| range dels   | trailer |  the range tombstones, fragmented (versions 2, 3; optional in 3)
//	| range filter | trailer |  the range filter, package rangefilter's (version 3 only)
//	| properties   | trailer |  name → value entries (see Properties)
//	| (padding)              |  zero bytes up to a page boundary (with a paged filter)
//	| page 0 | trailer | pad |  a paged filter's Bloom filter blocks, a page
//	| page 1 | trailer | pad |  each (optional; see Paged filters)
//	| footer (64 bytes)      |
//	+------------------------+
//
// Every block is followed by a 5-byte trailer: the compression type (1 byte:
// 0 none, 1 snappy, 2 zstd) and a CRC-32C (Castagnoli) of the stored block
// bytes and that type byte, little-endian. The type is package
// internal/compress's Codec, and a compressed block is as its Encoder
// writes it; a zstd block is one frame with zstd's own content checksum,
// which the trailer's CRC covers as well. A handle (BlockHandle) is a
// block's offset and stored length (trailer excluded); in the index it is
// two uvarints, in the footer two uint64s.
//
// # Blocks
//
// A block is a run of entries followed by its restart array:
//
//	entry:    shared key bytes (uvarint) | unshared key bytes (uvarint) |
//	          value length (uvarint) | key[shared:] | value
//	restarts: offset of each restart entry (uint32 LE) ... | count (uint32 LE)
//
// A key shares a prefix with the key before it, except at a restart point,
// every RestartInterval entries (1 in the index and properties blocks),
// where shared is 0 — so a seek binary-searches the restart points and scans
// at most RestartInterval entries. Data and index keys are encoded internal
// keys (see package base); property keys are names.
//
// A data entry's kind (the trailer's low byte: 0 KindDelete, 1 KindSet,
// 3 KindSetBlob, 4 KindMerge) says what its value is: KindSet the value
// itself, KindMerge a merge operand (the DB folds it over the versions
// below; the table stores it as any value), KindDelete nothing (a
// tombstone), KindSetBlob a handle to a value kept
// in a blob file — three uvarints, the blob file's number, the value's
// record offset and its length (the DB's blob files; their format is its
// own). The table stores a handle as any value and resolves none: a Get
// or iterator of this package returns it with its kind, for the DB to
// read. A table written before KindSetBlob existed holds none, and reads
// as before.
//
// KindSetTTL and KindSetBlobTTL are KindSet and KindSetBlob with an
// expiry: the value starts with the instant the version expires, 8 bytes,
// nanoseconds since the Unix epoch as an int64, little-endian, and the
// value proper (KindSetTTL) or the handle (KindSetBlobTTL) follows:
//
//	KindSetTTL (5):     expiry (8, int64 LE) | value
//	KindSetBlobTTL (6): expiry (8, int64 LE) | file number (uvarint) | offset (uvarint) | length (uvarint)
//
// The table judges no expiry: a Get or iterator returns the entry whole,
// with its kind, and the DB hides the version from the expiry on (its
// readers' clock ≥ expiry). Writer.Add refuses an entry of these kinds
// whose value is shorter than 8 bytes. Tables written before these kinds
// existed hold none, and read as before.
//
// # Footer
//
//	offset  size
//	     0    16  filter handle: offset, length (uint64 LE each); length 0 = no filter
//	    16    16  index handle
//	    32    16  properties handle
//	    48     4  format version (1; 2 with a range-deletion block; 3 aligned or with a range filter;
//	              4 with a partitioned index)
//	    52     4  CRC-32C of bytes 0–51
//	    56     8  magic "bloomSST"
//
// # Aligned data blocks
//
// A table written with WriterOptions.BlockAlign fits its data blocks to
// 4 KiB pages, the unit in which the kernel reads a file, so that a
// lookup's read of a block not in the page cache costs one page from the
// device, not two. The rule is one function of the previous block's end
// and the next block's stored length (alignedStart): a block starts where
// the previous one's trailer ends, unless it fits in a page with its
// trailer (length + 5 ≤ 4096) and would cross a page boundary from there;
// then it starts at the next boundary, the bytes between being zero
// padding. The index holds every block's offset, as always; a reader
// accepts a data block at the previous end or where the rule puts it, and
// nowhere else, so padding is at most a page less a byte and always ends
// at a boundary. The properties record the page (bloomkv.block.align:
// 4096) and the padding's total (bloomkv.data.padding), which the reader
// checks against the index, and the footer says format version 3 — with or
// without a range-deletion block, which its properties name as in version
// 2, and with or without a range filter (see Range filters) — so that a
// reader that knows only versions 1 and 2 refuses the table rather than
// take its padding for damage. A table of version 3 has aligned blocks, a
// range filter or both; tables of versions 1 and 2 have no padding and
// read as before.
//
// The writer cuts blocks to fit (see WriterOptions.BlockAlign): before the
// entry that would take a block's stored bytes and trailer past a page,
// a compressed block's included — rebuilt from fewer entries when
// compression left it larger than the ratio predicted, and holding at
// most a quarter past BlockSize before compression — so that pages are
// filled to within an entry and the padding is a few percent of the data.
// Where blocks compress to much less than a page the writer pads a block
// only if the padding is at most a quarter of it, and lets it cross the
// boundary otherwise; the rule above allows both.
//
// # Partitioned indexes
//
// A table written with WriterOptions.IndexPartitionSize whose index would
// pass that size has a two-level index, as RocksDB's partitioned index
// (kTwoLevelIndexSearch) and Pebble's two-level index have: the index's
// entries cut into partitions, each a block of the index's own format
// (restart interval 1, one entry per data block: its last key → its
// handle) holding the entries of a run of consecutive data blocks, cut
// after the entry that takes the partition's block to the size; and a top
// level, one block of the same format with one entry per partition:
//
//	key:    the partition's last key (its last data block's)
//	value:  partition offset (uvarint) | partition length (uvarint) |
//	        data blocks in it (uvarint) | end of its last data block's trailer (uvarint)
//
// The partitions lie one after another, uncompressed, each with its
// trailer and so its checksum, after the filter block (after the data
// when there is none); the top level follows them, where the index block
// lies in other tables, and the footer's index handle is the top level's.
// The properties count the partitions (bloomkv.index.partitions, omitted
// when 0) and IndexBytes counts the partitions' and the top level's bytes.
// An index that fits in one partition is written as one block, as without
// the option.
//
// The footer says format version 4, whatever else the table has: its
// properties say whether its blocks are aligned and whether it has a range
// filter or range tombstones, as in version 3 (both optional). A table of
// version 4 has index partitions, and only such a table: a reader tells the
// two kinds of index apart by the version, and the properties' count must
// agree. A reader that knows only versions 1 to 3 refuses a version-4
// table rather than take the top level for the data blocks' index.
//
// Open checks the top level — partitions contiguous, in key order, as
// many as the properties count, their data blocks adding up to the
// properties' and following one another to the filter — and pins it
// (partitionIndex): per partition its last key, as blockIndex keeps the
// data blocks' (the common prefix once), 8 bytes for where its key and its
// block end, and 12 for the data blocks before it and where they end. A lookup or an iterator
// binary-searches the top level, then reads the partition it lands in
// through the block cache, keyed by its offset as a data block is; a
// partition read from the file is checked whole before it is cached — its
// entries are all restart points (so an entry is found by its number),
// as many as the top level says, their handles placing the partition's
// data blocks one after another (padding as alignedStart allows) from
// where the previous partition's end to where the top level says this
// one's end, their keys increasing from past the previous partition's last
// key to this one's. With ReaderOptions.PinIndexPartitions Open reads and
// checks every partition instead and pins them as one index, as an
// unpartitioned table's, so that a lookup reads none.
//
// # Range tombstones
//
// A table written with range tombstones (Writer.SetRangeDels) stores them
// in a range-deletion block between the index and the properties,
// uncompressed, in package rangedel's encoding of a fragmented list:
//
//	count (uvarint) | fragment ...
//	fragment: start length (uvarint) | start | end length (uvarint) | end |
//	          seqnums (uvarint) | seqnum (uvarint) ..., newest first
//
// Fragments are in key order and do not overlap; each covers [start, end).
// The properties name the block (bloomkv.rangedel.block: its handle, two
// uvarints) and count its tombstones (bloomkv.rangedel.count, one per
// fragment and seqnum), and the footer says format version 2 (3 when the
// blocks are aligned, see above). A table without range tombstones is
// written as version 1 (3 when aligned), with no range-deletion
// block (its properties say a count of 0), so that readers that know only
// version 1, which skip properties they do not know, read it; such a
// reader refuses a version-2 table rather than read it without its
// tombstones. The table's bounds (Properties.Smallest and Largest) widen to
// the tombstones, inclusively: the smallest to the first fragment's start,
// the largest to rangedel.LastCovered of the last fragment's end — the
// last key the fragment covers when the end is a key followed by 0x00 (as
// a compaction cuts them), and otherwise the end itself, a bound one key
// too wide — each with kind KindRangeDelete. Open decodes the block and keeps it in memory
// for the table's life (Reader.RangeDels), so that a read asks a table's
// range tombstones without reading the file — before its filter, whose
// "absent" says nothing of them.
//
// # Filters
//
// A table's filter is of one family (FilterFamily), recorded in the
// properties (bloomkv.filter.family; a table written before families
// were recorded has none, and holds a Bloom filter), and the reader picks
// the decoder by it, so tables of different families mix in one DB:
//
//	family  filter        format                 parameter (FilterSpec.Bits)
//	bloom   bloom.Blocked bloom's ("BLMF")       bits per key, [1, 64]
//	fuse    fuse.Filter   package fuse's ("FUSF") fingerprint bits, [1, 16]
//	ribbon  ribbon.Filter package ribbon's ("RIBF") result bits, [1, 32]
//
// A family is one file (filter_bloom.go, filter_fuse.go, filter_ribbon.go):
// a filterCodec that builds, decodes and prices its filters, and its entry
// in filterCodecs. Every serialized format carries its own header and
// checksums, inside the block's own. A fuse or Ribbon filter costs more per
// key in small tables, and its construction can fail: where a Bloom filter
// of the same false-positive rate would be smaller, or the filter cannot be
// built, the writer builds that Bloom filter and records the family it
// built.
//
// With WriterOptions.Prefix the filter also holds the hash of each key's
// prefix (PrefixExtractor), and the properties the extractor's name
// (bloomkv.filter.prefix), so that a seek within one prefix skips a table
// whose filter rules the prefix out (Reader.MayContainPrefix).
//
// # Paged filters
//
// A table written with WriterOptions.PagedFilterBits has a second filter
// of its keys, kept in the file and read a page at a time: a Bloom filter
// (bloom.Blocked) of that many bits per key, over the filter's hashes,
// whose 64-byte blocks are stored 63 to a page, each page a block of its
// own (uncompressed, with its trailer and so its CRC) padded with zeros to
// 4 KiB, the pages after the properties block from the first page
// boundary past it, the last one ending where the footer starts:
//
//	page p:  blocks 63p … 63p+62 (64 bytes each, words little-endian) | trailer (5) | zeros to 4096
//
// The properties give its blocks (bloomkv.pagedfilter.blocks), probes per
// key (bloomkv.pagedfilter.probes) and bits per key
// (bloomkv.pagedfilter.bits.per.key), and a reader finds the pages from
// the file's size: ceil(blocks/63) pages of 4 KiB before the footer, which
// must start on a page boundary past the properties. Every probe of a key
// falls in the one block bloom.BlockOf names, so one page answers for it
// (bloom.BlockMayContainHash). A Get, or MultiGet's Locate, that the
// table's filter cannot rule out reads that page, through the block cache
// as a data block is read (admitted as one), checks it, and ends without
// a data block when the paged filter rules the key out
// (LookupStats.PagedFilterNegative). A pinned filter of few bits per key
// — what a memory limit leaves a large tree — passes many absent keys;
// the paged filter's page, shared by every key hashed to it, comes from
// the block cache or the page cache far more often than a data block
// would, and rules out most of them. The properties and the pages are
// not in the footer, and a reader that knows nothing of them reads the
// table as before (unknown properties are ignored), without the paged
// filter; the format version is the table's without it. No lookup or scan
// reads the padding, which no checksum covers.
//
// # Range filters
//
// A table written with WriterOptions.RangeFilterBits has a range filter
// over its distinct user keys (point tombstones' included), so that a scan
// of [lo, hi) skips the table when the filter rules every such key out
// (Reader.MayContainRange). Its block lies just before the properties,
// after the range-deletion block if there is one, uncompressed, in package
// rangefilter's serialized format, which carries its own version, header
// checksum and body checksum inside the block's. The properties name its
// family (bloomkv.rangefilter.family: 1, GrafiteFamily), its block
// (bloomkv.rangefilter.block, a handle as two uvarints), its keys
// (bloomkv.rangefilter.keys, checked against the filter's own count) and
// bits per key (bloomkv.rangefilter.bits.per.key), and the footer says
// format version 3, in which the range-deletion block is optional: present
// exactly when the properties name one. A table with neither a range
// filter nor aligned blocks keeps version 1 or 2, readable by readers that
// know only those; such a reader refuses a version-3 table. Open decodes the filter as a view over
// a pinned copy of its block, held in memory with the filter and the index
// for the table's life (ReaderOptions.Memory), so asking it reads nothing
// and allocates nothing.
//
// # Reading
//
// Open reads the footer, then the properties, index, range-deletion,
// range-filter and filter blocks, checks them, and pins them in memory for
// the table's life (of a partitioned index, the top level: see Partitioned
// indexes). The index is held as the data blocks' last keys,
// their common prefix once and each key's rest concatenated, plus 8 bytes
// per block for where its key's rest and the block end, and 2 more in an
// aligned table for the padding before the block: two pointer-free
// allocations per table. With ReaderOptions.Memory the index and the filter's bits live in memory the
// caller provides (the DB's is off the Go heap), returned by Close. Get
// consults the filter first: a negative answer returns at once, with zero
// reads of the file. Otherwise it binary-searches the pinned index and reads
// exactly one data block, from the shared block cache when it is there —
// in a table whose partitioned index is not pinned, after the index
// partition, read the same way.
//
// A block from the cache is held through a CacheHandle, released when the
// reader is done with it: Get copies the value out and releases the block
// before it returns; an Iterator holds its current block until it moves to
// another or closes, so Key and Value are valid until then. A block read on
// a miss is read into pooled buffers and copied into the cache, so reads
// make no garbage per block.
//
// INVARIANT: every byte of a table that a read interprets is covered by a
// checksum (a block's trailer or the footer's), and every length is
// checked against the file before it is used, so a damaged or truncated
// table yields an error wrapping ErrCorruption that names the file and
// offset — never a wrong value, never a panic. The one exception is the
// padding between aligned data blocks, which no checksum covers and no
// lookup or scan interprets (a block read reads its handle's bytes, which
// exclude it); Reader.Layout, which reads the whole file, reports a byte
// of it that is not zero as corruption at its offset.
//
// INVARIANT: a partitioned index's partitions hold, in order, exactly the
// entries the one index block would; partition p's last key is the top
// level's entry p.
//
// INVARIANT: the index entry of data block i is the last key of block i, so
// it is ≥ every key of block i and < every key of block i+1; data blocks
// follow one another from offset 0, contiguous but for the padding of an
// aligned table.
//
// INVARIANT: the filter holds the hash of every distinct user key in the
// table (and of every distinct prefix under its recorded extractor), so a
// filter negative is never wrong.
package sstable

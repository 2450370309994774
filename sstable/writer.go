package sstable

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/bloomkv/bloomkv/rangefilter"
)

// WriterOptions configure a table. The zero value is usable: 4 KiB blocks,
// restart interval 16, no compression, no filter, blocks not aligned to
// pages. A DB hands its writers
// options it has already resolved and checked (bloomkv.Options); NewWriter
// checks them again only because the package is usable on its own.
type WriterOptions struct {
	// BlockSize is the target size of a data block before compression; a
	// block is cut after the entry that reaches it (under BlockAlign, see
	// there). Default 4096.
	BlockSize int
	// RestartInterval is the number of entries between restart points:
	// fewer means faster seeks in a block, more means better prefix
	// compression. Default 16.
	RestartInterval int
	// Compression compresses each data block independently, but for a
	// block whose entries hold no value of their own — blob handles
	// (values in blob files) and empty values — which is stored as
	// given: such blocks shrink by about a quarter, on tables a few
	// percent the size of the values they point to, and every Get of a
	// separated value reads one, which would decompress it. Default
	// (DefaultCompression) none.
	Compression Compression
	// Filter is the table's filter: family and parameter (Bloom(10),
	// Fuse(8), ...). The zero value writes no filter.
	Filter FilterSpec
	// BlockAlign fits the data blocks to the 4 KiB pages the kernel reads
	// a file in, so that a lookup's cold block read touches one page, not
	// two. A block that would cross a page boundary, and fits in a page
	// with its trailer, starts at the next one after zero padding, unless
	// the padding would exceed a quarter of the block (then it crosses).
	// With a BlockSize of at most a page, blocks are also cut so that they
	// fit: before the entry that would take the block's stored bytes past
	// the page, compressed or not (see align.go) — a compressed block
	// holding up to a quarter more than BlockSize before compression, so
	// that it fills the page — and, for a BlockSize below a page, once the
	// block reaches BlockSize as before. Blocks larger than a page, a
	// single large entry's or any under a BlockSize past a page, span
	// pages wherever they start and are never padded. The table is written
	// as format version 3 (see the package doc).
	BlockAlign bool
	// Prefix, if not nil, puts the prefix of every key (Prefix.Split) in
	// the filter beside the whole key, so that a prefix seek can skip the
	// table (Reader.MayContainPrefix). Needs a filter.
	Prefix *PrefixExtractor
	// RangeFilterBits, if not 0, gives the table a range filter of that
	// many bits per key (rangefilter.MinBitsPerKey to MaxBitsPerKey), so
	// that a scan whose bounds it rules out skips the table
	// (Reader.MayContainRange). Default 0: none.
	RangeFilterBits float64
	// IndexPartitionSize, if not 0, partitions an index larger than it
	// (see the package doc's Partitioned indexes): the index is cut into
	// partitions, after the entry that takes one to this many bytes, and a
	// top-level index over them is what a Reader pins, its partitions
	// read through the block cache. An index that fits in one partition is
	// written whole, as without the option. The table is then written as
	// format version 4. Default 0: the index is one block, whatever its
	// size.
	IndexPartitionSize int
	// PagedFilterBits, if not 0, gives the table a paged filter: a Bloom
	// filter of its keys at that many bits per key (1 to
	// bloom.MaxBitsPerKey), kept in the file's last pages and read a page
	// at a time for the keys the table's filter cannot rule out (see the
	// package doc's Paged filters). Default 0: none.
	PagedFilterBits float64
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.BlockSize <= 0 {
		o.BlockSize = 4096
	}
	if o.RestartInterval <= 0 {
		o.RestartInterval = 16
	}
	if o.Compression == DefaultCompression {
		o.Compression = NoCompression
	}
	return o
}

// ErrKeyOrder is returned by (*Writer).Add for a key that does not sort
// strictly after the previous one.
var ErrKeyOrder = errors.New("sstable: keys not in strictly increasing order")

// Writer writes one table. Add entries in increasing internal-key order,
// then Finish. A Writer is not safe for concurrent use.
//
// Once an error occurs every later call returns it: a table whose bytes
// were only partly written cannot be finished.
type Writer struct {
	opts      WriterOptions
	w         *bufio.Writer
	offset    uint64
	data      blockWriter
	index     blockWriter
	parts     []indexPartition // the index's partitions cut so far, under IndexPartitionSize
	dataEnd   uint64           // the end of the last data block's trailer
	props     Properties
	hashes    []uint64 // of distinct user keys and their distinct prefixes, for the filter
	lastKey   []byte   // encoded internal key of the last entry
	rangeDels RangeTombstones
	fit       pageFit // how BlockAlign cuts blocks
	// dataInline is set when the pending data block may hold an entry
	// with a value of its own: one not a blob handle, and not empty. A
	// block without one is stored uncompressed (dataCodec).
	dataInline bool
	prefix     []byte // the last key's prefix, under opts.Prefix
	keyBuf     []byte
	scratch    []byte
	err        error
	bufs       *writerBuffers // w's and hashes' storage, returned to the pool by Finish
	// rangeFilter builds the range filter, under opts.RangeFilterBits;
	// pooled, and returned by Finish.
	rangeFilter *rangefilter.Builder
}

// writerBuffers are a Writer's largest buffers, recycled from one finished
// table to the next: a fill or compaction writes table after table, and
// growing a fresh hash slice (8 bytes a key) and write buffer for each was
// most of the garbage a fill made.
type writerBuffers struct {
	w      *bufio.Writer
	hashes []uint64
}

// maxPooledHashes is the most hashes a pooled slice may hold room for:
// 512 KiB, those of a table of 65,536 keys. A slice grown past it — by a
// memtable's flush or an intra-L0 compaction's output, of hundreds of
// thousands of keys — is left to the collector: pooled, it would go to the
// next Writer, most often a compaction's output of TargetFileSize and a
// few thousand keys, which would hold megabytes of it idle for its life
// (and a DB under a memory limit counts the Go heap's growth against it).
const maxPooledHashes = 1 << 16

var writerBufferPool = sync.Pool{New: func() any {
	return &writerBuffers{w: bufio.NewWriterSize(nil, 64<<10)}
}}

// recycle returns the Writer's buffers to the pool; it must not write again.
func (w *Writer) recycle() {
	if w.bufs == nil {
		return
	}
	w.bufs.w.Reset(nil)
	w.bufs.hashes = w.hashes[:0]
	if cap(w.hashes) > maxPooledHashes {
		w.bufs.hashes = nil
	}
	writerBufferPool.Put(w.bufs)
	w.bufs, w.hashes = nil, nil
}

// NewWriter returns a Writer that writes a table to w. Finish flushes its
// buffer but does not sync or close w.
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	opts = opts.withDefaults()
	// The filter's own rule, asked now rather than at Finish, after the
	// whole table is written.
	if err := opts.Filter.Check(); err != nil {
		return nil, fmt.Errorf("sstable: Filter = %v: %w", opts.Filter, err)
	}
	if err := opts.Prefix.check(); err != nil {
		return nil, fmt.Errorf("sstable: Prefix: %w", err)
	}
	if opts.Prefix != nil && opts.Filter.Family == NoFilter {
		return nil, errors.New("sstable: Prefix needs a Filter")
	}
	if err := checkRangeFilterBits(opts.RangeFilterBits); err != nil {
		return nil, fmt.Errorf("sstable: RangeFilterBits: %w", err)
	}
	if err := checkPagedFilterBits(opts.PagedFilterBits); err != nil {
		return nil, fmt.Errorf("sstable: PagedFilterBits: %w", err)
	}
	if opts.IndexPartitionSize < 0 {
		return nil, fmt.Errorf("sstable: IndexPartitionSize = %d: negative", opts.IndexPartitionSize)
	}
	if opts.Compression > ZstdCompression {
		return nil, fmt.Errorf("sstable: Compression = %v: unknown", opts.Compression)
	}
	bufs := writerBufferPool.Get().(*writerBuffers)
	bufs.w.Reset(w)
	var rf *rangefilter.Builder
	if opts.RangeFilterBits != 0 {
		rf = newRangeFilterBuilder(opts.RangeFilterBits)
	}
	return &Writer{
		fit:         newPageFit(opts),
		rangeFilter: rf,
		opts:        opts,
		w:           bufs.w,
		hashes:      bufs.hashes[:0],
		bufs:        bufs,
		data:        blockWriter{restartInterval: opts.RestartInterval},
		index:       blockWriter{restartInterval: 1},
		props:       Properties{Compression: opts.Compression, SmallestSeqNum: base.SeqNumMax},
	}, nil
}

// Add appends an entry. key must sort after every key added before; an
// entry of a kind with an expiry (KindSetTTL, KindSetBlobTTL) must have a
// value that starts with one (ExpiryLen bytes), or Add returns an error and
// adds nothing.
func (w *Writer) Add(key InternalKey, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if key.Kind().HasExpiry() && len(value) < base.ExpiryLen {
		return fmt.Errorf("sstable: entry %v: value of %d bytes is shorter than its expiry (%d)", key, len(value), base.ExpiryLen)
	}
	if w.props.Entries > 0 {
		// One comparison of the user keys both checks the order (as
		// base.CompareInternal: user keys ascending, then trailers
		// descending) and tells whether key starts a new user key.
		prev, _ := base.DecodeInternalKey(w.lastKey)
		switch c := bytes.Compare(prev.UserKey, key.UserKey); {
		case c > 0 || c == 0 && prev.Trailer <= key.Trailer:
			return fmt.Errorf("%w: %v after %v", ErrKeyOrder, key, prev)
		case c < 0:
			w.addHashes(key.UserKey, false)
		}
	} else {
		w.addHashes(key.UserKey, true)
		w.props.Smallest = InternalKey{UserKey: bytes.Clone(key.UserKey), Trailer: key.Trailer}
	}
	w.keyBuf = key.Append(w.keyBuf[:0])
	w.addToBlock(w.keyBuf, value, len(value) > 0 && key.Kind().WithoutExpiry() != base.KindSetBlob)
	// The encoded key is the last key now: the two buffers swap rather
	// than copy (the block keeps copies of its own).
	w.lastKey, w.keyBuf = w.keyBuf, w.lastKey

	p := &w.props
	p.Entries++
	if key.Kind() == base.KindDelete {
		p.Tombstones++
	}
	if key.Kind().HasExpiry() {
		expiry, _, _ := base.SplitExpiry(value) // its length checked above
		if p.ExpiringEntries == 0 || expiry < p.EarliestExpiry {
			p.EarliestExpiry = expiry
		}
		p.ExpiringEntries++
	}
	p.RawKeyBytes += uint64(len(key.UserKey))
	p.RawValueBytes += uint64(len(value))
	p.SmallestSeqNum = min(p.SmallestSeqNum, key.SeqNum())
	p.LargestSeqNum = max(p.LargestSeqNum, key.SeqNum())

	if w.data.size() >= w.cutAfter() {
		w.flushDataBlock()
	}
	return w.err
}

// addHashes adds a new user key to the filter's hashes, and its prefix if
// that differs from the last key's (keys come in order, so equal prefixes
// are adjacent).
func (w *Writer) addHashes(userKey []byte, first bool) {
	w.hashes = append(w.hashes, bloom.Hash(userKey))
	w.addRangeKey(userKey)
	if w.opts.Prefix == nil {
		return
	}
	prefix := userKey[:w.opts.Prefix.split(userKey)]
	if len(prefix) == len(userKey) {
		return // the key is its own prefix, and its hash is in already
	}
	if first || !bytes.Equal(prefix, w.prefix) {
		w.hashes = append(w.hashes, bloom.Hash(prefix))
		w.prefix = append(w.prefix[:0], prefix...)
	}
}

// flushDataBlock writes the pending data block and indexes it under its
// last key: the index entry for block i is ≥ every key in block i and <
// every key in block i+1. Under BlockAlign it may write only the block's
// first entries, keeping the rest for the next block (compressData).
func (w *Writer) flushDataBlock() {
	if w.data.entries == 0 {
		return
	}
	stored, used := w.compressData(w.data.finish())
	h := w.writeStored(stored, used, w.opts.BlockAlign)
	w.index.add(w.data.lastKey, h.appendVarint(nil))
	w.props.DataBlocks++
	w.props.DataBytes += h.Length + blockTrailerLen
	w.dataEnd = h.Offset + h.Length + blockTrailerLen
	if n := w.opts.IndexPartitionSize; n > 0 && w.index.size() >= n {
		w.cutPartition()
	}
	w.data.reset()
	// The entries carried over came from the block just written: if it
	// held none with a value of its own, they hold none.
	w.dataInline = w.dataInline && w.fit.carry > 0
	w.carryOver()
}

// zeroPage is the padding an aligned table writes between data blocks.
var zeroPage [alignPage]byte

// writeBlock compresses and writes one block and its trailer.
func (w *Writer) writeBlock(raw []byte, c Compression) BlockHandle {
	stored, used, scratch := blockEncoder.Encode(c.codec(), raw, w.scratch)
	w.scratch = scratch
	return w.writeStored(stored, used, false)
}

// writeStored writes a block's stored bytes and its trailer. With align (a
// data block under BlockAlign) the block starts where alignedStart puts
// it, after zero padding, if that padding is worth it (worthPadding).
func (w *Writer) writeStored(stored []byte, c compress.Codec, align bool) BlockHandle {
	if align {
		pad := alignedStart(w.offset, uint64(len(stored)), alignPage) - w.offset
		if worthPadding(pad, uint64(len(stored))+blockTrailerLen) {
			w.write(zeroPage[:pad])
			w.props.DataPadding += pad
		}
	}
	h := BlockHandle{Offset: w.offset, Length: uint64(len(stored))}
	var trailer [blockTrailerLen]byte
	trailer[0] = byte(c)
	binary.LittleEndian.PutUint32(trailer[1:], blockChecksum(stored, c))
	w.write(stored)
	w.write(trailer[:])
	return h
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(p)
	w.offset += uint64(n)
	if err != nil {
		w.err = fmt.Errorf("sstable: write: %w", err)
	}
}

// SetRangeDels gives the table its range tombstones, written at Finish in
// a block of their own; the table's bounds (Properties.Smallest and
// Largest) widen to cover them, and its seqnum range to include theirs.
// They must be a valid fragmented list (RangeTombstones' invariant); the
// Writer keeps them, unmodified, until Finish. A later call replaces the
// earlier one's.
func (w *Writer) SetRangeDels(l RangeTombstones) error {
	if w.err != nil {
		return w.err
	}
	if err := l.Check(); err != nil {
		return fmt.Errorf("sstable: SetRangeDels: %w", err)
	}
	w.rangeDels = l
	return nil
}

// EstimatedSize is the size the table would have if finished now, without
// its filter, index and properties.
func (w *Writer) EstimatedSize() uint64 { return w.offset + uint64(w.data.size()) }

// Finish writes the filter, index and properties blocks and the footer, and
// flushes. It returns the table's properties.
func (w *Writer) Finish() (Properties, error) {
	if w.err != nil {
		return Properties{}, w.err
	}
	// Every return below leaves w.err set, so the Writer never writes
	// again and its buffers can go back to the pool.
	defer w.recycle()
	for w.data.entries > 0 && w.err == nil {
		w.flushDataBlock() // more than once when a block carries entries over
	}
	if w.props.Entries > 0 {
		last, _ := base.DecodeInternalKey(w.lastKey)
		w.props.Largest = InternalKey{UserKey: bytes.Clone(last.UserKey), Trailer: last.Trailer}
	} else if len(w.rangeDels) == 0 {
		w.props.SmallestSeqNum = 0
	}
	w.widenBounds()

	var f footer
	if w.opts.Filter.Family != NoFilter && len(w.hashes) > 0 {
		family, encoded, filter, err := buildFilter(w.opts.Filter, w.hashes)
		if err != nil {
			w.err = fmt.Errorf("sstable: filter: %w", err)
			return Properties{}, w.err
		}
		f.filter = w.writeBlock(encoded, NoCompression)
		w.props.setFilter(family, filter, f.filter.Length)
		if w.opts.Prefix != nil {
			w.props.FilterPrefix = w.opts.Prefix.Name
		}
	}
	f.index = w.writeIndex()
	f.version = formatVersion1
	if w.opts.BlockAlign {
		f.version = formatVersion3
		w.props.BlockAlign = alignPage
	}
	if w.props.IndexPartitions > 0 {
		f.version = formatVersion4
	}
	if len(w.rangeDels) > 0 {
		f.version = max(f.version, formatVersion2)
		w.props.RangeDelBlock = w.writeBlock(w.rangeDels.Encode(nil), NoCompression)
		w.props.RangeDels = uint64(w.rangeDels.Count())
	}
	if w.writeRangeFilter() {
		f.version = max(f.version, formatVersion3)
	}
	paged, err := w.buildPagedFilter()
	if err != nil {
		w.err = fmt.Errorf("sstable: paged filter: %w", err)
		return Properties{}, w.err
	}
	f.properties = w.writeBlock(encodeProperties(&w.props), NoCompression)
	w.writePagedFilter(paged)
	w.write(f.encode())
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("sstable: write: %w", err)
		}
	}
	if w.err != nil {
		return Properties{}, w.err
	}
	w.err = errors.New("sstable: writer already finished")
	return w.props, nil
}

// widenBounds widens the table's key bounds and seqnum range to its range
// tombstones: the smallest bound to the first fragment's start, the
// largest to rangedel.LastCovered of the last fragment's end (the last key
// it covers, or the end itself where no finite key is the last, so the
// bound is inclusive and never too narrow). Their trailers carry
// KindRangeDelete and a seqnum of the fragment.
func (w *Writer) widenBounds() {
	l := w.rangeDels
	if len(l) == 0 {
		return
	}
	p := &w.props
	first, last := &l[0], &l[len(l)-1]
	smallest := base.MakeInternalKey(first.Start, first.Seqs[0], base.KindRangeDelete)
	largest := base.MakeInternalKey(rangedel.LastCovered(last.End), last.Seqs[len(last.Seqs)-1], base.KindRangeDelete)
	if p.Entries == 0 || base.CompareInternal(smallest, p.Smallest) < 0 {
		p.Smallest = InternalKey{UserKey: bytes.Clone(smallest.UserKey), Trailer: smallest.Trailer}
	}
	if p.Entries == 0 || base.CompareInternal(largest, p.Largest) > 0 {
		p.Largest = InternalKey{UserKey: bytes.Clone(largest.UserKey), Trailer: largest.Trailer}
	}
	lo, hi := l.SeqRange()
	p.SmallestSeqNum = min(p.SmallestSeqNum, lo)
	p.LargestSeqNum = max(p.LargestSeqNum, hi)
}

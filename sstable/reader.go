package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/bytealg"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/bloomkv/bloomkv/rangefilter"
)

// BlockCache is the seam to the shared block cache: decoded data blocks by
// (file number, offset). The DB's block cache implements it; nil caches
// nothing.
//
// Get returns a Handle on the block cached under k, if any. Insert caches a
// copy of block (the caller reuses block afterwards) and returns a Handle
// on the copy. A block's bytes stay valid until its Handle is released.
// Admit records that a point lookup missed the block under k, of size
// bytes as stored, and reports whether to Insert it: a point lookup's
// block that it does not admit is read into buffers of the lookup's own
// and not cached (the DB's cache, once full, admits a block at its second
// miss).
type BlockCache interface {
	Get(k CacheKey) (CacheHandle, bool)
	Insert(k CacheKey, block []byte) CacheHandle
	Admit(k CacheKey, size int) bool
}

// ReaderOptions say where a table comes from.
type ReaderOptions struct {
	// FileName names the file in errors.
	FileName string
	// FileNum identifies the table in the block cache; tables sharing a
	// cache must have distinct numbers.
	FileNum uint64
	// Cache is the block cache for data blocks; nil reads every block from
	// the file.
	Cache BlockCache
	// Memory, if not nil, provides the memory for what Open pins for the
	// table's life — the filter and the index — instead of the Go heap;
	// Close returns it. The DB passes an off-heap allocator here.
	Memory Allocator
	// GlobalSeqNum, if not 0, is the sequence number of every entry of
	// the table, whatever sequence numbers it was written with: a table
	// the DB ingested (bloomkv.DB.Ingest), whose file it never rewrites,
	// at the number the manifest records for it. The Reader applies it
	// wherever a sequence number shows: Iterator.Key, Get (a read below it
	// finds nothing), LookupStats.FoundSeq, the range tombstones and the
	// Properties' bounds and sequence numbers. The table must hold at most
	// one version of each user key (the DB checks that before it ingests
	// one): two would become one key twice.
	GlobalSeqNum SeqNum
	// PinIndexPartitions reads a partitioned index's partitions at Open
	// and pins them, decoded into one index as an unpartitioned table's
	// (in Memory, if set), so that no lookup reads one; without it Open
	// pins only the top level, and a lookup reads the partition it needs
	// through Cache. A table whose index is one block pins it either way.
	PinIndexPartitions bool
}

// Allocator is the seam to memory the caller manages: Alloc returns n
// bytes (n > 0) aligned to 16 bytes; Free takes back a slice Alloc
// returned, with its capacity unchanged.
type Allocator interface {
	Alloc(n int) []byte
	Free(b []byte)
}

// Reader reads one table. Open reads and verifies the footer, index, filter
// and properties and keeps them in memory for the table's life; after that
// only data blocks are read (and a partitioned index's partitions, unless
// pinned too), and only when the filter cannot rule a key out.
// A Reader is safe for concurrent use.
type Reader struct {
	file io.ReaderAt
	size int64
	opts ReaderOptions
	// index is the data blocks' index, pinned: the table's one index
	// block, or its partitions under PinIndexPartitions; parts is a
	// partitioned index's pinned top level otherwise, and index empty.
	index  blockIndex
	parts  partitionIndex
	filter Filter // nil: the table has no filter
	props  Properties
	// rangeDels are the table's range tombstones, decoded at Open and
	// kept on the Go heap for the table's life (they are few, and a Get
	// of every key in their ranges asks them); nil for a table without.
	rangeDels RangeTombstones
	// rangeFilter is the table's range filter, a view over its block
	// pinned like the filter; nil for a table without.
	rangeFilter *rangefilter.Filter
	paged       pagedFilter // the paged filter's place; blocks 0 for none
	pinned      [][]byte    // from opts.Memory, for Close
}

// pin returns n bytes for the table's life: from opts.Memory, to be freed
// by Close, or from the heap.
func (r *Reader) pin(n int) []byte {
	if r.opts.Memory == nil || n == 0 {
		return make([]byte, n)
	}
	b := r.opts.Memory.Alloc(n)
	r.pinned = append(r.pinned, b)
	return b
}

// Close returns the memory Open took from ReaderOptions.Memory. The Reader,
// and every Iterator of it, must not be used afterwards. Without Memory it
// does nothing. It does not close the file.
func (r *Reader) Close() {
	for _, b := range r.pinned {
		r.opts.Memory.Free(b)
	}
	r.pinned = nil
}

// Open opens the table of the given size in file. A damaged or truncated
// table returns an error wrapping ErrCorruption that names the file and
// the offset of the damaged part.
func Open(file io.ReaderAt, size int64, opts ReaderOptions) (*Reader, error) {
	r := &Reader{file: file, size: size, opts: opts}
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) open() error {
	file, size := r.file, r.size
	if size < footerLen {
		return r.corrupt(0, "file of %d bytes is shorter than a footer", size)
	}
	buf := make([]byte, footerLen)
	if _, err := file.ReadAt(buf, size-footerLen); err != nil {
		return r.readError(size-footerLen, err)
	}
	f, reason := decodeFooter(buf)
	if reason != "" {
		return r.corrupt(size-footerLen, "%s", reason)
	}

	propsBlock, err := r.readBlock(f.properties, "properties")
	if err != nil {
		return err
	}
	if r.props, err = decodeProperties(propsBlock); err != nil {
		return r.corrupt(int64(f.properties.Offset), "properties block: %v", err)
	}
	if err := r.checkFeatures(f); err != nil {
		return err
	}
	if err := r.openIndex(f); err != nil {
		return err
	}
	if err := r.openRangeDels(f); err != nil {
		return err
	}
	r.applyGlobalSeqNum()
	if err := r.openRangeFilter(f); err != nil {
		return err
	}
	if err := r.openPagedFilter(f); err != nil {
		return err
	}
	if f.filter.Length > 0 {
		filterBlock, err := r.readBlock(f.filter, "filter")
		if err != nil {
			return err
		}
		c := codecOf(r.props.FilterFamily)
		if c == nil {
			return r.corrupt(int64(f.properties.Offset), "properties block: unknown filter family %d", uint8(r.props.FilterFamily))
		}
		if r.filter, err = c.decode(filterBlock, r.pinWords); err != nil {
			return r.corrupt(int64(f.filter.Offset), "%s filter block: %v", c.name(), err)
		}
	}
	return nil
}

// checkFeatures checks the properties' optional features against the
// format version: a table of version 4, and only such a table, has a
// partitioned index; a table of version 3 or 4, and only such a table,
// has page-aligned data blocks (aligned to a page this reader knows,
// alignPage) or a range-filter block, version 3 at least one of the two;
// only an aligned table has padding. (openRangeFilter checks the range
// filter's own properties.)
func (r *Reader) checkFeatures(f footer) error {
	p := &r.props
	aligned := p.BlockAlign != 0
	filtered := p.RangeFilterBlock.Length != 0 || p.RangeFilterFamily != NoRangeFilter
	off := int64(f.properties.Offset)
	switch {
	case (p.IndexPartitions != 0) != (f.version == formatVersion4):
		return r.corrupt(off, "properties block: %d index partitions in a table of format version %d", p.IndexPartitions, f.version)
	case f.version < formatVersion3 && (aligned || p.DataPadding != 0):
		return r.corrupt(off, "properties block: aligned blocks in a table of format version %d", f.version)
	case f.version < formatVersion3:
		return nil
	case aligned && p.BlockAlign != alignPage:
		return r.corrupt(off, "properties block: blocks aligned to %d bytes in a table of format version %d, this reader knows %d", p.BlockAlign, f.version, alignPage)
	case !aligned && p.DataPadding != 0:
		return r.corrupt(off, "properties block: %d bytes of padding in a table whose blocks are not aligned", p.DataPadding)
	case f.version == formatVersion3 && !aligned && !filtered:
		return r.corrupt(off, "properties block: neither aligned blocks nor a range filter in a table of format version 3")
	}
	return nil
}

// openRangeDels reads and decodes the range-deletion block of a table of
// format version 2, which must have one that its properties name and
// count, or of version 3, which may; a table of version 1 has none.
func (r *Reader) openRangeDels(f footer) error {
	h := r.props.RangeDelBlock
	if !f.hasRangeDelBlock(&r.props) {
		if r.props.RangeDels != 0 || h.Length != 0 {
			return r.corrupt(int64(f.properties.Offset), "properties block: range tombstones in a table of format version 1")
		}
		return nil
	}
	if f.version >= formatVersion3 && r.props.RangeDels == 0 && h.Length == 0 {
		return nil
	}
	if h.Length == 0 {
		return r.corrupt(int64(f.properties.Offset), "properties block: range tombstones counted but no range-deletion block in a table of format version %d", f.version)
	}
	// The block lies between the index and the range filter or the
	// properties, as Finish writes it.
	if h.Offset != f.index.Offset+f.index.Length+blockTrailerLen || h.Offset+h.Length+blockTrailerLen != r.rangeDelsEnd(f) {
		return r.corrupt(int64(f.properties.Offset), "properties block: range-deletion block [%d, +%d) is not between the index and the properties", h.Offset, h.Length)
	}
	block, err := r.readBlock(h, "range deletion")
	if err != nil {
		return err
	}
	l, err := rangedel.Decode(block)
	if err != nil {
		return r.corrupt(int64(h.Offset), "range deletion block: %v", err)
	}
	if uint64(l.Count()) != r.props.RangeDels {
		return r.corrupt(int64(h.Offset), "range deletion block holds %d tombstones, the properties say %d", l.Count(), r.props.RangeDels)
	}
	r.rangeDels = l
	return nil
}

// applyGlobalSeqNum gives the properties' bounds and sequence numbers,
// and the range tombstones, ReaderOptions.GlobalSeqNum, if set.
func (r *Reader) applyGlobalSeqNum() {
	g := r.opts.GlobalSeqNum
	if g == 0 {
		return
	}
	p := &r.props
	p.SmallestSeqNum, p.LargestSeqNum = g, g
	p.Smallest.Trailer = base.MakeTrailer(g, p.Smallest.Kind())
	p.Largest.Trailer = base.MakeTrailer(g, p.Largest.Kind())
	if r.rangeDels != nil {
		l := make(RangeTombstones, len(r.rangeDels))
		for i, frag := range r.rangeDels {
			l[i] = RangeTombstoneFragment{Start: frag.Start, End: frag.End, Seqs: []SeqNum{g}}
		}
		r.rangeDels = l
	}
}

// RangeDels returns the table's range tombstones, nil if it has none. They
// are in memory: asking costs no read. The list must not be modified.
func (r *Reader) RangeDels() RangeTombstones { return r.rangeDels }

// pinWords returns n pinned words on a 64-byte boundary, for the filter:
// each of its blocks is then one cache line.
func (r *Reader) pinWords(n int) []uint64 {
	if n == 0 {
		return nil
	}
	const line = 64
	b := r.pin(n*8 + line - 1)
	off := (line - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%line)) % line
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[off])), n)
}

// openIndex reads, checks and pins the index: the one index block, or a
// partitioned index's top level, and its partitions too under
// PinIndexPartitions.
func (r *Reader) openIndex(f footer) error {
	what := "index"
	if f.version == formatVersion4 {
		what = "top-level index"
	}
	block, err := r.readBlock(f.index, what)
	if err != nil {
		return err
	}
	switch {
	case f.version != formatVersion4:
		r.index, err = r.decodeIndex(block, f)
	case r.opts.PinIndexPartitions:
		// The top level on the heap, for as long as the partitions'
		// checks need it.
		parts, err := r.decodeTop(block, f, func(n int) []byte { return make([]byte, n) })
		if err != nil {
			return err
		}
		r.index, err = r.pinPartitions(&parts)
		return err
	default:
		r.parts, err = r.decodeTop(block, f, r.pin)
	}
	return err
}

// decodeIndex decodes the index block, checking that its handles lie
// before the filter, index and properties blocks, contiguous from offset 0
// but for the padding alignedStart allows in an aligned table (adding up
// to the properties' DataPadding), and that its keys increase. A first
// pass checks the entries and counts them and their key bytes; a second
// copies them into an index of exactly that size.
func (r *Reader) decodeIndex(block []byte, f footer) (blockIndex, error) {
	dataEnd := f.index.Offset
	if f.filter.Length > 0 {
		dataEnd = f.filter.Offset
	}
	off := int64(f.index.Offset)
	var it blockIter
	if err := it.init(block, base.CompareEncoded); err != nil {
		return blockIndex{}, r.corrupt(off, "index block: %v", err)
	}
	var (
		keys    indexKeys
		next    uint64 // data blocks follow one another from offset 0
		padding uint64 // the padding between them so far
	)
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, ok := decodeHandle(it.value)
		placed := ok && (h.Offset == next || h.Offset == alignedStart(next, h.Length, r.props.BlockAlign))
		if !placed || h.Length > dataEnd-min(dataEnd, h.Offset+blockTrailerLen) || len(it.key) < base.TrailerLen {
			return blockIndex{}, r.corrupt(off, "index entry %d is malformed", keys.n)
		}
		if !keys.add(it.key) {
			return blockIndex{}, r.corrupt(off, "index keys out of order at entry %d", keys.n)
		}
		padding += h.Offset - next
		next = h.Offset + h.Length + blockTrailerLen
	}
	if it.err != nil {
		return blockIndex{}, r.corrupt(off, "index block: %v", it.err)
	}
	if next != dataEnd {
		return blockIndex{}, r.corrupt(off, "index covers %d bytes of data, the file %d", next, dataEnd)
	}
	if padding != r.props.DataPadding {
		return blockIndex{}, r.corrupt(off, "index has %d bytes of padding between data blocks, the properties %d", padding, r.props.DataPadding)
	}
	// The second pass decodes the same bytes, which the first has checked.
	return r.buildIndex(off, r.pin, &keys, padding > 0, func(add func([]byte, BlockHandle)) {
		for ok := it.first(); ok; ok = it.nextEntry() {
			h, _ := decodeHandle(it.value)
			add(it.key, h)
		}
	})
}

// buildIndex copies the entries that each passes to add, the ones keys
// counted, checked already, into an index of exactly their size in memory
// from pin; padded says whether their blocks have padding between them.
// off is the index's offset, for errors.
func (r *Reader) buildIndex(off int64, pin func(int) []byte, keys *indexKeys, padded bool, each func(add func([]byte, BlockHandle))) (blockIndex, error) {
	// The keys are sorted, so every one has the prefix the first and the
	// last share.
	fu, _ := base.DecodeInternalKey(keys.first)
	lu, _ := base.DecodeInternalKey(keys.last)
	prefix := keys.first[:bytealg.CommonPrefix(fu.UserKey, lu.UserKey)]
	if rest := keys.bytes - uint64(keys.n*len(prefix)); rest > maxIndexKeyBytes {
		return blockIndex{}, r.corrupt(off, "index keys take %d bytes past their prefix, more than 4 GiB", rest)
	}
	b := newIndexBuilder(pin, keys.n, prefix, keys.bytes, padded)
	each(b.add)
	return b.x, nil
}

// readBlock reads, verifies and decompresses the block at h.
func (r *Reader) readBlock(h BlockHandle, what string) ([]byte, error) {
	return r.readBlockInto(h, what, nil)
}

// blockBuffers are the buffers a scanning iterator reuses for every block
// it reads, so that reading a table end to end allocates once, not per
// block: the file's bytes, and the decompressed block. Lookups through the
// cache borrow a pair from readBuffers to read a block that the cache then
// copies.
type blockBuffers struct {
	stored, decoded []byte
	// A scan iterator's buffers also read ahead: ahead holds the file's
	// bytes from aheadOff on, read scanReadAhead at a time, so that a
	// scan makes one read per scanReadAhead bytes of the file instead of
	// one per block (a compaction's reads were a fifth of its time in
	// system calls, one pread per 4 KiB block).
	readAhead bool
	ahead     []byte
	aheadOff  uint64
}

// scanReadAhead is how much of the file a scan iterator reads at once:
// 64 KiB, one read per 16 blocks of 4 KiB, which leaves the system calls
// a small share of a scan's time (a full scan of a table in the page
// cache ran no faster at 256 KiB), while a compaction of many tables
// holds a window per input: at 256 KiB, eleven L0 tables' windows were
// nearly half the Go heap a 10M-key fill kept live.
const scanReadAhead = 64 << 10

// scanBuffers are the blockBuffers of scan iterators, returned by Close.
var scanBuffers = sync.Pool{New: func() any { return &blockBuffers{readAhead: true} }}

// readBuffers are blockBuffers for reads whose block the cache copies.
var readBuffers = sync.Pool{New: func() any { return new(blockBuffers) }}

// maxPooledBuffer bounds the buffers kept in readBuffers: a table with a
// huge value must not leave a huge buffer behind for every later read.
const maxPooledBuffer = 256 << 10

// readBlockInto is readBlock reading into bufs, when not nil; the block
// returned then aliases bufs and is valid until their next use.
func (r *Reader) readBlockInto(h BlockHandle, what string, bufs *blockBuffers) ([]byte, error) {
	if h.Offset > uint64(r.size) || h.Length > uint64(r.size)-h.Offset || uint64(r.size)-h.Offset-h.Length < blockTrailerLen+footerLen {
		return nil, r.corrupt(int64(min(h.Offset, uint64(r.size))), "%s block [%d, +%d) runs past the end of the data", what, h.Offset, h.Length)
	}
	var buf, decoded []byte
	n := h.Length + blockTrailerLen
	// read is what the file is read into, from the block's offset: the
	// block alone, a new read-ahead window, or nothing when the window
	// holds the block already.
	var read []byte
	switch {
	case bufs == nil:
		buf = make([]byte, n)
		read = buf
	case !bufs.readAhead:
		bufs.stored = slices.Grow(bufs.stored[:0], int(n))[:n]
		buf, decoded, read = bufs.stored, bufs.decoded, bufs.stored
	default:
		if h.Offset < bufs.aheadOff || h.Offset+n > bufs.aheadOff+uint64(len(bufs.ahead)) {
			// Up to the end of the file, which the check above puts
			// past the block.
			size := min(max(n, scanReadAhead), uint64(r.size)-h.Offset)
			bufs.ahead = slices.Grow(bufs.ahead[:0], int(size))[:size]
			bufs.aheadOff = h.Offset
			read = bufs.ahead
		}
		buf, decoded = bufs.ahead[h.Offset-bufs.aheadOff:][:n:n], bufs.decoded
	}
	if read != nil {
		if _, err := r.file.ReadAt(read, int64(h.Offset)); err != nil {
			if bufs != nil {
				bufs.ahead = bufs.ahead[:0] // a window half read holds nothing
			}
			return nil, r.readError(int64(h.Offset), err)
		}
	}
	stored, c := buf[:h.Length], compress.Codec(buf[h.Length])
	if got, want := blockChecksum(stored, c), binary.LittleEndian.Uint32(buf[h.Length+1:]); got != want {
		return nil, r.corrupt(int64(h.Offset), "%s block checksum %#08x, want %#08x", what, got, want)
	}
	contents, err := blockDecoder.Decode(decoded[:0], stored, c)
	if err != nil {
		return nil, r.corrupt(int64(h.Offset), "%s block: %v", what, err)
	}
	if bufs != nil && c != compress.None {
		bufs.decoded = contents
	}
	return contents, nil
}

func (r *Reader) corrupt(offset int64, format string, args ...any) error {
	return base.Corruptf(r.opts.FileName, offset, format, args...)
}

// readError reports a failed read; a short read means the file is shorter
// than its own metadata says, which is corruption.
func (r *Reader) readError(offset int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.corrupt(offset, "unexpected end of file")
	}
	return fmt.Errorf("sstable: read %s at %d: %w", r.opts.FileName, offset, err)
}

// Properties returns the table's properties.
func (r *Reader) Properties() Properties { return r.props }

// Filter returns the table's filter, or nil if it has none: a
// *bloom.Blocked, a *fuse.Filter or a *ribbon.Filter, as
// Properties().FilterFamily says.
func (r *Reader) Filter() Filter { return r.filter }

// LookupKey is a point lookup, prepared once for every table it visits: the
// user key, its filter hash, and the sequence number the read sees.
//
// Covered, if not 0, is the newest seqnum of a range tombstone covering
// UserKey that the read sees, in this table or one newer: the versions at
// or below it are deleted, so Get finds only a version newer than
// Covered, and reports not found (KeyPresent still says whether the table
// holds the key) when the newest it sees is older.
type LookupKey struct {
	UserKey []byte
	Hash    uint64 // bloom.Hash(UserKey)
	Seq     SeqNum
	Covered SeqNum
}

// MakeLookupKey prepares a lookup of userKey as of sequence number seq.
func MakeLookupKey(userKey []byte, seq SeqNum) LookupKey {
	return LookupKey{UserKey: userKey, Hash: bloom.Hash(userKey), Seq: seq}
}

// LookupStats say what one Get did in one table; DB metrics and Explain
// add them up.
type LookupStats struct {
	FilterChecked  bool // the table has a filter and it was consulted
	FilterNegative bool // the filter ruled the key out: nothing was read
	// KeyPresent reports that the table holds the user key at some
	// sequence number, visible to the read or not. It is what a filter
	// answers for (it is built over user keys, not versions), so a
	// filter's "maybe" was a false positive only if KeyPresent is false:
	// a table holding only versions newer than a snapshot's read has the
	// key, though Get finds nothing there. Found implies it.
	KeyPresent   bool
	BlocksRead   int   // data blocks read from the file
	BlocksCached int   // data blocks found in the block cache
	BytesRead    int64 // bytes of data blocks read from the file
	// IndexBlocksRead and IndexBlocksCached count the index partitions
	// read from the file, IndexBytesRead bytes, and found in the block
	// cache: in a table whose partitioned index is not pinned
	// (ReaderOptions.PinIndexPartitions), the one a lookup needs; 0 in any
	// other table, whose index is in memory.
	IndexBlocksRead, IndexBlocksCached int
	IndexBytesRead                     int64
	// PagedFilterNegative reports that the table's paged filter ruled
	// the key out after its filter said maybe: a page of the paged filter
	// was read (FilterPagesRead) or found in the block cache
	// (FilterPagesCached), and no data block. FilterNegative stays false:
	// the table's filter was wrong, a false positive, and its paged filter
	// caught it.
	PagedFilterNegative                bool
	FilterPagesRead, FilterPagesCached int
	// FoundSeq is the sequence number of the version Get found; 0 when
	// it found none. A reader that goes on below a merge operand
	// (KindMerge) looks again at FoundSeq−1.
	FoundSeq SeqNum
}

// ruledOut records that the table's filter ruled the key out: nothing was
// read.
func (s *LookupStats) ruledOut() { s.FilterChecked, s.FilterNegative = true, true }

// Get returns the newest version of k.UserKey with a sequence number ≤
// k.Seq: its value and kind (a KindDelete says the key is deleted). found is
// false when the table holds no such version. The value is a copy: the
// block it came from is released before Get returns.
//
// The filter is checked first: when it rules the key out, Get returns
// without reading the file. Otherwise, in a table with a paged filter, it
// reads the paged filter's page for the key, which may rule it out in
// turn; past both it reads at most one data block, and sets
// stats.KeyPresent from that block and the in-memory index without
// further reads. stats may be nil.
func (r *Reader) Get(k LookupKey, stats *LookupStats) (value []byte, kind Kind, found bool, err error) {
	return r.GetFiltered(k, r.MayContainHash(k.Hash), stats)
}

// MayContainHash is the table's filter's verdict on the user key whose
// bloom.Hash is h: false only when the filter rules the key out, true for
// a table without a filter. It reads nothing from the file.
func (r *Reader) MayContainHash(h uint64) bool {
	return r.filter == nil || r.filter.MayContainHash(h)
}

// GetFiltered is Get for a caller that asked the filter first: maybe is
// its verdict on k.Hash, MayContainHash's — false only from the table's
// filter: a table without one cannot rule a key out. With maybe false it
// sets stats and returns without a look at the Reader itself, whose
// memory a lookup ended by the filter need not touch. A lookup that visits several tables asks all their
// filters before it acts on any verdict, so that the filters' memory
// accesses, independent of one another, overlap; then it calls
// GetFiltered for each table in turn, which counts the filter's check in
// stats as Get does and, where maybe is true, goes on as Get does past
// its filter.
func (r *Reader) GetFiltered(k LookupKey, maybe bool, stats *LookupStats) (value []byte, kind Kind, found bool, err error) {
	if stats == nil {
		stats = new(LookupStats)
	}
	if !maybe {
		stats.ruledOut()
		return nil, 0, false, nil
	}
	if out, err := r.pagedRuledOut(k, stats); out || err != nil {
		return nil, 0, false, err
	}
	seek, loc, err := r.locate(k, stats)
	if err != nil {
		return nil, 0, false, err
	}
	if loc.block == r.numBlocks() {
		stats.KeyPresent = loc.newer // the index alone answers
		return nil, 0, false, nil
	}
	block, err := r.pointDataBlock(loc.h, stats)
	if err != nil {
		return nil, 0, false, err
	}
	defer block.release()
	value, kind, stats.FoundSeq, found, err = r.getInBlock(block.handle.Bytes(), loc, k, seek, &stats.KeyPresent)
	return value, kind, found, err
}

// blockLoc is where a Get of a key goes in the table, past its filter:
// the data block that holds the key's versions at or below the read's
// sequence number if the table has any, and its handle; numBlocks if the
// key sorts past the last block.
type blockLoc struct {
	block int
	h     BlockHandle
	// newer reports that the block before it ends with a version of the
	// key: a version newer than the read's, since the block holds none at
	// or below it (hasNewer).
	newer bool
}

// locate is the half of a Get that reads no data block, past the filter,
// whose verdict on k was maybe: where the Get goes, found from the pinned
// index or, in a partitioned table, from the partition that indexes it,
// read through the block cache (and counted in stats). seek is k's
// encoded seek key, which getInBlock and hasNewer take.
func (r *Reader) locate(k LookupKey, stats *LookupStats) (seek []byte, loc blockLoc, err error) {
	stats.FilterChecked = r.filter != nil
	seq := k.Seq
	if r.opts.GlobalSeqNum != 0 {
		// The key's one version, whatever it was written at; getInBlock
		// judges it at GlobalSeqNum.
		seq = base.SeqNumMax
	}
	seek = base.MakeInternalKey(k.UserKey, seq, base.KindMax).Append(nil)
	var x indexPart
	defer x.release()
	if loc.block, err = r.searchBlock(seek, &x, stats); err != nil {
		return nil, blockLoc{}, err
	}
	if loc.block < r.numBlocks() {
		if loc.h, err = r.blockHandle(loc.block, &x, stats); err != nil {
			return nil, blockLoc{}, err
		}
	}
	// Block i−1's last key is below seek: it is a newer version of the key
	// exactly when it has the key's user key (hasNewer).
	loc.newer = loc.block > 0 && r.lastUserKeyIs(loc.block-1, &x, k.UserKey)
	return seek, loc, nil
}

// getInBlock finds, in the data block of loc (its bytes), the newest
// version of k.UserKey at or below seek's sequence number, if it is above
// k.Covered, and sets *present as LookupStats.KeyPresent says.
func (r *Reader) getInBlock(data []byte, loc blockLoc, k LookupKey, seek []byte, present *bool) (value []byte, kind Kind, seq SeqNum, found bool, err error) {
	userKey := k.UserKey
	var it blockIter
	if err := it.init(data, base.CompareEncoded); err != nil {
		return nil, 0, 0, false, r.corrupt(int64(loc.h.Offset), "data block: %v", err)
	}
	if !it.seekGE(seek) {
		if it.err != nil {
			return nil, 0, 0, false, r.corrupt(int64(loc.h.Offset), "data block: %v", it.err)
		}
		*present, err = r.hasNewer(userKey, seek, loc, &it)
		return nil, 0, 0, false, err
	}
	ik, ok := base.DecodeInternalKey(it.key)
	if !ok {
		return nil, 0, 0, false, r.corrupt(int64(loc.h.Offset), "data block: key shorter than a trailer")
	}
	if !bytes.Equal(ik.UserKey, userKey) {
		*present, err = r.hasNewer(userKey, seek, loc, &it)
		return nil, 0, 0, false, err
	}
	*present = true
	seq = ik.SeqNum()
	if g := r.opts.GlobalSeqNum; g != 0 {
		if k.Seq < g {
			return nil, 0, 0, false, nil // the table is newer than the read
		}
		seq = g
	}
	if seq <= k.Covered {
		return nil, 0, 0, false, nil // deleted by a range tombstone
	}
	return bytes.Clone(it.value), ik.Kind(), seq, true, nil
}

// hasNewer reports whether the table holds a version of userKey newer than
// a Get's read, once the Get's seek key, (userKey, its seqnum), led it to
// loc and found no version at or below its seqnum in the block, which it
// has decoded. Newer versions sort before the seek key and at or after
// (userKey, SeqNumMax), the first key userKey can have; index keys are the
// blocks' exact last keys, so:
//
//   - If the block before loc's ends with a version of userKey (loc.newer,
//     from the index alone), that is one.
//   - Otherwise any such version is in loc's block: present if the first
//     entry there at or after (userKey, SeqNumMax) has userKey.
//
// So it reads nothing from the file, and allocates nothing: it rewrites
// the Get's encoded seek key, no longer needed, into the first key in place
// (the two differ only in their trailers).
func (r *Reader) hasNewer(userKey, seek []byte, loc blockLoc, it *blockIter) (bool, error) {
	if loc.newer {
		return true, nil
	}
	first := base.MakeInternalKey(userKey, base.SeqNumMax, base.KindMax).Append(seek[:0])
	if !it.seekGE(first) {
		if it.err != nil {
			return false, r.corrupt(int64(loc.h.Offset), "data block: %v", it.err)
		}
		return false, nil
	}
	ik, ok := base.DecodeInternalKey(it.key)
	if !ok {
		return false, r.corrupt(int64(loc.h.Offset), "data block: key shorter than a trailer")
	}
	return bytes.Equal(ik.UserKey, userKey), nil
}

// pointBlock is a data block a point lookup reads: a Handle on it, and
// the buffers it lies in when the block cache did not admit it (or there
// is none), which release gives back for the next lookup.
type pointBlock struct {
	handle CacheHandle
	bufs   *blockBuffers
}

func (b pointBlock) release() {
	b.handle.Release()
	if b.bufs != nil {
		putReadBuffers(b.bufs)
	}
}

// pointDataBlock returns the data block at h for a point lookup, counted
// in stats' BlocksCached, or BlocksRead and BytesRead (pointBlockAt).
func (r *Reader) pointDataBlock(h BlockHandle, stats *LookupStats) (pointBlock, error) {
	return r.pointBlockAt(h, "data", blockTally{cached: &stats.BlocksCached, read: &stats.BlocksRead, bytes: &stats.BytesRead})
}

// blockTally is where a point lookup counts a block it found in the cache
// (cached) or read from the file (read, and its bytes with the trailer in
// bytes unless nil).
type blockTally struct {
	cached, read *int
	bytes        *int64
}

// pointBlockAt returns the block at h that a point lookup reads alone — a
// data block, or a paged filter's page (what names it in errors): from
// the block cache, or else from the file, cached if the cache admits it
// (BlockCache.Admit) and otherwise in buffers borrowed from readBuffers
// until release — no copy, and no eviction, for a block no later lookup
// is likely to find cached.
func (r *Reader) pointBlockAt(h BlockHandle, what string, t blockTally) (pointBlock, error) {
	c := r.opts.Cache
	key := CacheKey{FileNum: r.opts.FileNum, Offset: h.Offset}
	if c != nil {
		if b, ok := c.Get(key); ok {
			*t.cached++
			return pointBlock{handle: b}, nil
		}
	}
	admitted := c != nil && c.Admit(key, int(h.Length))
	bufs := readBuffers.Get().(*blockBuffers)
	b, err := r.readBlockInto(h, what, bufs)
	if err != nil {
		putReadBuffers(bufs)
		return pointBlock{}, err
	}
	*t.read++
	if t.bytes != nil {
		*t.bytes += int64(h.Length + blockTrailerLen)
	}
	if admitted {
		block := c.Insert(key, b) // a copy
		putReadBuffers(bufs)
		return pointBlock{handle: block}, nil
	}
	return pointBlock{handle: cache.Uncached(b), bufs: bufs}, nil
}

// readCountedBlock reads the data block at h from the file into bufs and
// counts the read in stats.
func (r *Reader) readCountedBlock(h BlockHandle, stats *LookupStats, bufs *blockBuffers) ([]byte, error) {
	b, err := r.readBlockInto(h, "data", bufs)
	if err == nil {
		stats.BlocksRead++
		stats.BytesRead += int64(h.Length + blockTrailerLen)
	}
	return b, err
}

// cachedDataBlock returns the data block at h if the block cache holds it,
// counting the hit in stats; it reads nothing.
func (r *Reader) cachedDataBlock(h BlockHandle, stats *LookupStats) (CacheHandle, bool) {
	if r.opts.Cache == nil {
		return CacheHandle{}, false
	}
	b, ok := r.opts.Cache.Get(CacheKey{FileNum: r.opts.FileNum, Offset: h.Offset})
	if ok {
		stats.BlocksCached++
	}
	return b, ok
}

// dataBlockInto returns the data block at h from the cache or the file,
// read into bufs (nil: a pair borrowed from readBuffers), whose read-ahead
// window may hold the block already. The caller releases the Handle. Without
// cached it bypasses the block cache (see NewScanIterator): the block then
// aliases bufs, valid until their next use, and its Handle's Release does
// nothing. With cached and bufs, a miss is read through bufs' window and
// copied into the cache: a forward scan through the cache (Iterator).
func (r *Reader) dataBlockInto(h BlockHandle, stats *LookupStats, bufs *blockBuffers, cached bool) (CacheHandle, error) {
	key := CacheKey{FileNum: r.opts.FileNum, Offset: h.Offset}
	if cached && r.opts.Cache != nil {
		if b, ok := r.cachedDataBlock(h, stats); ok {
			return b, nil
		}
	}
	return r.readDataBlock(key, h, stats, bufs, cached)
}

// readDataBlock is dataBlockInto's read from the file, of a block the
// cache (if cached) does not hold.
func (r *Reader) readDataBlock(key CacheKey, h BlockHandle, stats *LookupStats, bufs *blockBuffers, cached bool) (CacheHandle, error) {
	useCache := cached && r.opts.Cache != nil
	borrowed := bufs == nil
	if borrowed {
		bufs = readBuffers.Get().(*blockBuffers)
	}
	b, err := r.readCountedBlock(h, stats, bufs)
	var block CacheHandle
	switch {
	case err != nil:
	case useCache:
		block = r.opts.Cache.Insert(key, b) // a copy
	case !cached:
		block = cache.Uncached(b)
	default:
		block = cache.Uncached(bytes.Clone(b))
	}
	if borrowed {
		putReadBuffers(bufs)
	}
	return block, err
}

package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
)

// BlockCache is the seam to the shared block cache: decoded data blocks by
// (file number, offset). *cache.Cache implements it; nil caches nothing.
type BlockCache interface {
	Get(k cache.Key) ([]byte, bool)
	Add(k cache.Key, block []byte)
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
}

// Reader reads one table. Open reads and verifies the footer, index, filter
// and properties and keeps them in memory for the table's life; after that
// only data blocks are read, and only when the filter cannot rule a key out.
// A Reader is safe for concurrent use.
type Reader struct {
	file   io.ReaderAt
	size   int64
	opts   ReaderOptions
	index  []indexEntry
	filter *bloom.Blocked // nil: the table has no filter
	props  Properties
}

// indexEntry is a data block and the last key in it.
type indexEntry struct {
	lastKey []byte // encoded internal key
	block   handle
}

// Open opens the table of the given size in file. A damaged or truncated
// table returns an error wrapping base.ErrCorruption that names the file and
// the offset of the damaged part.
func Open(file io.ReaderAt, size int64, opts ReaderOptions) (*Reader, error) {
	r := &Reader{file: file, size: size, opts: opts}
	if size < footerLen {
		return nil, r.corrupt(0, "file of %d bytes is shorter than a footer", size)
	}
	buf := make([]byte, footerLen)
	if _, err := file.ReadAt(buf, size-footerLen); err != nil {
		return nil, r.readError(size-footerLen, err)
	}
	f, reason := decodeFooter(buf)
	if reason != "" {
		return nil, r.corrupt(size-footerLen, "%s", reason)
	}

	propsBlock, err := r.readBlock(f.properties, "properties")
	if err != nil {
		return nil, err
	}
	if r.props, err = decodeProperties(propsBlock); err != nil {
		return nil, r.corrupt(int64(f.properties.offset), "properties block: %v", err)
	}
	indexBlock, err := r.readBlock(f.index, "index")
	if err != nil {
		return nil, err
	}
	if r.index, err = r.decodeIndex(indexBlock, f); err != nil {
		return nil, err
	}
	if f.filter.length > 0 {
		filterBlock, err := r.readBlock(f.filter, "filter")
		if err != nil {
			return nil, err
		}
		r.filter = new(bloom.Blocked)
		if err := r.filter.UnmarshalBinary(filterBlock); err != nil {
			return nil, r.corrupt(int64(f.filter.offset), "filter block: %v", err)
		}
	}
	return r, nil
}

// decodeIndex decodes the index block into entries whose handles lie
// before the filter, index and properties blocks and whose keys increase.
func (r *Reader) decodeIndex(block []byte, f footer) ([]indexEntry, error) {
	dataEnd := f.index.offset
	if f.filter.length > 0 {
		dataEnd = f.filter.offset
	}
	var it blockIter
	if err := it.init(block, base.CompareEncoded); err != nil {
		return nil, r.corrupt(int64(f.index.offset), "index block: %v", err)
	}
	var entries []indexEntry
	var next uint64 // data blocks are contiguous from offset 0
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, ok := decodeHandle(it.value)
		if !ok || h.offset != next || h.length > dataEnd-min(dataEnd, h.offset+blockTrailerLen) || len(it.key) < base.TrailerLen {
			return nil, r.corrupt(int64(f.index.offset), "index entry %d is malformed", len(entries))
		}
		if n := len(entries); n > 0 && base.CompareEncoded(entries[n-1].lastKey, it.key) >= 0 {
			return nil, r.corrupt(int64(f.index.offset), "index keys out of order at entry %d", n)
		}
		next = h.offset + h.length + blockTrailerLen
		entries = append(entries, indexEntry{lastKey: bytes.Clone(it.key), block: h})
	}
	if it.err != nil {
		return nil, r.corrupt(int64(f.index.offset), "index block: %v", it.err)
	}
	if next != dataEnd {
		return nil, r.corrupt(int64(f.index.offset), "index covers %d bytes of data, the file %d", next, dataEnd)
	}
	return entries, nil
}

// readBlock reads, verifies and decompresses the block at h.
func (r *Reader) readBlock(h handle, what string) ([]byte, error) {
	return r.readBlockInto(h, what, nil)
}

// blockBuffers are the buffers a scanning iterator reuses for every block
// it reads, so that reading a table end to end allocates once, not per
// block: the file's bytes, and the decompressed block.
type blockBuffers struct {
	stored, decoded []byte
}

// readBlockInto is readBlock reading into bufs, when not nil; the block
// returned then aliases bufs and is valid until their next use.
func (r *Reader) readBlockInto(h handle, what string, bufs *blockBuffers) ([]byte, error) {
	if h.offset > uint64(r.size) || h.length > uint64(r.size)-h.offset || uint64(r.size)-h.offset-h.length < blockTrailerLen+footerLen {
		return nil, r.corrupt(int64(min(h.offset, uint64(r.size))), "%s block [%d, +%d) runs past the end of the data", what, h.offset, h.length)
	}
	var buf, decoded []byte
	if bufs == nil {
		buf = make([]byte, h.length+blockTrailerLen)
	} else {
		bufs.stored = slices.Grow(bufs.stored[:0], int(h.length+blockTrailerLen))[:h.length+blockTrailerLen]
		buf, decoded = bufs.stored, bufs.decoded
	}
	if _, err := r.file.ReadAt(buf, int64(h.offset)); err != nil {
		return nil, r.readError(int64(h.offset), err)
	}
	stored, c := buf[:h.length], Compression(buf[h.length])
	if got, want := blockChecksum(stored, c), binary.LittleEndian.Uint32(buf[h.length+1:]); got != want {
		return nil, r.corrupt(int64(h.offset), "%s block checksum %#08x, want %#08x", what, got, want)
	}
	contents, err := decompress(c, stored, decoded)
	if err != nil {
		return nil, r.corrupt(int64(h.offset), "%s block: %v", what, err)
	}
	if bufs != nil && c != NoCompression {
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

// Filter returns the table's filter, or nil if it has none.
func (r *Reader) Filter() *bloom.Blocked { return r.filter }

// LookupKey is a point lookup, prepared once for every table it visits: the
// user key, its filter hash, and the sequence number the read sees.
type LookupKey struct {
	UserKey []byte
	Hash    uint64 // bloom.Hash(UserKey)
	Seq     base.SeqNum
}

// MakeLookupKey prepares a lookup of userKey as of sequence number seq.
func MakeLookupKey(userKey []byte, seq base.SeqNum) LookupKey {
	return LookupKey{UserKey: userKey, Hash: bloom.Hash(userKey), Seq: seq}
}

// LookupStats say what one Get did in one table; DB metrics and Explain
// add them up.
type LookupStats struct {
	FilterChecked  bool  // the table has a filter and it was consulted
	FilterNegative bool  // the filter ruled the key out: nothing was read
	BlocksRead     int   // data blocks read from the file
	BlocksCached   int   // data blocks found in the block cache
	BytesRead      int64 // bytes read from the file
}

// Get returns the newest version of k.UserKey with a sequence number ≤
// k.Seq: its value and kind (a KindDelete says the key is deleted). found is
// false when the table holds no such version. The value aliases a cached,
// immutable block: it stays valid, and must not be modified.
//
// The filter is checked first: when it rules the key out, Get returns
// without reading the file. Otherwise it reads at most one data block.
// stats may be nil.
func (r *Reader) Get(k LookupKey, stats *LookupStats) (value []byte, kind base.Kind, found bool, err error) {
	if stats == nil {
		stats = new(LookupStats)
	}
	if r.filter != nil {
		stats.FilterChecked = true
		if !r.filter.MayContainHash(k.Hash) {
			stats.FilterNegative = true
			return nil, 0, false, nil
		}
	}
	seek := base.MakeInternalKey(k.UserKey, k.Seq, base.KindMax).Append(nil)
	i := sort.Search(len(r.index), func(i int) bool { return base.CompareEncoded(r.index[i].lastKey, seek) >= 0 })
	if i == len(r.index) {
		return nil, 0, false, nil
	}
	block, err := r.dataBlock(i, stats)
	if err != nil {
		return nil, 0, false, err
	}
	var it blockIter
	if err := it.init(block, base.CompareEncoded); err != nil {
		return nil, 0, false, r.corrupt(int64(r.index[i].block.offset), "data block: %v", err)
	}
	if !it.seekGE(seek) {
		if it.err != nil {
			return nil, 0, false, r.corrupt(int64(r.index[i].block.offset), "data block: %v", it.err)
		}
		return nil, 0, false, nil
	}
	ik, ok := base.DecodeInternalKey(it.key)
	if !ok {
		return nil, 0, false, r.corrupt(int64(r.index[i].block.offset), "data block: key shorter than a trailer")
	}
	if !bytes.Equal(ik.UserKey, k.UserKey) {
		return nil, 0, false, nil
	}
	return it.value, ik.Kind(), true, nil
}

// dataBlock returns data block i from the cache or the file.
func (r *Reader) dataBlock(i int, stats *LookupStats) ([]byte, error) {
	return r.dataBlockInto(i, stats, nil)
}

// dataBlockInto is dataBlock; with bufs it bypasses the block cache and
// reads into bufs (see NewScanIterator).
func (r *Reader) dataBlockInto(i int, stats *LookupStats, bufs *blockBuffers) ([]byte, error) {
	h := r.index[i].block
	if bufs != nil {
		b, err := r.readBlockInto(h, "data", bufs)
		if err == nil {
			stats.BlocksRead++
			stats.BytesRead += int64(h.length + blockTrailerLen)
		}
		return b, err
	}
	key := cache.Key{FileNum: r.opts.FileNum, Offset: h.offset}
	if r.opts.Cache != nil {
		if b, ok := r.opts.Cache.Get(key); ok {
			stats.BlocksCached++
			return b, nil
		}
	}
	b, err := r.readBlock(h, "data")
	if err != nil {
		return nil, err
	}
	stats.BlocksRead++
	stats.BytesRead += int64(h.length + blockTrailerLen)
	if r.opts.Cache != nil {
		r.opts.Cache.Add(key, b)
	}
	return b, nil
}

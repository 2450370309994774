package sstable

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
)

// A partitioned index (WriterOptions.IndexPartitionSize; see the package
// doc) is the data blocks' index cut into partitions, blocks of the index
// format each indexing a run of data blocks, and a top-level index over
// them, which is all a Reader pins unless told to pin the partitions too
// (ReaderOptions.PinIndexPartitions): a partition is read through the
// block cache, as a data block is, when a lookup or an iterator needs it.

// indexPartition is a partition the writer has cut: its finished block,
// its last key, its data blocks and where the last one's trailer ends.
type indexPartition struct {
	block, lastKey []byte
	blocks         uint64
	dataEnd        uint64
}

// cutPartition ends the index partition being built, if it has entries.
func (w *Writer) cutPartition() {
	if w.index.entries == 0 {
		return
	}
	w.parts = append(w.parts, indexPartition{
		block:   bytes.Clone(w.index.finish()),
		lastKey: bytes.Clone(w.index.lastKey),
		blocks:  uint64(w.index.entries),
		dataEnd: w.dataEnd,
	})
	w.index.reset()
}

// writeIndex writes the index and returns the handle the footer holds: of
// the one index block, or, when IndexPartitionSize cut the index into two
// partitions or more, of the top-level index written after them. It sets
// the properties' IndexBytes and IndexPartitions.
func (w *Writer) writeIndex() BlockHandle {
	var block []byte
	switch {
	case len(w.parts) == 0:
		block = w.index.finish()
	case len(w.parts) == 1 && w.index.entries == 0:
		// The index reached the partition size at its last entry: one
		// block, as without partitions.
		block = w.parts[0].block
	}
	if block != nil {
		h := w.writeBlock(block, NoCompression)
		w.props.IndexBytes = h.Length
		w.parts = nil
		return h
	}
	w.cutPartition()
	top := blockWriter{restartInterval: 1}
	var value []byte
	for _, p := range w.parts {
		h := w.writeBlock(p.block, NoCompression)
		w.props.IndexBytes += h.Length
		value = appendTopValue(value[:0], h, p.blocks, p.dataEnd)
		top.add(p.lastKey, value)
	}
	h := w.writeBlock(top.finish(), NoCompression)
	w.props.IndexBytes += h.Length
	w.props.IndexPartitions = uint64(len(w.parts))
	w.parts = nil
	return h
}

// appendTopValue appends a top-level index entry's value: the partition's
// handle, its data blocks and the end of its last one's trailer, four
// uvarints.
func appendTopValue(dst []byte, h BlockHandle, blocks, dataEnd uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(h.appendVarint(dst), blocks), dataEnd)
}

// decodeTopValue decodes a top-level index entry's value, which must be
// exactly what appendTopValue writes.
func decodeTopValue(p []byte) (h BlockHandle, blocks, dataEnd uint64, ok bool) {
	var n [4]int
	var x [4]uint64
	at := 0
	for i := range x {
		x[i], n[i] = binary.Uvarint(p[at:])
		if n[i] <= 0 {
			return h, 0, 0, false
		}
		at += n[i]
	}
	return BlockHandle{x[0], x[1]}, x[2], x[3], at == len(p)
}

// partitionIndex is the pinned top level of a partitioned index: per
// partition, its last key (its last data block's), its handle, the data
// blocks before it and where its last data block ends. Like blockIndex it
// is pointer-free memory of exactly its size.
//
// INVARIANT: top's block i is partition i; partitions follow one another
// from top.start, the end of the filter (or of the data when there is
// none) to the top-level index. Partition i indexes data blocks
// [firsts[i], firsts[i+1]), which lie in [dataStart(i), dataEnds[i]); its
// last key is top's key i; firsts and dataEnds increase, and
// firsts[numParts] is the table's number of data blocks.
type partitionIndex struct {
	top      blockIndex
	firsts   []uint32
	dataEnds []uint64
}

func (x *partitionIndex) numParts() int  { return x.top.numBlocks() }
func (x *partitionIndex) numBlocks() int { return int(x.firsts[x.numParts()]) }

// dataStart returns where partition p's first data block may start: where
// the previous partition's last one ends, padding aside.
func (x *partitionIndex) dataStart(p int) uint64 {
	if p == 0 {
		return 0
	}
	return x.dataEnds[p-1]
}

// partOf returns the partition that indexes data block i < numBlocks.
func (x *partitionIndex) partOf(i int) int {
	return sort.Search(x.numParts(), func(p int) bool { return int(x.firsts[p+1]) > i })
}

// decodeTop decodes and checks a partitioned table's top-level index block
// into memory from pin: its partitions lie contiguous from the end of the
// filter block (or of the data) to the top level, in key order, as many as
// the properties say, their data blocks adding up to the properties' and
// following one another, the last ending where the filter (or the first
// partition) starts.
func (r *Reader) decodeTop(block []byte, f footer, pin func(int) []byte) (partitionIndex, error) {
	off := int64(f.index.Offset)
	var it blockIter
	if err := it.init(block, base.CompareEncoded); err != nil {
		return partitionIndex{}, r.corrupt(off, "top-level index block: %v", err)
	}
	var (
		keys    indexKeys
		start   uint64 // the first partition's offset
		next    uint64 // the next partition's
		blocks  uint64 // data blocks so far
		dataEnd uint64 // the last one's end
	)
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, n, end, ok := decodeTopValue(it.value)
		if keys.n == 0 {
			start, next = h.Offset, h.Offset
		}
		if !ok || len(it.key) < base.TrailerLen || h.Offset != next || n == 0 || end <= dataEnd || h.Length > f.index.Offset-min(f.index.Offset, h.Offset+blockTrailerLen) {
			return partitionIndex{}, r.corrupt(off, "top-level index entry %d is malformed", keys.n)
		}
		if !keys.add(it.key) {
			return partitionIndex{}, r.corrupt(off, "top-level index keys out of order at entry %d", keys.n)
		}
		next, blocks, dataEnd = h.Offset+h.Length+blockTrailerLen, blocks+n, end
	}
	if it.err != nil {
		return partitionIndex{}, r.corrupt(off, "top-level index block: %v", it.err)
	}
	partStart := dataEnd
	if f.filter.Length > 0 {
		partStart = f.filter.Offset + f.filter.Length + blockTrailerLen
		if dataEnd != f.filter.Offset {
			return partitionIndex{}, r.corrupt(off, "top-level index covers %d bytes of data, the file %d", dataEnd, f.filter.Offset)
		}
	}
	switch {
	case uint64(keys.n) != r.props.IndexPartitions:
		return partitionIndex{}, r.corrupt(off, "top-level index has %d partitions, the properties say %d", keys.n, r.props.IndexPartitions)
	case start != partStart || next != f.index.Offset:
		return partitionIndex{}, r.corrupt(off, "index partitions span [%d, %d), want [%d, %d)", start, next, partStart, f.index.Offset)
	case blocks != r.props.DataBlocks || blocks > maxIndexKeyBytes:
		return partitionIndex{}, r.corrupt(off, "index partitions index %d data blocks, the properties say %d", blocks, r.props.DataBlocks)
	}
	top, err := r.buildIndex(off, pin, &keys, false, func(add func([]byte, BlockHandle)) {
		for ok := it.first(); ok; ok = it.nextEntry() {
			h, _, _, _ := decodeTopValue(it.value)
			add(it.key, h)
		}
	})
	if err != nil {
		return partitionIndex{}, err
	}
	top.start = start
	n := keys.n
	mem := pin(8*n + 4*(n+1))
	x := partitionIndex{top: top, dataEnds: viewAs[uint64](mem, 0, n), firsts: viewAs[uint32](mem, 8*n, n+1)}
	x.firsts = append(x.firsts, 0)
	for ok := it.first(); ok; ok = it.nextEntry() {
		_, blocks, end, _ := decodeTopValue(it.value)
		x.firsts = append(x.firsts, x.firsts[len(x.firsts)-1]+uint32(blocks))
		x.dataEnds = append(x.dataEnds, end)
	}
	return x, nil
}

// pinPartitions reads and checks every partition of a partitioned table
// whose top level is parts (on the heap) and decodes them into one index
// in pinned memory, as an unpartitioned table's (ReaderOptions.
// PinIndexPartitions).
func (r *Reader) pinPartitions(parts *partitionIndex) (blockIndex, error) {
	var (
		keys    indexKeys
		padding uint64
		blocks  = make([][]byte, parts.numParts())
	)
	for p := range blocks {
		h := parts.top.handle(p)
		b, err := r.readBlock(h, "index partition")
		if err != nil {
			return blockIndex{}, err
		}
		pad, err := r.checkPart(parts, b, p, h, &keys)
		if err != nil {
			return blockIndex{}, err
		}
		blocks[p], padding = b, padding+pad
	}
	if padding != r.props.DataPadding {
		return blockIndex{}, r.corrupt(int64(parts.top.start), "index has %d bytes of padding between data blocks, the properties %d", padding, r.props.DataPadding)
	}
	return r.buildIndex(int64(parts.top.start), r.pin, &keys, padding > 0, func(add func([]byte, BlockHandle)) {
		for _, b := range blocks {
			var it blockIter
			_ = it.init(b, base.CompareEncoded) // checked by checkPart
			for ok := it.first(); ok; ok = it.nextEntry() {
				h, _ := decodeHandle(it.value)
				add(it.key, h)
			}
		}
	})
}

// checkPart checks partition p of parts, block at h: its entries are all
// restart points (an entry is then found by its number), as many as the
// top level says; their handles place data blocks one after another from
// dataStart(p) to dataEnds[p], with the padding alignedStart allows, which
// it returns; their keys increase from past the previous partition's last
// key to this one's, which the top level holds. With keys not nil it adds
// the entries' keys to it.
func (r *Reader) checkPart(parts *partitionIndex, block []byte, p int, h BlockHandle, keys *indexKeys) (padding uint64, err error) {
	off := int64(h.Offset)
	var it blockIter
	if err := it.init(block, base.CompareEncoded); err != nil {
		return 0, r.corrupt(off, "index partition %d: %v", p, err)
	}
	want := int(parts.firsts[p+1] - parts.firsts[p])
	if it.numRestarts != want {
		return 0, r.corrupt(off, "index partition %d has %d restart points, the top level says %d entries", p, it.numRestarts, want)
	}
	next, end := parts.dataStart(p), parts.dataEnds[p]
	var prev []byte
	for j := range want {
		if !it.seekRestart(j) || (j+1 < want && it.next != int(it.restart(j+1))) || (j+1 == want && it.next != len(it.data)) {
			return 0, r.corrupt(off, "index partition %d: entry %d is malformed or not a restart point", p, j)
		}
		d, ok := decodeHandle(it.value)
		placed := ok && (d.Offset == next || d.Offset == alignedStart(next, d.Length, r.props.BlockAlign))
		if !placed || d.Length > end-min(end, d.Offset+blockTrailerLen) || len(it.key) < base.TrailerLen {
			return 0, r.corrupt(off, "index partition %d: entry %d is malformed", p, j)
		}
		inOrder := j > 0 && base.CompareEncoded(prev, it.key) < 0 || j == 0 && (p == 0 || parts.top.compare(p-1, it.key) < 0)
		if !inOrder {
			return 0, r.corrupt(off, "index partition %d: keys out of order at entry %d", p, j)
		}
		if keys != nil {
			keys.add(it.key)
		}
		padding += d.Offset - next
		next = d.Offset + d.Length + blockTrailerLen
		prev = append(prev[:0], it.key...)
	}
	if next != end {
		return 0, r.corrupt(off, "index partition %d covers data to %d, the top level says %d", p, next, end)
	}
	if parts.top.compare(p, prev) != 0 {
		return 0, r.corrupt(off, "index partition %d: its last key is not the top level's", p)
	}
	return padding, nil
}

// indexPart is the index partition a read holds, from the block cache or
// the file, checked (checkPart) when read from the file: every entry is a
// restart point, so that entry j is found at once.
type indexPart struct {
	cached   CacheHandle // on the block
	loaded   bool
	p        int    // the partition, when loaded
	first, n int    // its data blocks: [first, first+n)
	data     []byte // the block's entries
	restarts []byte // their offsets, n little-endian uint32s
}

// release gives the partition back to the cache.
func (x *indexPart) release() {
	x.cached.Release()
	*x = indexPart{}
}

// holds reports whether x holds the entry of data block i.
func (x *indexPart) holds(i int) bool { return x.loaded && i >= x.first && i < x.first+x.n }

// entry returns entry j's key, which aliases the block, and value.
func (x *indexPart) entry(j int) (key, value []byte) {
	p := x.data[binary.LittleEndian.Uint32(x.restarts[4*j:]):]
	_, n1 := binary.Uvarint(p) // shared: 0 at a restart point
	k, n2 := binary.Uvarint(p[n1:])
	v, n3 := binary.Uvarint(p[n1+n2:])
	p = p[n1+n2+n3:]
	return p[:k:k], p[k : k+v : k+v]
}

// handle returns data block i's handle; x holds it.
func (x *indexPart) handle(i int) BlockHandle {
	_, v := x.entry(i - x.first)
	h, _ := decodeHandle(v)
	return h
}

// search returns the first data block of the partition whose last key is
// ≥ target, which is ≤ the partition's last key.
func (x *indexPart) search(target []byte) int {
	return x.first + sort.Search(x.n, func(j int) bool {
		k, _ := x.entry(j)
		return base.CompareEncoded(k, target) >= 0
	})
}

// loadPart makes x hold partition p: from the block cache, or else read
// from the file, checked and put in the cache, counting the read or the
// hit in stats.
func (r *Reader) loadPart(x *indexPart, p int, stats *LookupStats) error {
	if x.loaded && x.p == p {
		return nil
	}
	x.release()
	h := r.parts.top.handle(p)
	key := CacheKey{FileNum: r.opts.FileNum, Offset: h.Offset}
	var block CacheHandle
	cached := false
	if r.opts.Cache != nil {
		block, cached = r.opts.Cache.Get(key)
	}
	if cached {
		stats.IndexBlocksCached++
	} else {
		bufs := readBuffers.Get().(*blockBuffers)
		b, err := r.readBlockInto(h, "index partition", bufs)
		if err == nil {
			stats.IndexBlocksRead++
			stats.IndexBytesRead += int64(h.Length + blockTrailerLen)
			_, err = r.checkPart(&r.parts, b, p, h, nil)
		}
		switch {
		case err != nil:
		case r.opts.Cache != nil:
			block = r.opts.Cache.Insert(key, b) // a copy
		default:
			block = cache.Uncached(bytes.Clone(b))
		}
		putReadBuffers(bufs)
		if err != nil {
			return err
		}
	}
	b := block.Bytes()
	n := int(r.parts.firsts[p+1] - r.parts.firsts[p])
	end := len(b) - 4 - 4*n // checkPart checked the restart array
	*x = indexPart{cached: block, loaded: true, p: p, first: int(r.parts.firsts[p]), n: n, data: b[:end], restarts: b[end : len(b)-4]}
	return nil
}

// numBlocks returns the number of data blocks.
func (r *Reader) numBlocks() int {
	if r.parts.top.keyEnds == nil {
		return r.index.numBlocks()
	}
	return r.parts.numBlocks()
}

// partitioned reports whether the table's index partitions are read as
// needed: a partitioned table not opened with PinIndexPartitions.
func (r *Reader) partitioned() bool { return r.parts.top.keyEnds != nil }

// blockHandle returns data block i's handle, from the pinned index or the
// partition that indexes it, which x then holds.
func (r *Reader) blockHandle(i int, x *indexPart, stats *LookupStats) (BlockHandle, error) {
	if !r.partitioned() {
		return r.index.handle(i), nil
	}
	if !x.holds(i) {
		if err := r.loadPart(x, r.parts.partOf(i), stats); err != nil {
			return BlockHandle{}, err
		}
	}
	return x.handle(i), nil
}

// searchBlock returns the first data block whose last key is ≥ target, an
// encoded internal key, numBlocks when every key is below it, as
// blockIndex.search does; in a partitioned table, x holds the partition
// that indexes it.
func (r *Reader) searchBlock(target []byte, x *indexPart, stats *LookupStats) (int, error) {
	if !r.partitioned() {
		return r.index.search(target), nil
	}
	p := r.parts.top.search(target)
	if p == r.parts.numParts() {
		return r.parts.numBlocks(), nil
	}
	if err := r.loadPart(x, p, stats); err != nil {
		return 0, err
	}
	return x.search(target), nil
}

// lastUserKeyIs reports whether data block i's last key has user key uk. In
// a partitioned table, x holds block i's entry, or block i is the last of
// its partition, whose key the top level holds: as for the block before
// the one searchBlock found, which x then holds, or before numBlocks.
func (r *Reader) lastUserKeyIs(i int, x *indexPart, uk []byte) bool {
	switch {
	case !r.partitioned():
		return r.index.userKeyIs(i, uk)
	case x.holds(i):
		k, _ := x.entry(i - x.first)
		u, _ := base.DecodeInternalKey(k)
		return bytes.Equal(u.UserKey, uk)
	}
	return r.parts.top.userKeyIs(r.parts.partOf(i), uk)
}

// IndexMemory returns the bytes the table's index pins: the one index,
// whole, or a partitioned index's top level (its partitions too, decoded
// as one index, under PinIndexPartitions).
func (r *Reader) IndexMemory() int {
	return r.index.size() + r.parts.top.size() + 8*len(r.parts.dataEnds) + 4*len(r.parts.firsts)
}

// dataEnd returns where the last data block's trailer ends.
func (r *Reader) dataEnd() uint64 {
	if r.partitioned() {
		return r.parts.dataEnds[r.parts.numParts()-1]
	}
	return r.index.blockEnd(r.index.numBlocks() - 1)
}

// putReadBuffers returns bufs, borrowed from readBuffers, unless a huge
// block grew them.
func putReadBuffers(bufs *blockBuffers) {
	if cap(bufs.stored) <= maxPooledBuffer && cap(bufs.decoded) <= maxPooledBuffer {
		readBuffers.Put(bufs)
	}
}

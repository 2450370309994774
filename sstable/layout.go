package sstable

import (
	"bytes"
	"encoding/binary"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
)

// BlockInfo describes one stored block: where it is, how it is compressed,
// and its size before and after.
type BlockInfo struct {
	BlockHandle
	Compression Compression
	// RawLength is the block's decoded length; Length is what it takes in
	// the file, before the trailer.
	RawLength uint64
	// LastKey is, for a data block, its last key, the one the index holds;
	// for an index partition, its last key, the one the top level holds.
	LastKey InternalKey
	// Padding is, for a data block of an aligned table, the zero bytes
	// between the previous block's trailer and this block.
	Padding uint64
}

// Layout is where a table's parts lie, as Reader.Layout reads them: the
// map of the file the package doc draws, for tools that show the format.
type Layout struct {
	FileSize      int64
	FormatVersion uint32
	FooterOffset  int64 // the 64-byte footer's offset: FileSize − 64
	// BlockAlign is the page the data blocks are aligned to, 0 when they
	// are not; Padding is the zero bytes between them.
	BlockAlign, Padding uint64
	// Data are the data blocks, in file order.
	Data []BlockInfo
	// Filter is the filter block; its Length is 0 when the table has none.
	// Index is the index block, in a table whose index is partitioned its
	// top level.
	Filter, Index, Properties BlockInfo
	// IndexPartitions are a partitioned index's partitions, in file
	// order; nil in a table whose index is one block.
	IndexPartitions []BlockInfo
	// RangeDels is the range-deletion block; its Length is 0 when the
	// table has none (always, in format version 1).
	RangeDels BlockInfo
	// RangeFilter is the range-filter block; its Length is 0 when the
	// table has none (always, below format version 3).
	RangeFilter BlockInfo
	// PagedFilter are the paged filter's pages, in file order, each on a
	// page boundary; nil in a table without one.
	PagedFilter []BlockInfo
}

// Layout reads the table's footer and the trailer of every block, and
// decodes the data blocks to learn their raw sizes. Unlike Get it reads the
// whole table, bypassing the block cache; a damaged block returns an error
// wrapping ErrCorruption, as Open does. It also reads the padding between
// aligned data blocks, which no lookup or scan interprets and no checksum
// covers, and reports a byte there that is not zero as corruption.
func (r *Reader) Layout() (Layout, error) {
	l := Layout{FileSize: r.size, FooterOffset: r.size - footerLen}
	buf := make([]byte, footerLen)
	if _, err := r.file.ReadAt(buf, l.FooterOffset); err != nil {
		return l, r.readError(l.FooterOffset, err)
	}
	f, reason := decodeFooter(buf)
	if reason != "" {
		return l, r.corrupt(l.FooterOffset, "%s", reason)
	}
	l.FormatVersion = binary.LittleEndian.Uint32(buf[48:])
	info := func(h BlockHandle, what string) (BlockInfo, error) {
		b := BlockInfo{BlockHandle: h}
		if h.Length == 0 && (what == "filter" || what == "range deletion" || what == "range filter") {
			return b, nil
		}
		raw, err := r.readBlock(h, what)
		if err != nil {
			return b, err
		}
		var t [1]byte
		if _, err := r.file.ReadAt(t[:], int64(h.Offset+h.Length)); err != nil {
			return b, r.readError(int64(h.Offset+h.Length), err)
		}
		b.Compression, b.RawLength = compressionOf(compress.Codec(t[0])), uint64(len(raw))
		return b, nil
	}
	var err error
	l.BlockAlign = r.props.BlockAlign
	var end uint64 // the previous data block's
	addData := func(key []byte, h BlockHandle) error {
		if err := r.checkPadding(end, h.Offset); err != nil {
			return err
		}
		b, err := info(h, "data")
		if err != nil {
			return err
		}
		b.LastKey, _ = base.DecodeInternalKey(key)
		b.Padding = h.Offset - end
		l.Padding += b.Padding
		l.Data = append(l.Data, b)
		end = h.Offset + h.Length + blockTrailerLen
		return nil
	}
	if f.version == formatVersion4 {
		if l.IndexPartitions, err = r.layoutPartitions(f, info, addData); err != nil {
			return l, err
		}
	} else {
		for i := range r.index.numBlocks() {
			if err := addData(r.index.appendKey(nil, i), r.index.handle(i)); err != nil {
				return l, err
			}
		}
	}
	if l.Filter, err = info(f.filter, "filter"); err != nil {
		return l, err
	}
	if l.Index, err = info(f.index, "index"); err != nil {
		return l, err
	}
	if l.RangeDels, err = info(r.props.RangeDelBlock, "range deletion"); err != nil {
		return l, err
	}
	if l.RangeFilter, err = info(r.props.RangeFilterBlock, "range filter"); err != nil {
		return l, err
	}
	if l.Properties, err = info(f.properties, "properties"); err != nil {
		return l, err
	}
	for p := range pagesOf(r.paged.blocks) {
		first := p * pagedFilterBlocksPerPage
		h := BlockHandle{Offset: r.paged.start + p*pagedFilterPageSize, Length: min(pagedFilterBlocksPerPage, r.paged.blocks-first) * 64}
		b, err := info(h, "paged filter")
		if err != nil {
			return l, err
		}
		l.PagedFilter = append(l.PagedFilter, b)
	}
	return l, nil
}

// layoutPartitions reads and checks a partitioned index, the top level
// and every partition (not through the block cache), returns the
// partitions' BlockInfo, from info, and passes each data block's last key
// and handle to addData, in order.
func (r *Reader) layoutPartitions(f footer, info func(BlockHandle, string) (BlockInfo, error), addData func([]byte, BlockHandle) error) ([]BlockInfo, error) {
	top, err := r.readBlock(f.index, "top-level index")
	if err != nil {
		return nil, err
	}
	parts, err := r.decodeTop(top, f, func(n int) []byte { return make([]byte, n) })
	if err != nil {
		return nil, err
	}
	infos := make([]BlockInfo, parts.numParts())
	for p := range infos {
		h := parts.top.handle(p)
		if infos[p], err = info(h, "index partition"); err != nil {
			return nil, err
		}
		infos[p].LastKey, _ = base.DecodeInternalKey(parts.top.appendKey(nil, p))
		block, err := r.readBlock(h, "index partition")
		if err != nil {
			return nil, err
		}
		if _, err := r.checkPart(&parts, block, p, h, nil); err != nil {
			return nil, err
		}
		var it blockIter
		_ = it.init(block, base.CompareEncoded) // checked by checkPart
		for ok := it.first(); ok; ok = it.nextEntry() {
			d, _ := decodeHandle(it.value)
			if err := addData(bytes.Clone(it.key), d); err != nil {
				return nil, err
			}
		}
	}
	return infos, nil
}

// checkPadding reads the padding [from, to) between two data blocks and
// reports a byte that is not zero as corruption, at its offset.
func (r *Reader) checkPadding(from, to uint64) error {
	if from == to {
		return nil
	}
	pad := make([]byte, to-from) // less than a page: decodeIndex checked
	if _, err := r.file.ReadAt(pad, int64(from)); err != nil {
		return r.readError(int64(from), err)
	}
	for i, c := range pad {
		if c != 0 {
			return r.corrupt(int64(from)+int64(i), "padding byte %#02x before the data block at %d, want 0", c, to)
		}
	}
	return nil
}

package sstable

import (
	"encoding/binary"

	"github.com/bloomkv/bloomkv/internal/base"
)

// BlockInfo describes one stored block: where it is, how it is compressed,
// and its size before and after.
type BlockInfo struct {
	BlockHandle
	Compression Compression
	// RawLength is the block's decoded length; Length is what it takes in
	// the file, before the trailer.
	RawLength uint64
	// LastKey is, for a data block, its last key, the one the index holds.
	LastKey InternalKey
}

// Layout is where a table's parts lie, as Reader.Layout reads them: the
// map of the file the package doc draws, for tools that show the format.
type Layout struct {
	FileSize      int64
	FormatVersion uint32
	FooterOffset  int64 // the 64-byte footer's offset: FileSize − 64
	// Data are the data blocks, in file order.
	Data []BlockInfo
	// Filter is the filter block; its Length is 0 when the table has none.
	Filter, Index, Properties BlockInfo
	// RangeDels is the range-deletion block; its Length is 0 when the
	// table has none (always, in format version 1).
	RangeDels BlockInfo
	// RangeFilter is the range-filter block; its Length is 0 when the
	// table has none (always, below format version 3).
	RangeFilter BlockInfo
}

// Layout reads the table's footer and the trailer of every block, and
// decodes the data blocks to learn their raw sizes. Unlike Get it reads the
// whole table, bypassing the block cache; a damaged block returns an error
// wrapping ErrCorruption, as Open does.
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
		b.Compression, b.RawLength = compressionIndicator(t[0]).compression(), uint64(len(raw))
		return b, nil
	}
	var err error
	for i := range r.numBlocks() {
		b, err := info(r.indexHandle(i), "data")
		if err != nil {
			return l, err
		}
		b.LastKey, _ = base.DecodeInternalKey(r.indexKey(i))
		l.Data = append(l.Data, b)
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
	return l, nil
}

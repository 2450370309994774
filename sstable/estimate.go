package sstable

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/base"
)

// EstimateDiskUsage returns about how many bytes of the table's file hold
// the user keys in [lo, hi) (nil: unbounded), from the index alone: it
// reads nothing but, in a table whose partitioned index is not pinned, the
// partitions a seek to lo and to hi land in, through the block cache. The
// data blocks that may hold such a key count whole —
// from the block a seek to lo lands in through the one a seek to hi lands
// in, which may hold keys below hi — and their bytes are scaled by the
// file's size over the data blocks', so that the filter, index,
// properties and footer are shared among the keys in proportion. A range
// that takes in every block gets the file's size; the estimates of
// adjacent ranges overlap by at most the block at their common end. The
// error is at most one data block's share at each end of the range (one
// partition's, where a partition cannot be read).
func (r *Reader) EstimateDiskUsage(lo, hi []byte) uint64 {
	if r.numBlocks() == 0 || lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0 {
		return 0
	}
	data := r.dataEnd()
	start, end := uint64(0), data
	if lo != nil {
		start, _ = r.blockSpanAt(lo)
	}
	if hi != nil {
		_, end = r.blockSpanAt(hi)
	}
	switch {
	case start >= end:
		return 0
	case start == 0 && end == data:
		return uint64(r.size)
	}
	return uint64(float64(end-start) * float64(r.size) / float64(data))
}

// blockSpanAt returns where the data block a seek to userKey lands in
// starts and where its trailer ends; both are the data's end when every
// key is below userKey. Where the partition that indexes the block cannot
// be read, it returns the partition's data blocks' span instead.
func (r *Reader) blockSpanAt(userKey []byte) (start, end uint64) {
	var x indexPart
	defer x.release()
	var stats LookupStats
	target := base.MakeInternalKey(userKey, base.SeqNumMax, base.KindMax).Append(nil)
	i, err := r.searchBlock(target, &x, &stats)
	if err != nil {
		p := r.parts.top.search(target) // the partition that failed
		return r.parts.dataStart(p), r.parts.dataEnds[p]
	}
	if i == r.numBlocks() {
		return r.dataEnd(), r.dataEnd()
	}
	h, _ := r.blockHandle(i, &x, &stats) // x holds block i
	return h.Offset, h.Offset + h.Length + blockTrailerLen
}

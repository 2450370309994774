package sstable

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/base"
)

// EstimateDiskUsage returns about how many bytes of the table's file hold
// the user keys in [lo, hi) (nil: unbounded), from the index alone: it
// reads nothing. The data blocks that may hold such a key count whole —
// from the block a seek to lo lands in through the one a seek to hi lands
// in, which may hold keys below hi — and their bytes are scaled by the
// file's size over the data blocks', so that the filter, index,
// properties and footer are shared among the keys in proportion. A range
// that takes in every block gets the file's size; the estimates of
// adjacent ranges overlap by at most the block at their common end. The
// error is at most one data block's share at each end of the range.
func (r *Reader) EstimateDiskUsage(lo, hi []byte) uint64 {
	n := r.index.numBlocks()
	if n == 0 || lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0 {
		return 0
	}
	first, last := 0, n-1
	if lo != nil {
		first = r.index.search(base.MakeInternalKey(lo, base.SeqNumMax, base.KindMax).Append(nil))
	}
	if hi != nil {
		last = min(last, r.index.search(base.MakeInternalKey(hi, base.SeqNumMax, base.KindMax).Append(nil)))
	}
	switch {
	case first > last:
		return 0
	case first == 0 && last == n-1:
		return uint64(r.size)
	}
	start, end := r.index.handle(first).Offset, r.index.blockEnd(last)
	data := r.index.blockEnd(n - 1)
	return uint64(float64(end-start) * float64(r.size) / float64(data))
}

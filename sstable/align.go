package sstable

import (
	"encoding/binary"

	"github.com/bloomkv/bloomkv/internal/compress"
)

// pageFit is how a Writer under BlockAlign (with a BlockSize of at most a
// page) cuts its data blocks so that each, stored, fits in a page with
// its trailer: uncompressed, a block is cut before the entry that would
// take it past the page. Compressed, a block's stored size is known only
// once it is compressed, so the writer cuts where the previous block's
// ratio predicts the page is full, compresses, and, when the block came
// out larger than the page after all, rebuilds it from the first entries
// only (as many as the ratio says fit, fewer until they do) and carries the
// rest over to the next block. Blocks then fill their pages to within an
// entry or the ratio's drift, so the padding alignedStart adds stays small,
// instead of up to half of every page when blocks of half a page or more
// are padded to a page each — but a block holds at most maxRaw bytes
// before compression, a quarter past BlockSize, so that a Get decodes and
// searches about the block it did unaligned, and the block cache holds as
// many; data compressing better than that leaves pages part empty.
// Padding such a block would waste the rest, so a block is padded only
// when the padding is at most a quarter of the block (worthPadding), and
// otherwise written across the boundary.
//
// INVARIANT: when on, pending holds the entries of the data block being
// built, in order, each as key length (uvarint), key, value length
// (uvarint), value, starting at offs[i]; only with compression, whose
// blocks may have to be rebuilt.
type pageFit struct {
	on       bool    // BlockAlign with a BlockSize of at most a page
	ratio    float64 // stored / raw bytes of the last block written, in [1/16, 1]
	pending  []byte
	offs     []int
	keep     bool // compression is on: pending is kept
	carry    int  // entries of pending the last block left for the next
	maxRaw   int  // the most a block holds before compression: BlockSize + BlockSize/4
	fitLimit int  // the raw size at which the page is predicted full, at most maxRaw
}

func newPageFit(o WriterOptions) pageFit {
	f := pageFit{on: o.BlockAlign && o.BlockSize <= alignPage, ratio: 1, keep: o.Compression != NoCompression, maxRaw: o.BlockSize + o.BlockSize/4}
	f.fitLimit = f.limit()
	return f
}

// limit is the raw block size the page holds at the current ratio, at
// most maxRaw.
func (f *pageFit) limit() int {
	return min(f.maxRaw, int(float64(alignPage-blockTrailerLen)/f.ratio))
}

// worthPadding reports whether a block of n stored bytes (its trailer
// included) is worth pad bytes of padding: at most a quarter of it.
func worthPadding(pad, n uint64) bool { return 4*pad <= n }

// addToBlock adds an entry to the data block, first cutting the block
// before it when BlockAlign's page would not hold it; inline says whether
// the entry's value is its own (Writer.dataInline).
func (w *Writer) addToBlock(key, value []byte, inline bool) {
	shared := w.data.shared(key)
	if w.fit.on && w.data.entries > 0 && w.data.sizeWith(key, value, shared) > w.fit.fitLimit {
		w.flushDataBlock()
		shared = w.data.shared(key)
	}
	w.dataInline = w.dataInline || inline
	w.data.addShared(key, value, shared)
	if w.fit.on && w.fit.keep {
		w.fit.offs = append(w.fit.offs, len(w.fit.pending))
		w.fit.pending = binary.AppendUvarint(w.fit.pending, uint64(len(key)))
		w.fit.pending = append(w.fit.pending, key...)
		w.fit.pending = binary.AppendUvarint(w.fit.pending, uint64(len(value)))
		w.fit.pending = append(w.fit.pending, value...)
	}
}

// cutAfter is the size at which a data block is cut after an entry:
// BlockSize, or under BlockAlign the page's predicted fill when BlockSize
// is a page (and the smaller of the two below).
func (w *Writer) cutAfter() int {
	switch {
	case !w.fit.on:
		return w.opts.BlockSize
	case w.opts.BlockSize < alignPage:
		return min(w.opts.BlockSize, w.fit.fitLimit)
	}
	return w.fit.fitLimit
}

// pendingEntry decodes entry i of pending.
func (f *pageFit) pendingEntry(i int) (key, value []byte) {
	p := f.pending[f.offs[i]:]
	n, k := binary.Uvarint(p)
	key, p = p[k:k+int(n)], p[k+int(n):]
	n, k = binary.Uvarint(p)
	return key, p[k : k+int(n)]
}

// compressData compresses the finished data block raw. Under BlockAlign
// with compression, a block that came out larger than a page is rebuilt
// from fewer of its entries until it fits or holds one, the rest left in
// pending for carryOver. It updates the ratio that predicts the next cut.
func (w *Writer) compressData(raw []byte) (stored []byte, used compress.Codec) {
	n := w.data.entries
	k := n
	for {
		stored, used, w.scratch = blockEncoder.Encode(w.dataCodec(), raw, w.scratch)
		over := len(stored) + blockTrailerLen
		if !w.fit.on || !w.fit.keep || over <= alignPage || k == 1 {
			break
		}
		k = max(1, min(k-1, k*alignPage/over))
		w.data.reset()
		for i := range k {
			w.data.add(w.fit.pendingEntry(i))
		}
		raw = w.data.finish()
	}
	if w.fit.on {
		w.fit.carry = n - k
		if len(raw) > 0 {
			w.fit.ratio = min(1, max(1.0/16, float64(len(stored))/float64(len(raw))))
		}
		w.fit.fitLimit = w.fit.limit()
	}
	return stored, used
}

// dataCodec is the pending data block's codec: the table's Compression,
// or none for a block whose entries hold no value of their own
// (WriterOptions.Compression).
func (w *Writer) dataCodec() compress.Codec {
	if !w.dataInline {
		return NoCompression.codec()
	}
	return w.opts.Compression.codec()
}

// carryOver starts the next data block with the entries the last one left
// over (compressData), and keeps pending to them.
func (w *Writer) carryOver() {
	f := &w.fit
	if !f.on || !f.keep {
		return
	}
	n := len(f.offs)
	if f.carry == 0 {
		f.pending, f.offs = f.pending[:0], f.offs[:0]
		return
	}
	first := n - f.carry
	base := f.offs[first]
	for i := first; i < n; i++ {
		w.data.add(f.pendingEntry(i))
	}
	copy(f.pending, f.pending[base:])
	f.pending = f.pending[:len(f.pending)-base]
	for i := first; i < n; i++ {
		f.offs[i-first] = f.offs[i] - base
	}
	f.offs = f.offs[:f.carry]
	f.carry = 0
}

package sstable

import (
	"github.com/bloomkv/bloomkv/bloom"
)

// A paged filter is a second filter of a table's keys, kept in the file
// and read a 4 KiB page at a time, only for the keys its pinned filter
// cannot rule out (see the package doc's Paged filters). A pinned filter
// of few bits per key — what a memory limit leaves a large tree — says
// "maybe" for many absent keys; each would cost a data block from the
// device, where the paged filter's page, one per table for every key
// hashed to it, is read from the page cache or the block cache and rules
// out most of them.

// Paged-filter layout constants.
const (
	// pagedFilterPageSize is a page's stride in the file: the pages start
	// on a page boundary and each takes one page.
	pagedFilterPageSize = alignPage
	// pagedFilterBlocksPerPage is how many of the Bloom filter's 64-byte
	// blocks a page holds: as many as fit with the block trailer.
	pagedFilterBlocksPerPage = (pagedFilterPageSize - blockTrailerLen) / 64
	// maxPagedFilterProbes bounds the probes a table's properties may
	// name, as bloom's format bounds a blocked filter's.
	maxPagedFilterProbes = 32
)

// pagedFilter is where a Reader finds its table's paged filter; blocks is
// 0 for a table without one.
type pagedFilter struct {
	start          uint64 // the first page's offset
	blocks, probes uint64
}

// pagesOf returns the pages a paged filter of blocks blocks takes.
func pagesOf(blocks uint64) uint64 {
	return (blocks + pagedFilterBlocksPerPage - 1) / pagedFilterBlocksPerPage
}

// buildPagedFilter builds the paged filter of the table's hashes at bits
// bits per key, and records its blocks and probes in the properties, which
// Finish then writes before the pages (writePagedFilter).
func (w *Writer) buildPagedFilter() (*bloom.Blocked, error) {
	if w.opts.PagedFilterBits == 0 || len(w.hashes) == 0 {
		return nil, nil
	}
	f, err := bloom.BuildBlocked(w.hashes, w.opts.PagedFilterBits)
	if err != nil {
		return nil, err
	}
	w.props.PagedFilterBlocks = f.NumBlocks()
	w.props.PagedFilterProbes = uint64(f.Probes())
	w.props.PagedFilterBitsPer = f.BitsPerKey()
	return f, nil
}

// writePagedFilter writes f's pages after the properties: zero padding to
// a page boundary, then each page — up to pagedFilterBlocksPerPage blocks
// and a block trailer — padded to the page's end, so that the pages end
// where the footer starts and a reader finds them from the file's size.
func (w *Writer) writePagedFilter(f *bloom.Blocked) {
	if f == nil {
		return
	}
	w.write(zeroPage[:(pagedFilterPageSize-w.offset%pagedFilterPageSize)%pagedFilterPageSize])
	page := make([]byte, 0, pagedFilterPageSize)
	for first := uint64(0); first < f.NumBlocks(); first += pagedFilterBlocksPerPage {
		page = f.AppendBlocks(page[:0], first, min(first+pagedFilterBlocksPerPage, f.NumBlocks()))
		w.writeStored(page, NoCompression.codec(), false)
		w.write(zeroPage[:pagedFilterPageSize-len(page)-blockTrailerLen])
	}
}

// openPagedFilter locates the table's paged filter, if its properties name
// one: its pages lie between the properties block and the footer, on page
// boundaries.
func (r *Reader) openPagedFilter(f footer) error {
	p := &r.props
	if p.PagedFilterBlocks == 0 {
		return nil
	}
	off := int64(f.properties.Offset)
	if p.PagedFilterProbes == 0 || p.PagedFilterProbes > maxPagedFilterProbes {
		return r.corrupt(off, "properties block: paged filter of %d probes", p.PagedFilterProbes)
	}
	pages := pagesOf(p.PagedFilterBlocks)
	end := uint64(r.size) - footerLen
	propsEnd := f.properties.Offset + f.properties.Length + blockTrailerLen
	if pages > end/pagedFilterPageSize || end-pages*pagedFilterPageSize < propsEnd || end%pagedFilterPageSize != 0 {
		return r.corrupt(off, "properties block: a paged filter of %d blocks does not fit on page boundaries between the properties (ending at %d) and the footer (at %d)", p.PagedFilterBlocks, propsEnd, end)
	}
	r.paged = pagedFilter{start: end - pages*pagedFilterPageSize, blocks: p.PagedFilterBlocks, probes: p.PagedFilterProbes}
	return nil
}

// pagedRuledOut reports whether the paged filter rules k out, past a
// maybe from the table's filter, setting stats as Get does: then the
// lookup ends without a data block.
func (r *Reader) pagedRuledOut(k LookupKey, stats *LookupStats) (bool, error) {
	if r.paged.blocks == 0 {
		return false, nil
	}
	maybe, err := r.pagedMayContain(k.Hash, stats)
	if err != nil || maybe {
		return false, err
	}
	stats.FilterChecked = r.filter != nil
	stats.PagedFilterNegative = true
	return true, nil
}

// pagedMayContain is the paged filter's verdict on the user key whose
// bloom.Hash is h: it reads the one page that holds the key's block,
// through the block cache as a data block is read (pointBlockAt), and
// counts the read or the hit in stats. A
// table without a paged filter says maybe.
func (r *Reader) pagedMayContain(h uint64, stats *LookupStats) (bool, error) {
	if r.paged.blocks == 0 {
		return true, nil
	}
	b := bloom.BlockOf(h, r.paged.blocks)
	p := b / pagedFilterBlocksPerPage
	first := p * pagedFilterBlocksPerPage
	n := min(pagedFilterBlocksPerPage, r.paged.blocks-first)
	page, err := r.pointBlockAt(BlockHandle{Offset: r.paged.start + p*pagedFilterPageSize, Length: n * 64},
		"paged filter", blockTally{cached: &stats.FilterPagesCached, read: &stats.FilterPagesRead})
	if err != nil {
		return false, err
	}
	defer page.release()
	data := page.handle.Bytes()
	if uint64(len(data)) != n*64 {
		return false, r.corrupt(int64(r.paged.start+p*pagedFilterPageSize), "paged filter page of %d bytes, want %d", len(data), n*64)
	}
	return bloom.BlockMayContainHash((*[64]byte)(data[(b-first)*64:]), h, int(r.paged.probes)), nil
}

// PagedFilterBitsPerKey returns the bits per key of the table's paged
// filter, 0 if it has none.
func (r *Reader) PagedFilterBitsPerKey() float64 {
	if r.paged.blocks == 0 {
		return 0
	}
	return r.props.PagedFilterBitsPer
}

// checkPagedFilterBits checks WriterOptions.PagedFilterBits: 0, or a
// Bloom filter's bits per key.
func checkPagedFilterBits(bits float64) error {
	if bits == 0 {
		return nil
	}
	return bloom.CheckBitsPerKey(bits)
}

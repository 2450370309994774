package sstable

import (
	"github.com/bloomkv/bloomkv/internal/base"
)

// Iterator walks a table's entries in internal-key order: every version of
// every key, tombstones included. It reads one data block at a time through
// the block cache, until it has read seqReadsBeforeAhead blocks in a row
// from the file going forward: from then on its misses are read
// scanReadAhead at a time, as a scan iterator's are, and copied into the
// cache block by block. (The DB advises the kernel against read-ahead on
// table files, for the sake of lookups, so a scan must read ahead itself.)
// An Iterator is not safe for concurrent use; a Reader may have many.
//
// Positioning methods report whether the iterator is at an entry; when one
// reports false, Error says whether that was the end or damage.
type Iterator struct {
	r    *Reader
	bufs *blockBuffers // a scan iterator's reused buffers; nil: the cache
	// ahead is a cache iterator's read-ahead window, from scanBuffers, once
	// seqReads reaches seqReadsBeforeAhead: the forward loads in a row
	// that read their block from the file.
	ahead    *blockBuffers
	seqReads int
	block    int         // index of the current data block
	handle   CacheHandle // on the current data block, released when it moves off it
	// part is, in a table whose partitioned index is not pinned, the
	// index partition of the current block (or of the last sought),
	// held until the iterator moves past it or closes.
	part indexPart
	// offset is the current data block's, for errors.
	offset uint64
	data   blockIter
	stats  LookupStats
	err    error
}

// seqReadsBeforeAhead is how many blocks in a row, going forward, an
// Iterator reads from the file before it reads ahead: two, as RocksDB's
// iterators do, so that a short seek-and-next pays for no window.
const seqReadsBeforeAhead = 2

// NewIterator returns an unpositioned iterator over the table.
func (r *Reader) NewIterator() *Iterator { return &Iterator{r: r, block: -1} }

// NewScanIterator returns an iterator for reading the whole table once, as
// a compaction does: it neither reads nor fills the block cache (one pass
// would only evict the blocks lookups need), reads the file 64 KiB at a
// time rather than a block at a time, and reuses its buffers for every
// block, and after Close for the next scan iterator, so that it allocates
// once instead of per block. Its Key and Value are valid only until it
// moves.
func (r *Reader) NewScanIterator() *Iterator {
	return &Iterator{r: r, block: -1, bufs: newScanBuffers()}
}

// newScanBuffers returns read-ahead buffers from scanBuffers, their window
// emptied: it holds another file's bytes.
func newScanBuffers() *blockBuffers {
	b := scanBuffers.Get().(*blockBuffers)
	b.aheadOff, b.ahead = 0, b.ahead[:0]
	return b
}

// loadBlock positions the block iterator on data block i.
func (it *Iterator) loadBlock(i int) bool {
	forward := i == it.block+1
	it.block = i
	it.data.valid = false
	it.handle.Release()
	it.handle = CacheHandle{}
	if i < 0 || i >= it.r.numBlocks() {
		return false
	}
	h, err := it.r.blockHandle(i, &it.part, &it.stats)
	if err != nil {
		it.err = err
		return false
	}
	it.offset = h.Offset
	bufs, cached := it.bufs, it.bufs == nil
	if cached && forward {
		bufs = it.ahead // nil until the iterator reads ahead
	}
	read := it.stats.BlocksRead
	b, err := it.r.dataBlockInto(h, &it.stats, bufs, cached)
	if cached && it.ahead == nil {
		switch {
		case !forward:
			it.seqReads = 0
		case it.stats.BlocksRead > read:
			if it.seqReads++; it.seqReads >= seqReadsBeforeAhead {
				it.ahead = newScanBuffers()
			}
		}
	}
	if err == nil {
		it.handle = b
		if err = it.data.init(b.Bytes(), base.CompareEncoded); err != nil {
			err = it.r.corrupt(int64(h.Offset), "data block: %v", err)
		}
	}
	it.err = err
	return err == nil
}

// settle turns a block iterator that failed into the iterator's error, and
// reports whether the iterator is at an entry.
func (it *Iterator) settle(ok bool) bool {
	if !ok && it.data.err != nil && it.err == nil {
		it.err = it.r.corrupt(int64(it.offset), "data block: %v", it.data.err)
	}
	return ok && it.err == nil
}

// First moves to the table's first entry.
func (it *Iterator) First() bool {
	return it.loadBlock(0) && it.settle(it.data.first())
}

// Last moves to the table's last entry.
func (it *Iterator) Last() bool {
	return it.loadBlock(it.r.numBlocks()-1) && it.settle(it.data.last())
}

// SeekGE moves to the first entry whose user key is ≥ userKey: the newest
// version of userKey when the table holds it.
func (it *Iterator) SeekGE(userKey []byte) bool {
	target := base.MakeInternalKey(userKey, base.SeqNumMax, base.KindMax).Append(nil)
	i, err := it.r.searchBlock(target, &it.part, &it.stats)
	if err != nil {
		it.err = err
		return false
	}
	// The index entry is the block's last key, so the answer is in block i.
	return it.loadBlock(i) && it.settle(it.data.seekGE(target))
}

// SeekLT moves to the last entry whose user key is < userKey.
func (it *Iterator) SeekLT(userKey []byte) bool {
	if !it.SeekGE(userKey) {
		if it.err != nil {
			return false
		}
		return it.Last() // every entry is < key, or the table is empty
	}
	return it.Prev()
}

// Next moves to the following entry.
func (it *Iterator) Next() bool {
	if it.err != nil || !it.data.valid {
		return false
	}
	if it.data.nextEntry() {
		return true
	}
	if it.settle(false); it.err != nil { // the block is damaged, not done
		return false
	}
	return it.loadBlock(it.block+1) && it.settle(it.data.first())
}

// Prev moves to the preceding entry.
func (it *Iterator) Prev() bool {
	if it.err != nil || !it.data.valid {
		return false
	}
	if it.data.prev() {
		return true
	}
	if it.settle(false); it.err != nil {
		return false
	}
	return it.loadBlock(it.block-1) && it.settle(it.data.last())
}

// Valid reports whether the iterator is at an entry.
func (it *Iterator) Valid() bool { return it.err == nil && it.data.valid }

// Key returns the current entry's key, at ReaderOptions.GlobalSeqNum if
// set. It aliases the iterator's buffer: valid until the iterator moves.
func (it *Iterator) Key() InternalKey {
	k, _ := base.DecodeInternalKey(it.data.key)
	if g := it.r.opts.GlobalSeqNum; g != 0 {
		k.Trailer = base.MakeTrailer(g, k.Kind())
	}
	return k
}

// Value returns the current entry's value. It aliases the current block:
// valid until the iterator moves to another block or closes.
func (it *Iterator) Value() []byte { return it.data.value }

// Error returns the damage that stopped the iterator, if any.
func (it *Iterator) Error() error { return it.err }

// Stats returns what the iterator has read so far.
func (it *Iterator) Stats() LookupStats { return it.stats }

// Close releases the iterator. It returns the iterator's error.
func (it *Iterator) Close() error {
	err := it.err
	it.handle.Release()
	it.part.release()
	for _, b := range [...]*blockBuffers{it.bufs, it.ahead} {
		if b != nil && b.readAhead && cap(b.stored) <= maxPooledBuffer && cap(b.decoded) <= maxPooledBuffer && cap(b.ahead) <= 2*scanReadAhead {
			scanBuffers.Put(b)
		}
	}
	*it = Iterator{err: err}
	return err
}

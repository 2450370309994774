package sstable

// Get in two halves, for a batch of point reads (a DB's MultiGet): Locate
// is the part that reads no data block — the filter and the in-memory
// index (in a table whose index is partitioned and not pinned, the
// partition it needs, through the block cache) — so that every key of a batch can be routed to its table and block
// before any read is issued; LoadBlock fetches a block once for all the
// keys that need it, and can be told to take it only from the block
// cache, so that a caller runs the cache's hits inline and hands only the
// misses to concurrent reads; GetLocated answers each key from it.

// A Location is where Locate found that a Get of a key would read: a
// data block of the table, or nowhere, past the last one.
type Location struct {
	// Block is the data block, in [0, NumBlocks()]; NumBlocks() means the
	// key sorts after the table's last entry, so that GetLocated answers
	// it from the index without a read.
	Block int
	seek  []byte   // the key's encoded seek key
	loc   blockLoc // the block's handle, and what the index says of newer versions
}

// GetResult is a key's answer from GetLocated, as Get returns it:
// Found, with Value and Kind, when the table holds a version of the key
// at or below the read's sequence number; KeyPresent as
// LookupStats.KeyPresent says.
type GetResult struct {
	Value      []byte
	Kind       Kind
	Seq        SeqNum // the version's, when Found
	Found      bool
	KeyPresent bool
}

// NumBlocks returns the number of data blocks in the table.
func (r *Reader) NumBlocks() int { return r.numBlocks() }

// Locate is Get up to its read of a data block: it consults the filter,
// and the paged filter past a maybe (stats.FilterChecked, FilterNegative
// and PagedFilterNegative as Get sets them), and returns false when either
// rules k out; otherwise it returns, from the index,
// the block a Get of k would read. It reads nothing from the file but, in
// a table whose partitioned index is not pinned, the index partition it
// needs when the block cache lacks it (counted in stats); a damaged one is
// an error wrapping ErrCorruption.
func (r *Reader) Locate(k LookupKey, stats *LookupStats) (Location, bool, error) {
	if !r.MayContainHash(k.Hash) {
		stats.ruledOut()
		return Location{}, false, nil
	}
	if out, err := r.pagedRuledOut(k, stats); out || err != nil {
		return Location{}, false, err
	}
	seek, loc, err := r.locate(k, stats)
	if err != nil {
		return Location{}, false, err
	}
	return Location{Block: loc.block, seek: seek, loc: loc}, true, nil
}

// A LocatedBlock is a data block LoadBlock fetched for the keys Locate
// sent to it. Release it once every key is answered.
type LocatedBlock struct {
	block int
	data  pointBlock // nothing past the last block
}

// Release gives the block back to the cache, or its buffers back.
func (b LocatedBlock) Release() { b.data.release() }

// LoadBlock fetches the block of loc, counting its read, or cache hit, in
// stats: from the cache, or else the file. With cachedOnly it reads
// nothing: it returns false if the block is not cached, so that the caller
// can issue the read elsewhere. Past the last block there is nothing to
// fetch, and it returns at once. A damaged block is an error wrapping
// ErrCorruption, with the file and offset.
func (r *Reader) LoadBlock(loc Location, stats *LookupStats, cachedOnly bool) (LocatedBlock, bool, error) {
	b := LocatedBlock{block: loc.Block}
	if loc.Block == r.numBlocks() {
		return b, true, nil
	}
	if cachedOnly {
		h, ok := r.cachedDataBlock(loc.loc.h, stats)
		b.data.handle = h
		return b, ok, nil
	}
	data, err := r.pointDataBlock(loc.loc.h, stats)
	b.data = data
	return b, err == nil, err
}

// PrefetchBlock asks the file to start reading the block LoadBlock would
// read for loc into the system's page cache, if the file can (it has a
// Prefetch(off, n int64) error method, as vfs.Prefetcher); it returns at
// once, and does not look in the block cache: the caller asks for the
// blocks the cache lacks. A batch that will read many blocks asks for all
// of them first, so that the device has them queued together.
func (r *Reader) PrefetchBlock(loc Location) {
	p, ok := r.file.(interface{ Prefetch(off, n int64) error })
	if !ok || loc.Block >= r.numBlocks() {
		return
	}
	h := loc.loc.h
	_ = p.Prefetch(int64(h.Offset), int64(h.Length+blockTrailerLen))
}

// GetLocated answers Get for k, which Locate sent to loc, from b, the
// block LoadBlock fetched for loc. The value is a copy.
func (r *Reader) GetLocated(b LocatedBlock, k LookupKey, loc Location) (GetResult, error) {
	var res GetResult
	var err error
	if b.block == r.numBlocks() {
		// Past the last block: the index alone answers, as in Get.
		res.KeyPresent = loc.loc.newer
		return res, nil
	}
	res.Value, res.Kind, res.Seq, res.Found, err = r.getInBlock(b.data.handle.Bytes(), loc.loc, k, loc.seek, &res.KeyPresent)
	return res, err
}

package sstable

// Get in two halves, for a batch of point reads (a DB's MultiGet): Locate
// is the part that reads nothing — the filter and the in-memory index —
// so that every key of a batch can be routed to its table and block
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
	seek  []byte // the key's encoded seek key
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
func (r *Reader) NumBlocks() int { return r.index.numBlocks() }

// Locate is Get up to its read: it consults the filter (stats.FilterChecked
// and FilterNegative as Get sets them) and returns false when the filter
// rules k out; otherwise it returns, from the index, the block a Get of k
// would read. It reads nothing from the file.
func (r *Reader) Locate(k LookupKey, stats *LookupStats) (Location, bool) {
	if !r.MayContainHash(k.Hash) {
		stats.ruledOut()
		return Location{}, false
	}
	seek, block := r.locate(k, stats)
	return Location{Block: block, seek: seek}, true
}

// A LocatedBlock is a data block LoadBlock fetched for the keys Locate
// sent to it. Release it once every key is answered.
type LocatedBlock struct {
	block  int
	handle CacheHandle // nothing past the last block
}

// Release gives the block back to the cache.
func (b LocatedBlock) Release() { b.handle.Release() }

// LoadBlock fetches the block of loc, counting its read, or cache hit, in
// stats: from the cache, or else the file. With cachedOnly it reads
// nothing: it returns false if the block is not cached, so that the caller
// can issue the read elsewhere. Past the last block there is nothing to
// fetch, and it returns at once. A damaged block is an error wrapping
// ErrCorruption, with the file and offset.
func (r *Reader) LoadBlock(loc Location, stats *LookupStats, cachedOnly bool) (LocatedBlock, bool, error) {
	b := LocatedBlock{block: loc.Block}
	if loc.Block == r.index.numBlocks() {
		return b, true, nil
	}
	if cachedOnly {
		h, ok := r.cachedDataBlock(loc.Block, stats)
		b.handle = h
		return b, ok, nil
	}
	h, err := r.dataBlock(loc.Block, stats)
	b.handle = h
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
	if !ok || loc.Block >= r.index.numBlocks() {
		return
	}
	h := r.index.handle(loc.Block)
	_ = p.Prefetch(int64(h.Offset), int64(h.Length+blockTrailerLen))
}

// GetLocated answers Get for k, which Locate sent to loc, from b, the
// block LoadBlock fetched for loc. The value is a copy.
func (r *Reader) GetLocated(b LocatedBlock, k LookupKey, loc Location) (GetResult, error) {
	var res GetResult
	var err error
	if b.block == r.index.numBlocks() {
		// Past the last block: the index alone answers, as in Get.
		res.KeyPresent, err = r.hasNewer(k.UserKey, loc.seek, b.block, nil)
		return res, err
	}
	res.Value, res.Kind, res.Seq, res.Found, err = r.getInBlock(b.handle.Bytes(), b.block, k, loc.seek, &res.KeyPresent)
	return res, err
}

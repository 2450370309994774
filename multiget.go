package bloomkv

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// multiGetReads bounds the block reads one MultiGet has in flight: enough
// to keep an SSD's queue busy (a cold read here takes ~70 µs, most of it
// the device's), few enough that one call does not crowd out the rest of
// the process.
const multiGetReads = 16

// MultiGet returns the values of keys, in their order: values[i] is
// keys[i]'s value, or nil if keys[i] is not found (a present empty value
// is an empty slice, not nil). Each value is the caller's to keep and
// modify. Every key is read at one point in time, as a snapshot would read
// them, and the answers are those of a Get of each key at that point.
//
// It does less than a Get per key: every key's memtable and filter
// checks come first, so keys the filters rule out cost no read, and the
// data blocks left to read are asked of the system all at once (see
// vfs.Prefetcher), then read concurrently (up to 16 at a time), each once
// however many keys it holds. Metrics count every key as a Get.
// The first error ends the call; a damaged table is an error wrapping
// ErrCorruption.
func (d *DB) MultiGet(keys [][]byte) (values [][]byte, err error) {
	return d.multiGet(keys, liveSeq, nil)
}

// multiGet is MultiGet at seq (liveSeq: the read state's own), behind
// DB.MultiGet, Snapshot.MultiGet and DB.ExplainMultiGet, which passes its
// MultiTrace as mt to record each key's path and each round (nil
// otherwise: each hook then costs a nil check).
func (d *DB) multiGet(keys [][]byte, seq base.SeqNum, mt *MultiTrace) ([][]byte, error) {
	rs, seq, err := d.acquireReadStateAt(seq)
	if err != nil {
		return nil, err
	}
	defer d.releaseReadState(rs)
	mt.start(keys, seq)
	d.counters.gets.Add(uint64(len(keys)))
	values := make([][]byte, len(keys))
	slab := make([]batchKey, 0, len(keys))
	pending := make([]*batchKey, 0, len(keys))
	var merged []mergedKey // keys whose first version found is a merge operand
	clock := readClock{d: d}
	for i, key := range keys {
		if value, kind, _, _, found := memtablesGet(rs, key, seq, 0, mt.keyTracer(i)); found {
			if kind == base.KindMerge {
				merged = append(merged, mergedKey{i: i, seq: seq})
				continue
			}
			d.counters.memtableHits.Add(1)
			if value, kind, err = clock.unexpired(key, value, kind, mt.keyTracer(i)); err != nil {
				mt.finish(values)
				return nil, err
			}
			if kind != base.KindDelete {
				values[i] = nonNil(bytes.Clone(value))
			}
			continue
		}
		slab = append(slab, batchKey{i: i, lk: sstable.MakeLookupKey(key, seq), tr: mt.key(i)})
		pending = append(pending, &slab[len(slab)-1])
	}
	// Rounds: each key still unanswered goes to the next table that may
	// hold it; the blocks so chosen are read, each once; a key its table
	// answers is done, one a filter's false positive sent there goes on.
	var (
		reads []blockRead
		blobs []int // keys found as handles, whose values[i] is the handle
	)
	for round := 1; len(pending) > 0; round++ {
		mt.round(round)
		if pending, err = d.routeBatch(rs, pending); err != nil {
			mt.finish(values)
			return nil, err
		}
		reads = groupByBlock(pending, reads[:0])
		misses, err := d.readBatch(reads)
		mt.endRound(reads, misses, err)
		if err != nil {
			mt.finish(values)
			return nil, err
		}
		next := pending[:0]
		for _, k := range pending {
			if k.res.Found {
				if k.res.Value, k.res.Kind, err = clock.unexpired(keys[k.i], k.res.Value, k.res.Kind, k.tr.tracer()); err != nil {
					mt.finish(values)
					return nil, err
				}
			}
			if !k.res.Found {
				next = append(next, k)
			} else if k.res.Kind == base.KindMerge {
				merged = append(merged, k.merged())
			} else if k.res.Kind != base.KindDelete {
				values[k.i] = nonNil(k.res.Value)
				if k.res.Kind == base.KindSetBlob {
					blobs = append(blobs, k.i)
				}
			}
		}
		pending = next
	}
	if err := d.readBlobs(values, blobs, mt); err != nil {
		mt.finish(values)
		return nil, err
	}
	// A key whose first version is a merge operand goes on as a Get
	// does, from there, to fold its operands over what is below them.
	for _, k := range merged {
		v, err := d.lookupBelow(rs, keys[k.i], k.seq, mt.keyTracer(k.i), k.ops, k.from, &clock)
		switch {
		case err == nil:
			values[k.i] = nonNil(v)
		case err != ErrNotFound:
			mt.finish(values)
			return nil, err
		}
	}
	mt.finish(values)
	return values, nil
}

// readBlobs replaces the handles values[i], i in blobs, by the values they
// locate: every read asked of the system first (vfs.Prefetcher), as the
// data blocks of a round are, then up to multiGetReads at once. mt, if
// not nil, gets each read as a step of its key's trace.
func (d *DB) readBlobs(values [][]byte, blobs []int, mt *MultiTrace) error {
	if len(blobs) > 1 {
		for _, i := range blobs {
			d.prefetchBlob(values[i])
		}
	}
	recs := make([]blobRead, len(blobs))
	err := forEachConcurrently(len(blobs), multiGetReads, func(j int) error {
		i := blobs[j]
		v, err := d.readBlob(nil, values[i], &recs[j])
		values[i] = nonNil(v)
		return err
	})
	if mt != nil {
		for j, i := range blobs {
			mt.Keys[i].blob(recs[j])
		}
	}
	return err
}

// forEachConcurrently calls f(0) … f(n−1) from up to limit goroutines,
// each taking the next index until none is left, and returns the first
// error (every call is made regardless).
func forEachConcurrently(n, limit int, f func(i int) error) error {
	if n == 1 {
		return f(0)
	}
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	for range min(n, limit) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := f(int(i)); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// batchKey is one key of a MultiGet past the memtables: where in the
// version its lookup has got to, as lookup walks it — the L0 tables newest
// first, then one table per deeper level — and its last table's answer.
type batchKey struct {
	i     int // its index in the request
	lk    sstable.LookupKey
	level int // the level of the next table to try
	l0    int // within L0, the index of the next table to try
	// The table the key was last sent to, its level, the block there, the
	// filter check that sent it (its stats), and the answer.
	t      *table
	tlevel int
	loc    sstable.Location
	stats  sstable.LookupStats
	res    sstable.GetResult
	tr     *keyTrace // ExplainMultiGet's record of the key's path; nil otherwise
}

// mergedKey is a key of a MultiGet whose first version found is a merge
// operand: the key i, and where its lookup goes on — in the memtables
// at seq (from nil), or past the operand found, ops, at seq in the
// table from.
type mergedKey struct {
	i    int
	seq  base.SeqNum
	ops  *mergeOperands
	from *placeCursor
}

// merged returns k, whose table answered with a merge operand, as a
// mergedKey.
func (k *batchKey) merged() mergedKey {
	m := mergedKey{i: k.i, seq: k.res.Seq - 1, ops: new(mergeOperands), from: &placeCursor{level: k.tlevel}}
	m.ops.add(k.res.Value)
	if k.tlevel == 0 {
		m.from.i = k.l0 - 1 // nextTable moved past the table
	}
	return m
}

// blockRead is one data block a round of MultiGet reads, and the keys
// that need it.
type blockRead struct {
	level int
	t     *table
	keys  []*batchKey
}

// routeBatch sends every key of pending to the next table that may hold
// it, past the tables whose range or filter rules it out (counted as a
// Get's probes are), and returns, in pending's array, the keys sent
// somewhere, ordered by table and block; the others no table holds. A
// table's index partition that cannot be read ends it with the error.
func (d *DB) routeBatch(rs *readState, pending []*batchKey) ([]*batchKey, error) {
	routed := pending[:0]
	for _, k := range pending {
		k.res = sstable.GetResult{}
		sent, err := d.nextTable(rs, k)
		if err != nil {
			return nil, err
		}
		if sent {
			routed = append(routed, k)
		}
	}
	slices.SortFunc(routed, func(a, b *batchKey) int {
		return cmp.Or(cmp.Compare(a.t.meta.FileNum, b.t.meta.FileNum), cmp.Compare(a.loc.Block, b.loc.Block))
	})
	return routed, nil
}

// groupByBlock appends to reads one blockRead per run of keys of routed
// (ordered by routeBatch) that need the same block.
func groupByBlock(routed []*batchKey, reads []blockRead) []blockRead {
	for start := 0; start < len(routed); {
		k := routed[start]
		end := start + 1
		for end < len(routed) && routed[end].t == k.t && routed[end].loc.Block == k.loc.Block {
			end++
		}
		reads = append(reads, blockRead{level: k.tlevel, t: k.t, keys: routed[start:end]})
		start = end
	}
	return reads
}

// nextTable advances k to the next table, in lookup's order, whose key
// range holds k and whose filter does not rule it out, and records it, its
// level and the block to read in k; false when there is none. Every
// filter checked is counted in its level's metrics.
//
// Range tombstones come first, as in lookup: one covering the key sets
// k.lk.Covered, and the key's lookup ends at that table — deleted, unless
// the table holds a newer version — so a key already covered goes nowhere.
func (d *DB) nextTable(rs *readState, k *batchKey) (sent bool, err error) {
	key := k.lk.UserKey
	if k.lk.Covered > 0 {
		return false, nil
	}
	try := func(level int, t *table) bool {
		hit := rangeDelAt(t.reader.RangeDels(), key, k.lk.Seq)
		k.lk.Covered = hit.seq
		k.stats = sstable.LookupStats{}
		loc, ok, lerr := t.reader.Locate(k.lk, &k.stats)
		if lerr != nil {
			err = lerr
			return false
		}
		if k.tr != nil {
			k.tr.located(level, t, k.stats, hit, ok)
		}
		if !ok {
			d.counters.levels[level].record(&k.stats)
			return false
		}
		k.t, k.tlevel, k.loc = t, level, loc
		return true
	}
	if k.level == 0 {
		l0 := rs.version.tables[0]
		for i := k.l0; i < len(l0); i++ {
			if !l0[i].meta.ContainsUserKey(key) {
				if k.tr != nil {
					k.tr.outOfRange(0, l0[i])
				}
				continue
			}
			if try(0, l0[i]) {
				k.l0 = i + 1
				return true, nil
			}
			if err != nil || k.lk.Covered > 0 {
				return false, err // or deleted: the filter ruled out a newer version
			}
		}
		k.level = 1
	}
	for ; k.level < manifest.NumLevels; k.level++ {
		t := rs.version.findTable(k.level, key)
		if t == nil {
			if n := len(rs.version.tables[k.level]); n > 0 && k.tr != nil {
				k.tr.noTable(k.level, n)
			}
			continue
		}
		if try(k.level, t) {
			k.level++
			return true, nil
		}
		if err != nil || k.lk.Covered > 0 {
			return false, err
		}
	}
	return false, nil
}

// readBatch reads the blocks of one round: those in the block cache
// inline, the others prefetched together and then read concurrently, at
// most multiGetReads at a time; each
// key's answer lands in its res. It returns how many blocks were not in
// the cache, and the first error.
func (d *DB) readBatch(reads []blockRead) (int, error) {
	var misses []*blockRead
	for i := range reads {
		r := &reads[i]
		hit, err := d.readBlock(r, true)
		if err != nil {
			return len(misses), err
		}
		if !hit {
			misses = append(misses, r)
		}
	}
	if len(misses) <= 1 {
		var err error
		if len(misses) == 1 {
			_, err = d.readBlock(misses[0], false)
		}
		return len(misses), err
	}
	// Every block is asked for before any is read, so that the device
	// has them all queued at once (see vfs.Prefetcher); then workers,
	// each reading the next miss until none is left.
	for _, r := range misses {
		r.t.reader.PrefetchBlock(r.keys[0].loc)
	}
	err := forEachConcurrently(len(misses), multiGetReads, func(i int) error {
		_, err := d.readBlock(misses[i], false)
		return err
	})
	return len(misses), err
}

// readBlock answers r's keys from r's block (with cachedOnly, only if the
// block is cached; false if it is not) and counts, as a Get would, each
// key's probe of the table — the block read or cache hit once, with the
// first key.
func (d *DB) readBlock(r *blockRead, cachedOnly bool) (bool, error) {
	var read sstable.LookupStats
	reader := r.t.reader
	b, ok, err := reader.LoadBlock(r.keys[0].loc, &read, cachedOnly)
	if err != nil {
		for _, k := range r.keys {
			if k.tr != nil {
				k.tr.answered(r, k.stats, sstable.GetResult{}, err)
			}
		}
	}
	if !ok || err != nil {
		return ok, err
	}
	defer b.Release()
	for j, k := range r.keys {
		k.res, err = reader.GetLocated(b, k.lk, k.loc)
		stats := k.stats
		stats.KeyPresent = k.res.KeyPresent
		if j == 0 {
			stats.BlocksRead, stats.BlocksCached, stats.BytesRead = read.BlocksRead, read.BlocksCached, read.BytesRead
		}
		if k.tr != nil {
			k.tr.answered(r, stats, k.res, err)
		}
		if err != nil {
			return true, err
		}
		d.counters.levels[r.level].record(&stats)
	}
	return true, nil
}

package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/sstable"
)

// SeekPrefixGE moves to the first key ≥ key (and ≥ the lower bound) whose
// prefix under Options.Prefix is key's prefix, and puts the iterator in
// prefix mode (Pebble's SeekPrefixGE, here in both directions): until the
// next First, Last, SeekGE or SeekLT, it shows only the keys with that
// prefix, as if its bounds were the prefix's (within its own). Next is
// false once the prefix's keys run out, Prev once they run out backward; a
// Prev after Next ran off the prefix's end moves to its last key, a Next
// after Prev ran off its start to its first key; another SeekPrefixGE
// starts another prefix. It returns false if no key ≥ key has the prefix.
// key is not retained.
//
// The point is what the seek does not read. Each table written under
// Options.Prefix holds the hashes of its keys' prefixes in its filter, so
// the seek asks the filter of each table whose key range overlaps the
// prefix's keys, and a table whose filter rules the prefix out is neither
// opened nor sought: most of them, for a prefix absent from a table, but
// for the filter's false positives. Memtables are always searched; tables
// with no filter, or written without Options.Prefix or under an extractor
// of another Name, always sought. Metrics counts the seeks and, per level,
// the tables considered, skipped and sought (LevelMetrics.PrefixProbes);
// DB.ExplainPrefix shows one seek's account.
//
// The keys shown are the keys ≥ key with the prefix, up to the first key
// without it, which under the extractor's contract (one prefix is one
// contiguous run of keys, see PrefixExtractor) are all of them.
//
// Without Options.Prefix there is no prefix: SeekPrefixGE stops the
// iterator with an *ArgumentError for opts.Prefix, which Error and Close
// return, so that the mistake is not taken for an absent prefix.
func (it *Iterator) SeekPrefixGE(key []byte) bool {
	if it.err != nil {
		return false
	}
	ps := it.ps
	if ps == nil {
		it.err, it.pos = argError("opts.Prefix", "nil: SeekPrefixGE needs a prefix extractor"), posNone
		return false
	}
	ps.prefix = append(ps.prefix[:0], ps.extractor.Prefix(key)...)
	ps.prefixHash = bloom.Hash(ps.prefix)
	ps.end = appendPrefixEnd(ps.end[:0], ps.prefix)
	it.inPrefix = true
	// The prefix's keys all start with it, so they lie in [prefix, end):
	// the bounds of prefix mode, within the iterator's own.
	it.lower, it.upper = it.userLower, it.userUpper
	if it.lower == nil || bytes.Compare(it.lower, ps.prefix) < 0 {
		it.lower = ps.prefix
	}
	if ps.end != nil && (it.upper == nil || bytes.Compare(ps.end, it.upper) < 0) {
		it.upper = ps.end
	}
	ps.restrict(it.lower, it.upper)
	if bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	ok := it.inner.SeekGE(key)
	ps.traceUnreached()
	return it.findNext(ok, false)
}

// leavePrefix ends prefix mode, if the iterator is in it: the iterator's
// own bounds again, and every table read again. First, Last, SeekGE and
// SeekLT call it before they move.
func (it *Iterator) leavePrefix() {
	if !it.inPrefix {
		return
	}
	it.inPrefix = false
	it.lower, it.upper = it.userLower, it.userUpper
	it.ps.unrestrict(it.lower, it.upper)
}

// outsidePrefix reports whether, in prefix mode, userKey lacks the prefix:
// a key past the prefix's run, where a move in either direction stops.
func (it *Iterator) outsidePrefix(userKey []byte) bool {
	return it.inPrefix && !bytes.Equal(it.ps.extractor.Prefix(userKey), it.ps.prefix)
}

// appendPrefixEnd appends to dst the smallest key greater than every key
// that starts with prefix — prefix with its last byte below 0xff
// incremented, and what follows it dropped — and returns it; nil (no such
// key: unbounded) if prefix is empty or all 0xff.
func appendPrefixEnd(dst, prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			dst = append(dst, prefix[:i+1]...)
			dst[i]++
			return dst
		}
	}
	return nil
}

// prefixSeek is what an Iterator's prefix seeks need of the iterator stack
// DB.newIter built, which it builds only under Options.Prefix: the merge,
// to leave out the L0 tables ruled out (iterator.MergingIter.Exclude); the
// L0 tables; and each level's LevelIter, to restrict to the prefix's range
// and to the tables whose filters admit it (iterator.LevelIter.Restrict).
//
// The decisions to skip a table are made here — for an L0 table when the
// seek starts, once for the whole prefix; for a level's table when the
// level's iterator reaches it — and each is counted, and recorded in the
// trace if the seek is explained, by the code that makes it.
type prefixSeek struct {
	extractor  *PrefixExtractor
	counters   *dbCounters
	merging    *iterator.MergingIter
	memtables  int      // the merge's first children: memtables, always searched
	l0         []*table // the L0 tables, children memtables, memtables+1, ...
	excluded   []bool   // by child of the merge; reused by every seek
	levels     []prefixLevel
	prefix     []byte       // the current prefix, in prefix mode
	prefixHash uint64       // bloom.Hash(prefix), asked of every table's filter
	end        []byte       // appendPrefixEnd of prefix
	tr         prefixTracer // nil unless the seek is explained
}

// prefixLevel is a level below L0 as a prefix seek sees it.
type prefixLevel struct {
	level   int
	tables  []*table
	iter    *iterator.LevelIter
	admit   func(i int) bool // the LevelIter's admit in prefix mode
	reached bool             // admit was asked since the seek started
}

// newPrefixSeek returns the prefix seeks' view of the stack newIter built:
// merging over memtables memtables, then one child per table of l0, then
// the levels' LevelIters.
func newPrefixSeek(d *DB, merging *iterator.MergingIter, memtables int, l0 []*table, levels []prefixLevel) *prefixSeek {
	ps := &prefixSeek{
		extractor: d.opts.Prefix,
		counters:  &d.counters,
		merging:   merging,
		memtables: memtables,
		l0:        l0,
		excluded:  make([]bool, memtables+len(l0)+len(levels)),
		levels:    levels,
	}
	for i := range ps.levels {
		l := &ps.levels[i]
		l.admit = func(j int) bool {
			l.reached = true
			return ps.consider(l.level, l.tables[j])
		}
	}
	return ps
}

// restrict narrows the stack to the current prefix, whose keys lie in
// [lower, upper): L0 tables whose key ranges miss that or whose filters
// rule the prefix out are excluded from the merge now; each level is
// bounded to it, its tables asked as the level reaches them.
func (ps *prefixSeek) restrict(lower, upper []byte) {
	ps.counters.prefixSeeks.Add(1)
	if ps.tr != nil {
		for i := range ps.memtables {
			ps.tr.prefixMemtable(i)
		}
	}
	for i, t := range ps.l0 {
		inRange := (lower == nil || bytes.Compare(t.meta.Largest.UserKey, lower) >= 0) &&
			(upper == nil || bytes.Compare(t.meta.Smallest.UserKey, upper) < 0)
		if !inRange && ps.tr != nil {
			ps.tr.prefixTable(0, t, false, FilterNotAsked)
		}
		ps.excluded[ps.memtables+i] = !inRange || !ps.consider(0, t)
	}
	ps.merging.Exclude(ps.excluded)
	for i := range ps.levels {
		l := &ps.levels[i]
		l.reached = false
		l.iter.Restrict(lower, upper, l.admit)
	}
}

// unrestrict undoes restrict: every child merged, every level's table
// read, within the iterator's bounds [lower, upper).
func (ps *prefixSeek) unrestrict(lower, upper []byte) {
	ps.merging.Exclude(nil)
	for i := range ps.levels {
		ps.levels[i].iter.Restrict(lower, upper, nil)
	}
}

// consider decides whether the seek reads table t of level, whose key
// range overlaps the prefix's: unless its filter rules the prefix out. It
// counts the decision and traces it.
func (ps *prefixSeek) consider(level int, t *table) bool {
	sought := t.reader.MayContainPrefixHash(ps.extractor, ps.prefixHash)
	ps.counters.levels[level].recordPrefix(sought)
	if ps.tr != nil {
		ps.tr.prefixTable(level, t, true, prefixVerdict(t.reader, ps.extractor, sought))
	}
	return sought
}

// traceUnreached records, after the seek positioned the stack, each level
// none of whose tables the seek reached: none overlaps the keys from the
// seek key to the prefix's end.
func (ps *prefixSeek) traceUnreached() {
	if ps.tr == nil {
		return
	}
	for i := range ps.levels {
		if l := &ps.levels[i]; !l.reached {
			ps.tr.noTable(l.level, len(l.tables))
		}
	}
}

// prefixVerdict names the answer that decided whether a prefix seek reads
// r (mayContain: r.MayContainPrefixHash's): absent, or why not — no filter, a
// filter holding no prefixes of p's Name, or a filter's "maybe".
func prefixVerdict(r *sstable.Reader, p *PrefixExtractor, mayContain bool) FilterVerdict {
	switch {
	case !mayContain:
		return FilterAbsent
	case r.Filter() == nil:
		return NoFilter
	case r.Properties().FilterPrefix != p.Name:
		return FilterNoPrefixes
	}
	return FilterMaybe
}

// prefixTracer records what a prefix seek consulted, step by step, as
// lookupTracer does for a point lookup; Trace is the one implementation.
type prefixTracer interface {
	// prefixMemtable: memtable i (0 the mutable one, then the immutable
	// ones, newest first) is searched, as every memtable is.
	prefixMemtable(i int)
	// prefixTable: a table whose key range overlaps the prefix's keys
	// (inRange), or not; verdict is its filter's answer, which decided
	// whether the table is sought.
	prefixTable(level int, t *table, inRange bool, verdict FilterVerdict)
	// noTable: the seek reached none of the level's tables.
	noTable(level, tables int)
}

// ExplainPrefix makes a prefix seek of key, as Iterator.SeekPrefixGE does,
// walks the prefix's keys to their end with Next, and returns the seek's
// account: every memtable searched, each L0 table with whether its key
// range overlaps the prefix's keys and, if it does, its filter's verdict
// for the prefix and whether it was sought, and each table of a deeper
// level the seek reached (or the level, if it reached none), in the order
// the seek consulted them, then the number of keys found. The steps are
// recorded by the code that decides to skip or seek each table, not
// re-enacted, so the seek counts in Metrics like any prefix seek.
//
// The error is an *ArgumentError for opts.Prefix without Options.Prefix,
// ErrClosed, or a read error, with the Trace up to the failure.
func (d *DB) ExplainPrefix(key []byte) (*Trace, error) {
	if d.opts.Prefix == nil {
		return nil, argError("opts.Prefix", "nil: a prefix seek needs a prefix extractor")
	}
	it, err := d.newIter(liveSeq, nil)
	if err != nil {
		return nil, err
	}
	t := &Trace{Key: bytes.Clone(key), Prefix: bytes.Clone(d.opts.Prefix.Prefix(key)), SeqNum: uint64(it.seq)}
	if t.Prefix == nil {
		t.Prefix = []byte{} // non-nil: the mark of a prefix seek's trace
	}
	it.ps.tr = t
	for ok := it.SeekPrefixGE(key); ok; ok = it.Next() {
		t.Keys++
	}
	t.Found = t.Keys > 0
	return t, it.Close()
}

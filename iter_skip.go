package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/iterator"
)

// tableSkip is what an Iterator needs of the iterator stack DB.newIter
// built to leave tables out of it: the merge, to leave out the L0 tables
// ruled out (iterator.MergingIter.Exclude); the L0 tables; and each
// level's LevelIter, to restrict to a key range and to the tables whose
// filters admit it (iterator.LevelIter.Restrict). Two kinds of move use
// it, one at a time (mode): a prefix seek (SeekPrefixGE, prefix.go), which
// asks each table's point filter for the prefix's hash, and a scan with
// both bounds (range_filter.go), which asks each table's range filter for
// the scan's range. newIter builds it under Options.Prefix, or when the
// version holds a table with a range filter.
//
// The decisions to skip a table are made here — for an L0 table when the
// move starts, once for the whole prefix or range; for a level's table
// when the level's iterator reaches it — and each is counted, and recorded
// in the trace if the move is explained, by the code that makes it.
//
// INVARIANT: a table left out holds no key the iterator may show before
// the next restrict or unrestrict: none with the prefix, or none in the
// range. Its range tombstones still apply: they are in the Iterator's
// rangeDels, which restriction leaves alone.
type tableSkip struct {
	counters  *dbCounters
	merging   *iterator.MergingIter
	memtables int         // the merge's first children: memtables, always searched
	l0        []*table    // the L0 tables, children memtables, memtables+1, ...
	excluded  []bool      // by child of the merge; reused by every restriction
	levels    []skipLevel // in room the caller gives init, enough for every level
	mode      skipMode    // what the current restriction asks the tables
	ranges    bool        // range scans restrict: some table has a range filter
	tr        skipTracer  // nil unless the move is explained

	// Under skipPrefix: the prefix (extractor nil without Options.Prefix).
	extractor  *PrefixExtractor
	prefix     []byte // the current prefix, in prefix mode
	prefixHash uint64 // bloom.Hash(prefix), asked of every table's filter
	end        []byte // appendPrefixEnd of prefix

	// Under skipRange: the range [lo, hi) asked of every table's range
	// filter, copies the restriction owns, both in bounds.
	lo, hi []byte
	bounds []byte
}

// skipMode is what a tableSkip's restriction asks of the tables.
type skipMode uint8

const (
	skipNone   skipMode = iota // no restriction: every table read
	skipPrefix                 // a prefix seek's: the point filter, for the prefix's hash
	skipRange                  // a bounded scan's: the range filter, for [lo, hi)
)

// skipLevel is a level below L0 as a restriction sees it: the Admitter of
// its LevelIter while restricted.
type skipLevel struct {
	ps      *tableSkip
	level   int
	tables  []*table
	iter    *iterator.LevelIter
	reached bool // Admit was asked since the restriction began
}

// Admit decides whether the restricted move reads table i of the level,
// which it reached.
func (l *skipLevel) Admit(i int) bool {
	l.reached = true
	return l.ps.consider(l.level, l.tables[i])
}

// init makes ps, which is new or reset, the restrictions' view of the
// stack iterOver builds: memtables memtables first in the merge, then one
// child per table of l0, then the levels' LevelIters, which addLevel adds
// in levels' room, zero skipLevels; setChildren completes it.
func (ps *tableSkip) init(d *DB, memtables int, l0 []*table, ranges bool, levels []skipLevel) {
	ps.extractor, ps.counters, ps.ranges = d.opts.Prefix, &d.counters, ranges
	ps.memtables, ps.l0 = memtables, l0
	ps.levels = levels[:0]
}

// setChildren gives ps the merge, of children children, that its
// restrictions exclude children of.
func (ps *tableSkip) setChildren(children int, merging *iterator.MergingIter) {
	ps.merging = merging
	if cap(ps.excluded) < children {
		ps.excluded = make([]bool, children)
	}
	ps.excluded = ps.excluded[:children]
	clear(ps.excluded) // memtables and levels are never excluded
}

// reset empties ps of what it refers to — the DB, the merge, the tables,
// a trace — for the next init, keeping the room of its buffers.
func (ps *tableSkip) reset() {
	*ps = tableSkip{
		excluded: ps.excluded[:0],
		bounds:   keptBuffer(ps.bounds),
		prefix:   keptBuffer(ps.prefix),
		end:      keptBuffer(ps.end),
	}
}

// addLevel adds the LevelIter over a level's tables. A level is never
// excluded from the merge: its LevelIter passes over its tables.
func (ps *tableSkip) addLevel(level int, tables []*table, li *iterator.LevelIter) {
	ps.levels = append(ps.levels, skipLevel{ps: ps, level: level, tables: tables, iter: li})
}

// setRange makes [lo, hi) the range a range restriction asks about,
// copied into one buffer the tableSkip owns.
func (ps *tableSkip) setRange(lo, hi []byte) {
	if n := len(lo) + len(hi); cap(ps.bounds) < n {
		ps.bounds = make([]byte, 0, n)
	}
	ps.bounds = append(append(ps.bounds[:0], lo...), hi...)
	ps.lo, ps.hi = ps.bounds[:len(lo):len(lo)], ps.bounds[len(lo):]
}

// restrict narrows the stack under mode, whose keys lie in [lower,
// upper): L0 tables whose key ranges miss that or whose filters rule the
// prefix or range out are excluded from the merge now; each level is
// bounded to it, its tables asked as the level reaches them.
func (ps *tableSkip) restrict(mode skipMode, lower, upper []byte) {
	ps.mode = mode
	if mode == skipPrefix {
		ps.counters.prefixSeeks.Add(1)
	}
	if ps.tr != nil {
		for i := range ps.memtables {
			ps.tr.skipMemtable(i)
		}
	}
	for i, t := range ps.l0 {
		inRange := (lower == nil || bytes.Compare(t.meta.Largest.UserKey, lower) >= 0) &&
			(upper == nil || bytes.Compare(t.meta.Smallest.UserKey, upper) < 0)
		if !inRange && ps.tr != nil {
			ps.tr.skipTable(0, t, false, FilterNotAsked)
		}
		ps.excluded[ps.memtables+i] = !inRange || !ps.consider(0, t)
	}
	ps.merging.Exclude(ps.excluded)
	for i := range ps.levels {
		l := &ps.levels[i]
		l.reached = false
		l.iter.Restrict(lower, upper, l)
	}
}

// unrestrict undoes restrict: every child merged, every level's table
// read, within the levels' bounds, which SetBounds keeps (the Iterator's
// own: see iterOver).
func (ps *tableSkip) unrestrict(lower, upper []byte) {
	ps.mode = skipNone
	ps.merging.Exclude(nil)
	for i := range ps.levels {
		ps.levels[i].iter.Restrict(lower, upper, nil)
	}
}

// consider decides whether the restricted move reads table t of level,
// whose key range overlaps the restriction's, by the filter the mode asks.
func (ps *tableSkip) consider(level int, t *table) bool {
	if ps.mode == skipRange {
		return ps.considerRange(level, t)
	}
	return ps.considerPrefix(level, t)
}

// traceUnreached records, after the move positioned the stack, each level
// none of whose tables the move reached: none overlaps the keys from the
// seek key to the restriction's end.
func (ps *tableSkip) traceUnreached() {
	if ps.tr == nil {
		return
	}
	for i := range ps.levels {
		if l := &ps.levels[i]; !l.reached {
			ps.tr.noTable(l.level, len(l.tables))
		}
	}
}

// setPrefix makes prefix, whose keys lie in [prefix, end), the one a
// prefix restriction asks about.
func (ps *tableSkip) setPrefix(prefix []byte) {
	ps.prefix = append(ps.prefix[:0], prefix...)
	ps.prefixHash = bloom.Hash(ps.prefix)
	ps.end = appendPrefixEnd(ps.end[:0], ps.prefix)
}

package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/sstable"
)

// Range filters in iterators: a range scan, a move of an Iterator whose
// keys are bounded on both sides — First or Last with both bounds set,
// SeekGE with an upper bound, SeekLT with a lower bound — leaves out of its
// merge every table whose range filter (Options.RangeFilterBits) rules the
// range out (while the filters pay: see range_filter_policy.go), through
// the same restriction a prefix seek uses (tableSkip): an L0 table
// is excluded from the merge when the move starts, a deeper level's table
// passed over when the level's iterator reaches it, neither opened nor
// sought, its index and data unread. Memtables, and tables without a range
// filter, are always read.
//
// The range of a move is the keys it may show before the next seek: from
// the seek key (at least the lower bound) to the upper bound going
// forward, from the lower bound to the seek key going backward. A move
// back across a forward seek's start (Prev after SeekGE), or forward
// across a backward seek's end, first widens the restriction to the
// Iterator's bounds (or lifts it, with a bound missing) and re-seeks from
// the current key: the tables left out might hold the keys on that side.
//
// A table left out is asked for none of its entries; its range tombstones
// still apply, since the Iterator holds every source's in memory
// (Iterator.rangeDels). Its point tombstones are keys the range filter
// holds, so a table that deletes a key of the range is never left out.

// narrowRange restricts the stack to the range [lo, hi) of the move about
// to start, when both are set and some table has a range filter; with
// either missing it lifts a range restriction left by an earlier move.
// lo and hi are copied.
func (it *Iterator) narrowRange(lo, hi []byte) {
	ps := it.ps
	if ps == nil || !ps.ranges {
		return
	}
	if lo == nil || hi == nil {
		if ps.mode == skipRange {
			ps.unrestrict(it.lower, it.upper)
		}
		return
	}
	if ps.mode == skipRange && ps.tr == nil && bytes.Equal(ps.lo, lo) && bytes.Equal(ps.hi, hi) {
		return // the same range: the same tables left out
	}
	if ps.tr == nil && !ps.counters.rangeFiltersPay() && ps.counters.rangeScansUnpaid.Add(1)%rangeSampleEvery != 0 {
		if ps.mode == skipRange {
			ps.unrestrict(it.lower, it.upper)
		}
		return
	}
	ps.setRange(lo, hi)
	ps.counters.rangeScans.Add(1)
	ps.restrict(skipRange, ps.lo, ps.hi)
}

// rangeTooNarrow reports whether the current range restriction may leave
// out keys a move in direction dir from the current position may show:
// below its start going backward, at or past its end going forward.
func (it *Iterator) rangeTooNarrow(dir direction) bool {
	ps := it.ps
	if ps == nil || ps.mode != skipRange || it.inPrefix {
		return false
	}
	if dir == backward {
		return it.lower == nil || !bytes.Equal(ps.lo, it.lower)
	}
	return it.upper == nil || !bytes.Equal(ps.hi, it.upper)
}

// widenRange restricts the stack to the Iterator's bounds, when both are
// set, and otherwise lifts the restriction, so that a move may reach every
// key within them. It keeps the current key in it.key first, since the
// stack's tables may close: the caller re-seeks from it.
func (it *Iterator) widenRange() {
	if it.pos == posAt && it.dir == forward && !it.merged {
		it.key = append(it.key[:0], it.inner.Key().UserKey...)
	}
	ps := it.ps
	if it.lower == nil || it.upper == nil {
		ps.unrestrict(it.lower, it.upper)
		return
	}
	ps.setRange(it.lower, it.upper)
	ps.restrict(skipRange, ps.lo, ps.hi)
}

// prevWidened is Prev when the restriction must widen first: from after
// the end, the last key; from a key, the last key before it.
func (it *Iterator) prevWidened() bool {
	it.widenRange()
	if it.pos == posAfter {
		return it.last()
	}
	return it.findPrev(it.inner.SeekLT(it.key))
}

// nextWidened is Next when the restriction must widen first: from before
// the start, the first key; from a key, the first key after it.
func (it *Iterator) nextWidened() bool {
	it.widenRange()
	if it.pos == posBefore {
		return it.first()
	}
	return it.findNext(it.inner.SeekGE(it.key), true)
}

// considerRange decides whether a range scan reads table t of level,
// whose key range overlaps the move's range: unless its range filter rules
// the range out. It counts the check, if the table has a range filter, and
// traces the decision.
func (ps *tableSkip) considerRange(level int, t *table) bool {
	rf := t.reader.RangeFilter()
	sought := rf == nil || rf.MayContainRange(ps.lo, ps.hi)
	if rf != nil {
		ps.counters.levels[level].recordRange(sought)
		ps.counters.noteRangeCheck(sought)
	}
	if ps.tr != nil {
		ps.tr.skipTable(level, t, true, rangeVerdict(rf, sought))
	}
	return sought
}

// rangeVerdict names the answer that decided whether a range scan reads
// a table with range filter rf (nil: none), which said sought.
func rangeVerdict(rf sstable.RangeFilter, sought bool) FilterVerdict {
	switch {
	case rf == nil:
		return NoFilter
	case !sought:
		return FilterAbsent
	}
	return FilterMaybe
}

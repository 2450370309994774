package bloomkv

import (
	"bytes"
	"fmt"
	"strings"
)

// ExplainRange scans [lo, hi) as an Iterator with those bounds does, from
// First to the upper bound, and returns the scan's account: every
// memtable searched; each L0 table, with whether its key range overlaps
// [lo, hi) and, if it does, its range filter's verdict (absent: skipped;
// maybe: sought; none: sought, the table having no range filter); each
// table of a deeper level the scan reached, with the same, or the level,
// if it reached none — in the order the scan consulted them — then the
// number of keys found. The steps are recorded by the code that decides
// to skip or seek each table (see Options.RangeFilterBits), not
// re-enacted, so the scan counts in Metrics like any bounded scan.
//
// lo and hi must both be set (an empty hi is an empty range): an *ArgumentError
// otherwise. The error is also ErrClosed, or a read error, with the Trace up
// to the failure.
func (d *DB) ExplainRange(lo, hi []byte) (*Trace, error) {
	switch {
	case lo == nil:
		return nil, argError("lo", "nil: a range scan needs both bounds")
	case hi == nil:
		return nil, argError("hi", "nil: a range scan needs both bounds")
	}
	rs, seq, err := d.acquireReadStateAt(liveSeq)
	if err != nil {
		return nil, err
	}
	it := d.iterOver(rs, seq, IterOptions{LowerBound: lo, UpperBound: hi}, true, nil)
	t := &Trace{Key: bytes.Clone(lo), RangeEnd: bytes.Clone(hi), SeqNum: uint64(it.seq)}
	it.ps.tr = t
	ok := it.First()
	it.ps.traceUnreached()
	for ; ok; ok = it.Next() {
		t.Keys++
	}
	it.ps.tr = nil
	t.Found = t.Keys > 0
	return t, it.Close()
}

// rangeSummary is Summary for a range scan's trace: e.g. "1 table out of
// range, 5 tables skipped by their range filters, 1 table sought, 3 keys
// found".
func (t *Trace) rangeSummary(n TraceTotals) string {
	parts := skippedParts(n, "range filter")
	return strings.Join(append(parts, t.soughtFound(n, "a range filter", "no key in the range")...), ", ")
}

// rangeString is String for a range scan's trace:
//
//	range scan ["key100", "key120") at seqnum 4000
//	#  place          key range             in range  range filter  result
//	1  memtable                                                     sought
//	2  L0/000009.sst  "key000" .. "key999"  yes       absent        skipped
//	3  L1/000007.sst  "key000" .. "key499"  yes       maybe         sought
//	summary: 1 table skipped by its range filter, 1 table sought, no key in the range
func (t *Trace) rangeString() string {
	return t.skipString(fmt.Sprintf("range scan [%q, %q) at seqnum %d", t.Key, t.RangeEnd, t.SeqNum), "range filter")
}

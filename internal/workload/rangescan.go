package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// The range workloads' keys. Present key i is the number
//
//	x(i) = i + RangeRun·⌊i/RangeRun⌋
//
// zero-padded to KeySize digits, as the other workloads' keys: runs of
// RangeRun consecutive numbers, the present runs, each followed by a gap
// of RangeRun numbers no key has. A scan of w ≤ RangeRun consecutive
// numbers inside a run holds w keys; one inside a gap holds none, yet lies
// between two present runs, inside the key range of every table that
// holds keys on both sides: no key-range check can rule it out, only a
// range filter.
const RangeRun = 128

// RangeWidths are the widths, in consecutive key numbers, of the range
// workloads' scans.
var RangeWidths = []int{2, 8, 32, 128}

// The range workloads (see RangeRun): fillrange writes the keys in the
// range layout; rangescanW scans W keys, rangeemptyW W numbers of a gap.
const (
	FillRange Workload = "fillrange"
)

// RangeScanWorkload returns the workload of scans of width keys: empty
// (rangeemptyW, in a gap) or not (rangescanW, w keys each).
func RangeScanWorkload(width int, empty bool) Workload {
	if empty {
		return Workload("rangeempty" + strconv.Itoa(width))
	}
	return Workload("rangescan" + strconv.Itoa(width))
}

// rangeWorkloads are the scan workloads, rangescanW then rangeemptyW for
// each width.
var rangeWorkloads = func() []Workload {
	var ws []Workload
	for _, empty := range []bool{false, true} {
		for _, w := range RangeWidths {
			ws = append(ws, RangeScanWorkload(w, empty))
		}
	}
	return ws
}()

// RangeScans returns the range scan workloads: every width, non-empty
// then empty.
func RangeScans() []Workload { return append([]Workload(nil), rangeWorkloads...) }

// RangeScan returns the width of w and whether its scans are empty, if w
// is a range scan workload.
func (w Workload) RangeScan() (width int, empty, ok bool) {
	s := string(w)
	switch {
	case strings.HasPrefix(s, "rangescan"):
		s = s[len("rangescan"):]
	case strings.HasPrefix(s, "rangeempty"):
		s, empty = s[len("rangeempty"):], true
	default:
		return 0, false, false
	}
	width, err := strconv.Atoi(s)
	for _, x := range RangeWidths {
		if err == nil && x == width {
			return width, empty, true
		}
	}
	return 0, false, false
}

// IsRangeScan reports whether w is made of bounded scans.
func (w Workload) IsRangeScan() bool {
	_, _, ok := w.RangeScan()
	return ok
}

// RangeScanner is a Store that can scan a range with both bounds, which
// the range workloads need: ScanRange reads every entry with lo ≤ key <
// hi, with an iterator bounded on both sides — which may skip a table
// whose range filter rules the range out — and returns how many it read.
type RangeScanner interface {
	ScanRange(lo, hi []byte) (int, error)
}

// RangeReuser is a RangeScanner that can also scan through a cursor kept
// from scan to scan — for bloomkv one Iterator re-bounded by SetBounds for
// each, as a program running many short scans would, rather than a new
// Iterator per scan. Under Config.RangeReuse each thread of a range
// workload opens one cursor and makes all its scans with it.
type RangeReuser interface {
	RangeScanner
	NewRangeCursor() (RangeCursor, error)
}

// RangeCursor scans ranges, one at a time, as RangeScanner.ScanRange does,
// through state it keeps between scans. It sees the store as of when it
// was opened (the range workloads write nothing) and is used by one
// goroutine. Close releases it.
type RangeCursor interface {
	ScanRange(lo, hi []byte) (int, error)
	Close() error
}

// rangeLayout is the range workloads' key layout for N keys.
type rangeLayout struct {
	runs int // full runs of RangeRun present keys
}

// rangeLayout returns the layout of k's keys, or why the range workloads
// cannot use them: fewer than two full runs, or numbers too long for
// KeySize.
func (k *Keys) rangeLayout() (rangeLayout, error) {
	l := rangeLayout{runs: k.N / RangeRun}
	if l.runs < 2 {
		return l, fmt.Errorf("workload: the range workloads need at least %d keys (two runs of %d), not %d", 2*RangeRun, RangeRun, k.N)
	}
	if need := len(strconv.FormatUint(rangeNumber(k.N-1), 10)); k.KeySize < need {
		return l, fmt.Errorf("workload: key size %d is less than the %d digits the range workloads' %d keys need", k.KeySize, need, k.N)
	}
	return l, nil
}

// rangeNumber is the number of present key i in the range layout.
func rangeNumber(i int) uint64 { return uint64(i) + RangeRun*uint64(i/RangeRun) }

// RangeKey appends present key i (0 ≤ i < N) in the range layout to
// dst[:0] and returns it.
func (k *Keys) RangeKey(dst []byte, i int) []byte { return k.encode(dst, rangeNumber(i)) }

// RangeBounds returns the bounds of a scan of width consecutive numbers
// at offset in [0, RangeRun − width] within present run g (empty false:
// width keys) or within the gap after it (empty: no key; g below the last
// full run, so that a present run follows), appended to lo[:0] and
// hi[:0].
func (k *Keys) RangeBounds(lo, hi []byte, g, offset, width int, empty bool) ([]byte, []byte) {
	start := uint64(2*g*RangeRun + offset)
	if empty {
		start += RangeRun
	}
	return k.encode(lo, start), k.encode(hi, start+uint64(width))
}

// rangeScan does one scan of workload w (width, empty) with r's choices.
func (t *thread) rangeScan(width int, empty bool) error {
	k, p := t.c.Keys, t.p
	runs := p.ranges.runs
	if empty {
		runs-- // the gap after the last full run may have no run after it
	}
	g, offset := t.r.IntN(runs), t.r.IntN(RangeRun-width+1)
	t.key, t.upper = k.RangeBounds(t.key, t.upper, g, offset, width, empty)
	scan := p.scanner.ScanRange
	if t.c.RangeReuse {
		if t.cursor == nil {
			c, err := p.scanner.(RangeReuser).NewRangeCursor()
			if err != nil {
				return err
			}
			t.cursor = c
		}
		scan = t.cursor.ScanRange
	}
	n, err := scan(t.key, t.upper)
	want := width
	if empty {
		want = 0
		t.missing++
	}
	if err == nil && n != want {
		err = fmt.Errorf("range [%q, %q): %d keys, want %d (was the store filled with fillrange?)", t.key, t.upper, n, want)
	}
	return err
}

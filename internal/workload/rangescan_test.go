package workload

import (
	"fmt"
	"testing"
)

// TestRangeKeys checks the range layout against its definition: runs of
// RangeRun consecutive numbers and gaps of as many, a scan in a run
// holding width keys and one in a gap none (the oracle: the set of
// present numbers).
func TestRangeKeys(t *testing.T) {
	k, err := NewKeys(1000, 16, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	var prev []byte
	for i := range k.N {
		key := k.RangeKey(nil, i)
		if prev != nil && string(key) <= string(prev) {
			t.Fatalf("key %d %q does not sort after %q", i, key, prev)
		}
		if want := fmt.Sprintf("%016d", i+RangeRun*(i/RangeRun)); string(key) != want {
			t.Fatalf("key %d is %q, want %q", i, key, want)
		}
		present[string(key)], prev = true, key
	}
	for _, width := range RangeWidths {
		for _, empty := range []bool{false, true} {
			for g := range k.N/RangeRun - 1 {
				for _, off := range []int{0, RangeRun - width} {
					lo, hi := k.RangeBounds(nil, nil, g, off, width, empty)
					n := 0
					for key := range present {
						if string(lo) <= key && key < string(hi) {
							n++
						}
					}
					want := width
					if empty {
						want = 0
					}
					if n != want {
						t.Fatalf("width %d, empty %v, run %d, offset %d: [%s, %s) holds %d keys, want %d", width, empty, g, off, lo, hi, n, want)
					}
				}
			}
		}
	}
	if _, err := (&Keys{N: 255, KeySize: 16}).rangeLayout(); err == nil {
		t.Error("255 keys: no error, want one (two full runs needed)")
	}
}

// TestParseRangeWorkloads parses the range workloads' names.
func TestParseRangeWorkloads(t *testing.T) {
	if ws, err := Parse("fillrange,rangescan2,rangeempty128"); err != nil || len(ws) != 3 || !ws[1].IsRangeScan() || !FillRange.IsFill() {
		t.Errorf("Parse = %v, %v", ws, err)
	}
	if _, err := Parse("rangescan3"); err == nil {
		t.Error("rangescan3: no error, want an unknown workload")
	}
}

package bloomkv

// Asking range filters is not free: the restriction and the filters'
// queries cost a range scan that finds a few keys about a tenth of its
// time (BenchmarkRangeScan, non-empty scans of a compacted tree), which a
// table left out repays many times over — and nothing repays when the
// filters keep answering "maybe", as they do for scans that find keys in
// a tree of one level. So a DB keeps the recent share of its range
// filters' checks that said "maybe" (dbCounters.rangeSought, a moving
// average over some 32 checks), and while fewer than one in eight rule
// their range out (rangeFiltersPay) its range scans ask no filter, save
// every rangeSampleEvery-th, which keeps the share current: once scans
// turn to empty ranges, some eighty moves bring the filters back.
// Explained moves (DB.ExplainRange) always ask, to show what the filters
// say. Metrics.RangeScansUnfiltered counts the moves that did not.

// rangeSampleEvery is how many range scans in which one asks the range
// filters while they do not pay (see rangeFiltersPay): the n-th such move
// asks when n is a multiple of it.
const rangeSampleEvery = 16

// rangeShareOne is a share of 1 in dbCounters.rangeSought.
const rangeShareOne = 1 << 16

// noteRangeCheck moves the recent share of range-filter checks that said
// "maybe" a 32nd of the way toward this one's answer: an exponential
// moving average over some 32 checks. Concurrent checks may overwrite
// each other's step; the share only guides rangeFiltersPay. A step that
// changes nothing — the share settles at 1 under a run of "maybe"s and at
// 31/2^16 under a run of negatives — writes nothing, so that goroutines
// scanning at once do not pass the word's cache line between their cores
// on every check.
func (c *dbCounters) noteRangeCheck(sought bool) {
	old := c.rangeSought.Load()
	share := old - old>>5
	if sought {
		share += rangeShareOne >> 5
	}
	if share != old {
		c.rangeSought.Store(share)
	}
}

// rangeFiltersPay reports whether range scans should ask range filters:
// at least one recent check in eight ruled its range out. A table left
// out saves a seek — an index block and a data block searched — and
// asking costs about a tenth of that, so below one in eight the checks
// cost more than they save.
func (c *dbCounters) rangeFiltersPay() bool {
	return c.rangeSought.Load() <= rangeShareOne-rangeShareOne/8
}

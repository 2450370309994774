package workload

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in log-linear buckets: exact below 64 ns,
// then 32 buckets per power of two, so a percentile is within about 3% of
// the true value. The zero value is ready to use.
type Histogram struct {
	counts        [histBuckets]uint64
	n             uint64
	sum, min, max uint64 // nanoseconds
}

const (
	subBits     = 5
	histBuckets = (64 - subBits) << subBits // covers every uint64
)

func bucketOf(v uint64) int {
	if v < 1<<(subBits+1) {
		return int(v)
	}
	shift := bits.Len64(v) - (subBits + 1)
	return (shift+1)<<subBits + int(v>>shift) - 1<<subBits
}

// bucketRange returns the smallest value of bucket i and its width.
func bucketRange(i int) (lo, width uint64) {
	if i < 1<<(subBits+1) {
		return uint64(i), 1
	}
	shift := i>>subBits - 1
	m := uint64(i - (shift+1)<<subBits + 1<<subBits)
	return m << shift, 1 << shift
}

// Record adds one duration (negative ones count as 0).
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
	h.sum += v
}

// Merge adds o's durations to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Mean returns the mean duration, 0 if none was recorded.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Min and Max return the extremes, exactly.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Percentile returns the duration below or at which a fraction q (in [0, 1])
// of the recorded durations fall: the middle of the bucket holding the
// ⌈q·n⌉-th smallest, clamped to [Min, Max] (Max itself for the last
// rank). 0 if none was recorded.
func (h *Histogram) Percentile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	if rank == h.n {
		return time.Duration(h.max)
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, w := bucketRange(i)
			v := lo + (w-1)/2
			return time.Duration(min(max(v, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

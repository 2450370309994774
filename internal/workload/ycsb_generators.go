package workload

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// YCSB's key generators, written after the definitions of YCSB's core
// package (site.ycsb.generator: ZipfianGenerator,
// ScrambledZipfianGenerator, SkewedLatestGenerator,
// AcknowledgedCounterGenerator, UniformLongGenerator) so that the keys a
// YCSB workload here asks for follow the same laws as YCSB's and
// go-ycsb's. Each generator draws from the *rand.Rand it is given, so
// that a run is reproducible from its seed; a generator is used by one
// goroutine (each thread of a run gets its own, see zipfian.clone), except
// ackCounter, which the threads share.

// ZipfianConstant is YCSB's default Zipf exponent θ
// (zipfian.requestdistribution constant 0.99).
const ZipfianConstant = 0.99

// scrambledItems and scrambledZetan are ScrambledZipfianGenerator's: it
// draws from a Zipfian over 10¹⁰+1 items (ITEM_COUNT, from 0 to ITEM_COUNT
// inclusive) whose ζ(10¹⁰+1, 0.99), too long to sum at each start, YCSB
// gives precomputed (ZETAN); then it hashes the rank onto the key space.
const (
	scrambledItems = 10_000_000_000 + 1
	scrambledZetan = 26.46902820178302
)

// fnvHash64 is YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes of v from
// the lowest, as a non-negative int64 (Java's Math.abs of the hash, which
// leaves math.MinInt64 negative; so does this, as YCSB's does).
func fnvHash64(v int64) int64 {
	h := uint64(0xCBF29CE484222325)
	for range 8 {
		h ^= uint64(v) & 0xff
		h *= 1099511628211
		v >>= 8 // arithmetic, as Java's >>: the octets of a negative v fill with ones
	}
	if x := int64(h); x < 0 {
		return -x
	}
	return int64(h)
}

// zeta returns ζ over items [st, n) added to initial: initial +
// Σ_{i=st}^{n−1} 1/(i+1)^θ, YCSB's ZipfianGenerator.zeta.
func zeta(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// zipfian is YCSB's ZipfianGenerator: ranks base … base+items−1 with rank
// i (from 0) drawn with probability about 1/(i+1)^θ / ζ(items, θ), by the
// method of Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases" (SIGMOD 1994): one uniform draw u, the two most popular ranks
// exactly (uz = u·ζ(n) below 1, then below 1 + 0.5^θ), every other rank by
// the closed form items·(η·u − η + 1)^α. The law is exact for ranks 0 and
// 1 and approximate above: for θ = 0.99 and 100 to 10⁸ items, rank 2 is
// drawn up to 20% more often than Zipf's law says and the tail ranks up
// to 5.2% less (TestZipfianLaw checks both the algorithm's exact law and
// these bounds).
//
// nextN may be asked for more items than it was made with (the latest
// distribution's growing key space): it extends ζ incrementally, and, as
// YCSB's does, recomputes η with the item count it was made with. Fewer
// items than ζ was summed for keep that ζ (YCSB's allowitemcountdecrease
// is off by default).
type zipfian struct {
	items, base         int64
	theta, alpha, zeta2 float64
	zetan, eta          float64
	countForZeta        int64 // the item count zetan is summed to
	r                   *rand.Rand
}

// newZipfian returns the generator of ranks [min, max] at exponent theta,
// computing ζ(max−min+1, θ), O(max−min) work.
func newZipfian(min, max int64, theta float64, r *rand.Rand) *zipfian {
	return newZipfianZeta(min, max, theta, zeta(0, max-min+1, theta, 0), r)
}

// newZipfianZeta is newZipfian with ζ(max−min+1, θ) given.
func newZipfianZeta(min, max int64, theta, zetan float64, r *rand.Rand) *zipfian {
	z := &zipfian{items: max - min + 1, base: min, theta: theta, r: r}
	z.zeta2 = zeta(0, 2, theta, 0)
	z.alpha = 1 / (1 - theta)
	z.zetan, z.countForZeta = zetan, z.items
	z.eta = (1 - math.Pow(2/float64(z.items), 1-theta)) / (1 - z.zeta2/z.zetan)
	return z
}

// clone returns a copy of z drawing from r: ζ is not summed again.
func (z *zipfian) clone(r *rand.Rand) *zipfian {
	c := *z
	c.r = r
	return &c
}

// next returns a rank of z's items.
func (z *zipfian) next() int64 { return z.nextN(z.items) }

// nextN returns a rank in [base, base+itemCount), YCSB's nextLong.
func (z *zipfian) nextN(itemCount int64) int64 {
	if itemCount > z.countForZeta {
		z.zetan = zeta(z.countForZeta, itemCount, z.theta, z.zetan)
		z.countForZeta = itemCount
		// YCSB recomputes η with the count the generator was made with,
		// not itemCount; kept, so the law is YCSB's.
		z.eta = (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2/z.zetan)
	}
	u := z.r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return z.base + 1
	}
	return z.base + int64(float64(itemCount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// scrambledZipfian is YCSB's ScrambledZipfianGenerator: a Zipfian rank
// over 10¹⁰+1 items hashed (fnvHash64) onto [min, max], so that the
// popular items are spread over the key space instead of clustered at its
// start. With θ = 0.99 it uses YCSB's precomputed ζ; another θ sums ζ over
// 10¹⁰ items, as YCSB's does (minutes): use 0.99.
type scrambledZipfian struct {
	min, itemCount int64
	gen            *zipfian
}

func newScrambledZipfian(min, max int64, theta float64, r *rand.Rand) *scrambledZipfian {
	var gen *zipfian
	if theta == ZipfianConstant {
		gen = newZipfianZeta(0, scrambledItems-1, theta, scrambledZetan, r)
	} else {
		gen = newZipfian(0, scrambledItems-1, theta, r)
	}
	return &scrambledZipfian{min: min, itemCount: max - min + 1, gen: gen}
}

func (s *scrambledZipfian) clone(r *rand.Rand) *scrambledZipfian {
	c := *s
	c.gen = s.gen.clone(r)
	return &c
}

func (s *scrambledZipfian) next() int64 {
	return s.min + fnvHash64(s.gen.next())%s.itemCount
}

// skewedLatest is YCSB's SkewedLatestGenerator: the most recently inserted
// records are the most popular. Each draw is basis.last() minus a Zipfian
// rank over basis.last() items, so that it follows the insertions.
type skewedLatest struct {
	basis *ackCounter
	gen   *zipfian
}

func newSkewedLatest(basis *ackCounter, r *rand.Rand) *skewedLatest {
	return &skewedLatest{basis: basis, gen: newZipfian(0, basis.last()-1, ZipfianConstant, r)}
}

func (s *skewedLatest) clone(r *rand.Rand) *skewedLatest {
	return &skewedLatest{basis: s.basis, gen: s.gen.clone(r)}
}

func (s *skewedLatest) next() int64 {
	max := s.basis.last()
	return max - s.gen.nextN(max)
}

// ackCounter is YCSB's AcknowledgedCounterGenerator: it hands out the
// numbers of the records to insert, in order, and last returns the
// largest number below which every record has been acknowledged (written),
// so that the readers of a concurrent run never ask for a record still
// being inserted. It is shared by a run's threads.
type ackCounter struct {
	counter atomic.Int64 // the next number to hand out
	limit   atomic.Int64 // INVARIANT: every number ≤ limit has been acknowledged

	mu      sync.Mutex
	pending map[int64]bool // acknowledged numbers above limit+1
}

// newAckCounter returns a counter whose first number is start (the record
// count of the load: records 0 … start−1 exist).
func newAckCounter(start int64) *ackCounter {
	c := &ackCounter{pending: map[int64]bool{}}
	c.counter.Store(start)
	c.limit.Store(start - 1)
	return c
}

// nextValue returns the number of the next record to insert.
func (c *ackCounter) nextValue() int64 { return c.counter.Add(1) - 1 }

// last returns the largest acknowledged number with all below it too.
func (c *ackCounter) last() int64 { return c.limit.Load() }

// acknowledge records that record v has been written.
func (c *ackCounter) acknowledge(v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[v] = true
	l := c.limit.Load()
	for c.pending[l+1] {
		delete(c.pending, l+1)
		l++
	}
	c.limit.Store(l)
}

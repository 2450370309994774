package bloomkv

import (
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/sstable"
)

// memoryShares is Options.MemoryLimit divided (see its doc); all zero
// without a limit.
type memoryShares struct {
	limit       int64
	memtables   int64 // the memtables', (MaxImmutableMemtables+1)·MemtableSize
	compactions int64 // the compactions' reserve
	pinned      int64 // the planned share of what tables pin
}

// compactionMemory is what one compaction is reserved for its buffers
// under Options.MemoryLimit: an estimate, not a measure — a read window of
// 64 KiB for each of up to a dozen input tables read at once, and the
// output's write buffer, data block, index and filter keys (8 bytes per
// key of a TargetFileSize table of 64-byte entries), which
// compactionMemoryFor adds.
const compactionMemory = 1 << 20

// minMemoryLimit is the least Options.MemoryLimit: two memtables of the
// least size, a compaction's reserve, and room for the tables and cache.
const minMemoryLimit = 4 << 20

// compactionMemoryFor is the reserve of one compaction of tables of
// targetFileSize bytes.
func compactionMemoryFor(targetFileSize uint64) int64 {
	return compactionMemory + int64(targetFileSize/8)
}

// divideMemory resolves MemoryLimit into o.memory, and MemtableSize and
// BlockCacheSize from it, once the other options are resolved (withDefaults
// calls it last); memtableSet and cacheSet say whether the caller set
// those two.
func (o *Options) divideMemory(memtableSet, cacheSet bool) error {
	limit := o.MemoryLimit
	switch {
	case limit == 0:
		return nil
	case limit < minMemoryLimit:
		return argError("opts.MemoryLimit", "%d is below %d (4 MiB; 0 for no limit)", limit, minMemoryLimit)
	case cacheSet:
		return argError("opts.BlockCacheSize", "%d set with MemoryLimit, which sizes the block cache itself: set one", o.BlockCacheSize)
	case o.LevelFilters != nil:
		return argError("opts.LevelFilters", "set with MemoryLimit, which plans the filters within its share: set one")
	}
	held := int64(o.MaxImmutableMemtables + 1)
	if !memtableSet {
		// A memtable's arena passes its size by up to a chunk, 1/32 of it.
		o.MemtableSize = min(max(limit/4/held*31/32, 64<<10), 1<<30)
	}
	m := memoryShares{limit: limit, memtables: held * o.MemtableSize,
		compactions: int64(o.MaxConcurrentCompactions) * compactionMemoryFor(o.TargetFileSize)}
	if m.memtables > limit/2 {
		return argError("opts.MemtableSize", "%d bytes: %d memtables of it take %s, more than half of MemoryLimit (%s)",
			o.MemtableSize, held, humanize.Bytes(uint64(m.memtables)), humanize.Bytes(uint64(limit)))
	}
	rest := limit - m.memtables - m.compactions
	if rest < 1<<20 {
		return argError("opts.MemoryLimit", "%d leaves %d bytes for the tables and the block cache after %s of memtables and %s of compactions' buffers (MaxConcurrentCompactions %d): want at least 1 MiB",
			limit, rest, humanize.Bytes(uint64(m.memtables)), humanize.Bytes(uint64(m.compactions)), o.MaxConcurrentCompactions)
	}
	m.pinned = rest / 2
	o.memory = m
	o.BlockCacheSize = rest // until tables pin anything: see budgetLocked
	return nil
}

// memoryBudget is what the DB tracks to keep Options.MemoryLimit: the
// current version's point filters' bytes, which the filter budget leaves
// out of what the tables pin, and its entries.
type memoryBudget struct {
	filterBytes, entries atomic.Int64
}

// filterBudget is a DB's compaction.FilterBudget under MemoryLimit.
type filterBudget struct{ d *DB }

// FilterBits returns the bits the point filters of a tree of keys
// entries may take: the pinned share less what its tables pin besides
// their point filters — indexes, range filters — projected from what the
// current tables pin of those per entry to keys entries (the planner
// plans for the tree a little ahead of where it is:
// compaction.ProjectedShape), at least 0. The freed buffers the tables'
// allocator keeps for the next tables are left out: the next tables'
// buffers take them, and meanwhile they are taken from the block cache's
// part (resizeCache).
func (b filterBudget) FilterBits(keys float64) float64 {
	d := b.d
	other := float64(d.tableMemory.InUse() - d.budget.filterBytes.Load())
	if n := d.budget.entries.Load(); n > 0 {
		other = max(other, other/float64(n)*keys)
	}
	return 8 * max(float64(d.opts.memory.pinned)-other, 0)
}

// tableCost is what an open table adds to the sums the memory budget
// keeps per version (version.pinned), which a new version updates by the
// tables that came and went.
type tableCost struct {
	filterBytes int64 // its point filter's
	entries     int64
}

func (c *tableCost) add(o tableCost) {
	c.filterBytes += o.filterBytes
	c.entries += o.entries
}

func (c *tableCost) sub(o tableCost) {
	c.filterBytes -= o.filterBytes
	c.entries -= o.entries
}

// cost returns t's tableCost.
func (t *table) cost() tableCost {
	var c tableCost
	if f := t.reader.Filter(); f != nil {
		c.filterBytes = int64(f.SizeBytes())
	}
	c.entries = int64(t.meta.Entries)
	return c
}

// budgetLocked keeps MemoryLimit after v became current: it records v's
// point filters' bytes and sets the block cache's capacity to what the
// memtables' share, the compactions' reserve and what the tables pin now
// leave of the limit. d.mu is held.
func (d *DB) budgetLocked(v *version) {
	m := &d.opts.memory
	if m.limit == 0 {
		return
	}
	filters, entries := v.pinned.filterBytes, v.pinned.entries
	d.budget.filterBytes.Store(filters)
	d.budget.entries.Store(entries)
	d.resizeCache()
}

// resizeCache sets the block cache's capacity under MemoryLimit to what
// the memtables' share, the compactions' reserve and what the tables pin
// now leave of the limit: after a version is installed (budgetLocked) and
// after tables are closed (unrefVersionLocked). Without a limit it does
// nothing.
func (d *DB) resizeCache() {
	m := &d.opts.memory
	if m.limit == 0 {
		return
	}
	d.cache.SetCapacity(max(m.limit-m.memtables-m.compactions-d.tableMemory.Resident(), 0))
}

// MemoryBudgetMetrics is how the DB divides Options.MemoryLimit, each part
// in bytes against its share; all zero without a limit.
type MemoryBudgetMetrics struct {
	Limit int64
	// Memtables is the memtables' arenas (MemoryMetrics.Memtables),
	// against their fixed share MemtablesShare.
	Memtables, MemtablesShare int64
	// Pinned is what the open tables pin, against its planned share
	// PinnedShare; Filters is the point filters among it, against
	// FilterBudget, what the rest of Pinned leaves of the share, within
	// which new tables' filters are planned. PinnedKept is the freed
	// buffers of deleted tables kept for the next ones (with Pinned,
	// MemoryMetrics.Tables), which the block cache's part makes room for.
	Pinned, PinnedShare   int64
	Filters, FilterBudget int64
	PinnedKept            int64
	// BlockCache is the cache's memory (MemoryMetrics.BlockCache), against
	// its capacity now, BlockCacheCapacity: what the others leave.
	BlockCache, BlockCacheCapacity int64
	// Compactions is the compactions' reserve: MaxConcurrentCompactions
	// times an estimate of one's buffers.
	Compactions int64
}

// Total returns the parts' sum: memtables, pinned and kept, block cache
// and the compactions' reserve, the memory the limit bounds.
func (m MemoryBudgetMetrics) Total() int64 {
	return m.Memtables + m.Pinned + m.PinnedKept + m.BlockCache + m.Compactions
}

// memoryBudgetMetrics fills m.MemoryBudget from m.Memory.
func (d *DB) memoryBudgetMetrics(m *Metrics) {
	s := &d.opts.memory
	if s.limit == 0 {
		return
	}
	filters, pinned := d.budget.filterBytes.Load(), min(d.tableMemory.InUse(), m.Memory.Tables)
	m.MemoryBudget = MemoryBudgetMetrics{Limit: s.limit,
		Memtables: m.Memory.Memtables, MemtablesShare: s.memtables,
		Pinned: pinned, PinnedKept: m.Memory.Tables - pinned, PinnedShare: s.pinned,
		Filters: filters, FilterBudget: int64(filterBudget{d}.FilterBits(float64(d.budget.entries.Load())) / 8),
		BlockCache: m.Memory.BlockCache, BlockCacheCapacity: m.BlockCache.Capacity,
		Compactions: s.compactions}
}

// expectedFalsePositiveReads returns the expected data blocks a Get of an
// absent key inside every level's key range reads in vain in v: the sum
// over the runs it probes — each L0 table, one table of each deeper level
// — of their filters' expected false-positive rates, a deeper level's the
// mean of its tables' weighted by their entries (1 for a table without a
// filter), as compaction.ExpectedFalsePositiveReads sums a plan's.
func expectedFalsePositiveReads(v *version) float64 {
	rates := map[sstable.FilterSpec]float64{}
	rate := func(t *table) float64 {
		family, bits := t.meta.Filter()
		spec := sstable.FilterSpec{Family: sstable.FilterFamily(family), Bits: bits}
		r, ok := rates[spec]
		if !ok {
			r = spec.ExpectedFalsePositiveRate()
			rates[spec] = r
		}
		return r
	}
	var reads float64
	for level, tables := range v.tables {
		var sum, entries float64
		for _, t := range tables {
			if level == 0 {
				reads += rate(t)
				continue
			}
			n := float64(max(t.meta.Entries, 1))
			sum += n * rate(t)
			entries += n
		}
		if entries > 0 {
			reads += sum / entries
		}
	}
	return reads
}

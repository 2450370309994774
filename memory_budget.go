package bloomkv

import (
	"sync/atomic"
	"unsafe"

	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
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

// memtablesShareOf is the memtables' share of MemoryLimit: a quarter. A
// memtable costs more than its arena — its B-tree's items on the Go heap,
// 40 bytes an entry and as much again of the collector's room, which
// ApproximateSize's 64 bytes an entry do not cover, and which the block
// cache gives way to (resizeCache) — but smaller memtables make more L0
// tables of the same bytes, and L0 reaches its stop trigger sooner. At
// 100,000,000 keys under 128 MiB in a 512 MiB cap (the peers runner, one
// run each, 2026-12-07, the heap counted): a quarter peaked at 139.9 MiB
// of RSS, its fill never stopped (the longest write 128 ms); a sixth,
// 140.7 MiB, the fill stopped 14.8% of its time (the longest 5.98 s); an
// eighth, 137.9 MiB, 22.2%.
const memtablesShareOf = 4

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
		o.MemtableSize = min(max(limit/memtablesShareOf/held*31/32, 64<<10), 1<<30)
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
// out of what the tables pin, its entries, and what its tables hold on
// the Go heap.
type memoryBudget struct {
	filterBytes, entries atomic.Int64
	// goBase is the Go runtime's memory (goMemory) when the DB opened;
	// goGrowth what it had grown by when the cache was last resized, at
	// least the tables' heap parts (resizeCache).
	goBase   int64
	goGrowth atomic.Int64
	// rangeDelBytes and handleBytes are the version's tables' (tableCost).
	rangeDelBytes, handleBytes atomic.Int64
}

// filterBudget is a DB's compaction.FilterBudget under MemoryLimit.
type filterBudget struct{ d *DB }

// FilterBits returns the bits the point filters of a tree of keys
// entries may take: the pinned share less what its tables pin besides
// their point filters — indexes, range filters, and on the Go heap their
// range tombstones and the table cache's structures and handles
// (tablesHeapBytes) — projected from what the current tables pin of those
// per entry to keys entries (the planner
// plans for the tree a little ahead of where it is:
// compaction.ProjectedShape), at least 0. The freed buffers the tables'
// allocator keeps for the next tables are left out: the next tables'
// buffers take them, and meanwhile they are taken from the block cache's
// part (resizeCache).
//
// The tables already written keep the filters they were planned with:
// for a smaller tree, or, while a fill outruns its compactions, for
// levels holding several times their targets, whose tables the plan
// gives the bits of the levels' settled sizes. So the filters in use can
// pass what the share leaves them now — at 100,000,000 keys under 128
// MiB, during the fill, the tables pinned 100.7 MiB against a share of
// 47.2 — and then the budget of the tables written next is lowered by that
// excess, down to half, until the tables written before are rewritten: a
// feedback that brings what the filters take back within the share (with
// it, and the tables planned for the shape the tree has, PlanForLevel,
// they peaked at 50.9 MiB, the share and the freed buffers kept in it).
func (b filterBudget) FilterBits(keys float64) float64 {
	filters, other := b.pinned()
	share := float64(b.d.opts.memory.pinned)
	budget := share - other
	if n := b.d.budget.entries.Load(); n > 0 {
		budget = share - max(other, other/float64(n)*keys)
	}
	budget = max(budget, 0)
	if excess := filters - max(share-other, 0); excess > 0 {
		budget = max(budget-excess, budget/2)
	}
	return 8 * budget
}

// pinned returns what the current tables pin: their point filters' bytes,
// and the bytes of the rest — indexes and range filters off the heap,
// range tombstones and the table cache's structures and handles on it.
func (b filterBudget) pinned() (filters, other float64) {
	d := b.d
	rangeDels, handles := d.tablesHeapBytes()
	filters = float64(d.budget.filterBytes.Load())
	return filters, float64(d.tableMemory.InUse()) - filters + float64(rangeDels+handles)
}

// Overspent reports whether the filters in use pass what the pinned share
// leaves them now.
func (b filterBudget) Overspent() bool {
	filters, other := b.pinned()
	return filters > max(float64(b.d.opts.memory.pinned)-other, 0)
}

// tableCost is what an open table adds to the sums the memory budget
// keeps per version (version.pinned), which a new version updates by the
// tables that came and went.
type tableCost struct {
	filterBytes int64 // its point filter's
	entries     int64
	// rangeDelBytes and handleBytes are what the table holds on the Go
	// heap for its life: rangeDelBytesOf its range tombstones, and
	// tableHeapBytes.
	rangeDelBytes, handleBytes int64
}

func (c *tableCost) add(o tableCost) {
	c.filterBytes += o.filterBytes
	c.entries += o.entries
	c.rangeDelBytes += o.rangeDelBytes
	c.handleBytes += o.handleBytes
}

func (c *tableCost) sub(o tableCost) {
	c.filterBytes -= o.filterBytes
	c.entries -= o.entries
	c.rangeDelBytes -= o.rangeDelBytes
	c.handleBytes -= o.handleBytes
}

// cost returns t's tableCost in level.
func (t *table) cost(level int) tableCost {
	c := tableCost{entries: int64(t.meta.Entries), rangeDelBytes: rangeDelBytesOf(t.reader.RangeDels(), level > 0), handleBytes: tableHeapBytes(t)}
	if f := t.reader.Filter(); f != nil {
		c.filterBytes = int64(f.SizeBytes())
	}
	return c
}

// rangeDelBytesOf is what a table's range tombstones l hold on the Go heap:
// sstable.Open decodes them for the table's life into fragments whose keys
// point into the block read (its bytes are about the keys' and the
// seqnums' varints) and whose seqnums are slices of their own; and, for a
// table of L1 or below (inLevelList), the level's list of them end to end
// that iterators build (version.rangeDels), a second Fragment per
// fragment, sharing the keys and seqnums. L0's tables have no such list:
// iterators take each table's own. An estimate of the objects' sizes, not
// a measure: TestTableHeapAccounted checks it against the heap.
func rangeDelBytesOf(l rangedel.List, inLevelList bool) int64 {
	fragments := int64(1)
	if inLevelList {
		fragments = 2
	}
	var n int64
	for _, f := range l {
		n += fragments*int64(unsafe.Sizeof(f)) + int64(len(f.Start)+len(f.End)) + 8*int64(len(f.Seqs)) + 4
	}
	return n
}

// tableHeapBytes is what an open table holds on the Go heap besides its
// range tombstones, for the table cache and the versions: its table,
// tableFile and sstable.Reader structs with its path and properties, its
// metadata in the manifest's version and index, its probe and its place
// in a version's slices, and its bounds three times (the metadata's, the
// properties', the level's packed bounds). Its filter and index are off
// the heap, in what the tables pin (MemoryMetrics.Tables); its file
// handle, when the table cache holds one, is fileHandleBytes. An estimate
// of the objects' sizes, as rangeDelBytesOf.
func tableHeapBytes(t *table) int64 {
	const fixed = unsafe.Sizeof(table{}) + unsafe.Sizeof(tableFile{}) + unsafe.Sizeof(sstable.Reader{}) +
		unsafe.Sizeof(manifest.FileMetadata{}) + unsafe.Sizeof(tableProbe{}) +
		8 + // the version's slice of tables
		64 + // the index's entry and its share of its B-tree's nodes
		24 // the level bounds' words and ends
	keys := len(t.meta.Smallest.UserKey) + len(t.meta.Largest.UserKey)
	return int64(fixed) + int64(len(t.file.path)) + 3*int64(keys+16)
}

// fileHandleBytes is what an open file handle of the table cache holds on
// the Go heap: its tableHandle and the vfs.File, for an *os.File its
// struct and poll.FD (the descriptor's kernel memory is not the
// process's).
const fileHandleBytes = int64(unsafe.Sizeof(tableHandle{})) + 256

// tablesHeapBytes returns what the open tables of the current version and
// the table cache's handles hold on the Go heap now: the last version's
// sums (budgetLocked), and fileHandleBytes per handle open.
func (d *DB) tablesHeapBytes() (rangeDels, handles int64) {
	return d.budget.rangeDelBytes.Load(), d.budget.handleBytes.Load() + int64(d.tableCache.stats().open)*fileHandleBytes
}

// budgetLocked keeps MemoryLimit after v became current: it records v's
// point filters' bytes, entries and heap bytes (version.pinned) and sets the block cache's capacity to what the
// memtables' share, the compactions' reserve and what the tables pin now
// leave of the limit. d.mu is held.
func (d *DB) budgetLocked(v *version) {
	m := &d.opts.memory
	if m.limit == 0 {
		return
	}
	d.budget.filterBytes.Store(v.pinned.filterBytes)
	d.budget.entries.Store(v.pinned.entries)
	d.budget.rangeDelBytes.Store(v.pinned.rangeDelBytes)
	d.budget.handleBytes.Store(v.pinned.handleBytes)
	d.resizeCache()
}

// resizeCache sets the block cache's capacity under MemoryLimit to what
// the memtables' share, the compactions' reserve, what the tables pin now
// off the heap, and the Go runtime's growth since Open leave of the
// limit: after a version is installed (budgetLocked) and after tables are
// closed (unrefVersionLocked). Without a limit it does nothing.
//
// The growth is measured, not estimated: the DB's objects on the Go heap
// — the tables' (tablesHeapBytes), the memtables' B-trees, a
// compaction's filter keys, the cache's entries — cost what the collector
// lets the heap grow to around them, about twice what it holds live at
// GOGC=100, and at 100,000,000 keys under a 128 MiB limit that was 52 MiB
// of heap beside the limit's 128 (docs/memory-limit.md). Counted here,
// the block cache gives way to it, as it does to the tables. The growth
// is at least the tables' own estimate, so that a collection that has
// just run does not hand their part to the cache.
func (d *DB) resizeCache() {
	m := &d.opts.memory
	if m.limit == 0 {
		return
	}
	rangeDels, handles := d.tablesHeapBytes()
	growth := max(goMemory()-d.budget.goBase, rangeDels+handles)
	d.budget.goGrowth.Store(growth)
	d.cache.SetCapacity(max(m.limit-m.memtables-m.compactions-d.tableMemory.Resident()-growth, 0))
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
	// buffers of deleted tables kept for the next ones (with Pinned but
	// its heap parts, MemoryMetrics.Tables), which the block cache's part
	// makes room for.
	Pinned, PinnedShare   int64
	Filters, FilterBudget int64
	PinnedKept            int64
	// RangeDels and TableHandles are the parts of Pinned on the Go heap
	// (in MemoryMetrics.GoHeapObjects, not Tables): the range tombstones
	// the tables hold decoded for their lives, with the levels' lists of
	// them, and the table cache's — each open table's reader, file and
	// metadata structs, each open file handle's. Estimates of the
	// objects' sizes (TestTableHeapAccounted checks them against the
	// heap), counted with the current version's tables.
	RangeDels, TableHandles int64
	// BlockCache is the cache's memory (MemoryMetrics.BlockCache), against
	// its capacity now, BlockCacheCapacity: what the others leave.
	BlockCache, BlockCacheCapacity int64
	// Compactions is the compactions' reserve: MaxConcurrentCompactions
	// times an estimate of one's buffers.
	Compactions int64
	// GoHeap is what the Go runtime's memory (MemoryMetrics' Go parts)
	// had grown by since Open, when the block cache was last resized,
	// beyond RangeDels and TableHandles: the DB's other objects on the
	// heap — the memtables' B-trees, the compactions' filter keys, the
	// cache's entries — and the room the collector lets the heap take
	// around them, with whatever the application allocated meanwhile,
	// which the DB cannot tell apart. The block cache gives way to it:
	// Total plus GoHeap is within Limit while the cache has room to give.
	GoHeap int64
}

// Total returns the DB's parts' sum: memtables, pinned and kept, block
// cache and the compactions' reserve, at most Limit. GoHeap is beside it.
func (m MemoryBudgetMetrics) Total() int64 {
	return m.Memtables + m.Pinned + m.PinnedKept + m.BlockCache + m.Compactions
}

// memoryBudgetMetrics fills m.MemoryBudget from m.Memory.
func (d *DB) memoryBudgetMetrics(m *Metrics) {
	s := &d.opts.memory
	if s.limit == 0 {
		return
	}
	filters, offHeap := d.budget.filterBytes.Load(), min(d.tableMemory.InUse(), m.Memory.Tables)
	rangeDels, handles := d.tablesHeapBytes()
	m.MemoryBudget = MemoryBudgetMetrics{Limit: s.limit,
		Memtables: m.Memory.Memtables, MemtablesShare: s.memtables,
		Pinned: offHeap + rangeDels + handles, PinnedKept: m.Memory.Tables - offHeap, PinnedShare: s.pinned,
		RangeDels: rangeDels, TableHandles: handles,
		Filters: filters, FilterBudget: int64(filterBudget{d}.FilterBits(float64(d.budget.entries.Load())) / 8),
		BlockCache: m.Memory.BlockCache, BlockCacheCapacity: m.BlockCache.Capacity,
		Compactions: s.compactions, GoHeap: max(d.budget.goGrowth.Load()-rangeDels-handles, 0)}
}

// expectedFalsePositiveReads returns the expected data blocks a Get of an
// absent key inside every level's key range reads in vain in v: the sum
// over the runs it probes — each L0 table, one table of each deeper level
// — of their filters' expected false-positive rates, a deeper level's the
// mean of its tables' weighted by their entries (1 for a table without a
// filter), as compaction.ExpectedFalsePositiveReads sums a plan's.
func expectedFalsePositiveReads(v *version) float64 {
	var reads float64
	for level, tables := range v.tables {
		var sum, entries float64
		for _, t := range tables {
			if level == 0 {
				reads += t.fpr
				continue
			}
			n := float64(max(t.meta.Entries, 1))
			sum += n * t.fpr
			entries += n
		}
		if entries > 0 {
			reads += sum / entries
		}
	}
	return reads
}

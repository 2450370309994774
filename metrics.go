package bloomkv

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// LevelMetrics are one level's tables and what point lookups and prefix
// seeks did there.
type LevelMetrics struct {
	Tables int
	Bytes  uint64
	// RangeDels counts the range tombstones in the level's tables, one
	// per fragment and seqnum (a DeleteRange split at table boundaries or
	// cut by others counts once per piece).
	RangeDels uint64
	// TargetSize is the size compaction keeps the level at (levels 1–5:
	// see Options.LevelSizing); 0 for L0, which is bounded by its table
	// count, for the last level, and for levels above the base level,
	// which stay empty.
	TargetSize uint64
	// Score is the level's compaction score: tables over
	// L0CompactionTrigger for L0, Bytes over TargetSize for the others; a
	// level at 1 or more is due for compaction.
	Score float64
	// Entries counts the entries of the level's tables (every version and
	// tombstone), as the manifest records them.
	Entries uint64
	// FilterBitsPerKey is what the level's filters spend per entry: their
	// bits over Entries (see manifest.FilterBitsPerKey), so that
	// FilterBitsPerKey weighted by Entries, summed over the levels, is the
	// bits the tree's filters spend.
	FilterBitsPerKey float64

	// TableProbes counts tables whose key range held a looked-up key: the
	// tables a lookup had to consider.
	TableProbes uint64
	// FilterChecks counts TableProbes answered by a filter first.
	FilterChecks uint64
	// FilterNegatives counts filter checks that ruled the key out: each is
	// a data-block read avoided.
	FilterNegatives uint64
	// FilterPositives counts filter checks that said "maybe".
	FilterPositives uint64
	// TruePositives counts filter positives where the table did hold the
	// key, at some sequence number; the rest are false positives. A table
	// holding only versions newer than a snapshot's read answers that read
	// with nothing, but its filter was right: it is built over user keys.
	TruePositives uint64
	// PagedFilterNegatives counts the false positives (filter positives
	// where the table lacked the key) that the tables' paged filters then
	// ruled out: each a data-block read avoided for a page of the paged
	// filter, FilterPagesFromFile read from the file and
	// FilterPagesFromCache found in the block cache (Options.
	// DisablePagedFilters).
	PagedFilterNegatives                      uint64
	FilterPagesFromFile, FilterPagesFromCache uint64
	// BlocksFromFile and BlocksFromCache count the data blocks lookups read.
	BlocksFromFile, BlocksFromCache uint64
	// BytesRead counts bytes lookups read from the level's files.
	BytesRead uint64

	// PrefixProbes counts the tables prefix seeks (Iterator.SeekPrefixGE)
	// had to consider, those whose key range overlaps the prefix's keys:
	// each such L0 table once per seek, decided when it starts, and a
	// deeper level's tables each time a move of the seek's iterator
	// reaches them. Each is skipped or sought.
	PrefixProbes uint64
	// PrefixFilterNegatives counts prefix probes whose filter ruled the
	// prefix out: tables neither opened nor sought.
	PrefixFilterNegatives uint64
	// PrefixSought counts the other prefix probes: tables opened and
	// sought, because their filter said "maybe" for the prefix, or cannot
	// answer for prefixes (no filter, or one written without
	// Options.Prefix or under an extractor of another Name).
	PrefixSought uint64

	// RangeFilterChecks counts the tables with a range filter that
	// range scans of iterators (see Options.RangeFilterBits) asked, of
	// those whose key range overlaps the move's range: each such L0
	// table once per move, a deeper level's each time a move reaches it.
	// RangeFilterNegatives counts the checks that ruled the range out:
	// tables neither opened nor sought.
	RangeFilterChecks, RangeFilterNegatives uint64

	// CompactionBytesRead counts bytes of the level's tables compactions
	// read; CompactionBytesWritten bytes of tables flushes (L0) and
	// compactions wrote into the level.
	CompactionBytesRead, CompactionBytesWritten uint64
}

// Plus returns the sum of l and o, counter by counter; FilterBitsPerKey is
// left at l's.
func (l LevelMetrics) Plus(o LevelMetrics) LevelMetrics {
	l.Tables += o.Tables
	l.Bytes += o.Bytes
	l.Entries += o.Entries
	l.RangeDels += o.RangeDels
	l.TableProbes += o.TableProbes
	l.FilterChecks += o.FilterChecks
	l.FilterNegatives += o.FilterNegatives
	l.FilterPositives += o.FilterPositives
	l.TruePositives += o.TruePositives
	l.PagedFilterNegatives += o.PagedFilterNegatives
	l.FilterPagesFromFile += o.FilterPagesFromFile
	l.FilterPagesFromCache += o.FilterPagesFromCache
	l.BlocksFromFile += o.BlocksFromFile
	l.BlocksFromCache += o.BlocksFromCache
	l.BytesRead += o.BytesRead
	l.PrefixProbes += o.PrefixProbes
	l.PrefixFilterNegatives += o.PrefixFilterNegatives
	l.PrefixSought += o.PrefixSought
	l.RangeFilterChecks += o.RangeFilterChecks
	l.RangeFilterNegatives += o.RangeFilterNegatives
	l.CompactionBytesRead += o.CompactionBytesRead
	l.CompactionBytesWritten += o.CompactionBytesWritten
	return l
}

// FalsePositives returns the filter positives where the table held no
// version of the key at all.
func (l LevelMetrics) FalsePositives() uint64 { return l.FilterPositives - l.TruePositives }

// FalsePositiveRate is the measured rate: false positives over the checks
// of keys the table lacked. It is 0 before any such check.
func (l LevelMetrics) FalsePositiveRate() float64 {
	absent := l.FilterNegatives + l.FalsePositives()
	if absent == 0 {
		return 0
	}
	return float64(l.FalsePositives()) / float64(absent)
}

// NumLevels is the number of levels of the tree, L0 to L6: the length of
// Metrics.Levels, and the most entries Options.LevelFilters and
// Options.RangeFilterBits take.
const NumLevels = manifest.NumLevels

// Metrics is a snapshot of a DB's counters.
type Metrics struct {
	Levels [NumLevels]LevelMetrics

	Gets         uint64 // Get calls
	MemtableHits uint64 // Gets answered by a memtable
	PrefixSeeks  uint64 // Iterator.SeekPrefixGE calls (see LevelMetrics.PrefixProbes)
	// RangeScans counts the range scans — moves of an Iterator bounded on
	// both sides — that asked range filters (see
	// LevelMetrics.RangeFilterChecks).
	RangeScans uint64
	// RangeScansUnfiltered counts the range scans that asked no range
	// filter because recent checks rarely ruled their range out (see
	// Options.RangeFilterBits).
	RangeScansUnfiltered uint64
	Writes               uint64 // sets, deletes and range deletions committed
	Batches              uint64 // batches committed (a Put is a batch of one)

	WALBytes uint64 // bytes appended to WALs
	WALSyncs uint64 // WAL fsyncs; with group commit, often fewer than Batches

	Flushes           uint64
	Compactions       uint64
	TombstonesDropped uint64 // by compactions at the bottom of the tree
	// MergesFoldedByReads counts the merge operands reads folded into
	// the values they returned (a read of a key with n operands above its
	// base counts n), MergesFoldedByCompactions those compactions folded
	// into a value or one operand (see Merger).
	MergesFoldedByReads, MergesFoldedByCompactions uint64
	// ExpiredDropped counts the versions whose time-to-live had ended
	// that compactions dropped (docs/ttl.md): their values gone, each
	// replaced by a tombstone where one was still needed.
	ExpiredDropped uint64
	// TxnConflicts counts the transactions whose Commit failed with
	// ErrConflict, writing nothing (an Update that retries counts each).
	TxnConflicts uint64
	// Ingests counts the DB.Ingest calls that added tables, and
	// TablesIngested and BytesIngested the tables they added and their
	// files' bytes, which no WAL, flush or compaction wrote.
	Ingests, TablesIngested, BytesIngested uint64
	MemtableBytes                          int64 // bytes in the mutable memtable: its usage (Options.MemtableSize is its capacity)
	ImmutableMemtables                     int   // full memtables waiting for their flush
	CompactionPending                      bool  // a compaction is running, or the levels' sizes or the blob files' dead shares call for one
	// CompactionsInProgress is the number of compactions running now (at
	// most Options.MaxConcurrentCompactions).
	CompactionsInProgress int
	// BaseLevel is the level L0 compacts into: 1 under StaticLevelSizing;
	// under DynamicLevelSizing the shallowest level the tree's size calls
	// for (see LevelSizing), 6 while the tree holds less than a base
	// level's worth of data.
	BaseLevel int
	// WriteStalls and WriteStallDuration count the write groups that
	// waited for a flush or compaction (memtables full, L0 at its stop
	// trigger) and the time they waited.
	WriteStalls        uint64
	WriteStallDuration time.Duration
	// WriteDelays and WriteDelayDuration count the write groups paced
	// while L0 is past its slowdown trigger, each held 5 ms or more, and
	// the time they were held (see Options.L0SlowdownTrigger).
	WriteDelays        uint64
	WriteDelayDuration time.Duration
	BlockCache         CacheMetrics
	FilterMemory       uint64 // bytes of filters held in memory, range filters included
	// IndexMemory is the bytes of the tables' indexes held in memory
	// (sstable.Reader.IndexMemory): whole indexes, and of a partitioned
	// one (Options.IndexPartitionSize) only the top level, its partitions
	// being read through the block cache.
	IndexMemory         uint64
	ObsoleteFilesPurged uint64
	// ObsoleteFilesPending counts the files proven obsolete and not yet
	// deleted: the DB deletes them in a goroutine of its own, a moment
	// later. A measure of the directory's size wants it 0.
	ObsoleteFilesPending int
	TableCache           TableCacheMetrics
	// BackgroundErrors counts failed flushes, compactions, WAL writes and
	// manifest updates (see EventListener.BackgroundError).
	BackgroundErrors uint64
	// Memory accounts for the process's memory: the DB's own off the Go
	// heap, and the Go runtime's.
	Memory MemoryMetrics
	// MemoryBudget is how the DB divides Options.MemoryLimit, each part
	// against its share; zero without a limit.
	MemoryBudget MemoryBudgetMetrics
	// ExpectedFalsePositiveReads is the expected data blocks a Get of an
	// absent key inside every level's key range reads in vain, from the
	// filters the tables have: the sum over the runs it probes of their
	// expected false-positive rates (each L0 table's, each deeper level's
	// mean over its tables by entries). Under MemoryLimit, what the
	// filters' share buys. In a table with a paged filter
	// (Options.DisablePagedFilters) such a false positive reads a page of
	// it instead, and a data block only where the page passes the key too
	// (LevelMetrics.PagedFilterNegatives counts those it did not).
	ExpectedFalsePositiveReads float64
	// Blobs describe the blob files of separated values
	// (Options.ValueSeparation).
	Blobs BlobMetrics
}

// BlobMetrics describe the blob files: those of the current version, and
// the bytes written to and read from blob files since Open.
type BlobMetrics struct {
	Files uint64 // blob files of the current version
	// Bytes is their size on disk; ValueBytes the bytes of the values they
	// hold as stored (compressed where that saved an eighth: see
	// ValueSeparation), LiveBytes those the tables reference and DeadBytes
	// the rest, which reclaiming relocates and deletes
	// (ValueSeparation.DeadShare).
	Bytes, ValueBytes, LiveBytes, DeadBytes uint64
	// BytesWritten counts the bytes of blob files written — their records
	// as stored, compressed or not, and footers — by flushes and by the
	// compactions that relocate values; Reads and BytesRead the
	// values read and the bytes of their records as stored — compressed
	// bytes for a compressed value, not the value's length.
	BytesWritten, Reads, BytesRead uint64
}

// CacheMetrics describe the block cache: what it holds against its
// capacity (Options.BlockCacheSize), and how lookups found their blocks.
// It is the DB's own type, so that Metrics shows no internal one; the
// block cache's counters are copied into it.
type CacheMetrics struct {
	Hits   uint64 // block reads served from the cache
	Misses uint64 // block reads that went to the file
	// Rejected counts the misses of point lookups (Get, MultiGet) whose
	// blocks the cache did not admit: read, used and not cached, as the
	// shard had no room and no lookup had missed the block lately.
	Rejected uint64
	Blocks   int   // blocks held
	Bytes    int64 // bytes held, counting each block's whole buffer
	Capacity int64 // bytes it may hold; 0 when the cache is disabled
}

// cacheMetrics copies the block cache's counters into CacheMetrics.
func cacheMetrics(m cache.Metrics) CacheMetrics {
	return CacheMetrics{Hits: m.Hits, Misses: m.Misses, Rejected: m.Rejected, Blocks: m.Blocks, Bytes: m.Bytes, Capacity: m.Capacity}
}

// TableCacheMetrics describe the table cache: the open file handles of the
// tables (at most Options.MaxOpenFiles), and how reads found them.
type TableCacheMetrics struct {
	OpenFiles int    // table files open now
	Hits      uint64 // reads that found their table's file open
	Misses    uint64 // reads that opened it
	Evictions uint64 // files closed to make room
}

// WriteAmplification is the bytes written to tables (flushes and
// compactions) per byte written to the WAL: how many times the store
// rewrites what it is given. 0 before any write.
func (m Metrics) WriteAmplification() float64 {
	if m.WALBytes == 0 {
		return 0
	}
	var written uint64
	for _, l := range m.Levels {
		written += l.CompactionBytesWritten
	}
	return float64(written) / float64(m.WALBytes)
}

// levelCounters are LevelMetrics' live, atomic lookup counters.
type levelCounters struct {
	probes, filterChecks, filterNegatives, filterPositives, truePositives atomic.Uint64
	blocksFromFile, blocksFromCache, bytesRead                            atomic.Uint64
	prefixProbes, prefixNegatives, prefixSought                           atomic.Uint64
	rangeChecks, rangeNegatives                                           atomic.Uint64
	pagedNegatives, pagesFromFile, pagesFromCache                         atomic.Uint64
}

// recordRange adds a range scan's check of one table's range filter:
// sought, or skipped.
func (c *levelCounters) recordRange(sought bool) {
	c.rangeChecks.Add(1)
	if !sought {
		c.rangeNegatives.Add(1)
	}
}

// recordPrefix adds a prefix seek's decision on one table: sought, or
// skipped by its filter.
func (c *levelCounters) recordPrefix(sought bool) {
	c.prefixProbes.Add(1)
	if sought {
		c.prefixSought.Add(1)
	} else {
		c.prefixNegatives.Add(1)
	}
}

// record adds one table lookup's outcome. A filter's "maybe" is a true
// positive when the table holds the user key at any sequence number
// (s.KeyPresent), found by the read or not, as TraceStep.FalsePositive
// decides it too.
func (c *levelCounters) record(s *sstable.LookupStats) {
	c.probes.Add(1)
	if s.FilterChecked {
		c.filterChecks.Add(1)
		switch {
		case s.FilterNegative:
			c.filterNegatives.Add(1)
		case s.KeyPresent:
			c.filterPositives.Add(1)
			c.truePositives.Add(1)
		default:
			c.filterPositives.Add(1)
		}
	}
	if s.PagedFilterNegative {
		c.pagedNegatives.Add(1)
	}
	if s.FilterPagesRead > 0 {
		c.pagesFromFile.Add(uint64(s.FilterPagesRead))
	}
	if s.FilterPagesCached > 0 {
		c.pagesFromCache.Add(uint64(s.FilterPagesCached))
	}
	c.recordBlocks(s)
}

// recordBlocks adds the data blocks a table lookup read: all record
// counts of a lookup that went back to a table it has probed, for the
// versions below a merge operand it found there.
func (c *levelCounters) recordBlocks(s *sstable.LookupStats) {
	if s.BlocksRead > 0 {
		c.blocksFromFile.Add(uint64(s.BlocksRead))
		c.bytesRead.Add(uint64(s.BytesRead))
	}
	if s.BlocksCached > 0 {
		c.blocksFromCache.Add(uint64(s.BlocksCached))
	}
}

func (c *levelCounters) load(l *LevelMetrics) {
	l.TableProbes = c.probes.Load()
	l.FilterChecks = c.filterChecks.Load()
	l.FilterNegatives = c.filterNegatives.Load()
	l.FilterPositives = c.filterPositives.Load()
	l.TruePositives = c.truePositives.Load()
	l.PagedFilterNegatives = c.pagedNegatives.Load()
	l.FilterPagesFromFile = c.pagesFromFile.Load()
	l.FilterPagesFromCache = c.pagesFromCache.Load()
	l.BlocksFromFile = c.blocksFromFile.Load()
	l.BlocksFromCache = c.blocksFromCache.Load()
	l.BytesRead = c.bytesRead.Load()
	l.PrefixProbes = c.prefixProbes.Load()
	l.PrefixFilterNegatives = c.prefixNegatives.Load()
	l.PrefixSought = c.prefixSought.Load()
	l.RangeFilterChecks = c.rangeChecks.Load()
	l.RangeFilterNegatives = c.rangeNegatives.Load()
}

// dbCounters are the DB-wide live counters.
type dbCounters struct {
	levels                              [manifest.NumLevels]levelCounters
	gets, memtableHits, writes, batches atomic.Uint64
	prefixSeeks, rangeScans             atomic.Uint64
	walBytes, walSyncs, flushes         atomic.Uint64
	stalls, stallNanos, obsoletePurged  atomic.Uint64
	delays, delayNanos                  atomic.Uint64
	backgroundErrors                    atomic.Uint64
	compactions                         compactionCounters
	mergesFoldedByReads                 atomic.Uint64
	ingests, tablesIngested             atomic.Uint64
	bytesIngested                       atomic.Uint64

	// rangeScansUnpaid counts the range scans made while range filters
	// did not pay (see narrowRange): all but every rangeSampleEvery-th
	// asked no filter.
	rangeScansUnpaid atomic.Uint64
	// rangeSought is the recent share of range-filter checks that said
	// "maybe", in units of 1/rangeShareOne (noteRangeCheck); zero, as a
	// new DB starts, says the filters rule every range out.
	rangeSought atomic.Uint32
}

// compactionCounters count the work of flushes and compactions.
type compactionCounters struct {
	count, tombstonesDropped atomic.Uint64
	mergesFolded             atomic.Uint64
	expiredDropped           atomic.Uint64
	bytesRead, bytesWritten  [manifest.NumLevels]atomic.Uint64
	// bytesFlushed counts the bytes of the tables flushes wrote: L0's
	// bytesWritten less what intra-L0 compactions rewrote.
	bytesFlushed atomic.Uint64
}

// String renders the metrics as aligned tables.
func (m Metrics) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\ttables\tsize\trange dels\tbits/key\tprobes\tfilter no\tfilter maybe\ttrue pos\tFPR\tprefix no\tprefix sought\trange checks\trange no\tblocks file\tblocks cache\tread\tcompact in\tcompact out\t")
	var total LevelMetrics
	var bits float64 // the tree's filter bits
	for i, l := range m.Levels {
		if l.Tables == 0 && l.TableProbes == 0 && l.PrefixProbes == 0 && l.RangeFilterChecks == 0 {
			continue
		}
		fmt.Fprintf(tw, "L%d\t%d\t%s\t%d\t%.1f\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t\n", i, l.Tables, humanize.Bytes(l.Bytes), l.RangeDels,
			l.FilterBitsPerKey, l.TableProbes, l.FilterNegatives, l.FilterPositives, l.TruePositives,
			percent(l.FalsePositiveRate()), l.PrefixFilterNegatives, l.PrefixSought, l.RangeFilterChecks, l.RangeFilterNegatives,
			l.BlocksFromFile, l.BlocksFromCache, humanize.Bytes(l.BytesRead),
			humanize.Bytes(l.CompactionBytesRead), humanize.Bytes(l.CompactionBytesWritten))
		total = total.Plus(l)
		bits += l.FilterBitsPerKey * float64(l.Entries)
	}
	totalBits := ""
	if total.Entries > 0 {
		totalBits = fmt.Sprintf("%.1f", bits/float64(total.Entries))
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t\n", total.Tables, humanize.Bytes(total.Bytes), total.RangeDels, totalBits,
		total.TableProbes, total.FilterNegatives, total.FilterPositives, total.TruePositives,
		percent(total.FalsePositiveRate()), total.PrefixFilterNegatives, total.PrefixSought, total.RangeFilterChecks, total.RangeFilterNegatives,
		total.BlocksFromFile, total.BlocksFromCache, humanize.Bytes(total.BytesRead),
		humanize.Bytes(total.CompactionBytesRead), humanize.Bytes(total.CompactionBytesWritten))
	tw.Flush()

	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gets\t%d\tmemtable hits\t%d\n", m.Gets, m.MemtableHits)
	fmt.Fprintf(tw, "prefix seeks\t%d\ttables skipped/sought\t%d/%d\n", m.PrefixSeeks, total.PrefixFilterNegatives, total.PrefixSought)
	fmt.Fprintf(tw, "range scans\t%d (%d unfiltered)\ttables skipped/checked\t%d/%d\n", m.RangeScans, m.RangeScansUnfiltered, total.RangeFilterNegatives, total.RangeFilterChecks)
	fmt.Fprintf(tw, "writes\t%d\tbatches\t%d\n", m.Writes, m.Batches)
	fmt.Fprintf(tw, "WAL\t%s\tsyncs\t%d\n", humanize.Bytes(m.WALBytes), m.WALSyncs)
	if bm := m.Blobs; bm.Files > 0 || bm.BytesWritten > 0 {
		fmt.Fprintf(tw, "blob files\t%d, %s (%s live, %s dead)\twritten/read\t%s/%s\n", bm.Files, humanize.Bytes(bm.Bytes),
			humanize.Bytes(bm.LiveBytes), humanize.Bytes(bm.DeadBytes), humanize.Bytes(bm.BytesWritten), humanize.Bytes(bm.BytesRead))
	}
	fmt.Fprintf(tw, "memtable\t%s\timmutable\t%d\n", humanize.Bytes(uint64(m.MemtableBytes)), m.ImmutableMemtables)
	fmt.Fprintf(tw, "flushes\t%d\twrite stalls\t%d (%v)\n", m.Flushes, m.WriteStalls, m.WriteStallDuration)
	fmt.Fprintf(tw, "write delays\t%d (%v)\tbase level\tL%d\n", m.WriteDelays, m.WriteDelayDuration, m.BaseLevel)
	fmt.Fprintf(tw, "compactions\t%d (%d running)\twrite amplification\t%.2f\n", m.Compactions, m.CompactionsInProgress, m.WriteAmplification())
	if m.MergesFoldedByReads > 0 || m.MergesFoldedByCompactions > 0 {
		fmt.Fprintf(tw, "merges folded by reads\t%d\tby compactions\t%d\n", m.MergesFoldedByReads, m.MergesFoldedByCompactions)
	}
	if m.TxnConflicts > 0 || m.ExpiredDropped > 0 {
		fmt.Fprintf(tw, "transaction conflicts\t%d\texpired versions dropped\t%d\n", m.TxnConflicts, m.ExpiredDropped)
	}
	if m.Ingests > 0 {
		fmt.Fprintf(tw, "ingests\t%d\ttables ingested\t%d, %s\n", m.Ingests, m.TablesIngested, humanize.Bytes(m.BytesIngested))
	}
	fmt.Fprintf(tw, "block cache\t%s of %s\thits/misses (not cached)\t%d/%d (%d)\n", humanize.Bytes(uint64(m.BlockCache.Bytes)),
		humanize.Bytes(uint64(m.BlockCache.Capacity)), m.BlockCache.Hits, m.BlockCache.Misses, m.BlockCache.Rejected)
	fmt.Fprintf(tw, "filter memory\t%s\tobsolete files purged\t%d\n", humanize.Bytes(m.FilterMemory), m.ObsoleteFilesPurged)
	fmt.Fprintf(tw, "index memory\t%s\t\t\n", humanize.Bytes(m.IndexMemory))
	fmt.Fprintf(tw, "expected false-positive reads\t%.4f per absent-key Get\t\t\n", m.ExpectedFalsePositiveReads)
	if total.FilterPagesFromFile > 0 || total.FilterPagesFromCache > 0 {
		fmt.Fprintf(tw, "paged filter pages\t%d file, %d cache\tfalse positives ruled out\t%d\n", total.FilterPagesFromFile, total.FilterPagesFromCache, total.PagedFilterNegatives)
	}
	if mb := m.MemoryBudget; mb.Limit > 0 {
		by := func(n int64) string { return humanize.Bytes(uint64(max(n, 0))) }
		fmt.Fprintf(tw, "memory limit\t%s\tmemtables %s of %s, tables %s (+%s kept) of %s (filters %s of %s, range tombstones %s, handles %s), block cache %s of %s, compactions %s reserved, Go heap grown %s\n",
			by(mb.Limit), by(mb.Memtables), by(mb.MemtablesShare), by(mb.Pinned), by(mb.PinnedKept), by(mb.PinnedShare), by(mb.Filters), by(mb.FilterBudget),
			by(mb.RangeDels), by(mb.TableHandles), by(mb.BlockCache), by(mb.BlockCacheCapacity), by(mb.Compactions), by(mb.GoHeap))
	}
	mm := &m.Memory
	fmt.Fprintf(tw, "memory\t%s\tmemtables %s, tables %s, block cache %s; Go heap %s + %s free, stacks %s, runtime %s\n",
		humanize.Bytes(uint64(mm.Total())), humanize.Bytes(uint64(mm.Memtables)), humanize.Bytes(uint64(mm.Tables)),
		humanize.Bytes(uint64(mm.BlockCache)), humanize.Bytes(uint64(mm.GoHeapObjects)), humanize.Bytes(uint64(mm.GoHeapFree)),
		humanize.Bytes(uint64(mm.GoStacks)), humanize.Bytes(uint64(mm.GoRuntime)))
	tw.Flush()
	return b.String()
}

func percent(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

// Metrics returns a snapshot of the DB's counters and shape.
func (d *DB) Metrics() Metrics {
	var m Metrics
	d.mu.Lock()
	// The tree's part is read from the version, which does not change,
	// with d.mu released: it walks every table (7,400 at 100M keys), and a
	// writer waits for d.mu. The read state holds the version's tables
	// open meanwhile. A closed DB's current version has no read state: it
	// is read under d.mu.
	var rs *readState
	if !d.mu.closed && d.mu.readState != nil {
		rs = d.mu.readState
		rs.refs.Add(1)
	}
	if d.mu.mem != nil {
		m.MemtableBytes = d.mu.mem.ApproximateSize()
		m.Memory.Memtables = d.mu.mem.ArenaBytes()
	}
	for _, imm := range d.mu.imm {
		m.Memory.Memtables += imm.mem.ArenaBytes()
	}
	m.Memory.Memtables += d.memtables.Bytes()
	m.ImmutableMemtables = len(d.mu.imm)
	m.CompactionsInProgress = len(d.mu.compactions)
	if rs == nil {
		d.treeMetrics(d.mu.current, &m)
		d.mu.Unlock()
	} else {
		d.mu.Unlock()
		d.treeMetrics(rs.version, &m)
		d.releaseReadState(rs)
	}

	m.Blobs.BytesWritten = d.blobs.bytesWritten.Load()
	m.Blobs.Reads = d.blobs.reads.Load()
	m.Blobs.BytesRead = d.blobs.bytesRead.Load()
	ts := d.tableCache.stats()
	m.TableCache = TableCacheMetrics{OpenFiles: ts.open, Hits: ts.hits, Misses: ts.misses, Evictions: ts.evictions}

	c := &d.counters
	m.BackgroundErrors = c.backgroundErrors.Load()
	for i := range m.Levels {
		c.levels[i].load(&m.Levels[i])
	}
	m.Gets, m.MemtableHits = c.gets.Load(), c.memtableHits.Load()
	m.PrefixSeeks = c.prefixSeeks.Load()
	m.RangeScans = c.rangeScans.Load()
	unpaid := c.rangeScansUnpaid.Load()
	m.RangeScansUnfiltered = unpaid - unpaid/rangeSampleEvery
	m.Writes, m.Batches = c.writes.Load(), c.batches.Load()
	m.WALBytes, m.WALSyncs = c.walBytes.Load(), c.walSyncs.Load()
	m.Flushes = c.flushes.Load()
	m.Compactions = c.compactions.count.Load()
	m.TombstonesDropped = c.compactions.tombstonesDropped.Load()
	m.MergesFoldedByReads, m.MergesFoldedByCompactions = c.mergesFoldedByReads.Load(), c.compactions.mergesFolded.Load()
	m.ExpiredDropped = c.compactions.expiredDropped.Load()
	m.TxnConflicts = d.oracle.refused.Load()
	m.Ingests, m.TablesIngested, m.BytesIngested = c.ingests.Load(), c.tablesIngested.Load(), c.bytesIngested.Load()

	for i := range m.Levels {
		m.Levels[i].CompactionBytesRead = c.compactions.bytesRead[i].Load()
		m.Levels[i].CompactionBytesWritten = c.compactions.bytesWritten[i].Load()
	}
	m.WriteStalls, m.WriteStallDuration = c.stalls.Load(), time.Duration(c.stallNanos.Load())
	m.WriteDelays, m.WriteDelayDuration = c.delays.Load(), time.Duration(c.delayNanos.Load())
	m.ObsoleteFilesPurged = c.obsoletePurged.Load()
	m.ObsoleteFilesPending = d.deleter.pending()
	m.BlockCache = cacheMetrics(d.cache.Metrics())
	m.Memory.BlockCache = d.cache.Resident()
	m.Memory.Tables = d.tableMemory.Resident()
	readGoMemory(&m.Memory)
	d.memoryBudgetMetrics(&m)
	return m
}

// treeMetrics fills in m's shape of the tree from v, if set: its levels'
// tables, filters and indexes, blob files, targets and scores.
// m.CompactionsInProgress is set.
func (d *DB) treeMetrics(v *version, m *Metrics) {
	if v == nil {
		return
	}
	for level, tables := range v.tables {
		l := &m.Levels[level]
		l.Tables = len(tables)
		metas := make([]*manifest.FileMetadata, len(tables))
		for i, t := range tables {
			metas[i] = t.meta
			l.Bytes += t.meta.Size
			l.Entries += t.meta.Entries
			l.RangeDels += t.reader.Properties().RangeDels
			if f := t.reader.Filter(); f != nil {
				m.FilterMemory += uint64(f.SizeBytes())
			}
			if rf := t.reader.RangeFilter(); rf != nil {
				m.FilterMemory += uint64(rf.SizeBytes())
			}
			m.IndexMemory += uint64(t.reader.IndexMemory())
		}
		l.FilterBitsPerKey = manifest.FilterBitsPerKey(metas)
	}
	m.ExpectedFalsePositiveReads = expectedFalsePositiveReads(v)
	for _, b := range v.Blobs {
		m.Blobs.Files++
		m.Blobs.Bytes += b.Size
		m.Blobs.ValueBytes += b.ValueBytes
		m.Blobs.LiveBytes += b.LiveBytes
		m.Blobs.DeadBytes += b.DeadBytes()
	}
	targets := compaction.TargetsOf(v.Version, &d.opts.compaction)
	scores := compaction.Scores(v.Version, targets, &d.opts.compaction)
	m.BaseLevel = targets.Base
	for level := range m.Levels {
		m.Levels[level].TargetSize, m.Levels[level].Score = targets.Size[level], scores[level]
	}
	m.CompactionPending = m.CompactionsInProgress > 0 || slices.ContainsFunc(scores[:], func(s float64) bool { return s >= 1 }) ||
		compaction.BlobRewriteDue(v.Version, &d.opts.compaction)
}

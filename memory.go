package bloomkv

import "runtime/metrics"

// MemoryMetrics accounts for the memory of a process that holds the DB,
// in bytes, in two parts. The DB's own, off the Go heap (mapped by package
// offheap, so that the collector neither counts nor scans it): Memtables,
// Tables and BlockCache. And the Go runtime's, which is process-wide —
// the DB's structures on the Go heap (the memtables' B-trees, the tables'
// metadata, a compaction's buffers) together with everything else the
// program allocates — from runtime/metrics. Their Total is close to the
// process's anonymous resident memory (RssAnon in /proc/self/status):
// within 10% in TestMemoryAccounted, which checks it.
type MemoryMetrics struct {
	// Memtables is the arena chunks of the mutable and immutable
	// memtables — their keys and values — and those of flushed
	// memtables kept for the next ones (at most a memtable's).
	Memtables int64
	// Tables is the pages of the open tables' filters (Metrics.
	// FilterMemory) and indexes, pinned for their tables' lifetime, and
	// the pages of deleted tables' buffers kept for the next tables (those
	// no buffer in use shares: the rest went back to the system).
	Tables int64
	// BlockCache is the pages of the cached blocks (CacheMetrics.Bytes,
	// rounded to pages), and those of freed blocks kept for the next
	// blocks: at most CacheMetrics.Capacity, but for evicted blocks
	// readers still hold.
	BlockCache int64

	// GoHeapObjects is the Go heap's objects: live, or dead and not yet
	// swept.
	GoHeapObjects int64
	// GoHeapFree is heap memory the runtime holds but no object uses —
	// free spans not yet returned to the system and unused space in the
	// spans in use: the slack of a collected heap, which grows to about
	// twice what a collection left live (GOGC=100).
	GoHeapFree int64
	// GoStacks is goroutine and system-thread stacks.
	GoStacks int64
	// GoRuntime is the runtime's metadata in use (spans, per-P caches,
	// the heap's bitmaps and index) and its other buffers. Left out: what
	// it has mapped for later, and the heap profiler's bucket table (1.4
	// MiB mapped, of which only the buckets sampled are ever touched).
	GoRuntime int64
}

// tableMemoryReleaseFrom is the size from which the buffers of deleted
// tables give their pages back to the system (offheap.Allocator's
// ReleaseFrom): a page. Below it an index of a small table stays
// resident for the next table of its size (within the allocator's bound on
// what it keeps); above it only the pages it shares with buffers in use
// do. At 10M keys
// the freed indexes kept whole (under 16 KiB each, the allocator's
// default) were a tenth of the tables' memory.
const tableMemoryReleaseFrom = 4 << 10

// Total returns the sum of m's parts.
func (m MemoryMetrics) Total() int64 {
	return m.Memtables + m.Tables + m.BlockCache + m.GoHeapObjects + m.GoHeapFree + m.GoStacks + m.GoRuntime
}

// goMemorySamples are the runtime/metrics MemoryMetrics reads, in the order
// readGoMemory expects them.
var goMemorySamples = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
}

// goMemory returns the Go runtime's memory as MemoryMetrics counts it: its
// heap's objects, free and unused space, stacks and metadata.
func goMemory() int64 {
	var m MemoryMetrics
	readGoMemory(&m)
	return m.GoHeapObjects + m.GoHeapFree + m.GoStacks + m.GoRuntime
}

// readGoMemory fills m's Go runtime parts.
func readGoMemory(m *MemoryMetrics) {
	samples := make([]metrics.Sample, len(goMemorySamples))
	for i, name := range goMemorySamples {
		samples[i].Name = name
	}
	metrics.Read(samples)
	v := func(i int) int64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0 // a runtime without the metric
		}
		return int64(samples[i].Value.Uint64())
	}
	m.GoHeapObjects = v(0)
	m.GoHeapFree = v(1) + v(2)
	m.GoStacks = v(3) + v(4)
	m.GoRuntime = v(5) + v(6) + v(7) + v(8)
}

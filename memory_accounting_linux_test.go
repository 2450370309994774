package bloomkv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/race"
)

// rssAnon returns the process's anonymous resident memory (RssAnon in
// /proc/self/status), in bytes: its heap and mappings, without the
// binary's pages or the page cache.
func rssAnon(t *testing.T) int64 {
	t.Helper()
	r, err := procstat.ReadResident()
	if err != nil {
		t.Fatal(err)
	}
	return r.Anon
}

// scanToEnd reads every entry of d with an Iterator: the blocks go through
// the block cache.
func scanToEnd(t *testing.T, d *DB) {
	t.Helper()
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

// inMemoryChild reports whether t runs in the child process whose
// environment sets env, where the test's body runs: a test whose oracle is
// the process's resident memory runs it in a process of its own. In the
// parent it runs that child and logs the child's lines holding any of
// marks, and returns false. Under the race detector, whose shadow memory
// is resident too, it skips t: make test-plain runs it.
func inMemoryChild(t *testing.T, env string, marks ...string) bool {
	t.Helper()
	if race.Enabled {
		t.Skip("the race detector's shadow memory is resident too: make test-plain runs this test")
	}
	if os.Getenv(env) != "" {
		return true
	}
	out := runTestChild(t, t.Name(), env+"=1")
	for _, line := range strings.Split(out, "\n") {
		for _, mark := range marks {
			if strings.Contains(line, mark) {
				t.Log(strings.TrimSpace(line))
				break
			}
		}
	}
	return false
}

// memoryChildEnv, set, makes TestMemoryAccounted run its body: it is then
// the child process TestMemoryAccounted starts.
const memoryChildEnv = "BLOOMKV_MEMORY_CHILD"

// TestMemoryAccounted checks Metrics.Memory against the kernel's count of
// the process's anonymous resident memory, at points where each part is
// large in turn: memtables full, a block cache full, filters and indexes
// of many tables. The parts must add up to RssAnon within 10%. The
// oracle is the whole process's, so the test runs in a child process of
// its own, which holds nothing but the DB: in this one, the memory that
// the tests before it left to the Go runtime, resident and unaccounted,
// made RssAnon 12–18% larger. Not under the race detector, whose shadow
// memory is resident too (make test runs it without).
func TestMemoryAccounted(t *testing.T) {
	if !inMemoryChild(t, memoryChildEnv, "RssAnon") {
		return
	}
	d, err := Open(t.TempDir(), &Options{MemtableSize: 32 << 20, BlockCacheSize: 32 << 20, MaxImmutableMemtables: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	value := make([]byte, 100)
	put := func(n int) {
		for range n {
			for i := range value {
				value[i] = byte(rng.Uint32())
			}
			if err := d.Put(fmt.Appendf(nil, "%016d", rng.IntN(1<<40)), value, NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string) {
		t.Helper()
		m := d.Metrics().Memory
		rss := rssAnon(t)
		t.Logf("%s: RssAnon %d MiB, accounted %d MiB: %+v", when, rss>>20, m.Total()>>20, m)
		if diff := m.Total() - rss; diff < -rss/10 || diff > rss/10 {
			t.Errorf("%s: Metrics.Memory adds up to %d bytes, RssAnon is %d: off by %.1f%%", when, m.Total(), rss, 100*float64(diff)/float64(rss))
		}
	}
	put(200_000) // about 25 MiB in the memtable
	check("memtable nearly full")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	put(600_000)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after flushes")
	scanToEnd(t, d)
	check("after a scan that fills the block cache")
}

// memoryLimitChildEnv, set, makes TestMemoryLimitHolds run its body: it
// is then the child process TestMemoryLimitHolds starts.
const memoryLimitChildEnv = "BLOOMKV_MEMORY_LIMIT_CHILD"

// TestMemoryLimitHolds fills a DB under a 24 MiB MemoryLimit with a tree
// whose filters at the requested 64 bits per key and its indexes would
// take more than the tables' share, compacts it, scans it (which fills
// the block cache with data blocks and, the indexes partitioned, index
// partitions of other sizes), and checks that the
// limit holds: the parts Metrics.MemoryBudget accounts add up to at most
// the limit, the filters — compacted, every table's planned for the tree
// as it is — within their budget and what the tables pin within its
// share, with fewer bits per key than requested and the fewest in the
// deepest level; and against the kernel's count, as
// TestMemoryAccounted does, in a child process of its own:
// Metrics.Memory adds up to RssAnon within 10%, and what RssAnon holds
// beyond the Go runtime's parts is within the limit. Not under the race
// detector (make test-plain runs it).
func TestMemoryLimitHolds(t *testing.T) {
	if !inMemoryChild(t, memoryLimitChildEnv, "RssAnon", "bits per key") {
		return
	}
	// Small values, so that the filters outweigh the indexes; small
	// memtables and tables and one compaction at a time, so that the
	// tables and the cache get most of the limit.
	// A limit of 24 MiB: the Go heap's growth (about 8–10 MiB here, most
	// of it the collector's room around the DB's objects) is counted, and
	// of the 8 MiB this test once had it would leave the block cache
	// nothing.
	const limit, bitsPerKey, keys = 24 << 20, 64, 1_500_000
	// Partitions of 1 KiB: the indexes of tables this small (about 2 KiB)
	// are below the default's 4 KiB and would be pinned whole.
	d, err := Open(t.TempDir(), &Options{MemoryLimit: limit, BitsPerKey: bitsPerKey, MemtableSize: 256 << 10,
		TargetFileSize: 256 << 10, BaseLevelSize: 1 << 20, MaxConcurrentCompactions: 1, IndexPartitionSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	// One key and one value buffer, reused: Put copies them, and the
	// test's own garbage would grow the heap the limit counts.
	key, value := make([]byte, 0, 16), make([]byte, 20)
	for range keys {
		for i := range value {
			value[i] = byte(rng.Uint32())
		}
		key = fmt.Appendf(key[:0], "%016d", rng.IntN(1<<40))
		if err := d.Put(key, value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	scanToEnd(t, d) // fills the block cache to its capacity
	// The indexes are partitioned, so that the block cache holds
	// partitions beside the data blocks.
	partitioned := 0
	d.mu.Lock()
	for _, tables := range d.mu.current.tables {
		for _, tb := range tables {
			if tb.reader.Properties().IndexPartitions > 0 {
				partitioned++
			}
		}
	}
	d.mu.Unlock()
	if partitioned == 0 {
		t.Errorf("no table has a partitioned index under MemoryLimit")
	}
	m := d.Metrics()
	b := m.MemoryBudget
	if b.BlockCache == 0 {
		t.Errorf("the block cache holds nothing after a scan: %+v", b)
	}
	var entries uint64
	for _, l := range m.Levels {
		entries += l.Entries
	}
	requested := int64(entries*bitsPerKey/8) + b.Pinned - b.Filters
	t.Logf("%+v; %.2f bits per key over %d keys; at %d bits per key the tables would pin %d bytes",
		b, 8*float64(b.Filters)/float64(entries), entries, bitsPerKey, requested)
	if requested <= b.PinnedShare {
		t.Fatalf("at %d bits per key the tables would pin %d bytes, within their share %d: the test tests nothing", bitsPerKey, requested, b.PinnedShare)
	}
	if b.Limit != limit || b.Total()+b.GoHeap > limit {
		t.Errorf("MemoryBudget %+v: its parts add up to %d bytes with the Go heap's growth, above the limit %d", b, b.Total()+b.GoHeap, limit)
	}
	if b.Filters > b.FilterBudget || b.Pinned > b.PinnedShare {
		t.Errorf("filters %d bytes of a budget of %d, tables pin %d of a share of %d: over", b.Filters, b.FilterBudget, b.Pinned, b.PinnedShare)
	}
	if perKey := 8 * float64(b.Filters) / float64(entries); perKey >= bitsPerKey {
		t.Errorf("the filters take %.2f bits per key, not fewer than the %d requested", perKey, bitsPerKey)
	}
	deepest := -1
	for level, l := range m.Levels {
		if l.Tables > 0 {
			deepest = level
		}
	}
	for level, l := range m.Levels {
		if l.Tables > 0 && (l.FilterBitsPerKey >= bitsPerKey || l.FilterBitsPerKey < m.Levels[deepest].FilterBitsPerKey) {
			t.Errorf("L%d: %.2f bits per key; want below the %d requested and no fewer than the deepest level's %.2f",
				level, l.FilterBitsPerKey, bitsPerKey, m.Levels[deepest].FilterBitsPerKey)
		}
	}
	rss := rssAnon(t)
	mm := m.Memory
	goParts := mm.GoHeapObjects + mm.GoHeapFree + mm.GoStacks + mm.GoRuntime
	t.Logf("RssAnon %d, accounted %d (the DB's %d, the Go runtime's %d), limit %d", rss, mm.Total(), mm.Total()-goParts, goParts, limit)
	if diff := mm.Total() - rss; diff < -rss/10 || diff > rss/10 {
		t.Errorf("Metrics.Memory adds up to %d bytes, RssAnon is %d: off by %.1f%%", mm.Total(), rss, 100*float64(diff)/float64(rss))
	}
	if rss-goParts > limit {
		t.Errorf("RssAnon %d less the Go runtime's %d is %d: above the limit %d", rss, goParts, rss-goParts, limit)
	}
}

// tableHeapChildEnv, set, makes TestTableHeapAccounted run its body: it is
// then the child process TestTableHeapAccounted starts.
const tableHeapChildEnv = "BLOOMKV_TABLE_HEAP_CHILD"

// TestTableHeapAccounted fills a DB under a MemoryLimit with a tree of
// many small tables holding many range tombstones and checks, first, that
// the limit makes room for them: MemoryBudget's parts add up to at most
// the limit, what the tables pin — their range tombstones and the table
// cache's structures and handles among it — is within its share, and the
// filters' budget and the block cache's capacity are what the share and
// the limit leave after them; then that MemoryBudget's RangeDels and
// TableHandles, which are estimates, are what the tables hold on the Go
// heap: the heap's growth from before a read-only Open of the tree to
// after it (live objects, after collections), less that of an Open of an
// empty DB with the same options, within 15% (the objects' rounding up to
// the heap's size classes, up to 12.5%, is left out of the estimates). In
// a child process of its own, which holds nothing but the DB; not under
// the race detector (make test-plain runs it).
func TestTableHeapAccounted(t *testing.T) {
	if !inMemoryChild(t, tableHeapChildEnv, "heap", "MemoryBudget") {
		return
	}
	opts := func() *Options {
		return &Options{MemoryLimit: 16 << 20, MemtableSize: 128 << 10, TargetFileSize: 32 << 10,
			BaseLevelSize: 256 << 10, MaxConcurrentCompactions: 1}
	}
	dir, empty := t.TempDir(), t.TempDir()
	d, err := Open(dir, opts())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(52, 52))
	value := make([]byte, 20)
	key := func(i int) []byte { return fmt.Appendf(nil, "%016d", i) }
	const span = 1 << 30
	for i := range 300_000 {
		if i%8 == 0 {
			// A narrow range, so that most tables hold tombstones and
			// few keys fall under any.
			lo := rng.IntN(span)
			if err := d.DeleteRange(key(lo), key(lo+1+rng.IntN(1000)), NoSync); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for j := range value {
			value[j] = byte(rng.Uint32())
		}
		if err := d.Put(key(rng.IntN(span)), value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if b := d.Metrics().MemoryBudget; b.Total() > b.Limit {
		t.Errorf("after the fill, MemoryBudget %+v: parts add up to %d, above the limit %d", b, b.Total(), b.Limit)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(empty, opts())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// heapAfterOpen returns the heap's live bytes before and after a
	// read-only Open of dir and an Iterator opened and closed, which
	// builds the levels' lists of range tombstones and reads no data
	// block (a scan's blocks would leave the block cache's entries on the
	// heap, which are not the tables'), and the open DB.
	heapAfterOpen := func(dir string) (before, after uint64, d *DB) {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC() // a second, for what sync.Pools kept from the first
		runtime.ReadMemStats(&ms)
		before = ms.HeapAlloc
		o := opts()
		o.ReadOnly = true
		d, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		it, err := d.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return before, ms.HeapAlloc, d
	}
	b0, a0, e := heapAfterOpen(empty)
	defer e.Close()
	b1, a1, d := heapAfterOpen(dir)
	defer d.Close()
	m := d.Metrics() // read-only: no flush or compaction changes the tables meanwhile
	b := m.MemoryBudget
	t.Logf("MemoryBudget %+v", b)
	if b.RangeDels < 1<<20 {
		t.Fatalf("the tables hold %d bytes of range tombstones: too few for the test to test anything", b.RangeDels)
	}
	heapParts := b.RangeDels + b.TableHandles
	if b.Total() > b.Limit || b.Pinned > b.PinnedShare || b.Pinned < heapParts+b.Filters {
		t.Errorf("parts add up to %d of the limit %d; the tables pin %d of their share %d, not less than their filters' %d and their heap's %d",
			b.Total(), b.Limit, b.Pinned, b.PinnedShare, b.Filters, heapParts)
	}
	if room := b.PinnedShare - (b.Pinned - b.Filters); b.FilterBudget > room {
		t.Errorf("the filters' budget is %d bytes, more than the %d the tables' other parts (range tombstones %d, handles %d) leave of their share %d",
			b.FilterBudget, room, b.RangeDels, b.TableHandles, b.PinnedShare)
	}
	if room := b.Limit - b.MemtablesShare - b.Compactions - b.Pinned; b.BlockCacheCapacity > room {
		t.Errorf("the block cache's capacity is %d bytes, more than the %d the other parts leave of the limit", b.BlockCacheCapacity, room)
	}
	measured := int64(a1-b1) - int64(a0-b0)
	var tables int
	for _, l := range m.Levels {
		tables += l.Tables
	}
	t.Logf("heap: %d tables hold %d bytes (%d growth less an empty DB's %d); MemoryBudget estimates %d: range tombstones %d, handles %d",
		tables, measured, int64(a1-b1), int64(a0-b0), heapParts, b.RangeDels, b.TableHandles)
	if diff := heapParts - measured; diff < -measured*15/100 || diff > measured*15/100 {
		t.Errorf("MemoryBudget estimates the tables' heap at %d bytes, the heap grew by %d: off by %.1f%%", heapParts, measured, 100*float64(diff)/float64(measured))
	}
}

// goHeapChildEnv, set, makes TestBlockCacheGivesWayToGoHeap run its body:
// it is then the child process TestBlockCacheGivesWayToGoHeap starts.
const goHeapChildEnv = "BLOOMKV_GO_HEAP_CHILD"

// TestBlockCacheGivesWayToGoHeap checks that under MemoryLimit the block
// cache's capacity is what the limit leaves after the Go runtime's growth
// since Open: 64 MiB more held on the heap takes 64 MiB from it, and
// given back, returns them; MemoryBudget's GoHeap shows the growth, and
// with the other parts adds up to at most the limit. In a child process of its own, so
// that no other test's heap moves the measure.
func TestBlockCacheGivesWayToGoHeap(t *testing.T) {
	if !inMemoryChild(t, goHeapChildEnv, "capacity") {
		return
	}
	const limit, held = 256 << 20, 64 << 20
	d, err := Open(t.TempDir(), &Options{MemoryLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The heap's free spans given back first, so that the 64 MiB come from
	// new memory, not from free spans the measure already counts.
	capacity := func() (int64, MemoryBudgetMetrics) {
		debug.FreeOSMemory()
		d.resizeCache()
		m := d.Metrics()
		return m.BlockCache.Capacity, m.MemoryBudget
	}
	before, b0 := capacity()
	buf := make([]byte, held)
	for i := range buf {
		buf[i] = 1 // resident, not only mapped
	}
	during, b1 := capacity()
	runtime.KeepAlive(buf)
	buf = nil
	after, _ := capacity()
	t.Logf("block cache capacity %d, with %d more on the heap %d, without %d; GoHeap %d, %d", before, held, during, after, b0.GoHeap, b1.GoHeap)
	// The runtime's own memory moves meanwhile — its stacks, the spans'
	// metadata, the heap's bitmap — by up to 1.9 MB in runs here.
	const slack = 2 << 20
	if taken := before - during; taken < held || taken > held+slack {
		t.Errorf("%d bytes more on the heap took %d from the block cache's capacity, want %d to %d", held, taken, held, held+slack)
	}
	if grown := b1.GoHeap - b0.GoHeap; grown < held || grown > held+slack {
		t.Errorf("MemoryBudget.GoHeap grew by %d, want %d to %d", grown, held, held+slack)
	}
	// Given back, the heap keeps the runtime's metadata of the memory it
	// mapped for it — a bitmap of a bit per 8-byte word, held/64, and the
	// spans' records — which a bound of held/32 covers twice.
	if kept := before - after; kept < -slack || kept > slack+held/32 {
		t.Errorf("the heap given back, the capacity is %d, want %d less at most %d", after, before, slack+held/32)
	}
	for _, b := range []MemoryBudgetMetrics{b0, b1} {
		if b.Total()+b.GoHeap > b.Limit {
			t.Errorf("MemoryBudget %+v adds up to %d with GoHeap, above the limit %d", b, b.Total()+b.GoHeap, b.Limit)
		}
	}
}

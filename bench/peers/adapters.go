package peers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/cockroachdb/pebble/v2"
	pebblebloom "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/dgraph-io/badger/v4"
	badgeropts "github.com/dgraph-io/badger/v4/options"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

// bloomkvStore adds Shaper and FullCompacter to workload's adapter.
type bloomkvStore struct {
	*workload.Bloomkv
	l0Stop int
}

func openBloomkv(dir string, s Settings) (workload.Store, error) {
	opts := &bloomkv.Options{
		MemtableSize:   s.MemtableSize,
		BlockSize:      s.BlockSize,
		Compression:    bloomkv.SnappyCompression,
		BitsPerKey:     float64(s.BitsPerKey),
		BlockCacheSize: s.CacheSize,
		BaseLevelSize:  uint64(s.BaseLevelSize),
		TargetFileSize: uint64(s.TargetFileSize),
	}
	b, err := workload.OpenBloomkv(dir, opts)
	if err != nil {
		return nil, err
	}
	return &bloomkvStore{Bloomkv: b, l0Stop: bloomkvL0Stop(opts)}, nil
}

// bloomkvL0Stop returns the L0StopTrigger that Open resolves opts to. The
// DB has no getter of its resolved options, so this repeats the defaults
// Options documents: 9·L0CompactionTrigger, whose default is 4.
func bloomkvL0Stop(opts *bloomkv.Options) int {
	if opts.L0StopTrigger > 0 {
		return opts.L0StopTrigger
	}
	trigger := opts.L0CompactionTrigger
	if trigger <= 0 {
		trigger = 4
	}
	return 9 * trigger
}

// L0 reads Metrics, which copies counters under the DB's lock.
func (b *bloomkvStore) L0() (L0, error) {
	return L0{Tables: b.DB.Metrics().Levels[0].Tables}, nil
}

func (b *bloomkvStore) L0Stop() L0Stop { return L0Stop{N: b.l0Stop} }

func (b *bloomkvStore) Tree() (Tree, error) {
	m := b.DB.Metrics()
	// The counters of Metrics.WriteAmplification.
	t := Tree{WALBytes: m.WALBytes}
	for _, l := range m.Levels {
		t.Levels = append(t.Levels, Level{Tables: l.Tables, Bytes: int64(l.Bytes)})
		t.TableBytes += l.CompactionBytesWritten
	}
	return t, nil
}

// CompactAll compacts the unbounded key range into the deepest level.
func (b *bloomkvStore) CompactAll() error { return b.DB.Compact(nil, nil) }

// Counters reads Metrics: the lookups' table probes and data blocks, and
// the write stalls.
func (b *bloomkvStore) Counters() (Counters, error) {
	m := b.DB.Metrics()
	c := Counters{Stall: m.WriteStallDuration}
	for _, l := range m.Levels {
		c.Tables += int64(l.TableProbes)
		c.Blocks += int64(l.BlocksFromFile + l.BlocksFromCache)
	}
	return c, nil
}

// pebbleStore adapts pebble.
type pebbleStore struct {
	db     *pebble.DB
	l0Stop int // L0StopWritesThreshold as resolved
	stalls *stallClock
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})      {}
func (quietLogger) Errorf(string, ...interface{})     {}
func (quietLogger) Fatalf(f string, a ...interface{}) { panic(errors.New("pebble: fatal")) }

// pebbleReservedMemtables is how many memtables' memory pebble's block
// cache gives up, in steady state: pebble reserves each memtable's size
// out of its cache's capacity (so that the cache bounds memtables and
// blocks together), and keeps the mutable memtable and one flushed one
// for reuse. Given only Settings.CacheSize, with 4 MiB memtables pebble's
// 8 MiB cache would hold no block at all.
const pebbleReservedMemtables = 2

func openPebble(dir string, s Settings) (workload.Store, error) {
	// The cache's capacity beyond the memtables it reserves is
	// Settings.CacheSize, as the other engines' (down to CacheSize − one
	// memtable while one flushes).
	cache := pebble.NewCache(s.CacheSize + pebbleReservedMemtables*s.MemtableSize)
	defer cache.Unref()
	opts := &pebble.Options{
		Cache:                 cache,
		MemTableSize:          uint64(s.MemtableSize),
		LBaseMaxBytes:         s.BaseLevelSize,
		L0CompactionThreshold: 4,
		Logger:                quietLogger{},
	}
	stalls := &stallClock{}
	opts.EventListener = &pebble.EventListener{
		WriteStallBegin: func(pebble.WriteStallBeginInfo) { stalls.begin() },
		WriteStallEnd:   stalls.end,
	}
	for i := range opts.Levels {
		l := &opts.Levels[i]
		l.FilterPolicy = pebblebloom.FilterPolicy(s.BitsPerKey)
		l.Compression = func() *sstable.CompressionProfile { return sstable.SnappyCompression }
		l.BlockSize = s.BlockSize
		opts.TargetFileSizes[i] = s.TargetFileSize
	}
	// Open resolves a copy of opts; resolving them here too shows the
	// defaults it will use (L0StopWritesThreshold).
	opts.EnsureDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &pebbleStore{db: db, l0Stop: opts.L0StopWritesThreshold, stalls: stalls}, nil
}

func (p *pebbleStore) Put(k, v []byte) error { return p.db.Set(k, v, pebble.NoSync) }

func (p *pebbleStore) Get(k []byte) ([]byte, bool, error) {
	v, closer, err := p.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	// A copy of its own: the value is only valid until the closer, and
	// the workload's threads share the store.
	return append([]byte(nil), v...), true, closer.Close()
}

// Counters reads Metrics' block cache hits and misses and the stall clock.
func (p *pebbleStore) Counters() (Counters, error) {
	m := p.db.Metrics()
	return Counters{Tables: -1, Blocks: m.BlockCache.Hits + m.BlockCache.Misses, Stall: p.stalls.stalled()}, nil
}

func (p *pebbleStore) Scan(start []byte, n int) (int, error) {
	it, err := p.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	read := 0
	for ok := it.SeekGE(start); ok && read < n; ok = it.Next() {
		_, _ = it.Key(), it.Value()
		read++
	}
	return read, it.Close()
}

// Settle flushes the memtable and waits until no compaction runs.
func (p *pebbleStore) Settle() error {
	if err := p.db.Flush(); err != nil {
		return err
	}
	idle := 0
	for idle < 4 {
		time.Sleep(25 * time.Millisecond)
		if p.db.Metrics().Compact.NumInProgress == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	return nil
}

// L0 reads Metrics: its L0 tables and sublevels.
func (p *pebbleStore) L0() (L0, error) {
	l := p.db.Metrics().Levels[0]
	return L0{Tables: int(l.TablesCount), Sublevels: int(l.Sublevels)}, nil
}

// L0Stop is L0StopWritesThreshold, which counts L0 sublevels (its read
// amplification), not tables.
func (p *pebbleStore) L0Stop() L0Stop { return L0Stop{N: p.l0Stop, Sublevels: true} }

// Tree reads Metrics. Its table bytes are those written to tables (and
// blob files, of which these settings make none) by flushes and
// compactions, and its WAL bytes those written to the WAL, so that
// Tree.WriteAmp is bloomkv's ratio; pebble's own Metrics.Total().WriteAmp()
// counts the WAL's bytes in the numerator too, 1 more.
func (p *pebbleStore) Tree() (Tree, error) {
	m := p.db.Metrics()
	t := Tree{WALBytes: m.WAL.BytesWritten}
	for i := range m.Levels {
		l := &m.Levels[i]
		t.Levels = append(t.Levels, Level{Tables: int(l.TablesCount), Bytes: l.TablesSize})
		t.TableBytes += l.TableBytesFlushed + l.TableBytesCompacted + l.BlobBytesFlushed + l.BlobBytesCompacted
	}
	return t, nil
}

// CompactAll compacts from the first key to the last (pebble's bounds are
// both inclusive and cannot be left open), after flushing the memtable.
func (p *pebbleStore) CompactAll() error {
	it, err := p.db.NewIter(nil)
	if err != nil {
		return err
	}
	var first, last []byte
	if it.First() {
		first = append(first, it.Key()...)
	}
	if it.Last() {
		last = append(last, it.Key()...)
	}
	if err := it.Close(); err != nil {
		return err
	}
	if first == nil || string(first) >= string(last) {
		return nil // at most one key: nothing to merge
	}
	return p.db.Compact(context.Background(), first, last, true)
}

func (p *pebbleStore) Close() error { return p.db.Close() }

// leveldbStore adapts goleveldb.
type leveldbStore struct {
	db   *leveldb.DB
	wo   *opt.WriteOptions
	opts *opt.Options
}

func openGoleveldb(dir string, s Settings) (workload.Store, error) {
	opts := &opt.Options{
		Filter:              filter.NewBloomFilter(s.BitsPerKey),
		BlockCacheCapacity:  int(s.CacheSize),
		Compression:         opt.SnappyCompression,
		BlockSize:           s.BlockSize,
		WriteBuffer:         int(s.MemtableSize),
		CompactionTotalSize: int(s.BaseLevelSize),
		CompactionTableSize: int(s.TargetFileSize),
		CompactionL0Trigger: 4,
	}
	db, err := leveldb.OpenFile(dir, opts)
	if err != nil {
		return nil, err
	}
	return &leveldbStore{db: db, wo: &opt.WriteOptions{Sync: false}, opts: opts}, nil
}

func (l *leveldbStore) Put(k, v []byte) error { return l.db.Put(k, v, l.wo) }

func (l *leveldbStore) Get(k []byte) ([]byte, bool, error) {
	v, err := l.db.Get(k, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (l *leveldbStore) Scan(start []byte, n int) (int, error) {
	it := l.db.NewIterator(nil, nil)
	defer it.Release()
	read := 0
	for ok := it.Seek(start); ok && read < n; ok = it.Next() {
		_, _ = it.Key(), it.Value()
		read++
	}
	return read, it.Error()
}

// L0 reads the property leveldb.num-files-at-level0.
func (l *leveldbStore) L0() (L0, error) {
	v, err := l.db.GetProperty("leveldb.num-files-at-level0")
	if err != nil {
		return L0{}, err
	}
	n, err := strconv.Atoi(v)
	return L0{Tables: n}, err
}

// L0Stop is WriteL0PauseTrigger, at which goleveldb pauses writes.
func (l *leveldbStore) L0Stop() L0Stop { return L0Stop{N: l.opts.GetWriteL0PauseTrigger()} }

// Tree parses the property leveldb.sstables, which lists every level
// ("--- level 0 ---") and its tables ("num:size[smallest .. largest]") —
// goleveldb adds levels as the data needs them, so the list is as deep as
// the data has gone —:
// the other properties and DB.Stats skip empty levels or round sizes to
// MiB. goleveldb does not count the bytes of its WAL (DB.Stats' IOWrite
// counts every file's): no write amplification.
func (l *leveldbStore) Tree() (Tree, error) {
	v, err := l.db.GetProperty("leveldb.sstables")
	if err != nil {
		return Tree{}, err
	}
	return parseLeveldbTables(v)
}

// parseLeveldbTables parses goleveldb's leveldb.sstables property.
func parseLeveldbTables(v string) (Tree, error) {
	var t Tree
	sc := bufio.NewScanner(strings.NewReader(v))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var level int
		if _, err := fmt.Sscanf(line, "--- level %d ---", &level); err == nil {
			if level != len(t.Levels) {
				return t, fmt.Errorf("goleveldb sstables: level %d after %d levels", level, len(t.Levels))
			}
			t.Levels = append(t.Levels, Level{})
			continue
		}
		num, rest, ok := strings.Cut(line, ":")
		size, _, ok2 := strings.Cut(rest, "[")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || !ok2 || err != nil || len(t.Levels) == 0 || strings.TrimLeft(num, "0123456789") != "" {
			return t, fmt.Errorf("goleveldb sstables: line %q", line)
		}
		t.Levels[len(t.Levels)-1].Tables++
		t.Levels[len(t.Levels)-1].Bytes += n
	}
	return t, sc.Err()
}

// Counters reads Stats' write delays; goleveldb counts no table or block
// reads.
func (l *leveldbStore) Counters() (Counters, error) {
	var st leveldb.DBStats
	if err := l.db.Stats(&st); err != nil {
		return Counters{}, err
	}
	return Counters{Tables: -1, Blocks: -1, Stall: st.WriteDelayDuration}, nil
}

func (l *leveldbStore) Close() error { return l.db.Close() }

// badgerStore adapts badger.
type badgerStore struct {
	db     *badger.DB
	l0Stop int // NumLevelZeroTablesStall
}

func openBadger(dir string, s Settings) (workload.Store, error) {
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(false).
		WithBloomFalsePositive(0.01).
		WithBlockCacheSize(s.CacheSize).
		WithCompression(badgeropts.Snappy).
		WithBlockSize(s.BlockSize).
		WithMemTableSize(s.MemtableSize).
		WithBaseLevelSize(s.BaseLevelSize).
		WithLevelSizeMultiplier(10).
		WithBaseTableSize(s.TargetFileSize).
		WithNumVersionsToKeep(1).
		WithValueThreshold(4 << 10) // values (100 B) stay in the LSM tree, not the value log
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerStore{db: db, l0Stop: opts.NumLevelZeroTablesStall}, nil
}

func (b *badgerStore) Put(k, v []byte) error {
	return b.db.Update(func(txn *badger.Txn) error { return txn.Set(k, v) })
}

func (b *badgerStore) Get(k []byte) ([]byte, bool, error) {
	found := false
	var v []byte // a copy of its own: the workload's threads share the store
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		v, err = item.ValueCopy(nil)
		return err
	})
	if !found {
		return nil, false, err
	}
	return v, err == nil, err
}

func (b *badgerStore) Scan(start []byte, n int) (int, error) {
	read := 0
	err := b.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.PrefetchSize = n
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(start); it.Valid() && read < n; it.Next() {
			if err := it.Item().Value(func([]byte) error { return nil }); err != nil {
				return err
			}
			read++
		}
		return nil
	})
	return read, err
}

// L0 reads Levels, which counts each level's tables under its lock.
func (b *badgerStore) L0() (L0, error) {
	return L0{Tables: b.db.Levels()[0].NumTables}, nil
}

// L0Stop is NumLevelZeroTablesStall: at it badger stalls its memtable
// flushes, so writes stop once the memtables are full.
func (b *badgerStore) L0Stop() L0Stop { return L0Stop{N: b.l0Stop} }

// Tree reads Levels. badger counts neither the bytes of its WAL (its value
// log) nor those it writes to tables: no write amplification.
func (b *badgerStore) Tree() (Tree, error) {
	var t Tree
	for _, l := range b.db.Levels() {
		t.Levels = append(t.Levels, Level{Tables: l.NumTables, Bytes: l.Size})
	}
	return t, nil
}

func (b *badgerStore) Close() error { return b.db.Close() }

// MapsTables is true: badger v4 reads its tables through memory maps
// (it has no option to read them with read calls).
func (b *badgerStore) MapsTables() bool { return true }

// MemoryParts is bloomkv's Metrics.Memory: the DB's own memory, off the Go
// heap, and the Go runtime's.
func (b *bloomkvStore) MemoryParts() ([]MemoryPart, error) {
	m := b.DB.Metrics().Memory
	return []MemoryPart{{"memtables", m.Memtables}, {"tables", m.Tables}, {"block cache", m.BlockCache},
		{"go heap objects", m.GoHeapObjects}, {"go heap free", m.GoHeapFree}, {"go stacks", m.GoStacks}, {"go runtime", m.GoRuntime}}, nil
}

// MemoryParts is pebble's memtables (ZombieSize: those flushed but still
// referenced) and block cache, which it allocates manually (C malloc in a
// cgo build), and the Go runtime's memory, as bloomkv counts it.
func (p *pebbleStore) MemoryParts() ([]MemoryPart, error) {
	m := p.db.Metrics()
	return append([]MemoryPart{{"memtables", int64(m.MemTable.Size + m.MemTable.ZombieSize)}, {"block cache", m.BlockCache.Size}},
		goMemoryParts()...), nil
}

//go:build !peers_single || peers_pebble

package peers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/cockroachdb/pebble/v2"
	pebblebloom "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

func init() { register(Engine{"pebble", openPebble}) }

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
	return Counters{Tables: -1, Blocks: m.BlockCache.Hits + m.BlockCache.Misses, Stall: p.stalls.stalled(), FalsePositives: -1}, nil
}

func (p *pebbleStore) Scan(start []byte, n int) (int, error) { return p.scan(start, n, true) }

// ScanKeys is Scan without asking for values. Pebble keeps these values in
// its tables' blocks, which it reads either way.
func (p *pebbleStore) ScanKeys(start []byte, n int) (int, error) { return p.scan(start, n, false) }

func (p *pebbleStore) scan(start []byte, n int, values bool) (int, error) {
	it, err := p.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	read := 0
	for ok := it.SeekGE(start); ok && read < n; ok = it.Next() {
		_ = it.Key()
		if values {
			_ = it.Value()
		}
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

// MemoryParts is pebble's memtables (ZombieSize: those flushed but still
// referenced) and block cache, which it allocates manually (C malloc in a
// cgo build), and the Go runtime's memory, as bloomkv counts it.
func (p *pebbleStore) MemoryParts() ([]MemoryPart, error) {
	m := p.db.Metrics()
	return append([]MemoryPart{{"memtables", int64(m.MemTable.Size + m.MemTable.ZombieSize)}, {"block cache", m.BlockCache.Size}},
		goMemoryParts()...), nil
}

// stallClock times write stalls from pebble's WriteStallBegin and
// WriteStallEnd events.
type stallClock struct {
	mu    sync.Mutex
	since time.Time // the current stall's start; zero when none
	total time.Duration
}

func (s *stallClock) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.since.IsZero() {
		s.since = time.Now()
	}
}

func (s *stallClock) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.since.IsZero() {
		s.total += time.Since(s.since)
		s.since = time.Time{}
	}
}

// stalled returns the stall time so far, the current stall's included.
func (s *stallClock) stalled() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.total
	if !s.since.IsZero() {
		t += time.Since(s.since)
	}
	return t
}

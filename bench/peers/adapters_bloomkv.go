//go:build !peers_single || peers_bloomkv

package peers

import (
	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/cmd/bloomkv/benchstore"
	"github.com/bloomkv/bloomkv/internal/workload"
)

func init() { register(Engine{"bloomkv", openBloomkv}) }

// bloomkvStore adds Shaper and FullCompacter to benchstore's adapter.
type bloomkvStore struct {
	*benchstore.Bloomkv
	l0Stop int
}

func openBloomkv(dir string, s Settings) (workload.Store, error) {
	opts := &bloomkv.Options{
		MemtableSize:    s.MemtableSize,
		BlockSize:       s.BlockSize,
		Compression:     bloomkv.SnappyCompression,
		BitsPerKey:      float64(s.BitsPerKey),
		BlockCacheSize:  s.CacheSize,
		BaseLevelSize:   uint64(s.BaseLevelSize),
		TargetFileSize:  uint64(s.TargetFileSize),
		ValueSeparation: bloomkv.ValueSeparation{MinSize: s.ValueThreshold},
		MmapTables:      bloomkvTableMapping[s.BloomkvMmapTables],
	}
	if s.BloomkvMemoryLimit > 0 {
		opts.MemoryLimit, opts.BlockCacheSize, opts.MemtableSize = s.BloomkvMemoryLimit, 0, 0
	}
	b, err := benchstore.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &bloomkvStore{Bloomkv: b, l0Stop: bloomkvL0Stop(opts)}, nil
}

// bloomkvTableMapping is Options.MmapTables for each Settings.BloomkvMmapTables.
var bloomkvTableMapping = map[string]bloomkv.TableMapping{
	"": bloomkv.MapHandleTables, "handles": bloomkv.MapHandleTables, "all": bloomkv.MapAllTables, "none": bloomkv.MapNoTables,
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
		c.FalsePositives += int64(l.FilterPositives - l.TruePositives)
	}
	return c, nil
}

// Filters reads Metrics: the levels' filter bits over their entries, the
// expected false-positive reads of the filters the tables have, and those
// of uniform Bloom filters of the same bits per key, one run per L0 table
// and per deeper level with entries, as a Get of an absent key probes.
func (b *bloomkvStore) Filters() (Filters, error) {
	m := b.DB.Metrics()
	var bits, entries float64
	runs := 0
	for level, l := range m.Levels {
		if l.Entries == 0 {
			continue
		}
		bits += l.FilterBitsPerKey * float64(l.Entries)
		entries += float64(l.Entries)
		if level == 0 {
			runs += l.Tables
		} else {
			runs++
		}
	}
	f := Filters{Expected: m.ExpectedFalsePositiveReads}
	if entries > 0 {
		f.BitsPerKey = bits / entries
		uniform := bloomkv.Bloom(min(max(f.BitsPerKey, 1), bloom.MaxBitsPerKey))
		f.Uniform = float64(runs) * uniform.ExpectedFalsePositiveRate()
	}
	return f, nil
}

// MemoryParts is bloomkv's Metrics.Memory: the DB's own memory, off the Go
// heap, and the Go runtime's.
func (b *bloomkvStore) MemoryParts() ([]MemoryPart, error) {
	m := b.DB.Metrics().Memory
	return []MemoryPart{{"memtables", m.Memtables}, {"tables", m.Tables}, {"block cache", m.BlockCache},
		{"go heap objects", m.GoHeapObjects}, {"go heap free", m.GoHeapFree}, {"go stacks", m.GoStacks}, {"go runtime", m.GoRuntime}}, nil
}

// Package peers runs bloomkv's workloads (package
// github.com/bloomkv/bloomkv/internal/workload: the same keys, values, seeds and
// operations as `bloomkv bench`) against bloomkv and three peer stores in
// one process, each configured as alike as their options allow:
//
//   - bloomkv (github.com/bloomkv/bloomkv)
//   - pebble (github.com/cockroachdb/pebble/v2)
//   - goleveldb (github.com/syndtr/goleveldb)
//   - badger (github.com/dgraph-io/badger/v4)
//
// # Settings made equal
//
// Every engine gets: Bloom filters of 10 bits per key on every level
// (Settings.BitsPerKey), the same block cache capacity, snappy compression
// of 4 KiB data blocks, the same memtable size, the same L1 (base level)
// target size growing ×10 per level, the same target table size, the
// write-ahead log on and no fsync per write for the fills, one Put per key
// (no batching), and a settle after each fill where the engine has a way to
// flush (see below).
//
// # Settings that could not be made equal
//
//   - Filters. pebble and goleveldb take bits per key (10); bloomkv too,
//     with a cache-line-blocked filter (all probes in one 512-bit block,
//     about 0.95% false positives at 10 bits) where pebble's filter is also
//     cache-line-blocked and goleveldb's is a classic Bloom filter (about
//     0.8%). badger takes a false-positive rate, not bits per key: it gets
//     0.01, which its classic filter reaches at about 9.6 bits per key.
//     pebble's L0 tables get the filter too (its default is none in L0).
//   - pebble's Get never consults the filters of L6 tables (it reads them
//     only for iterators with UseL6Filters, which Get cannot pass), and
//     pebble's dynamic level sizing puts most data in L6: its Gets of
//     missing keys read an index and a data block of L6 where the others'
//     filters answer. This is pebble's design choice, not a setting.
//   - Flush and compaction after a fill. bloomkv flushes its memtable and
//     waits for compactions to finish (workload.Settler); pebble flushes and
//     waits until no compaction is in progress; goleveldb and badger have
//     no public call that flushes the memtable without closing, so they
//     start the reads with up to a memtable of the fill still in memory and
//     their compactions possibly still running.
//   - Levels. pebble sizes its levels dynamically from the bottom
//     (LBaseMaxBytes is the base level's size, not always L1's); goleveldb
//     counts L1's size in CompactionTotalSize; badger's levels are also
//     sized dynamically (BaseLevelSize). Table sizes: pebble's
//     TargetFileSizes are set equal on all levels (its default doubles them
//     per level); badger's BaseTableSize grows with TableSizeMultiplier (2)
//     per level.
//   - Concurrency. Each engine keeps its default number of background
//     compactions (bloomkv 1, pebble 1 by default, goleveldb 1, badger 4
//     compactors) and of memtables held at once, the mutable one included
//     (bloomkv 2, with MaxImmutableMemtables 1; pebble 2, with
//     MemTableStopWritesThreshold 2; goleveldb 2; badger 5, NumMemtables).
//   - Where memory lives. bloomkv's memtable arenas, block cache and
//     tables' filters and indexes are mapped outside the Go heap, and
//     pebble allocates its memtables and cache (which holds its filters and
//     indexes) manually, C malloc in a cgo build; goleveldb's and badger's
//     are on the Go heap, where the garbage collector lets a live byte cost
//     about two. Peak RSS counts all of it.
//   - Transactions. badger has no plain Put/Get: each Put is an Update
//     transaction (one commit through its write channel) and each Get a
//     View transaction; values stay in the LSM tree (ValueThreshold 4 KiB),
//     not in its value log.
//   - Memory for filters and indexes. bloomkv, pebble and goleveldb load a
//     table's filter into memory when they open it (pebble and goleveldb
//     through the block cache, so the filters compete with data blocks for
//     the same capacity); badger keeps filters and indexes in memory
//     (IndexCacheSize 0).
//   - Get's value. Each adapter copies the value out (pebble's is only
//     valid until its closer, badger's only inside the transaction).
package peers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bloomkv/bloomkv/internal/workload"
)

// Settings are what every engine is given.
type Settings struct {
	BitsPerKey     int   // filter bits per key on every level
	CacheSize      int64 // block cache capacity, bytes
	MemtableSize   int64 // bytes
	BaseLevelSize  int64 // L1's target size, bytes; ×10 per level
	TargetFileSize int64 // table size at which compactions cut, bytes
	BlockSize      int   // data block size, bytes
}

// DefaultSettings are bloomkv's defaults: 10 bits per key, an 8 MiB block
// cache, 4 MiB memtables, L1 of 16 MiB, 2 MiB tables, 4 KiB blocks.
var DefaultSettings = Settings{BitsPerKey: 10, CacheSize: 8 << 20, MemtableSize: 4 << 20,
	BaseLevelSize: 16 << 20, TargetFileSize: 2 << 20, BlockSize: 4 << 10}

// Engine is one store and how to open it.
type Engine struct {
	Name string
	Open func(dir string, s Settings) (workload.Store, error)
}

// Engines are the engines compared, bloomkv first.
var Engines = []Engine{
	{"bloomkv", openBloomkv},
	{"pebble", openPebble},
	{"goleveldb", openGoleveldb},
	{"badger", openBadger},
}

// Lookup returns the engine called name.
func Lookup(name string) (Engine, error) {
	for _, e := range Engines {
		if e.Name == name {
			return e, nil
		}
	}
	return Engine{}, fmt.Errorf("unknown engine %q (have bloomkv, pebble, goleveldb, badger)", name)
}

// Run opens engine e in a new directory under dir, runs the workloads in
// order, settling after each fill where the engine can, and closes and
// removes the database. progress, if not nil, is passed to each workload.
func Run(e Engine, dir string, s Settings, cfg *workload.Config, ws []workload.Workload, progress func(w workload.Workload) func(int)) ([]*workload.Result, error) {
	path := filepath.Join(dir, e.Name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(path)
	st, err := e.Open(path, s)
	if err != nil {
		return nil, fmt.Errorf("%s: open: %w", e.Name, err)
	}
	var results []*workload.Result
	for _, w := range ws {
		var pr func(int)
		if progress != nil {
			pr = progress(w)
		}
		r, err := cfg.Run(st, w, pr)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		results = append(results, r)
		if sr, ok := st.(workload.Settler); ok && w.IsFill() {
			if err := sr.Settle(); err != nil {
				st.Close()
				return nil, fmt.Errorf("%s: settle after %s: %w", e.Name, w, err)
			}
		}
	}
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("%s: close: %w", e.Name, err)
	}
	return results, nil
}

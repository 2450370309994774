package bloomkv_test

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/cmd/bloomkv/benchstore"
	"github.com/bloomkv/bloomkv/internal/workload"
)

var (
	scaleKeys = flag.Int("scale.n", 100_000, "keys of BenchmarkGetAtScale's database (the issue's sizes: 10000000, 30000000)")
	scaleDir  = flag.String("scale.dir", "", "directory of BenchmarkGetAtScale's database, kept and reused by later runs (filled on the first, which can take minutes at 10M keys); default: a temporary one")
)

// peersOptions are the peers runner's settings for bloomkv (bench/peers'
// DefaultSettings): 10 bits/key filters, an 8 MiB block cache, snappy,
// 4 MiB memtables, L1 of 16 MiB, 2 MiB tables, 4 KiB blocks.
func peersOptions() *bloomkv.Options {
	return &bloomkv.Options{
		MemtableSize:   4 << 20,
		BlockSize:      4 << 10,
		Compression:    bloomkv.SnappyCompression,
		BitsPerKey:     10,
		BlockCacheSize: 8 << 20,
		BaseLevelSize:  16 << 20,
		TargetFileSize: 2 << 20,
	}
}

// openScaleDB returns the database of -scale.n workload keys (the peers
// runner's keys: fillrandom's, in its order, then settled) in -scale.dir,
// filling it first if the directory holds none, opened read-only so that
// every run reads the same tree; with mmap, all its tables read through
// mappings (Options.MmapTables: MapAllTables), without, none.
func openScaleDB(b *testing.B, keys *workload.Keys, mmap bool) *bloomkv.DB {
	dir := *scaleDir
	if dir == "" {
		dir = b.TempDir()
	}
	dir = filepath.Join(dir, "bloomkv")
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); errors.Is(err, os.ErrNotExist) {
		b.Logf("filling %s with %d keys", dir, keys.N)
		s, err := benchstore.Open(dir, peersOptions())
		if err != nil {
			b.Fatal(err)
		}
		cfg := &workload.Config{Keys: keys}
		if _, err := cfg.Run(s, workload.FillRandom, nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Settle(); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	opts := peersOptions()
	opts.ReadOnly, opts.MmapTables = true, bloomkv.MapNoTables
	if mmap {
		opts.MmapTables = bloomkv.MapAllTables
	}
	d, err := bloomkv.Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// cpuTime returns the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGetAtScale is a warm Get, one goroutine, of the peers runner's
// readmissing keys (absent, each between two present ones) and readrandom
// keys (present), uniformly over the whole key space of a database of
// -scale.n keys: where filters and indexes outgrow the CPU cache, the
// cost of a missing key is its cache misses. One op is one Get; the keys
// are drawn ahead, so that the loop times Get alone. Each runs with the
// tables read by pread(2) (mmap=false) and through mappings (mmap=true,
// Options.MmapTables: MapAllTables).
func BenchmarkGetAtScale(b *testing.B) {
	keys, err := workload.NewKeys(*scaleKeys, workload.DefaultKeySize, workload.DefaultValueSize, workload.DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	for _, mmap := range []bool{false, true} {
		b.Run(fmt.Sprintf("mmap=%v", mmap), func(b *testing.B) { benchGetAtScale(b, keys, openScaleDB(b, keys, mmap)) })
	}
}

func benchGetAtScale(b *testing.B, keys *workload.Keys, d *bloomkv.DB) {
	const drawn = 1 << 20
	for _, set := range []struct {
		name string
		key  func(dst []byte, i int) []byte
		want error
	}{{"missing", keys.Missing, bloomkv.ErrNotFound}, {"present", keys.Present, nil}} {
		b.Run(set.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			ks := make([][]byte, drawn)
			for i := range ks {
				ks[i] = set.key(nil, rng.IntN(keys.N))
			}
			for _, k := range ks[:drawn/16] { // warm: the filters and indexes, the block cache
				d.Get(k)
			}
			before, cpu := d.Metrics(), cpuTime()
			b.ReportAllocs()
			n := 0
			for ; b.Loop(); n++ {
				if _, err := d.Get(ks[n%drawn]); err != set.want {
					b.Fatalf("Get(%q) = %v, want %v", ks[n%drawn], err, set.want)
				}
			}
			// What the Gets cost beyond time: the tables whose range held
			// the key, and the data blocks read (a missing key's are its
			// filters' false positives).
			// CPU time, the process's, beside the wall time: on a shared
			// machine it shifts less with the others' load.
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(n), "cpu-ns/op")
			after := d.Metrics()
			var probes, blocks uint64
			for l := range after.Levels {
				a, o := &after.Levels[l], &before.Levels[l]
				probes += a.TableProbes - o.TableProbes
				blocks += a.BlocksFromFile + a.BlocksFromCache - o.BlocksFromFile - o.BlocksFromCache
			}
			b.ReportMetric(float64(probes)/float64(n), "tables/op")
			b.ReportMetric(float64(after.BlockCache.Rejected-before.BlockCache.Rejected)/float64(n), "uncached/op")
			b.ReportMetric(float64(blocks)/float64(n), "blocks/op")
		})
	}
}

// Command peers runs bloomkv's db_bench-style workloads (package
// github.com/bloomkv/bloomkv/workload, the same keys, values and seeds as
// `bloomkv bench`) against bloomkv, pebble, goleveldb and badger in one
// process, one engine after the other on a fresh database each, and prints
// each engine's ops/s per workload and its ratio to bloomkv's (above 1:
// faster than bloomkv), then p50/p99 latencies.
//
// Usage, from the bench module's directory:
//
//	go run ./cmd/peers [-n 1000000] [-reads 200000] [-engines bloomkv,pebble,goleveldb,badger]
//	                   [-workloads fillrandom,readrandom,readmissing,readmixed,scan]
//
// Every engine gets 10 bits/key filters on every level, the same block
// cache (8 MiB), snappy, the same memtable (4 MiB), L1 size (16 MiB, ×10)
// and table size (2 MiB), the WAL on and no fsync per write; the settings
// that could not be made equal are listed in package peers' documentation
// and at the end of the output.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/workload"
)

const notEqual = `Settings that could not be made equal (see go doc ./peers):
  - badger's filter is sized by false-positive rate (0.01, about 9.6 bits/key), the others by 10 bits/key;
    goleveldb's and badger's filters are classic Bloom filters, bloomkv's and pebble's cache-line-blocked.
  - pebble's Get never consults L6 filters (only iterators with UseL6Filters do), and most of its
    data is in L6: its missing-key Gets read blocks there.
  - after a fill, bloomkv and pebble flush and wait for compactions; goleveldb and badger cannot flush
    without closing, so their reads start with part of the fill in the memtable.
  - pebble and badger size levels dynamically; badger's tables grow ×2 per level; pebble's and
    goleveldb's filters live in the block cache, bloomkv's and badger's beside it.
  - background compactions: bloomkv 1, pebble 1, goleveldb 1, badger 4; badger Puts and Gets are
    one transaction each.`

func main() {
	n := flag.Int("n", 1_000_000, "keys the fills write")
	reads := flag.Int("reads", 200_000, "Gets per read workload (scan: reads/scan-length scans)")
	engines := flag.String("engines", "bloomkv,pebble,goleveldb,badger", "engines to run, bloomkv first for the ratios")
	wl := flag.String("workloads", "fillrandom,readrandom,readmissing,readmixed,scan", "workloads, in order")
	seed := flag.Uint64("seed", workload.DefaultSeed, "seed of values and workloads")
	keySize := flag.Int("key-size", workload.DefaultKeySize, "key size in bytes")
	valueSize := flag.Int("value-size", workload.DefaultValueSize, "value size in bytes")
	missRatio := flag.Float64("miss-ratio", 0.5, "readmixed's share of missing keys")
	scanLength := flag.Int("scan-length", 100, "entries per scan")
	dir := flag.String("dir", "", "directory for the databases (default: a temporary one, removed after)")
	flag.Parse()

	fail := func(code int, err error) {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(code)
	}
	ws, err := workload.Parse(*wl)
	if err != nil {
		fail(2, err)
	}
	var es []peers.Engine
	for _, name := range strings.Split(*engines, ",") {
		e, err := peers.Lookup(strings.TrimSpace(name))
		if err != nil {
			fail(2, err)
		}
		es = append(es, e)
	}
	keys, err := workload.NewKeys(*n, *keySize, *valueSize, *seed)
	if err != nil {
		fail(2, err)
	}
	cfg := &workload.Config{Keys: keys, Reads: *reads, MissRatio: *missRatio, ScanLength: *scanLength}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "bloomkv-peers-")
		if err != nil {
			fail(1, err)
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	}
	s := peers.DefaultSettings
	fmt.Printf("peers: %d keys of %d B, values of %d B, seed %d; %d bits/key filters, block cache %d MiB, snappy, memtable %d MiB, L1 %d MiB ×10, tables %d MiB, WAL on without fsync\n\n",
		*n, *keySize, *valueSize, *seed, s.BitsPerKey, s.CacheSize>>20, s.MemtableSize>>20, s.BaseLevelSize>>20, s.TargetFileSize>>20)

	results := make([][]*workload.Result, len(es))
	for i, e := range es {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "%s …\n", e.Name)
		rs, err := peers.Run(e, *dir, s, cfg, ws, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "peers:", err)
			os.Exit(1)
		}
		results[i] = rs
		fmt.Fprintf(os.Stderr, "%s done in %s\n", e.Name, time.Since(start).Round(time.Millisecond))
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\t")
	for _, e := range es {
		fmt.Fprintf(tw, "%s ops/s\t", e.Name)
	}
	fmt.Fprintln(tw)
	for j, w := range ws {
		fmt.Fprintf(tw, "%s\t", w)
		base := results[0][j].OpsPerSec()
		for i := range es {
			ops := results[i][j].OpsPerSec()
			if i == 0 {
				fmt.Fprintf(tw, "%.0f\t", ops)
			} else {
				fmt.Fprintf(tw, "%.0f (%.2f×)\t", ops, ops/base)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Printf("\n(×: ops/s as a ratio to %s's; above 1 is faster)\n\np50 / p99 latency\n", es[0].Name)
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "workload\t")
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t", e.Name)
	}
	fmt.Fprintln(tw)
	for j, w := range ws {
		fmt.Fprintf(tw, "%s\t", w)
		for i := range es {
			h := &results[i][j].Latency
			fmt.Fprintf(tw, "%s / %s\t", dur(h.Percentile(0.5)), dur(h.Percentile(0.99)))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Println()
	fmt.Println(notEqual)
}

func dur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	}
	return fmt.Sprintf("%.2fms", float64(d)/1e6)
}

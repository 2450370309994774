// Package bench is the root of bloomkv's comparison module: benchmarks that
// measure bloomkv against other libraries. It is a Go module of its own
// (github.com/bloomkv/bloomkv/bench, using the store through a replace of
// ../), so that the libraries it compares against — another Bloom filter
// library, and the stores Pebble, goleveldb and Badger — are dependencies
// of this module only and never reach a program that imports bloomkv. The store's own `go test ./...` does not enter this directory.
//
// # Filters
//
// Package bench/filters puts bloomkv's Bloom filters (package bloom) beside
// github.com/bits-and-blooms/bloom/v3 at the same number of keys and the
// same memory — by default n = 1,000,000 keys of 16 bytes at 10 bits per
// key, so m = 10,000,000 bits for every filter:
//
//   - bloomkv-blocked: bloom.BuildBlocked, all probes in one 512-bit block
//     (m rounded up to whole blocks);
//   - bloomkv-classic: bloom.NewClassicSize(m, k), k = round(10·ln 2) = 7;
//   - bitsandblooms: bloom.New(m, k) of bits-and-blooms, the same m and k.
//
// It times lookups of absent keys (the case a filter exists for: an LSM
// lookup that skips a table), lookups of present keys and adds, and reports
// each filter's measured false-positive rate over a disjoint set of absent
// keys beside the rate its formula predicts. The targets it checks: a
// blocked lookup of an absent key takes at most 0.35 times as long as
// bits-and-blooms' Test, a classic lookup at most 0.6 times.
//
// Run, from this directory:
//
//	go test ./...                          # correctness: no false negatives,
//	                                       # rates within tolerance, equal memory
//	go test -run='^$' -bench=. -count=6 ./filters | tee bench.txt
//	benchstat bench.txt                    # golang.org/x/perf/cmd/benchstat
//	go run ./cmd/filtercmp                 # one-process side-by-side table
//	go run ./cmd/filtercmp -n 100000 -bits-per-key 16 -runs 9
//
// The benchmarks report, beside ns/op, the custom metrics "cpu-ns/op"
// (process CPU time per operation), "fpr" (measured false-positive rate)
// and "filter-bytes" (memory of the filter's bits). filtercmp prints one
// aligned table with the median of -runs timings per filter, the ratios to
// bits-and-blooms, and whether the targets are met; it exits with status 1
// when one is missed.
//
// # Stores
//
// Package bench/peers runs the workloads of `bloomkv bench` (package
// github.com/bloomkv/bloomkv/internal/workload: same keys, values, seeds) against
// bloomkv, github.com/cockroachdb/pebble/v2, github.com/syndtr/goleveldb
// and github.com/dgraph-io/badger/v4, configured alike (10 bits/key
// filters on every level, the same block cache, snappy, the same memtable,
// WAL on without fsync); its doc lists the settings that could not be made
// equal. Run, from this directory:
//
//	go run ./cmd/peers                     # ops/s per engine and the ratio to bloomkv,
//	                                       # each engine's peak RSS, p50/p99/p99.9/max
//	                                       # latencies, L0 during the fills, the tree after
//	go run ./cmd/peers -n 200000 -engines bloomkv,pebble
//	go run ./cmd/peers -workloads filloverwrite,readrandom -writes-per-key 3 -space-amp
//	                                       # each key written 3 times; write and space
//	                                       # amplification of the tree it leaves
//	go run ./cmd/peers -in-process         # all engines in one process, no RSS
//
// cmd/peers runs each engine in a child process of its own (the same
// binary, re-executed with the hidden flag -engine) and reads the child's
// peak RSS from getrusage when it exits, so that no engine's memory counts
// against another's.
//
// cmd/sstcopy shows package sstable used from outside the store's module,
// with exported types only. It reads a table, writes its
// entries to a new one with other settings (what an ingest tool does), and
// checks the copy entry by entry:
//
//	go run ./cmd/sstcopy -demo /tmp/t      # writes a source table there first
//	go run ./cmd/sstcopy -compression zstd -bits-per-key 16 SRC.sst DST.sst
//
// # Raft
//
// Package bench/raftbench times raft's StoreLogs on bloomkv (module
// github.com/bloomkv/bloomkv/raftstore, through a replace of ../raftstore)
// against github.com/hashicorp/raft-boltdb/v2, synced batches of 1 and 64
// entries, and checks the two stores against each other:
//
//	go test -run='^$' -bench=StoreLogs -count=6 ./raftbench | tee raft.txt
//	benchstat -col /store raft.txt
//
// Command bench/cmd/raftnode runs bloomkv-node (package raftstore/node) on
// loopback, three nodes and one, with raft's log on bloomkv or on
// raft-boltdb (node.Config.LogStore), and prints the writes/s and
// linearizable reads/s of concurrent clients:
//
//	go run ./cmd/raftnode -clients 8 -duration 5s -rounds 2
//
// hashicorp/raft is at v1.7.2, the release approved for this project
// (v1.8.0 is served but not approved), with raft-boltdb/v2 v2.3.1 beside
// it and hashicorp/go-metrics v0.5.4, which raft v1.7.2 requires and which
// still has the compat package raft-boltdb imports.
//
// Timings on a shared machine are noisy: compare medians over several runs
// (-count, -runs), not one, and prefer CPU time to wall-clock time. While
// other work holds the cores, a benchmark's wall-clock time grows with the
// time it waits for one, which has nothing to do with the filter; its CPU
// time does not. filtercmp judges the targets by CPU time for that reason.
//
// # Transactions
//
// cmd/txncmp runs read-modify-write transactions — read a random key's
// counter, write it back incremented, retry on a conflict — on goroutines
// sharing a store of n keys, through bloomkv's transactions (Commit
// NoSync) and Badger's db.Update (SyncWrites false), both in one process,
// one after the other, bloomkv at Badger's default memtable (64 MiB) and
// block cache (256 MiB) sizes; it checks that the counters sum to the
// transactions run, and prints each engine's transactions a second and
// their ratio:
//
//	go run ./cmd/txncmp                        # 1,000,000 keys, 2 goroutines, 200,000 transactions
//	go run ./cmd/txncmp -n 100000 -txns 50000 -engine bloomkv -cpuprofile txn.prof
package bench

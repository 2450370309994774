// Command txncmp compares bloomkv's transactions with Badger's: the
// throughput of goroutines running read-modify-write transactions — read
// a random key's counter, write it back incremented — on a store of -n
// keys, through bloomkv's DB.Update-style transactions (Commit NoSync) and
// Badger's db.Update (SyncWrites false, its default), retrying each
// transaction on a conflict. Both stores are loaded with the same keys and
// 100-byte values first (bloomkv by NoSync batches, Badger by a
// WriteBatch), each in a fresh directory, and both run in this one
// process, one after the other, so that their figures compare.
//
//	go run ./cmd/txncmp                        # 1,000,000 keys, 2 goroutines, 200,000 transactions
//	go run ./cmd/txncmp -n 100000 -txns 50000
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/dgraph-io/badger/v4"
)

var (
	nKeys   = flag.Int("n", 1_000_000, "keys in the store")
	txns    = flag.Int("txns", 200_000, "transactions to run, over all goroutines")
	workers = flag.Int("goroutines", 2, "goroutines running transactions")
	dir     = flag.String("dir", "", "directory for the stores (default: a temporary one, removed)")
	only    = flag.String("engine", "", "run only this engine (bloomkv or badger)")
	verbose = flag.Bool("v", false, "print bloomkv's block cache counters at the end")
	profile = flag.String("cpuprofile", "", "write a CPU profile of the transactions (not the loads) to this file")
)

const valueSize = 100

func key(i int) []byte { return fmt.Appendf(nil, "key%012d", i) }

// bump returns v with its counter, its first 8 bytes, incremented.
func bump(v []byte) []byte {
	out := make([]byte, valueSize)
	copy(out, v)
	binary.LittleEndian.PutUint64(out, binary.LittleEndian.Uint64(out)+1)
	return out
}

// engine is one store under test: load fills it, rmw runs one
// read-modify-write transaction of key and reports a conflict as
// errConflict, total sums the counters.
type engine struct {
	name  string
	load  func() error
	rmw   func(k []byte) error
	total func() (uint64, error)
	close func() error
}

var errConflict = errors.New("conflict")

func bloomkvEngine(path string) (*engine, error) {
	// Badger's defaults: 64 MiB memtables, a 256 MiB block cache.
	db, err := bloomkv.Open(path, &bloomkv.Options{MemtableSize: 64 << 20, BlockCacheSize: 256 << 20})
	if err != nil {
		return nil, err
	}
	return &engine{
		name: "bloomkv",
		load: func() error {
			b := bloomkv.NewBatch()
			for i := range *nKeys {
				b.Set(key(i), make([]byte, valueSize))
				if b.Len() == 1000 || i == *nKeys-1 {
					if err := db.Apply(b, bloomkv.NoSync); err != nil {
						return err
					}
					b.Reset()
				}
			}
			return db.Flush()
		},
		rmw: func(k []byte) error {
			txn, err := db.NewTransaction(true)
			if err != nil {
				return err
			}
			defer txn.Discard()
			v, err := txn.Get(k)
			if err != nil {
				return err
			}
			if err := txn.Set(k, bump(v)); err != nil {
				return err
			}
			err = txn.Commit(bloomkv.NoSync)
			if errors.Is(err, bloomkv.ErrConflict) {
				return errConflict
			}
			return err
		},
		total: func() (sum uint64, err error) {
			err = db.Scan(nil, nil, func(_, v []byte) error {
				sum += binary.LittleEndian.Uint64(v)
				return nil
			})
			return sum, err
		},
		close: func() error {
			if *verbose {
				m := db.Metrics()
				fmt.Printf("bloomkv: block cache %d hits, %d misses\n", m.BlockCache.Hits, m.BlockCache.Misses)
			}
			return db.Close()
		},
	}, nil
}

func badgerEngine(path string) (*engine, error) {
	db, err := badger.Open(badger.DefaultOptions(path).WithLogger(nil).WithSyncWrites(false))
	if err != nil {
		return nil, err
	}
	return &engine{
		name: "badger",
		load: func() error {
			wb := db.NewWriteBatch()
			for i := range *nKeys {
				if err := wb.Set(key(i), make([]byte, valueSize)); err != nil {
					return err
				}
			}
			return wb.Flush()
		},
		rmw: func(k []byte) error {
			err := db.Update(func(txn *badger.Txn) error {
				item, err := txn.Get(k)
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				return txn.Set(k, bump(v))
			})
			if errors.Is(err, badger.ErrConflict) {
				return errConflict
			}
			return err
		},
		total: func() (sum uint64, err error) {
			err = db.View(func(txn *badger.Txn) error {
				it := txn.NewIterator(badger.DefaultIteratorOptions)
				defer it.Close()
				for it.Rewind(); it.Valid(); it.Next() {
					if err := it.Item().Value(func(v []byte) error {
						sum += binary.LittleEndian.Uint64(v)
						return nil
					}); err != nil {
						return err
					}
				}
				return nil
			})
			return sum, err
		},
		close: db.Close,
	}, nil
}

// result is one engine's run.
type result struct {
	load             time.Duration
	run              time.Duration
	conflicts, total uint64
}

func run(e *engine) (result, error) {
	var r result
	start := time.Now()
	if err := e.load(); err != nil {
		return r, fmt.Errorf("load: %w", err)
	}
	r.load = time.Since(start)
	var (
		next      atomic.Int64
		conflicts atomic.Uint64
		wg        sync.WaitGroup
		errs      = make(chan error, *workers)
	)
	if *profile != "" {
		f, err := os.Create(*profile + "." + e.name)
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return r, err
		}
	}
	start = time.Now()
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 39))
			for next.Add(1) <= int64(*txns) {
				k := key(rng.IntN(*nKeys))
				for {
					err := e.rmw(k)
					if err == errConflict {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	r.run = time.Since(start)
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	close(errs)
	if err := <-errs; err != nil {
		return r, fmt.Errorf("transactions: %w", err)
	}
	r.conflicts = conflicts.Load()
	total, err := e.total()
	if err != nil {
		return r, fmt.Errorf("sum: %w", err)
	}
	if r.total = total; total != uint64(*txns) {
		return r, fmt.Errorf("the counters sum to %d after %d committed increments", total, *txns)
	}
	return r, nil
}

func main() {
	flag.Parse()
	root := *dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "txncmp-"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(root)
	}
	fmt.Printf("%d keys, %d read-modify-write transactions on %d goroutines\n", *nKeys, *txns, *workers)
	fmt.Printf("%-8s %10s %10s %12s %10s\n", "engine", "load", "run", "txns/s", "conflicts")
	rate := map[string]float64{}
	for _, open := range []func(string) (*engine, error){bloomkvEngine, badgerEngine} {
		e, err := open(fmt.Sprintf("%s/%d", root, len(rate)))
		if err != nil {
			log.Fatal(err)
		}
		if *only != "" && e.name != *only {
			e.close()
			continue
		}
		r, err := run(e)
		if cerr := e.close(); err == nil {
			err = cerr
		}
		if err != nil {
			log.Fatalf("%s: %v", e.name, err)
		}
		rate[e.name] = float64(*txns) / r.run.Seconds()
		fmt.Printf("%-8s %10s %10s %12.0f %10d\n", e.name, r.load.Round(time.Millisecond), r.run.Round(time.Millisecond), rate[e.name], r.conflicts)
	}
	if len(rate) == 2 {
		fmt.Printf("bloomkv / badger: %.2fx the transactions a second\n", rate["bloomkv"]/rate["badger"])
	}
}

// Command raftnode measures bloomkv-node's throughput on loopback: writes/s
// and linearizable reads/s of concurrent clients (package client, over
// HTTP) against a three-node cluster and a single node of the same code
// (package node, in this process), each with raft's log on bloomkv
// (raftstore.Store, the node's own) and on raft-boltdb v2 (the bbolt store
// Consul and Vault use), which Config.LogStore swaps in. raft-boltdb stays
// in this module, so that raftstore's users never download bbolt.
//
// Usage, from the bench module's directory:
//
//	go run ./cmd/raftnode [-clients 8] [-duration 5s] [-rounds 2] [-value 100]
//
// Each round runs every setup in turn (the order turning by one each
// round, so that a burst of load on a shared machine does not land on one
// setup only): a fresh cluster, a write phase (puts of random keys among
// 100,000), then a read phase (linearizable gets of the keys written). It
// prints each setup's writes/s and reads/s, summed over its rounds, and
// their ratios to the single node on bloomkv, the figures of one process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/bloomkv/bloomkv/internal/freeport"
	"github.com/bloomkv/bloomkv/raftstore/client"
	"github.com/bloomkv/bloomkv/raftstore/node"
)

type setup struct {
	name  string
	nodes int
	bolt  bool
}

var setups = []setup{
	{"1 node, bloomkv log", 1, false},
	{"3 nodes, bloomkv log", 3, false},
	{"1 node, raft-boltdb log", 1, true},
	{"3 nodes, raft-boltdb log", 3, true},
}

const keySpace = 100000

func main() {
	clients := flag.Int("clients", 8, "concurrent clients")
	duration := flag.Duration("duration", 5*time.Second, "length of each write and each read phase")
	rounds := flag.Int("rounds", 2, "rounds over every setup")
	valueSize := flag.Int("value", 100, "value size in bytes")
	flag.Parse()
	type total struct {
		writes, reads int64
		secs          float64
	}
	totals := make([]total, len(setups))
	for round := range *rounds {
		for k := range setups {
			i := (k + round) % len(setups)
			w, r, err := run(setups[i], *clients, *duration, *valueSize)
			if err != nil {
				log.Fatalf("%s: %v", setups[i].name, err)
			}
			fmt.Fprintf(os.Stderr, "round %d %-26s %8.0f writes/s %8.0f reads/s\n", round+1, setups[i].name,
				float64(w)/duration.Seconds(), float64(r)/duration.Seconds())
			totals[i].writes += w
			totals[i].reads += r
			totals[i].secs += duration.Seconds()
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "setup (%d clients, %d-byte values)\twrites/s\treads/s\twrites vs 1 node\treads vs 1 node\t\n", *clients, *valueSize)
	base := totals[0]
	for i, s := range setups {
		t := totals[i]
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2fx\t%.2fx\t\n", s.name, float64(t.writes)/t.secs, float64(t.reads)/t.secs,
			float64(t.writes)/float64(base.writes), float64(t.reads)/float64(base.reads))
	}
	_ = tw.Flush()
}

// run starts a cluster of s, runs the write and the read phase, and
// returns the operations each completed.
func run(s setup, clients int, d time.Duration, valueSize int) (writes, reads int64, err error) {
	dir, err := os.MkdirTemp("", "raftnode")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	nodes, closers, err := startCluster(dir, s)
	defer func() {
		for _, n := range nodes {
			_ = n.Close()
		}
		for _, c := range closers {
			_ = c()
		}
	}()
	if err != nil {
		return 0, 0, err
	}
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.HTTPAddr())
	}
	c, err := client.New(addrs, nil)
	if err != nil {
		return 0, 0, err
	}
	ctx := context.Background()
	if err := c.Put(ctx, "warm-up", []byte("x")); err != nil { // waits for a leader
		return 0, 0, err
	}
	value := make([]byte, valueSize)
	writes, err = phase(clients, d, func(rng *rand.Rand) error {
		return c.Put(ctx, fmt.Sprintf("key%06d", rng.IntN(keySpace)), value)
	})
	if err != nil {
		return 0, 0, err
	}
	reads, err = phase(clients, d, func(rng *rand.Rand) error {
		_, err := c.Get(ctx, fmt.Sprintf("key%06d", rng.IntN(keySpace)))
		if errors.Is(err, client.ErrNotFound) {
			return nil
		}
		return err
	})
	return writes, reads, err
}

// phase runs op from clients goroutines for d and counts the calls that
// returned.
func phase(clients int, d time.Duration, op func(*rand.Rand) error) (int64, error) {
	var done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for time.Now().Before(stop) {
				if err := op(rng); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return done.Load(), firstErr
}

// startCluster starts s.nodes nodes in this process, bootstrapped
// together, each with its log on bloomkv or on raft-boltdb, and the
// functions that close the raft-boltdb stores once the nodes are closed.
func startCluster(dir string, s setup) (nodes []*node.Node, closers []func() error, err error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Raft addresses first, so that every node bootstraps the same
	// configuration: free ports, held by the nodes' listeners.
	boot := map[string]string{}
	addrs := make([]string, s.nodes)
	for i := range addrs {
		a, err := freeport.PickAddr()
		if err != nil {
			return nil, nil, err
		}
		addrs[i] = a
		boot[fmt.Sprintf("n%d", i)] = a
	}
	for i := range s.nodes {
		cfg := node.Config{
			ID: fmt.Sprintf("n%d", i), Dir: filepath.Join(dir, fmt.Sprintf("n%d", i)),
			HTTPAddr: "127.0.0.1:0", RaftAddr: addrs[i], Bootstrap: boot,
			Logger: quiet, RaftLogOutput: io.Discard,
		}
		if s.bolt {
			if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
				return nodes, closers, err
			}
			bs, err := raftboltdb.NewBoltStore(filepath.Join(cfg.Dir, "raft.db"))
			if err != nil {
				return nodes, closers, err
			}
			cfg.LogStore, cfg.StableStore = bs, bs
			closers = append(closers, bs.Close)
		}
		n, err := node.Start(cfg)
		if err != nil {
			return nodes, closers, err
		}
		nodes = append(nodes, n)
	}
	return nodes, closers, nil
}

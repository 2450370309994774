// Command counter increments one counter of a bloomkv-node cluster from
// several workers at once, each increment a read and a compare-and-set
// retried until it holds, and prints the final value: exactly the
// increments made, however they interleave (or fails, naming the
// increment whose outcome it could not learn).
//
//	go run ./examples/counter -nodes 127.0.0.1:8001,127.0.0.1:8002,127.0.0.1:8003 [-workers 8] [-increments 50]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/bloomkv/bloomkv/raftstore/client"
)

func main() {
	nodes := flag.String("nodes", "127.0.0.1:8001,127.0.0.1:8002,127.0.0.1:8003", "the cluster's HTTP addresses, comma-separated")
	key := flag.String("key", "counter", "the counter's key")
	workers := flag.Int("workers", 8, "concurrent workers")
	increments := flag.Int("increments", 50, "increments per worker")
	flag.Parse()
	c, err := client.New(strings.Split(*nodes, ","), nil)
	if err == nil {
		var v int
		v, err = count(context.Background(), c, *key, *workers, *increments)
		fmt.Printf("%s = %d\n", *key, v)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "counter:", err)
		os.Exit(1)
	}
}

// count adds workers × increments to the counter at key (absent counts as
// 0) and returns its value after the last one.
func count(ctx context.Context, c *client.Client, key string, workers, increments int) (int, error) {
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range increments {
				if err := increment(ctx, c, key); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	v, _, err := get(ctx, c, key)
	return v, err
}

// increment adds one to the counter: it reads the value and sets it one
// higher if it still holds that value, until the compare-and-set holds.
func increment(ctx context.Context, c *client.Client, key string) error {
	for {
		v, raw, err := get(ctx, c, key)
		if err != nil {
			return err
		}
		ok, err := c.CAS(ctx, key, raw, []byte(strconv.Itoa(v+1)))
		if errors.Is(err, client.ErrUnknownOutcome) {
			return fmt.Errorf("an increment of %d may or may not have been made: %w", v, err)
		}
		if err != nil || ok {
			return err
		}
	}
}

// get returns the counter's value and its bytes (nil when absent).
func get(ctx context.Context, c *client.Client, key string) (int, []byte, error) {
	raw, err := c.Get(ctx, key)
	if errors.Is(err, client.ErrNotFound) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, nil, fmt.Errorf("%s holds %q, not a counter", key, raw)
	}
	return v, raw, nil
}

package redisbloom_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/bloomkv/bloomkv/bloom/redisbloom"
	"github.com/redis/go-redis/v9"
)

// Every replica runs the same code: the first Create makes the filter, the
// others open it, and all of them see each other's adds. (It needs a Redis
// server, so it is compiled but not run by go test.)
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()

	blocked, err := redisbloom.Create(ctx, rdb, "blocked-accounts", 1_000_000, 0.001)
	if err != nil {
		log.Fatal(err)
	}
	if err := blocked.Add(ctx, []byte("acct-17"), []byte("acct-42")); err != nil {
		log.Fatal(err)
	}
	maybe, err := blocked.MayContain(ctx, []byte("acct-17"), []byte("acct-99"))
	if err != nil {
		// Not "absent": an error says nothing about the items.
		log.Fatal(err)
	}
	fmt.Println(maybe[0], maybe[1]) // true false, unless acct-99 is a false positive
}

// A monitor watches how full a shared filter is: past about one half it
// holds more items than it was sized for, and its false-positive rate has
// grown past the target. (It needs a Redis server, so it is compiled but
// not run by go test.)
func ExampleFilter_LoadFactor() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()

	f, err := redisbloom.Open(ctx, rdb, "blocked-accounts")
	if err != nil {
		log.Fatal(err)
	}
	fill, err := f.LoadFactor(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.1f%% of %d bits set, false-positive rate about %.3f%%\n",
		100*fill, f.Bits(), 100*math.Pow(fill, float64(f.Probes())))
}

package redisbloom

import (
	"context"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The benchmarks compare, per batch size, items per second through:
//
//	redisbloom  this package: one script per batch, one round trip
//	bitfield    one bare BITFIELD / BITFIELD_RO per batch, without the
//	            scripts' meta check: what the check costs
//	naive       one SETBIT / GETBIT round trip per bit, the approach the
//	            package exists to avoid
//	local       a bloom.Classic in memory
//
// Redis runs on loopback on the same machine. MayContain queries present
// items, so that every approach reads all k bits.

const (
	benchN = 1_000_000
	benchP = 0.01
)

var benchBatches = []int{1, 100, 1000}

type benchTarget struct {
	name       string
	add        func(ctx context.Context, items [][]byte) error
	mayContain func(ctx context.Context, items [][]byte) ([]bool, error)
}

func benchTargets(rdb *redis.Client, f *Filter, local *bloom.Classic) []benchTarget {
	_, bitsKey := Keys(f.Name())
	m, k := f.Bits(), f.Probes()
	return []benchTarget{
		{"redisbloom", func(ctx context.Context, items [][]byte) error { return f.Add(ctx, items...) },
			func(ctx context.Context, items [][]byte) ([]bool, error) { return f.MayContain(ctx, items...) }},
		{"bitfield", func(ctx context.Context, items [][]byte) error {
			return rdb.BitField(ctx, bitsKey, bitfieldArgs(items, m, k, "SET")...).Err()
		}, func(ctx context.Context, items [][]byte) ([]bool, error) {
			bits, err := rdb.BitFieldRO(ctx, bitsKey, bitfieldArgs(items, m, k, "GET")...).Result()
			if err != nil {
				return nil, err
			}
			out := make([]bool, len(items))
			for i := range out {
				out[i] = true
				for _, bit := range bits[i*k : (i+1)*k] {
					out[i] = out[i] && bit == 1
				}
			}
			return out, nil
		}},
		{"naive", func(ctx context.Context, items [][]byte) error {
			return naiveAdd(ctx, rdb, bitsKey, m, k, items)
		}, func(ctx context.Context, items [][]byte) ([]bool, error) {
			return naiveMayContain(ctx, rdb, bitsKey, m, k, items)
		}},
		{"local", func(_ context.Context, items [][]byte) error {
			for _, item := range items {
				local.Add(item)
			}
			return nil
		}, func(_ context.Context, items [][]byte) ([]bool, error) {
			out := make([]bool, len(items))
			for i, item := range items {
				out[i] = local.MayContain(item)
			}
			return out, nil
		}},
	}
}

// bitfieldArgs is the argument list of one (*redis.Client).BitField (op
// "SET") or BitFieldRO (op "GET") over all the bits of items.
func bitfieldArgs(items [][]byte, m uint64, k int, op string) []any {
	args := make([]any, 0, len(items)*k*4)
	var locs []uint64
	for _, item := range items {
		locs = bloom.ClassicLocations(locs[:0], bloom.Hash(item), m, k)
		for _, i := range locs {
			if op == "SET" {
				args = append(args, "SET", "u1", i, 1)
			} else {
				args = append(args, "u1", i) // BitFieldRO adds the GET
			}
		}
	}
	return args
}

// naiveAdd sets an item's bits one SETBIT round trip at a time.
func naiveAdd(ctx context.Context, rdb *redis.Client, key string, m uint64, k int, items [][]byte) error {
	var locs []uint64
	for _, item := range items {
		locs = bloom.ClassicLocations(locs[:0], bloom.Hash(item), m, k)
		for _, i := range locs {
			if err := rdb.SetBit(ctx, key, int64(i), 1).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// naiveMayContain reads an item's bits one GETBIT round trip at a time,
// stopping at the first clear bit.
func naiveMayContain(ctx context.Context, rdb *redis.Client, key string, m uint64, k int, items [][]byte) ([]bool, error) {
	out := make([]bool, len(items))
	var locs []uint64
	for j, item := range items {
		locs = bloom.ClassicLocations(locs[:0], bloom.Hash(item), m, k)
		out[j] = true
		for _, i := range locs {
			bit, err := rdb.GetBit(ctx, key, int64(i)).Result()
			if err != nil {
				return nil, err
			}
			if bit == 0 {
				out[j] = false
				break
			}
		}
	}
	return out, nil
}

// benchSetup starts a server with a filter (and its local twin) holding a
// pool of items the benchmarks cycle through.
func benchSetup(b testing.TB) ([]benchTarget, [][]byte) {
	rdb := redistest.Start(b).Client()
	ctx := context.Background()
	f, err := Create(ctx, rdb, "bench", benchN, benchP)
	if err != nil {
		b.Fatal(err)
	}
	local, err := bloom.NewClassic(benchN, benchP)
	if err != nil {
		b.Fatal(err)
	}
	pool := make([][]byte, 100_000)
	for i := range pool {
		pool[i] = []byte(fmt.Sprintf("item-%d", i))
		local.Add(pool[i])
	}
	for i := 0; i < len(pool); i += 1000 {
		if err := f.Add(ctx, pool[i:i+1000]...); err != nil {
			b.Fatal(err)
		}
	}
	return benchTargets(rdb, f, local), pool
}

func BenchmarkAdd(b *testing.B) {
	targets, pool := benchSetup(b)
	for _, batch := range benchBatches {
		for _, t := range targets {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, t.name), func(b *testing.B) {
				ctx := context.Background()
				at := 0
				for i := 0; i < b.N; i++ {
					if at+batch > len(pool) {
						at = 0
					}
					if err := t.add(ctx, pool[at:at+batch]); err != nil {
						b.Fatal(err)
					}
					at += batch
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "items/s")
			})
		}
	}
}

func BenchmarkMayContain(b *testing.B) {
	targets, pool := benchSetup(b)
	for _, batch := range benchBatches {
		for _, t := range targets {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, t.name), func(b *testing.B) {
				ctx := context.Background()
				at := 0
				for i := 0; i < b.N; i++ {
					if at+batch > len(pool) {
						at = 0
					}
					got, err := t.mayContain(ctx, pool[at:at+batch])
					if err != nil {
						b.Fatal(err)
					}
					if !got[0] || !got[batch-1] {
						b.Fatal("false negative")
					}
					at += batch
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "items/s")
			})
		}
	}
}

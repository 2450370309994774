package redisbloom

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"testing"
)

// TestLoadFactor checks the Redis filter's LoadFactor against three
// oracles as it fills: the bits set counted directly in the bits key's
// string (GET and a popcount here), the LoadFactor of a local bloom.Classic
// given the same items, and the expected fill 1 − (1 − 1/m)^(kn) within
// five binomial standard deviations. A lost or recreated filter is an
// error, not a load factor of zero.
func TestLoadFactor(t *testing.T) { onBackends(t, testLoadFactor) }

func testLoadFactor(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	const n = 5000
	f := mustCreate(t, rdb, "fill", n, 0.01)
	local := mustNewClassic(t, n, 0.01)
	_, bitsKey := Keys("fill")
	all := items("fill", 0, 2*n)
	for _, upTo := range []int{0, 1, n / 10, n, 2 * n} {
		if upTo > 0 {
			batch := all[:upTo]
			if err := f.Add(ctx, batch...); err != nil {
				t.Fatal(err)
			}
			for _, item := range batch {
				local.Add(item)
			}
		}
		got, err := f.LoadFactor(ctx)
		if err != nil {
			t.Fatalf("%d items: %v", upTo, err)
		}
		raw, err := rdb.Get(ctx, bitsKey).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		set := 0
		for _, b := range raw {
			set += bits.OnesCount8(b)
		}
		if want := float64(set) / float64(f.Bits()); got != want {
			t.Fatalf("%d items: LoadFactor %v, the bits key has %d of %d bits set", upTo, got, set, f.Bits())
		}
		if want := local.LoadFactor(); got != want {
			t.Fatalf("%d items: LoadFactor %v, the local filter's %v", upTo, got, want)
		}
		m := float64(f.Bits())
		q := -math.Expm1(float64(f.Probes()*upTo) * math.Log1p(-1/m))
		if tol := 5*math.Sqrt(q*(1-q)/m) + 1e-12; math.Abs(got-q) > tol {
			t.Fatalf("%d items: LoadFactor %.5f, expected %.5f ± %.5f", upTo, got, q, tol)
		}
	}

	// Deleted, recreated with other parameters, or without its bits key:
	// errors, never a load factor of zero.
	if err := Delete(ctx, rdb, "fill"); err != nil {
		t.Fatal(err)
	}
	if lf, err := f.LoadFactor(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LoadFactor of a deleted filter = %v, %v; want ErrNotFound", lf, err)
	}
	small := mustCreate(t, rdb, "fill", 10, 0.01)
	if lf, err := f.LoadFactor(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("LoadFactor of a recreated filter = %v, %v; want ErrConflict", lf, err)
	}
	rdb.Del(ctx, bitsKey)
	if lf, err := small.LoadFactor(ctx); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("LoadFactor without the bits key = %v, %v; want ErrCorrupt", lf, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := small.LoadFactor(canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("LoadFactor with a canceled context: %v, want context.Canceled", err)
	}
}

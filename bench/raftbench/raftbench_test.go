package raftbench

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

func openStores(tb testing.TB) []Store {
	tb.Helper()
	stores, err := OpenStores(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, s := range stores {
			_ = s.Close()
		}
	})
	return stores
}

// BenchmarkStoreLogs stores synced batches of 256-byte entries; the
// entries/s metric is what raft's leader can append to its own log.
func BenchmarkStoreLogs(b *testing.B) {
	for _, batch := range []int{1, 64} {
		for _, s := range openStores(b) {
			b.Run(fmt.Sprintf("store=%s/batch=%d", s.Name, batch), func(b *testing.B) {
				next := uint64(1)
				if last, err := s.LastIndex(); err == nil {
					next = last + 1
				}
				b.SetBytes(int64(batch * 256))
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					logs := Entries(next, batch, 256)
					next += uint64(batch)
					b.StartTimer()
					if err := s.StoreLogs(logs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "entries/s")
			})
		}
	}
}

// TestSameAsBoltDB runs the same random StoreLogs and DeleteRange calls —
// appends, overwrites of a suffix (a new leader's entries), compactions of a
// prefix — on both stores, with raft-boltdb as the oracle.
func TestSameAsBoltDB(t *testing.T) {
	stores := openStores(t)
	kv, bolt := stores[0], stores[1]
	rng := rand.New(rand.NewPCG(11, 12))
	last := uint64(0)
	for step := range 200 {
		switch r := rng.IntN(10); {
		case r < 6:
			first := last + 1
			if last > 5 && rng.IntN(3) == 0 {
				first = last - uint64(rng.IntN(5)) // overwrite a suffix
			}
			logs := Entries(first, 1+rng.IntN(40), rng.IntN(600))
			for _, l := range logs {
				l.Term = uint64(step)
				l.Extensions = []byte{byte(step)}
			}
			for _, s := range stores {
				if err := s.StoreLogs(logs); err != nil {
					t.Fatal(err)
				}
			}
			last = max(last, logs[len(logs)-1].Index)
		default:
			lo := uint64(rng.IntN(int(last) + 2))
			hi := lo + uint64(rng.IntN(50))
			for _, s := range stores {
				if err := s.DeleteRange(lo, hi); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range []func(raft.LogStore) (uint64, error){raft.LogStore.FirstIndex, raft.LogStore.LastIndex} {
			a, errA := f(kv)
			b, errB := f(bolt)
			if a != b || errA != nil || errB != nil {
				t.Fatalf("step %d: bloomkv %d (%v), boltdb %d (%v)", step, a, errA, b, errB)
			}
		}
	}
	for i := uint64(0); i <= last+1; i++ {
		var a, b raft.Log
		errA, errB := kv.GetLog(i, &a), bolt.GetLog(i, &b)
		if errA != errB {
			t.Fatalf("GetLog(%d): bloomkv %v, boltdb %v", i, errA, errB)
		}
		if errA == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("GetLog(%d): bloomkv %+v, boltdb %+v", i, a, b)
		}
	}
}

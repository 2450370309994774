package bloomkv_test

import (
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// BenchmarkFillRandom times NoSync Puts of 16-byte keys in random order
// with 100-byte values on a fresh DB, with the options the peers runner
// (bench/cmd/peers) gives bloomkv. Run it as the runner's fill:
//
//	go test -run='^$' -bench=FillRandom -benchtime=1000000x -count=6 .
func BenchmarkFillRandom(b *testing.B) {
	fillRandom(b, func(db *bloomkv.DB, key, value []byte) error { return db.Put(key, value, bloomkv.NoSync) })
}

// BenchmarkFillRandomTTL is BenchmarkFillRandom with every Put a
// PutWithTTL of an hour (nothing expires during the run): what a
// time-to-live costs a write, 8 bytes of expiry an entry and a clock
// reading a commit. Compare the two in one run:
//
//	go test -run='^$' -bench='FillRandom(TTL)?$' -benchtime=300000x -count=6 .
func BenchmarkFillRandomTTL(b *testing.B) {
	fillRandom(b, func(db *bloomkv.DB, key, value []byte) error {
		return db.PutWithTTL(key, value, time.Hour, bloomkv.NoSync)
	})
}

// fillRandom is BenchmarkFillRandom's body, each write made by put.
func fillRandom(b *testing.B, put func(db *bloomkv.DB, key, value []byte) error) {
	keys, err := workload.NewKeys(max(b.N, 1), workload.DefaultKeySize, workload.DefaultValueSize, workload.DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	db, err := bloomkv.Open(b.TempDir(), peersOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	order := make([]int, b.N)
	for i := range order {
		order[i] = i
	}
	// A fixed permutation (Fisher–Yates with a xorshift), so runs compare.
	x := uint64(0x9e3779b97f4a7c15)
	for i := len(order) - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	key := make([]byte, 0, workload.DefaultKeySize)
	b.SetBytes(int64(workload.DefaultKeySize + workload.DefaultValueSize))
	b.ReportAllocs()
	b.ResetTimer()
	for _, i := range order {
		key = keys.Present(key, i)
		if err := put(db, key, keys.Value(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	m := db.Metrics()
	b.ReportMetric(m.WriteStallDuration.Seconds(), "stall-s")
	b.ReportMetric(float64(m.WriteStalls), "stalls")
}

package bloomkv_test

import (
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// BenchmarkFillRandom times NoSync Puts of 16-byte keys in random order
// with 100-byte values on a fresh DB, with the options the peers runner
// (bench/cmd/peers) gives bloomkv. Run it as the runner's fill:
//
//	go test -run='^$' -bench=FillRandom -benchtime=1000000x -count=6 .
func BenchmarkFillRandom(b *testing.B) {
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
		if err := db.Put(key, keys.Value(i), bloomkv.NoSync); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	m := db.Metrics()
	b.ReportMetric(m.WriteStallDuration.Seconds(), "stall-s")
	b.ReportMetric(float64(m.WriteStalls), "stalls")
}

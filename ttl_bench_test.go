package bloomkv_test

import (
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/bloomkv/bloomkv/vfs"
)

// BenchmarkPutTTL times NoSync writes of the peers runner's keys (16
// bytes) and values (100 bytes) into one memtable large enough that
// nothing is flushed, on a MemFS: the write path alone — batch, WAL
// record, memtable insert — plain (Put) and with a time-to-live
// (PutWithTTL: 8 bytes of expiry and a clock reading more). cpu-ns/op is
// the process's CPU time per write, steadier than the wall time on a
// shared machine. Compare the two in one run:
//
//	go test -run='^$' -bench=PutTTL -benchtime=300000x -count=6 .
func BenchmarkPutTTL(b *testing.B) {
	keys, err := workload.NewKeys(1<<20, workload.DefaultKeySize, workload.DefaultValueSize, workload.DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"Put", "PutWithTTL"} {
		b.Run(mode, func(b *testing.B) {
			db, err := bloomkv.Open("db", &bloomkv.Options{FS: vfs.NewMem(), MemtableSize: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			key := make([]byte, 0, workload.DefaultKeySize)
			b.SetBytes(int64(workload.DefaultKeySize + workload.DefaultValueSize))
			b.ReportAllocs()
			cpu, n := cpuTime(), 0
			for ; b.Loop(); n++ {
				i := n % keys.N
				key = keys.Present(key, i)
				if mode == "Put" {
					err = db.Put(key, keys.Value(i), bloomkv.NoSync)
				} else {
					err = db.PutWithTTL(key, keys.Value(i), time.Hour, bloomkv.NoSync)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(n), "cpu-ns/op")
		})
	}
}

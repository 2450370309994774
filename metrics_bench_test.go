package bloomkv

import (
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// BenchmarkMetrics measures DB.Metrics on a tree of about fifty tables of
// about two thousand keys (it reports the count), whose Bloom filters'
// bits per key differ by table (a filter's size is whole 512-bit blocks):
// its cost grows with the tables, and a monitor or a benchmark's sampler
// may call it several times a second.
func BenchmarkMetrics(b *testing.B) {
	d, err := Open("/db", &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, TargetFileSize: 32 << 10, BaseLevelSize: 256 << 10})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	value := make([]byte, 100)
	for i := range 100_000 {
		if err := d.Put(fmt.Appendf(nil, "key%08d", i*7919%100_000), value, NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	tables := 0
	for _, l := range d.Metrics().Levels {
		tables += l.Tables
	}
	b.ResetTimer()
	for range b.N {
		_ = d.Metrics()
	}
	b.ReportMetric(float64(tables), "tables")
}

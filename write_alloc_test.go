package bloomkv

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestPutReusesItsBatch measures the bytes the Go heap gives single-key
// Puts, each of a key not written before, with values up to the largest
// whose batch the pool of single writes keeps (maxPooledBatch): under a
// KiB a Put, whatever the value's size, since each reuses a pooled batch
// buffer. With the pool keeping buffers of at most 4 KiB, a Put of a 4 KiB
// value allocated more than its value's bytes each time, half the CPU of
// a fill of such values. Under the race detector, whose sync.Pool drops a
// quarter of what it is given, the bytes are not checked.
func TestPutReusesItsBatch(t *testing.T) {
	// The OS file system: a MemFS's WAL would grow on the Go heap.
	d, err := Open(t.TempDir(), &Options{FS: vfs.Default, MemtableSize: 256 << 20, ValueSeparation: ValueSeparation{MinSize: ValueSeparationOff}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const runs = 200
	keys := make([][]byte, 4*(runs+1))
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key%06d", i)
	}
	next := 0
	for _, size := range []int{100, 4 << 10, 16 << 10, maxPooledBatch - 64} {
		value := make([]byte, size)
		put := func() {
			if err := d.Put(keys[next], value, NoSync); err != nil {
				t.Fatal(err)
			}
			next++
		}
		put() // the pool's first batch grows to the value's size
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			put()
		}
		runtime.ReadMemStats(&after)
		perPut := float64(after.TotalAlloc-before.TotalAlloc) / runs
		if !race.Enabled && perPut >= 1<<10 {
			t.Errorf("a Put of a %d-byte value: %.0f bytes allocated, want under 1 KiB", size, perPut)
		}
	}
}

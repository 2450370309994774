//go:build !race

package bloomkv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/procstat"
)

// rssAnon returns the process's anonymous resident memory (RssAnon in
// /proc/self/status), in bytes: its heap and mappings, without the
// binary's pages or the page cache.
func rssAnon(t *testing.T) int64 {
	t.Helper()
	r, err := procstat.ReadResident()
	if err != nil {
		t.Fatal(err)
	}
	return r.Anon
}

// memoryChildEnv, set, makes TestMemoryAccounted run its body: it is then
// the child process TestMemoryAccounted starts.
const memoryChildEnv = "BLOOMKV_MEMORY_CHILD"

// TestMemoryAccounted checks Metrics.Memory against the kernel's count of
// the process's anonymous resident memory, at points where each part is
// large in turn: memtables full, a block cache full, filters and indexes
// of many tables. The parts must add up to RssAnon within 10%. The
// oracle is the whole process's, so the test runs in a child process of
// its own, which holds nothing but the DB: in this one, the memory that
// the tests before it left to the Go runtime, resident and unaccounted,
// made RssAnon 12–18% larger. Not under the race detector, whose shadow
// memory is resident too (make test runs it without).
func TestMemoryAccounted(t *testing.T) {
	if os.Getenv(memoryChildEnv) == "" {
		out := runTestChild(t, "TestMemoryAccounted", memoryChildEnv+"=1")
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "RssAnon") {
				t.Log(strings.TrimSpace(line))
			}
		}
		return
	}
	d, err := Open(t.TempDir(), &Options{MemtableSize: 32 << 20, BlockCacheSize: 32 << 20, MaxImmutableMemtables: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	value := make([]byte, 100)
	put := func(n int) {
		for range n {
			for i := range value {
				value[i] = byte(rng.Uint32())
			}
			if err := d.Put(fmt.Appendf(nil, "%016d", rng.IntN(1<<40)), value, NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string) {
		t.Helper()
		m := d.Metrics().Memory
		rss := rssAnon(t)
		t.Logf("%s: RssAnon %d MiB, accounted %d MiB: %+v", when, rss>>20, m.Total()>>20, m)
		if diff := m.Total() - rss; diff < -rss/10 || diff > rss/10 {
			t.Errorf("%s: Metrics.Memory adds up to %d bytes, RssAnon is %d: off by %.1f%%", when, m.Total(), rss, 100*float64(diff)/float64(rss))
		}
	}
	put(200_000) // about 25 MiB in the memtable
	check("memtable nearly full")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	put(600_000)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after flushes")
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	check("after a scan that fills the block cache")
}

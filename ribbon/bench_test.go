package ribbon

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/fuse"
)

// The benchmarks compare Ribbon filters with binary fuse filters (package
// fuse) of the same false-positive rate, 2^-8 and 2^-16, in one run: same
// keys, same machine, same moment. Keys are random 64-bit hashes made
// before the timer starts.
var benchWidths = []int{8, 16}

// benchSet returns n member hashes and n hashes not in the set.
var benchSet = sync.OnceValue(func() map[int][2][]uint64 {
	sets := map[int][2][]uint64{}
	for _, n := range []int{10_000, 1_000_000} {
		absent := make([]uint64, 0, n)
		probes(n, 99, func(h uint64) { absent = append(absent, h) })
		sets[n] = [2][]uint64{randomHashes(n, 1), absent}
	}
	return sets
})

// reportPerKey reports the wall time per key and, where it is measured
// (cpuTime), the CPU time per key since cpu0.
func reportPerKey(b *testing.B, n int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
	if cpu0 > 0 {
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/key")
	}
}

// A benchFilter is a filter of either family, as the benchmarks use it.
type benchFilter interface {
	MayContainHash(h uint64) bool
	BitsPerKey() float64
	ExpectedFalsePositiveRate() float64
}

// benchFamilies builds a filter of each family.
var benchFamilies = []struct {
	name  string
	build func(hashes []uint64, bits int) (benchFilter, error)
}{
	{"ribbon", func(hs []uint64, r int) (benchFilter, error) { return Build(hs, r) }},
	{"fuse", func(hs []uint64, w int) (benchFilter, error) { return fuse.Build(hs, w) }},
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		hashes := benchSet()[n][0]
		for _, w := range benchWidths {
			for _, fam := range benchFamilies {
				b.Run(fmt.Sprintf("%s-%d/n=%d", fam.name, w, n), func(b *testing.B) {
					var f benchFilter
					cpu0 := cpuTime()
					for range b.N {
						var err error
						if f, err = fam.build(hashes, w); err != nil {
							b.Fatal(err)
						}
					}
					reportPerKey(b, n, cpu0)
					b.ReportMetric(f.BitsPerKey(), "bits/key")
				})
			}
		}
	}
}

// BenchmarkMayContainHash queries filters of a million keys with members
// ("hits") and non-members ("misses") in random order, so most queries
// miss the CPU caches as they would in a store whose filters outgrow them.
func BenchmarkMayContainHash(b *testing.B) {
	const n = 1_000_000
	set := benchSet()[n]
	for _, w := range benchWidths {
		for _, fam := range benchFamilies {
			f, err := fam.build(set[0], w)
			if err != nil {
				b.Fatal(err)
			}
			for i, name := range []string{"hits", "misses"} {
				queries := set[i]
				b.Run(fmt.Sprintf("%s-%d/%s", fam.name, w, name), func(b *testing.B) {
					positives, j := 0, 0
					for range b.N {
						if f.MayContainHash(queries[j]) {
							positives++
						}
						if j++; j == len(queries) {
							j = 0
						}
					}
					b.ReportMetric(float64(positives)/float64(b.N), "positive/op")
				})
			}
		}
	}
}

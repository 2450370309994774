package fuse

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/bloom"
)

// The benchmarks compare fuse filters of 8, 12 and 16 bits with the blocked
// Bloom filter every bloomkv table carries, at its default 10 bits per key,
// in one run: same keys, same machine, same moment. Keys are random 64-bit
// hashes made before the timer starts.
const benchBloomBitsPerKey = 10

var benchWidths = []int{8, 12, 16}

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

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		hashes := benchSet()[n][0]
		for _, w := range benchWidths {
			b.Run(fmt.Sprintf("fuse-%d/n=%d", w, n), func(b *testing.B) {
				var f *Filter
				cpu0 := cpuTime()
				for range b.N {
					var err error
					if f, err = Build(hashes, w); err != nil {
						b.Fatal(err)
					}
				}
				reportPerKey(b, n, cpu0)
				b.ReportMetric(f.BitsPerKey(), "bits/key")
			})
		}
		b.Run(fmt.Sprintf("blocked-bloom-%d/n=%d", benchBloomBitsPerKey, n), func(b *testing.B) {
			var f *bloom.Blocked
			cpu0 := cpuTime()
			for range b.N {
				var err error
				if f, err = bloom.BuildBlocked(hashes, benchBloomBitsPerKey); err != nil {
					b.Fatal(err)
				}
			}
			reportPerKey(b, n, cpu0)
			b.ReportMetric(f.BitsPerKey(), "bits/key")
		})
	}
}

// BenchmarkMayContainHash queries filters of a million keys with members
// ("hits") and non-members ("misses") in random order, so most queries
// miss the CPU caches as they would in a store whose filters outgrow them.
func BenchmarkMayContainHash(b *testing.B) {
	const n = 1_000_000
	set := benchSet()[n]
	run := func(b *testing.B, mayContain func(uint64) bool, rate float64) {
		for i, name := range []string{"hits", "misses"} {
			queries := set[i]
			b.Run(name, func(b *testing.B) {
				positives, j := 0, 0
				for range b.N {
					if mayContain(queries[j]) {
						positives++
					}
					if j++; j == len(queries) {
						j = 0
					}
				}
				b.ReportMetric(float64(positives)/float64(b.N), "positive/op")
				if name == "misses" {
					b.ReportMetric(rate, "expected-fpr")
				}
			})
		}
	}
	for _, w := range benchWidths {
		f, err := Build(set[0], w)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("fuse-%d", w), func(b *testing.B) { run(b, f.MayContainHash, f.ExpectedFalsePositiveRate()) })
	}
	f, err := bloom.BuildBlocked(set[0], benchBloomBitsPerKey)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("blocked-bloom-%d", benchBloomBitsPerKey), func(b *testing.B) {
		run(b, f.MayContainHash, f.ExpectedFalsePositiveRate())
	})
}

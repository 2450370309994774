package filters

import (
	"math"
	"sync"
	"testing"
)

// The benchmarks' setting, the issue's: a million keys of 16 bytes at 10
// bits per key, so 10,000,000 bits (1.25 MB) for every filter — more than a
// core's L2 cache, as an LSM store's filters together are.
const (
	benchN          = 1_000_000
	benchBitsPerKey = 10
)

type benchSuite struct {
	present, absent []Key
	filters         []Filter
	fpr             []float64 // filters[i]'s rate measured over absent
}

// loadBenchSuite builds the keys and filters once for all benchmarks, and
// measures the rates once, outside any timed loop.
var loadBenchSuite = sync.OnceValues(func() (*benchSuite, error) {
	s := &benchSuite{
		present: Keys(benchN, PresentTag, Seed),
		absent:  Keys(benchN, AbsentTag, Seed),
	}
	var err error
	if s.filters, err = Build(s.present, benchBitsPerKey); err != nil {
		return nil, err
	}
	for _, f := range s.filters {
		s.fpr = append(s.fpr, MeasureFPR(f, s.absent))
	}
	return s, nil
})

// runEach runs, for every filter, the benchmark that bench returns as a
// sub-benchmark named after the filter, and reports beside its time the
// process CPU time per operation ("cpu-ns/op"; see CPUTime), the filter's
// measured rate ("fpr") and its memory ("filter-bytes").
func runEach(b *testing.B, bench func(s *benchSuite, f Filter) func(*testing.B)) {
	s, err := loadBenchSuite()
	if err != nil {
		b.Fatalf("Build: %v", err)
	}
	for i, f := range s.filters {
		b.Run(f.Name(), func(b *testing.B) {
			b.ReportAllocs()
			if cpu := RunCPU(b, bench(s, f)); !math.IsNaN(cpu) {
				b.ReportMetric(cpu, "cpu-ns/op")
			}
			b.ReportMetric(s.fpr[i], "fpr")
			b.ReportMetric(float64(f.Bytes()), "filter-bytes")
		})
	}
}

func BenchmarkMayContainAbsent(b *testing.B) {
	runEach(b, func(s *benchSuite, f Filter) func(*testing.B) { return f.LookupBenchmark(s.absent) })
}

func BenchmarkMayContainPresent(b *testing.B) {
	runEach(b, func(s *benchSuite, f Filter) func(*testing.B) { return f.LookupBenchmark(s.present) })
}

func BenchmarkAdd(b *testing.B) {
	runEach(b, func(s *benchSuite, f Filter) func(*testing.B) { return f.AddBenchmark(s.present) })
}

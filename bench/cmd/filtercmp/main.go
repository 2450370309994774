// Command filtercmp puts bloomkv's blocked and classic Bloom filters beside
// github.com/bits-and-blooms/bloom/v3 at the same number of keys and the
// same memory, in one process, and prints one table: each filter's memory,
// probes, measured and predicted false-positive rates, the median time of a
// lookup of an absent and of a present key, and those times as a ratio to
// bits-and-blooms' Test. It then says whether the targets are met — an
// absent-key lookup of the blocked filter at most 0.35 times bits-and-blooms'
// time, of the classic filter at most 0.6 times — and exits with status 1
// if one is not.
//
// Usage, from the bench module's directory:
//
//	go run ./cmd/filtercmp [-n 1000000] [-bits-per-key 10] [-runs 5]
//
// Every run times each filter in turn with testing.Benchmark (about a second
// a timing); taking the median over runs, with the filters interleaved in
// every run, keeps a burst of load on a shared machine from landing on one
// filter only. Times and the verdict are in process CPU time where the
// system reports it (filters.CPUTime), which does not count the time the
// process waits for a core; the wall-clock ratio is printed beside it.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/bench/filters"
)

// targets are the bounds on a filter's absent-key lookup time, as a
// ratio to bits-and-blooms' Test.
var targets = map[string]float64{
	filters.BloomkvBlocked: 0.35,
	filters.BloomkvClassic: 0.6,
}

func main() {
	n := flag.Int("n", 1_000_000, "keys `n` added to each filter (and absent keys looked up)")
	bitsPerKey := flag.Float64("bits-per-key", 10, "filter memory in `bits` per key, the same for every filter")
	runs := flag.Int("runs", 5, "timings of each filter and key set; the table shows their median")
	flag.Parse()
	if *n < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "filtercmp: -n and -runs must be at least 1")
		os.Exit(2)
	}

	present := filters.Keys(*n, filters.PresentTag, filters.Seed)
	absent := filters.Keys(*n, filters.AbsentTag, filters.Seed)
	fs, err := filters.Build(present, *bitsPerKey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "filtercmp:", err)
		os.Exit(2)
	}

	absentT := make([][]filters.Timing, len(fs))
	presentT := make([][]filters.Timing, len(fs))
	for range *runs {
		for i, f := range fs {
			absentT[i] = append(absentT[i], filters.Measure(f.LookupBenchmark(absent)))
			presentT[i] = append(presentT[i], filters.Measure(f.LookupBenchmark(present)))
		}
	}
	// Rank by CPU time where the system reports it: it leaves out the time
	// the process waited for a core, which wall-clock time does not.
	clock := "CPU"
	primary := func(t filters.Timing) float64 { return t.CPU }
	if math.IsNaN(absentT[0][0].CPU) {
		clock = "wall-clock"
		primary = func(t filters.Timing) float64 { return t.Wall }
	}
	wall := func(t filters.Timing) float64 { return t.Wall }

	fmt.Printf("n = %d keys of %d bytes, %d absent keys, %g bits per key; median of %d runs; %s %s/%s, GOMAXPROCS %d\n",
		*n, filters.KeyLen, len(absent), *bitsPerKey, *runs,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Printf("ns/op: %s time per lookup; ±: half the range of the absent-key times over the runs, in %% of their median;\n", clock)
	fmt.Printf("×bb: time as a ratio to bits-and-blooms' Test; wall: the same from wall-clock time\n\n")

	bb := slices.IndexFunc(fs, func(f filters.Filter) bool { return f.Name() == filters.BitsAndBlooms })
	bbAbsent, bbPresent := median(absentT[bb], primary), median(presentT[bb], primary)
	bbAbsentWall := median(absentT[bb], wall)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "filter\tbytes\tk\tFPR measured\tFPR predicted\tabsent ns/op\t±\tpresent ns/op\tabsent ×bb\tpresent ×bb\twall absent ns/op\twall absent ×bb\t")
	ratios := make([]float64, len(fs))
	wallRatios := make([]float64, len(fs))
	for i, f := range fs {
		a, p, aw := median(absentT[i], primary), median(presentT[i], primary), median(absentT[i], wall)
		ratios[i], wallRatios[i] = a/bbAbsent, aw/bbAbsentWall
		fmt.Fprintf(w, "%s\t%d\t%d\t%.5f\t%.5f\t%.2f\t%.0f%%\t%.2f\t%.3f\t%.3f\t%.2f\t%.3f\t\n",
			f.Name(), f.Bytes(), f.Probes(), filters.MeasureFPR(f, absent), f.PredictedFPR(),
			a, 50*spread(absentT[i], primary), p, ratios[i], p/bbPresent, aw, wallRatios[i])
	}
	w.Flush()

	fmt.Println()
	missed := false
	for i, f := range fs {
		target, ok := targets[f.Name()]
		if !ok {
			continue
		}
		verdict := "met"
		if ratios[i] > target {
			verdict, missed = "MISSED", true
		}
		fmt.Printf("%s: MayContain(absent) takes %.3f× bits-and-blooms' Test (%s; wall clock %.3f×); target ≤ %.2f×: %s\n",
			f.Name(), ratios[i], clock, wallRatios[i], target, verdict)
	}
	if missed {
		os.Exit(1)
	}
}

// median returns the median of field over ts, which must not be empty.
func median(ts []filters.Timing, field func(filters.Timing) float64) float64 {
	xs := make([]float64, len(ts))
	for i, t := range ts {
		xs[i] = field(t)
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// spread returns the range of field over ts as a share of its median.
func spread(ts []filters.Timing, field func(filters.Timing) float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range ts {
		lo, hi = min(lo, field(t)), max(hi, field(t))
	}
	return (hi - lo) / median(ts, field)
}

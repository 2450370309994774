// Command rangefpr measures the range filter of package rangefilter: its
// false-positive rate against range width for each bits-per-key setting,
// on 100,000 empty ranges per setting, next to the design's bound and
// Grafite's ℓ/2^(B−2); the CPU time of building it per key beside a
// blocked Bloom filter's at the same bits per key, in the same run; and
// the CPU time of a query. Beside it, at the same bits per key and on the
// same ranges, the design it was chosen over: Rosetta, a hierarchy of
// Bloom filters over the keys' dyadic prefixes (rosetta.go). It writes one
// CSV row per filter, key shape, bits per key, width and query
// distribution, a chart of rangefilter's rates (-chart) and one of both
// designs' on decimal keys (-chart's name with "-rosetta" added).
//
// Usage, from the bench module's directory:
//
//	go run ./cmd/rangefpr [-n 100000] [-queries 100000] [-runs 5] \
//		[-csv ../docs/bench/rangefilter.csv] [-chart ../docs/bench/rangefilter.svg]
//
// Each table is n random keys of one shape: 8-byte big-endian integers,
// 16-digit decimal strings (the bench's key format, drawn sparse from
// 10^16), and "user%04d/event%010d" keys; and the bench's own keys, a
// table of n consecutive present keys (workload.Keys), dense enough that
// the filter keeps them exactly. Ranges [x, x+ℓ) hold no key of the table
// and are drawn two ways: uniform over the table's span, and adjacent —
// starting 1 to 4 values past a key of the table, the queries a mapping
// that merges neighbouring keys answers falsely. Times are medians over
// runs of process CPU time (filters.CPUTime), which does not count the
// time the process waits for a core on a shared machine.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bloomkv/bloomkv/bench/filters"
	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/bloomkv/bloomkv/rangefilter"
)

// A shape renders integers as keys that sort as the integers do.
type shape struct {
	name string
	key  func(dst []byte, x uint64) []byte
	max  uint64 // integers are below it
}

var shapes = []shape{
	{"big-endian", func(dst []byte, x uint64) []byte { return binary.BigEndian.AppendUint64(dst[:0], x) }, math.MaxUint64},
	{"decimal", func(dst []byte, x uint64) []byte { return fmt.Appendf(dst[:0], "%016d", x) }, 1e16},
	{"prefix/suffix", func(dst []byte, x uint64) []byte {
		return fmt.Appendf(dst[:0], "user%04d/event%010d", x/1e10, x%1e10)
	}, 1e14},
}

// chartColors is a colour per bits-per-key setting.
var chartColors = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
}

var (
	bitsPerKey = []float64{8, 12, 16, 20}
	widths     = []uint64{1, 2, 8, 32, 128}
)

func main() {
	n := flag.Int("n", 100_000, "keys per table")
	queries := flag.Int("queries", 100_000, "empty ranges per setting")
	runs := flag.Int("runs", 5, "timing runs (the median is kept)")
	csvPath := flag.String("csv", "../docs/bench/rangefilter.csv", "the CSV to write")
	chartPath := flag.String("chart", "../docs/bench/rangefilter.svg", "the chart to write (.svg or .png); empty for none")
	flag.Parse()
	if err := run(*n, *queries, *runs, *csvPath, *chartPath); err != nil {
		fmt.Fprintln(os.Stderr, "rangefpr:", err)
		os.Exit(1)
	}
}

// row is one line of the CSV.
type row struct {
	filter, shape, dist          string
	bpk, actualBPK               float64
	exact                        bool
	width                        uint64
	queries, positives           int
	boundDesign, boundGrafite    float64
	queryNS, buildNS, bloomBuild float64
}

func run(n, queries, runs int, csvPath, chartPath string) error {
	if _, ok := filters.CPUTime(); !ok {
		return fmt.Errorf("this system does not report CPU time")
	}
	var rows []row
	r := rand.New(rand.NewPCG(2026, 21))
	for _, sh := range shapes {
		xs := sparse(r, sh.max, n)
		keys := render(sh, xs)
		for _, bpk := range bitsPerKey {
			f, buildNS, bloomNS, err := buildBoth(keys, bpk, runs)
			if err != nil {
				return err
			}
			ros, rosettaNS, err := buildRosetta(xs, bpk, runs)
			if err != nil {
				return err
			}
			for _, w := range widths {
				for _, dist := range []string{"uniform", "adjacent"} {
					var los []uint64
					if dist == "uniform" {
						los = emptyRanges(r, xs, w, queries)
					} else {
						los = adjacentRanges(r, xs, w, queries)
					}
					grafite := math.Min(1, float64(w)/math.Exp2(bpk-2))
					positives, queryNS := measure(f, sh, los, w, runs)
					rows = append(rows, row{
						filter: "rangefilter", shape: sh.name, dist: dist, bpk: bpk, actualBPK: f.BitsPerKey(), exact: f.Exact(), width: w,
						queries: len(los), positives: positives, boundDesign: f.FalsePositiveBound(w), boundGrafite: grafite,
						queryNS: queryNS, buildNS: buildNS, bloomBuild: bloomNS,
					})
					rp, rq := measureRosetta(ros, los, w, runs)
					rows = append(rows, row{
						filter: "rosetta", shape: sh.name, dist: dist, bpk: bpk, actualBPK: bpk, width: w,
						queries: len(los), positives: rp, boundDesign: math.NaN(), boundGrafite: grafite,
						queryNS: rq, buildNS: rosettaNS, bloomBuild: bloomNS,
					})
					fmt.Fprintf(os.Stderr, "%s B=%v ℓ=%d %s: rangefilter %.5f, rosetta %.5f\n", sh.name, bpk, w, dist,
						float64(positives)/float64(len(los)), float64(rp)/float64(len(los)))
				}
			}
		}
	}
	// The bench's own keys: a table of n consecutive present keys, whose
	// only empty ranges inside are the missing keys between them.
	bk, err := workload.NewKeys(4*n, workload.DefaultKeySize, 0, workload.DefaultSeed)
	if err != nil {
		return err
	}
	var keys [][]byte
	for i := n; i < 2*n; i++ {
		keys = append(keys, bk.Present(nil, i))
	}
	for _, bpk := range bitsPerKey {
		f, buildNS, bloomNS, err := buildBoth(keys, bpk, runs)
		if err != nil {
			return err
		}
		los, his := make([][]byte, 0, queries), make([][]byte, 0, queries)
		for range queries {
			i := n + r.IntN(n-1)
			los, his = append(los, bk.Missing(nil, i)), append(his, bk.Present(nil, i+1))
		}
		positives, queryNS := measureKeys(f, los, his, runs)
		rows = append(rows, row{
			filter: "rangefilter", shape: "bench keys", dist: "missing key", bpk: bpk, actualBPK: f.BitsPerKey(), exact: f.Exact(), width: 1,
			queries: queries, positives: positives, boundDesign: f.FalsePositiveBound(1),
			boundGrafite: 1 / math.Exp2(bpk-2), queryNS: queryNS, buildNS: buildNS, bloomBuild: bloomNS,
		})
	}
	if err := writeCSV(csvPath, n, queries, runs, rows); err != nil {
		return err
	}
	if chartPath == "" {
		return nil
	}
	if err := writeChart(chartPath, n, rows); err != nil {
		return err
	}
	ext := filepath.Ext(chartPath)
	return writeComparison(strings.TrimSuffix(chartPath, ext)+"-rosetta"+ext, n, rows)
}

// sparse returns n distinct random integers below max, sorted.
func sparse(r *rand.Rand, max uint64, n int) []uint64 {
	xs := make([]uint64, 0, n)
	for len(xs) < n {
		for len(xs) < n {
			xs = append(xs, r.Uint64N(max-1<<10)) // room for the widest range after the last
		}
		slices.Sort(xs)
		xs = slices.Compact(xs)
	}
	return xs
}

func render(sh shape, xs []uint64) [][]byte {
	keys := make([][]byte, len(xs))
	for i, x := range xs {
		keys[i] = sh.key(nil, x)
	}
	return keys
}

// emptyRanges returns count starts x of ranges [x, x+width) within the
// span of xs that hold none of them.
func emptyRanges(r *rand.Rand, xs []uint64, width uint64, count int) []uint64 {
	los := make([]uint64, 0, count)
	for len(los) < count {
		x := xs[0] + r.Uint64N(xs[len(xs)-1]-xs[0]-width)
		if i, _ := slices.BinarySearch(xs, x); xs[i] >= x+width {
			los = append(los, x)
		}
	}
	return los
}

// adjacentRanges returns count starts of empty ranges 1 to 4 past a key.
func adjacentRanges(r *rand.Rand, xs []uint64, width uint64, count int) []uint64 {
	los := make([]uint64, 0, count)
	for len(los) < count {
		i := r.IntN(len(xs) - 1)
		if x := xs[i] + 1 + r.Uint64N(4); x+width <= xs[i+1] {
			los = append(los, x)
		}
	}
	return los
}

// buildBoth builds the range filter of keys at bpk bits per key and a
// blocked Bloom filter at the same bits per key runs times each,
// interleaved, and returns the filter and the median CPU ns per key of
// each build.
func buildBoth(keys [][]byte, bpk float64, runs int) (*rangefilter.Filter, float64, float64, error) {
	var data []byte
	var rangeNS, bloomNS []float64
	hashes := make([]uint64, len(keys))
	for range runs {
		var err error
		ns := cpuNS(func() {
			var b *rangefilter.Builder
			if b, err = rangefilter.NewBuilder(bpk); err != nil {
				return
			}
			for _, k := range keys {
				if err = b.Add(k); err != nil {
					return
				}
			}
			data, err = b.Finish()
		})
		if err != nil {
			return nil, 0, 0, err
		}
		rangeNS = append(rangeNS, ns/float64(len(keys)))
		ns = cpuNS(func() {
			for i, k := range keys {
				hashes[i] = bloom.Hash(k)
			}
			var f *bloom.Blocked
			if f, err = bloom.BuildBlocked(hashes, bpk); err == nil {
				_, err = f.MarshalBinary()
			}
		})
		if err != nil {
			return nil, 0, 0, err
		}
		bloomNS = append(bloomNS, ns/float64(len(keys)))
	}
	f, err := rangefilter.Decode(data)
	return f, median(rangeNS), median(bloomNS), err
}

// buildRosetta builds the Rosetta filter of xs runs times and returns it
// and the median CPU ns per key.
func buildRosetta(xs []uint64, bpk float64, runs int) (*rosetta, float64, error) {
	var f *rosetta
	var err error
	var times []float64
	for range runs {
		ns := cpuNS(func() { f, err = newRosetta(xs, bpk) })
		if err != nil {
			return nil, 0, err
		}
		times = append(times, ns/float64(len(xs)))
	}
	return f, median(times), nil
}

// measureRosetta is measure for the Rosetta filter, which takes the
// integers themselves.
func measureRosetta(f *rosetta, los []uint64, w uint64, runs int) (int, float64) {
	var positives int
	var times []float64
	for range runs {
		positives = 0
		ns := cpuNS(func() {
			for _, x := range los {
				if f.mayContain(x, x+w-1) {
					positives++
				}
			}
		})
		times = append(times, ns/float64(len(los)))
	}
	return positives, median(times)
}

// measure counts the false positives of the ranges [x, x+w) and returns
// the median CPU ns per query over runs.
func measure(f *rangefilter.Filter, sh shape, los []uint64, w uint64, runs int) (int, float64) {
	lo, hi := make([][]byte, len(los)), make([][]byte, len(los))
	for i, x := range los {
		lo[i], hi[i] = sh.key(nil, x), sh.key(nil, x+w)
	}
	return measureKeys(f, lo, hi, runs)
}

func measureKeys(f *rangefilter.Filter, los, his [][]byte, runs int) (int, float64) {
	var positives int
	var times []float64
	for range runs {
		positives = 0
		ns := cpuNS(func() {
			for i := range los {
				if f.MayContainRange(los[i], his[i]) {
					positives++
				}
			}
		})
		times = append(times, ns/float64(len(los)))
	}
	return positives, median(times)
}

// cpuNS returns the process CPU nanoseconds fn takes, after a collection
// so that the garbage of the previous measurement is not charged to it.
func cpuNS(fn func()) float64 {
	runtime.GC()
	start, _ := filters.CPUTime()
	fn()
	end, _ := filters.CPUTime()
	return float64((end - start).Nanoseconds())
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func writeCSV(path string, n, queries, runs int, rows []row) error {
	host, _ := os.Hostname()
	var b strings.Builder
	fmt.Fprintf(&b, "# go run ./cmd/rangefpr -n %d -queries %d -runs %d (bench module); %s, %d CPUs, %s/%s, %s; %s UTC\n",
		n, queries, runs, host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), time.Now().UTC().Format("2006-01-02 15:04"))
	b.WriteString("filter,shape,queries,bits_per_key,actual_bits_per_key,exact,width,ranges,false_positives,fpr,bound_design,bound_grafite,query_cpu_ns,build_cpu_ns_per_key,blocked_bloom_build_cpu_ns_per_key\n")
	for _, r := range rows {
		design := "" // Rosetta's rate has no bound of this form
		if !math.IsNaN(r.boundDesign) {
			design = fmt.Sprintf("%.6f", r.boundDesign)
		}
		fmt.Fprintf(&b, "%s,%s,%s,%g,%.2f,%v,%d,%d,%d,%.6f,%s,%.6f,%.1f,%.1f,%.1f\n",
			r.filter, r.shape, r.dist, r.bpk, r.actualBPK, r.exact, r.width, r.queries, r.positives,
			float64(r.positives)/float64(r.queries), design, r.boundGrafite, r.queryNS, r.buildNS, r.bloomBuild)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeChart plots the rate against the width, log-log, for each bits
// per key (a colour): the uniform ranges of each sparse shape (a glyph)
// and Grafite's bound (dashed). A rate of 0 is drawn at the plot's floor.
func writeChart(path string, n int, rows []row) error {
	p := ratePlot(fmt.Sprintf("rangefilter: false-positive rate of empty ranges, %d keys per table (0 drawn at 1e-6)", n))
	colors := chartColors
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}}
	for i, bpk := range bitsPerKey {
		var bound plotter.XYs
		for _, w := range widths {
			bound = append(bound, plotter.XY{X: float64(w), Y: math.Min(1, float64(w)/math.Exp2(bpk-2))})
		}
		l, err := plotter.NewLine(bound)
		if err != nil {
			return err
		}
		l.Color, l.Dashes = colors[i], []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("B=%g: ℓ/2^(B−2)", bpk), l)
		for j, sh := range shapes {
			var pts plotter.XYs
			for _, r := range rows {
				if r.filter == "rangefilter" && r.shape == sh.name && r.bpk == bpk && r.dist == "uniform" {
					pts = append(pts, plotter.XY{X: float64(r.width), Y: math.Max(rateFloor, float64(r.positives)/float64(r.queries))})
				}
			}
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			s.Color, s.Shape, s.Radius = colors[i], glyphs[j], vg.Points(3)
			p.Add(s)
		}
	}
	for j, sh := range shapes {
		key, err := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
		if err != nil {
			return err
		}
		key.Color, key.Shape, key.Radius = color.Gray{Y: 0x40}, glyphs[j], vg.Points(3)
		p.Legend.Add(sh.name+", measured", key)
	}
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}

// rateFloor is the lowest rate the charts show: a rate of 0 is drawn there.
const rateFloor = 1e-6

// ratePlot returns a plot of the false-positive rate against the range
// width under title, its axes made by logAxes.
func ratePlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "range width ℓ (consecutive integers)"
	p.Y.Label.Text = "false-positive rate"
	logAxes(p, rateFloor)
	return p
}

// logAxes makes both axes logarithmic, with ticks at the widths measured
// and at the powers of ten from floor to 1, and puts the legend at the
// bottom right, where the rates are lowest.
func logAxes(p *plot.Plot, floor float64) {
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	var xt, yt []plot.Tick
	for _, w := range widths {
		xt = append(xt, plot.Tick{Value: float64(w), Label: fmt.Sprint(w)})
	}
	for e := math.Log10(floor); e <= 0; e++ {
		yt = append(yt, plot.Tick{Value: math.Pow(10, e), Label: fmt.Sprintf("1e%d", int(e))})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = float64(widths[0]), float64(widths[len(widths)-1])
	p.Y.Min, p.Y.Max = floor, 1
	p.Legend.Top, p.Legend.Left = false, false
}

// writeComparison plots the rate against the width, log-log, of both
// designs on decimal keys and uniform ranges, one colour per bits per key:
// rangefilter solid, Rosetta dashed.
func writeComparison(path string, n int, rows []row) error {
	p := ratePlot(fmt.Sprintf("rangefilter (Grafite) vs Rosetta, equal bits per key: decimal keys, %d per table (0 at 1e-6)", n))
	for i, bpk := range bitsPerKey {
		for _, filter := range []string{"rangefilter", "rosetta"} {
			var pts plotter.XYs
			for _, r := range rows {
				if r.filter == filter && r.shape == "decimal" && r.bpk == bpk && r.dist == "uniform" {
					pts = append(pts, plotter.XY{X: float64(r.width), Y: math.Max(rateFloor, float64(r.positives)/float64(r.queries))})
				}
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			l.Color, s.Color = chartColors[i], chartColors[i]
			if filter == "rosetta" {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				s.Shape = draw.TriangleGlyph{}
			}
			p.Add(l, s)
			p.Legend.Add(fmt.Sprintf("B=%g %s", bpk, filter), l, s)
		}
	}
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}

package main

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bloomkv/bloomkv/internal/humanize"
)

// A small SVG line-chart writer for the bench command's charts: linear x,
// linear or log10 y, lines with point markers, a legend. It is hand-written
// so that the main module needs no plotting library.

type series struct {
	name   string
	points [][2]float64
	dashed bool
	color  string
}

type chart struct {
	title, xLabel, yLabel string
	logX, logY            bool
	xFormat               func(float64) string
	series                []series
}

const (
	chartW, chartH                       = 720, 440
	marginL, marginR, marginT, marginB   = 78, 190, 44, 56
	plotW, plotH                         = chartW - marginL - marginR, chartH - marginT - marginB
	chartFont                            = `font-family="Helvetica, Arial, sans-serif"`
	colorUniform, colorOptimal, colorOff = "#1f77b4", "#d62728", "#7f7f7f"
	colorPredicted, colorBound           = "#2ca02c", "#9467bd"
	colorBest, colorProgressive          = "#ff7f0e", "#8c564b"
	colorFuse8, colorFuse16              = "#17becf", "#e377c2"
)

// familyColors are the colors of the sweep's filter families, in the order
// of sweepFamilies, and for any others.
var familyColors = []string{colorUniform, colorFuse8, colorFuse16, colorOptimal, colorBest, colorProgressive}

func (c *chart) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	c.render(f)
	return f.Close()
}

func (c *chart) render(w io.Writer) {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, p := range s.points {
			if !c.plots(p) {
				continue
			}
			xmin, xmax = math.Min(xmin, p[0]), math.Max(xmax, p[0])
			ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[1])
		}
	}
	if xmin > xmax { // no points
		xmin, xmax, ymin, ymax = 1, 10, 0.1, 1
	}
	var yticks []float64
	if c.logY {
		ymin, ymax, yticks = decades(ymin, ymax)
	} else {
		ymin = math.Min(ymin, 0)
		yticks = niceTicks(ymin, ymax)
		ymax = yticks[len(yticks)-1]
	}
	var xticks []float64
	if c.logX {
		xmin, xmax, xticks = decades(xmin, xmax)
	} else {
		xticks = niceTicks(xmin, xmax)
		xmin, xmax = math.Min(xmin, xticks[0]), xticks[len(xticks)-1]
		if xmax == xmin {
			xmax = xmin + 1
		}
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	px := func(x float64) float64 {
		if c.logX {
			return marginL + (math.Log10(x)-math.Log10(xmin))/(math.Log10(xmax)-math.Log10(xmin))*plotW
		}
		return marginL + (x-xmin)/(xmax-xmin)*plotW
	}
	py := func(y float64) float64 {
		if c.logY {
			return marginT + plotH - (math.Log10(y)-math.Log10(ymin))/(math.Log10(ymax)-math.Log10(ymin))*plotH
		}
		return marginT + plotH - (y-ymin)/(ymax-ymin)*plotH
	}
	xf := c.xFormat
	if xf == nil {
		xf = func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	}

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="12">`+"\n",
		chartW, chartH, chartW, chartH, chartFont)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", marginL, html.EscapeString(c.title))
	// Grid and ticks.
	for _, y := range yticks {
		fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", marginL, marginL+plotW, py(y), py(y))
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", marginL-6, py(y), yTick(y, c.logY))
	}
	for _, x := range xticks {
		fmt.Fprintf(w, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e5e5e5"/>`+"\n", px(x), px(x), marginT, marginT+plotH)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(x), marginT+plotH+18, html.EscapeString(xf(x)))
	}
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", marginL, marginT, plotW, plotH)
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", marginL+plotW/2, chartH-14, html.EscapeString(c.xLabel))
	fmt.Fprintf(w, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", marginT+plotH/2, html.EscapeString(c.yLabel))
	// Series.
	for i, s := range c.series {
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		var pts []string
		for _, p := range s.points {
			if !c.plots(p) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
		}
		fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), s.color, dash)
		for _, pt := range pts {
			xy := strings.Split(pt, ",")
			fmt.Fprintf(w, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], s.color)
		}
		ly := marginT + 10 + 22*i
		fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n",
			marginL+plotW+12, marginL+plotW+36, ly, ly, s.color, dash)
		fmt.Fprintf(w, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", marginL+plotW+42, ly, html.EscapeString(s.name))
	}
	fmt.Fprintln(w, "</svg>")
}

// plots reports whether point p can be drawn: finite, and positive on a
// log axis.
func (c *chart) plots(p [2]float64) bool {
	for _, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return !(c.logX && p[0] <= 0) && !(c.logY && p[1] <= 0)
}

func yTick(y float64, logY bool) string {
	if logY && (y < 0.01 || y >= 1e4) {
		return fmt.Sprintf("1e%d", int(math.Round(math.Log10(y))))
	}
	return strconv.FormatFloat(y, 'g', 4, 64)
}

// niceTicks returns about five round tick values covering [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for x := math.Floor(lo/step) * step; x <= hi+step*0.999 && len(ticks) < 100; x += step {
		ticks = append(ticks, math.Round(x/step)*step)
		if x >= hi {
			break
		}
	}
	return ticks
}

// chartNames are the charts writeCharts writes for r.
func (r *sweepReport) chartNames() []string {
	var names []string
	if len(r.Rows) > 0 {
		names = append(names, "fpr.svg", "reads.svg", "latency.svg")
	}
	if len(r.Families) > 0 {
		names = append(names, "fpr-size.svg", "bits-size.svg")
	}
	return names
}

// writeCharts writes the sweep's charts into dir: those of its databases
// (fpr.svg, reads.svg, latency.svg), and those of its filter measurements
// (fpr-size.svg, bits-size.svg).
func (r *sweepReport) writeCharts(dir string) error {
	charts := map[string]*chart{}
	if len(r.Rows) > 0 {
		maps.Copy(charts, r.databaseCharts())
	}
	if len(r.Families) > 0 {
		maps.Copy(charts, r.familyCharts())
	}
	for name, c := range charts {
		if err := c.write(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func (r *sweepReport) databaseCharts() map[string]*chart {
	var fprU, fprO, pred, bound, readsOff, hitU, missU, hitO, missO [][2]float64
	reads := map[string][][2]float64{}
	var off *sweepRow
	for i := range r.Rows {
		if r.Rows[i].Policy == policyNone {
			off = &r.Rows[i]
		}
	}
	var maxMem float64
	for _, x := range r.Rows {
		kib := float64(x.FilterMemory) / 1024
		maxMem = math.Max(maxMem, kib)
		if x.Policy != policyNone {
			reads[x.Policy] = append(reads[x.Policy], [2]float64{kib, x.MissingBlocks})
		}
		switch x.Policy {
		case policyUniform:
			fprU = append(fprU, [2]float64{x.BitsPerKey, x.MeasuredFPR})
			pred = append(pred, [2]float64{x.BitsPerKey, predictedFPR(x.BitsPerKey)})
			bound = append(bound, [2]float64{x.BitsPerKey, x.BoundFPR})
			hitU = append(hitU, [2]float64{x.BitsPerKey, x.P50PresentMicros})
			missU = append(missU, [2]float64{x.BitsPerKey, x.P50MissingMicros})
		case policyOptimal:
			fprO = append(fprO, [2]float64{x.BitsPerKey, x.MeasuredFPR})
			hitO = append(hitO, [2]float64{x.BitsPerKey, x.P50PresentMicros})
			missO = append(missO, [2]float64{x.BitsPerKey, x.P50MissingMicros})
		}
	}
	for _, pts := range reads {
		slices.SortFunc(pts, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	}
	if off != nil {
		readsOff = [][2]float64{{0, off.MissingBlocks}, {maxMem, off.MissingBlocks}}
		// Without filters, both allocations are the same database.
		hitU = append([][2]float64{{0, off.P50PresentMicros}}, hitU...)
		missU = append([][2]float64{{0, off.P50MissingMicros}}, missU...)
		hitO = append([][2]float64{{0, off.P50PresentMicros}}, hitO...)
		missO = append([][2]float64{{0, off.P50MissingMicros}}, missO...)
	}
	keys := fmtCount(int64(r.Settings.Keys))
	return map[string]*chart{
		"fpr.svg": {
			title:  "False-positive rate against bits per key (" + keys + " keys)",
			xLabel: "filter bits per key", yLabel: "false-positive rate (log)", logY: true,
			series: []series{
				{name: "measured, Uniform", points: fprU, color: colorUniform},
				{name: "measured, Optimal", points: fprO, color: colorOptimal},
				{name: "predicted (blocked)", points: pred, color: colorPredicted, dashed: true},
				{name: "bound 2^-bits", points: bound, color: colorBound, dashed: true},
			},
		},
		"reads.svg": {
			title:  "Data blocks read per missing-key Get against filter memory",
			xLabel: "filter memory (KiB)", yLabel: "data blocks read per Get (log)", logY: true,
			xFormat: func(x float64) string { return humanize.Bytes(uint64(x * 1024)) },
			series: []series{
				{name: "Uniform Bloom", points: reads[policyUniform], color: colorUniform},
				{name: "Optimal (Monkey) Bloom", points: reads[policyOptimal], color: colorOptimal},
				{name: "Progressive fuse (Pebble)", points: reads[policyProgressive], color: colorProgressive},
				{name: "Best allocation", points: reads[policyBest], color: colorBest},
				{name: "Uniform fuse", points: reads[policyFuse], color: colorFuse8, dashed: true},
				{name: "no filter", points: readsOff, color: colorOff, dashed: true},
			},
		},
		"latency.svg": {
			title:  "Get latency (p50) against bits per key; 0 = no filter",
			xLabel: "filter bits per key", yLabel: "p50 Get latency (µs)",
			series: []series{
				{name: "present, Uniform", points: hitU, color: colorUniform},
				{name: "absent, Uniform", points: missU, color: colorUniform, dashed: true},
				{name: "present, Optimal", points: hitO, color: colorOptimal},
				{name: "absent, Optimal", points: missO, color: colorOptimal, dashed: true},
			},
		},
	}
}

// familyCharts are the charts of the filter measurements: each family's
// measured rate against its expected one, and the bits per key a table
// spends, by table size.
func (r *sweepReport) familyCharts() map[string]*chart {
	var names []string
	fpr, expected, bits, planned := map[string][][2]float64{}, map[string][][2]float64{}, map[string][][2]float64{}, map[string][][2]float64{}
	for _, x := range r.Families {
		if _, ok := fpr[x.Filter]; !ok {
			names = append(names, x.Filter)
		}
		n := float64(x.Keys)
		fpr[x.Filter] = append(fpr[x.Filter], [2]float64{n, x.MeasuredFPR})
		expected[x.Filter] = append(expected[x.Filter], [2]float64{n, x.ExpectedFPR})
		bits[x.Filter] = append(bits[x.Filter], [2]float64{n, x.BitsPerKey})
		planned[x.Filter] = append(planned[x.Filter], [2]float64{n, x.PlannedBits})
	}
	var fprSeries, bitsSeries []series
	for i, name := range names {
		color := familyColors[i%len(familyColors)]
		fprSeries = append(fprSeries, series{name: name + " measured", points: fpr[name], color: color},
			series{name: name + " expected", points: expected[name], color: color, dashed: true})
		bitsSeries = append(bitsSeries, series{name: name, points: bits[name], color: color})
	}
	sizes := func(x float64) string { return fmtCount(int64(x)) }
	return map[string]*chart{
		"fpr-size.svg": {
			title:  "False-positive rate by table size, per filter (fuse: 2^-w)",
			xLabel: "keys per table (log)", yLabel: "false-positive rate (log)", logX: true, logY: true, xFormat: sizes,
			series: fprSeries,
		},
		"bits-size.svg": {
			title:  "Filter bits per key a table spends, by table size",
			xLabel: "keys per table (log)", yLabel: "serialized filter bits per key", logX: true, xFormat: sizes,
			series: bitsSeries,
		},
	}
}

// decades widens [lo, hi] to whole powers of ten, at least one decade
// apart, for a log axis, and returns a tick at each power.
func decades(lo, hi float64) (float64, float64, []float64) {
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if lo == hi {
		hi *= 10
	}
	var ticks []float64
	for v := lo; v <= hi*1.0001 && len(ticks) < 40; v *= 10 {
		ticks = append(ticks, v)
	}
	return lo, hi, ticks
}

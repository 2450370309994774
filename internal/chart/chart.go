// Package chart draws the benchmarks' charts (`bloomkv bench`, the peers
// runner) with gonum.org/v1/plot, each written twice, as PNG for a README
// and as SVG for a page that zooms: line charts of one measure against
// another (Lines) and grouped bar charts of a measure per category and
// series (Bars).
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// width and height are every chart's size.
var width, height = 20 * vg.Centimeter, 12 * vg.Centimeter

// Series is one line: its name in the legend and its points, in the order
// they are joined. Points with a non-positive coordinate on a log axis are
// left out.
type Series struct {
	Name   string
	Points [][2]float64
	Dashed bool
}

// Lines is a line chart.
type Lines struct {
	Title, X, Y string
	LogX, LogY  bool
	// XTick, if not nil, names the x axis' ticks (the default: the number).
	XTick  func(x float64) string
	Series []Series
}

// Save writes the chart as base+".png" and base+".svg".
func (l *Lines) Save(base string) error {
	p := newPlot(l.Title, l.X, l.Y)
	if l.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{name: l.XTick}
	} else if l.XTick != nil {
		p.X.Tick.Marker = namedTicks{name: l.XTick}
	}
	if l.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	drawn := 0
	for i, s := range l.Series {
		var xys plotter.XYs
		for _, pt := range s.Points {
			if (l.LogX && !(pt[0] > 0)) || (l.LogY && !(pt[1] > 0)) || math.IsNaN(pt[0]) || math.IsNaN(pt[1]) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt[0], Y: pt[1]})
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("chart %q: series %q: %w", l.Title, s.Name, err)
		}
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		points.Shape = plotutil.Shape(i)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("chart %q: no points to draw", l.Title)
	}
	// Headroom above the data for the legend, which is drawn inside the
	// plot at its top: a share of the axis per legend line.
	share := math.Min(0.6, 0.045*float64(drawn)+0.03)
	if l.LogY {
		lo, hi := math.Log10(p.Y.Min), math.Log10(p.Y.Max)
		p.Y.Max = math.Pow(10, hi+math.Max(hi-lo, 1)*share/(1-share))
	} else {
		p.Y.Max += (p.Y.Max - math.Min(p.Y.Min, 0)) * share / (1 - share)
	}
	return save(p, base)
}

// Bars is a grouped bar chart: one group per category along x, one bar
// per series in each group.
type Bars struct {
	Title, Y string
	// LogY draws the bars on a log axis: from a decade below the smallest
	// value, each bar's height its value's logarithm, so that values
	// decades apart (a scan's ops/s and a Get's) can be read in one chart.
	LogY       bool
	Categories []string
	Series     []BarSeries
}

// BarSeries is one series of bars: its value in each category (NaN: no
// bar).
type BarSeries struct {
	Name   string
	Values []float64
}

// Save writes the chart as file+".png" and file+".svg".
func (b *Bars) Save(file string) error {
	if len(b.Series) == 0 || len(b.Categories) == 0 {
		return fmt.Errorf("chart %q: no bars to draw", b.Title)
	}
	p := newPlot(b.Title, "", b.Y)
	barWidth := vg.Points(min(24, 360/float64(len(b.Categories)*len(b.Series))))
	// On a log axis a bar is drawn as log10(v/floor), floor the decade below
	// the smallest value, and the ticks name the values.
	floor, top := math.Inf(1), 0.0
	for _, s := range b.Series {
		for _, v := range s.Values {
			if v > 0 {
				floor, top = math.Min(floor, v), math.Max(top, v)
			}
		}
	}
	// Headroom above the bars for the legend, a share per series.
	share := math.Min(0.6, 0.045*float64(len(b.Series))+0.03)
	if b.LogY {
		if math.IsInf(floor, 1) {
			return fmt.Errorf("chart %q: no positive value to draw on a log axis", b.Title)
		}
		floor = math.Pow(10, math.Floor(math.Log10(floor)))
		p.Y.Tick.Marker = logBarTicks{base: floor}
		p.Y.Max = math.Log10(top/floor) / (1 - share)
	} else {
		p.Y.Max = top / (1 - share)
	}
	for i, s := range b.Series {
		if len(s.Values) != len(b.Categories) {
			return fmt.Errorf("chart %q: series %q has %d values for %d categories", b.Title, s.Name, len(s.Values), len(b.Categories))
		}
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			switch {
			case math.IsNaN(v) || (b.LogY && v <= 0): // no bar
			case b.LogY:
				vals[j] = math.Log10(v / floor)
			default:
				vals[j] = v
			}
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return fmt.Errorf("chart %q: series %q: %w", b.Title, s.Name, err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = barWidth * vg.Length(float64(i)-float64(len(b.Series)-1)/2)
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	p.Legend.Top = true
	p.NominalX(b.Categories...)
	return save(p, file)
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.XOffs = -vg.Points(4)
	p.BackgroundColor = color.White
	return p
}

func save(p *plot.Plot, base string) error {
	var errs []error
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(width, height, base+ext); err != nil {
			errs = append(errs, fmt.Errorf("chart %q: %w", p.Title.Text, err))
		}
	}
	return errors.Join(errs...)
}

// logTicks puts a labelled tick at each power of ten in range, and
// unlabelled ones at 2…9 times it, naming a label by name (default: the
// number in %g).
type logTicks struct{ name func(float64) string }

func (t logTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		dec := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * dec
			if v < min*0.999 || v > max*1.001 {
				continue
			}
			tick := plot.Tick{Value: v}
			if m == 1 {
				tick.Label = label(t.name, v)
			}
			ticks = append(ticks, tick)
		}
	}
	if len(ticks) < 2 { // less than a decade: the ends, labelled
		return []plot.Tick{{Value: min, Label: label(t.name, min)}, {Value: max, Label: label(t.name, max)}}
	}
	return ticks
}

// logBarTicks label a log bar chart's axis, whose values are log10(v/base):
// a labelled tick at each decade, unlabelled ones at 2…9 times it.
type logBarTicks struct{ base float64 }

func (t logBarTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(min); e <= math.Ceil(max); e++ {
		for m := 1.0; m < 10; m++ {
			v := e + math.Log10(m)
			if v < min || v > max {
				continue
			}
			tick := plot.Tick{Value: v}
			if m == 1 {
				tick.Label = number(t.base * math.Pow(10, e))
			}
			ticks = append(ticks, tick)
		}
	}
	return ticks
}

// namedTicks are gonum's default ticks, labelled by name.
type namedTicks struct{ name func(float64) string }

func (t namedTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.name(ticks[i].Value)
		}
	}
	return ticks
}

func label(name func(float64) string, v float64) string {
	if name != nil {
		return name(v)
	}
	return number(v)
}

// number formats a tick's value: plain digits from 0.0001 to a billion,
// an exponent outside.
func number(v float64) string {
	if a := math.Abs(v); a >= 1e-4 && a < 1e9 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

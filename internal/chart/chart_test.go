package chart

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestSave draws a line chart on log axes and a bar chart and checks what
// each file holds: a PNG's signature, an SVG with the legend's names.
func TestSave(t *testing.T) {
	dir := t.TempDir()
	lines := &Lines{Title: "ops/s against n", X: "keys", Y: "ops/s", LogX: true, LogY: true,
		XTick: func(x float64) string { return "n" },
		Series: []Series{
			{Name: "alpha", Points: [][2]float64{{1e6, 3e5}, {1e7, 2e5}, {3e7, 1e5}}},
			{Name: "beta", Points: [][2]float64{{1e6, 1e5}, {0, 5}, {1e7, math.NaN()}, {3e7, 2e4}}, Dashed: true},
		}}
	bars := &Bars{Title: "ops/s per workload", Y: "ops/s", LogY: true, Categories: []string{"readrandom", "readmissing"},
		Series: []BarSeries{{Name: "alpha", Values: []float64{3e5, 4e5}}, {Name: "beta", Values: []float64{1e5, math.NaN()}}}}
	for name, save := range map[string]func(string) error{"lines": lines.Save, "bars": bars.Save} {
		base := filepath.Join(dir, name)
		if err := save(base); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		png, err := os.ReadFile(base + ".png")
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s.png: not a PNG (%v)", name, err)
		}
		svg, err := os.ReadFile(base + ".svg")
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Fatalf("%s.svg: not an SVG (%v)", name, err)
		}
		for _, want := range []string{"alpha", "beta"} {
			if !bytes.Contains(svg, []byte(want)) {
				t.Errorf("%s.svg lacks the legend's %q", name, want)
			}
		}
	}
	empty := &Lines{Title: "nothing", LogY: true, Series: []Series{{Name: "zero", Points: [][2]float64{{1, 0}}}}}
	if err := empty.Save(filepath.Join(dir, "empty")); err == nil {
		t.Error("a chart with no point to draw: no error")
	}
	bad := &Bars{Title: "bad", Categories: []string{"a", "b"}, Series: []BarSeries{{Name: "x", Values: []float64{1}}}}
	if err := bad.Save(filepath.Join(dir, "bad")); err == nil {
		t.Error("a series with too few values: no error")
	}
}

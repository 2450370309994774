package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/bloomkv/bloomkv/internal/chart"
	"github.com/bloomkv/bloomkv/internal/humanize"
)

// The bench command's charts, drawn by package chart (gonum/plot), each
// as PNG and SVG: the sweep's (writeCharts) and -sizes' (scaleCharts).

// chartNames are the charts writeCharts writes for r.
func (r *sweepReport) chartNames() []string {
	var names []string
	var bases []string
	if len(r.Rows) > 0 {
		bases = append(bases, "fpr", "reads", "latency")
	}
	if len(r.Families) > 0 {
		bases = append(bases, "fpr-size", "bits-size")
	}
	for _, b := range bases {
		names = append(names, b+".png", b+".svg")
	}
	return names
}

// writeCharts writes the sweep's charts into dir: those of its databases
// (fpr, reads, latency), and those of its filter measurements (fpr-size,
// bits-size), each as .png and .svg.
func (r *sweepReport) writeCharts(dir string) error {
	charts := map[string]*chart.Lines{}
	if len(r.Rows) > 0 {
		maps.Copy(charts, r.databaseCharts())
	}
	if len(r.Families) > 0 {
		maps.Copy(charts, r.familyCharts())
	}
	for name, c := range charts {
		if err := c.Save(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func (r *sweepReport) databaseCharts() map[string]*chart.Lines {
	var fprU, fprO, pred, bound, readsOff, floor, hitU, missU, hitO, missO [][2]float64
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
			if x.FloorBlocks > 0 {
				floor = append(floor, [2]float64{kib, x.FloorBlocks})
			}
			hitU = append(hitU, [2]float64{x.BitsPerKey, x.P50PresentMicros})
			missU = append(missU, [2]float64{x.BitsPerKey, x.P50MissingMicros})
		case policyOptimal:
			fprO = append(fprO, [2]float64{x.BitsPerKey, x.MeasuredFPR})
			hitO = append(hitO, [2]float64{x.BitsPerKey, x.P50PresentMicros})
			missO = append(missO, [2]float64{x.BitsPerKey, x.P50MissingMicros})
		}
	}
	slices.SortFunc(floor, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
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
	return map[string]*chart.Lines{
		"fpr": {
			Title: "False-positive rate against bits per key (" + keys + " keys)",
			X:     "filter bits per key", Y: "false-positive rate (log)", LogY: true,
			Series: []chart.Series{
				{Name: "measured, Uniform", Points: fprU},
				{Name: "measured, Optimal", Points: fprO},
				{Name: "predicted (blocked)", Points: pred, Dashed: true},
				{Name: "bound 2^-bits", Points: bound, Dashed: true},
			},
		},
		"reads": {
			Title: "Data blocks read per missing-key Get against filter memory",
			X:     "filter memory (KiB)", Y: "data blocks read per Get (log)", LogY: true,
			XTick: func(x float64) string { return humanize.Bytes(uint64(x * 1024)) },
			Series: []chart.Series{
				{Name: "Uniform Bloom", Points: reads[policyUniform]},
				{Name: "Optimal (Monkey) Bloom", Points: reads[policyOptimal]},
				{Name: "Progressive fuse (Pebble)", Points: reads[policyProgressive]},
				{Name: "Best allocation", Points: reads[policyBest]},
				{Name: "Uniform fuse", Points: reads[policyFuse], Dashed: true},
				{Name: "floor: perfect filters (model)", Points: floor, Dashed: true},
				{Name: "no filter", Points: readsOff, Dashed: true},
			},
		},
		"latency": {
			Title: "Get latency (p50) against bits per key; 0 = no filter",
			X:     "filter bits per key", Y: "p50 Get latency (µs)",
			Series: []chart.Series{
				{Name: "present, Uniform", Points: hitU},
				{Name: "absent, Uniform", Points: missU, Dashed: true},
				{Name: "present, Optimal", Points: hitO},
				{Name: "absent, Optimal", Points: missO, Dashed: true},
			},
		},
	}
}

// familyCharts are the charts of the filter measurements: each family's
// measured rate against its expected one, and the bits per key a table
// spends, by table size.
func (r *sweepReport) familyCharts() map[string]*chart.Lines {
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
	var fprSeries, bitsSeries []chart.Series
	for _, name := range names {
		fprSeries = append(fprSeries, chart.Series{Name: name + " measured", Points: fpr[name]},
			chart.Series{Name: name + " expected", Points: expected[name], Dashed: true})
		bitsSeries = append(bitsSeries, chart.Series{Name: name, Points: bits[name]})
	}
	sizes := func(x float64) string { return fmtCount(int64(x)) }
	return map[string]*chart.Lines{
		"fpr-size": {
			Title: "False-positive rate by table size, per filter (fuse: 2^-w)",
			X:     "keys per table (log)", Y: "false-positive rate (log)", LogX: true, LogY: true, XTick: sizes,
			Series: fprSeries,
		},
		"bits-size": {
			Title: "Filter bits per key a table spends, by table size",
			X:     "keys per table (log)", Y: "serialized filter bits per key", LogX: true, XTick: sizes,
			Series: bitsSeries,
		},
	}
}

// redrawCharts draws again the charts of the sweep.json and scale.json in
// dir (either may be absent, not both): the charts of a run, from its
// numbers, without running it again.
func redrawCharts(stdout io.Writer, dir string) error {
	drawn := 0
	if b, err := os.ReadFile(filepath.Join(dir, "sweep.json")); err == nil {
		var r sweepReport
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, "sweep.json"), err)
		}
		if err := r.writeCharts(dir); err != nil {
			return err
		}
		drawn++
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(dir, "scale.json")); err == nil {
		var reps []*benchReport
		if err := json.Unmarshal(b, &reps); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, "scale.json"), err)
		}
		if len(reps) == 0 {
			return fmt.Errorf("%s holds no runs", filepath.Join(dir, "scale.json"))
		}
		if err := scaleCharts(reps, dir); err != nil {
			return err
		}
		drawn++
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if drawn == 0 {
		return usageError{fmt.Errorf("-chart %s: no sweep.json or scale.json there (written by -out)", dir)}
	}
	fmt.Fprintf(stdout, "charts drawn again in %s\n", dir)
	return nil
}

// scaleCharts writes -sizes' charts into dir: for each read workload,
// scale-W-ops (ops/s), scale-W-p99 (p99 latency) and scale-W-blocks (data
// blocks read from files per Get) against the number of keys.
func scaleCharts(reps []*benchReport, dir string) error {
	measures := []struct {
		file, title, y string
		logY           bool
		of             func(*workloadRow) float64
	}{
		{"ops", "%s: ops/s against the number of keys", "ops/s", true, func(x *workloadRow) float64 { return x.OpsPerSec }},
		{"p99", "%s: p99 latency against the number of keys", "p99 latency (µs)", true, func(x *workloadRow) float64 { return x.P99Micros }},
		{"blocks", "%s: data blocks read from files per Get against the number of keys", "blocks from files per Get", false,
			func(x *workloadRow) float64 { return x.BlocksFromFilePerGet }},
	}
	for j, row := range reps[0].Workloads {
		if row.Gets == 0 {
			continue
		}
		for _, m := range measures {
			s := chart.Series{Name: "bloomkv " + row.Workload}
			for _, rep := range reps {
				s.Points = append(s.Points, [2]float64{float64(rep.Settings.Keys), m.of(&rep.Workloads[j])})
			}
			c := &chart.Lines{Title: fmt.Sprintf(m.title, row.Workload), X: "keys (log)", Y: m.y, LogX: true, LogY: m.logY,
				XTick: func(x float64) string { return fmtCount(int64(x)) }, Series: []chart.Series{s}}
			if err := c.Save(filepath.Join(dir, fmt.Sprintf("scale-%s-%s", row.Workload, m.file))); err != nil {
				return err
			}
		}
	}
	return nil
}

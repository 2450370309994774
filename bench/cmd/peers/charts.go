//go:build !peers_single

package main

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/bloomkv/bloomkv/internal/chart"
)

// errNoCharts is why this build cannot draw charts: nil, it can.
var errNoCharts error

// writeCharts draws the report's charts into dir, each as PNG and SVG:
//
//	ops-N          ops/s of each workload per engine, at N keys
//	device-N       with -cold: device bytes per operation of each read
//	               workload per engine
//	scale-W-ops    with several sizes: read workload W's ops/s against n,
//	scale-W-p99    its p99 latency
//	scale-W-reads  and its read calls per operation
func (r *report) writeCharts(dir string) error {
	engines := r.engines()
	for i, size := range r.Sizes {
		n := shortCount(size.Keys)
		ops := &chart.Bars{Title: fmt.Sprintf("ops/s per workload, %s keys, %d thread(s)", n, r.Threads), Y: "ops/s (log)", LogY: true}
		device := &chart.Bars{Title: fmt.Sprintf("device bytes read per operation, page cache dropped, %s keys", n), Y: "bytes per operation (log)", LogY: true}
		for _, w := range r.Workloads {
			ops.Categories = append(ops.Categories, string(w))
			if !w.IsFill() {
				device.Categories = append(device.Categories, string(w))
			}
		}
		for _, e := range engines {
			opsS, devS := chart.BarSeries{Name: e}, chart.BarSeries{Name: e}
			for j, w := range r.Workloads {
				res := r.result(i, e, j)
				opsS.Values = append(opsS.Values, orNaN(res, func(x *result) float64 { return x.opsPerSec() }))
				if !w.IsFill() {
					devS.Values = append(devS.Values, orNaN(res, func(x *result) float64 { return x.perOp(x.IO.DeviceBytes) }))
				}
			}
			ops.Series = append(ops.Series, opsS)
			device.Series = append(device.Series, devS)
		}
		if err := ops.Save(filepath.Join(dir, "ops-"+n)); err != nil {
			return err
		}
		if r.Cold && len(device.Categories) > 0 {
			if err := device.Save(filepath.Join(dir, "device-"+n)); err != nil {
				return err
			}
		}
	}
	if len(r.Sizes) < 2 {
		return nil
	}
	measures := []struct {
		file, title, y string
		logY           bool
		of             func(*result) float64
	}{
		{"ops", "%s: ops/s against the number of keys", "ops/s", true, func(x *result) float64 { return x.opsPerSec() }},
		{"p99", "%s: p99 latency against the number of keys", "p99 latency (µs)", true, func(x *result) float64 { return float64(x.P99NS) / 1e3 }},
		{"reads", "%s: read calls per operation against the number of keys", "read system calls per operation", false, func(x *result) float64 { return x.perOp(x.IO.FileReads) }},
	}
	for j, w := range r.Workloads {
		if w.IsFill() {
			continue
		}
		for _, m := range measures {
			c := &chart.Lines{Title: fmt.Sprintf(m.title, w), X: "keys (log)", Y: m.y, LogX: true, LogY: m.logY,
				XTick: func(x float64) string { return shortCount(int(x)) }}
			for _, e := range engines {
				s := chart.Series{Name: e}
				for i, size := range r.Sizes {
					s.Points = append(s.Points, [2]float64{float64(size.Keys), orNaN(r.result(i, e, j), m.of)})
				}
				c.Series = append(c.Series, s)
			}
			if err := c.Save(filepath.Join(dir, fmt.Sprintf("scale-%s-%s", w, m.file))); err != nil {
				return err
			}
		}
	}
	return nil
}

func orNaN(r *result, f func(*result) float64) float64 {
	if r == nil {
		return math.NaN()
	}
	return f(r)
}

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// sweepBits are the bits per key the sweep tries; 0 is no filter.
var sweepBits = []float64{0, 2, 4, 6, 8, 10, 12, 16, 20}

// sweepRow is one database of the sweep: its filter setting, memory, and
// what Gets of missing and present keys cost.
type sweepRow struct {
	BitsPerKey   float64 `json:"bits_per_key"`
	Allocation   string  `json:"allocation"` // uniform, optimal, or none
	FilterMemory uint64  `json:"filter_memory_bytes"`
	Levels       int     `json:"levels"` // non-empty levels, L0 included

	// Per Get of a missing key.
	MissingTables          float64 `json:"missing_tables_per_get"`
	MissingFilterNegatives float64 `json:"missing_filter_negatives_per_get"`
	MissingBlocks          float64 `json:"missing_blocks_per_get"` // data blocks, from file or cache
	MissingBlocksFromFile  float64 `json:"missing_blocks_from_file_per_get"`
	MissingBytesRead       float64 `json:"missing_bytes_read_per_get"`
	MeasuredFPR            float64 `json:"measured_fpr"`  // over all levels' checks
	PredictedFPR           float64 `json:"predicted_fpr"` // the levels' rates weighted by their checks
	BoundFPR               float64 `json:"bound_fpr"`     // 2^−bits: the least any filter of this memory allows

	// Per Get of a present key.
	PresentBlocks float64 `json:"present_blocks_per_get"`

	P50PresentMicros float64 `json:"p50_present_us"`
	P99PresentMicros float64 `json:"p99_present_us"`
	P50MissingMicros float64 `json:"p50_missing_us"`
	P99MissingMicros float64 `json:"p99_missing_us"`
	MissingOpsPerSec float64 `json:"missing_ops_per_sec"`
	PresentOpsPerSec float64 `json:"present_ops_per_sec"`
}

type sweepReport struct {
	Settings benchSettings `json:"settings"`
	Rows     []sweepRow    `json:"rows"`
}

func runSweep(stdout io.Writer, f *benchFlags, dir string, base bloomkv.Options, cfg *workload.Config) error {
	type config struct {
		bits       float64
		allocation bloomkv.FilterAllocation
	}
	var configs []config
	for _, b := range sweepBits {
		configs = append(configs, config{b, bloomkv.UniformAllocation})
		if b > 0 {
			configs = append(configs, config{b, bloomkv.OptimalAllocation})
		}
	}
	settingsOpts := base
	settingsOpts.BitsPerKey = 10
	rep := &sweepReport{Settings: newSettings(&settingsOpts, cfg)}
	rep.Settings.BitsPerKey, rep.Settings.Allocation = 0, "sweep"
	fmt.Fprintf(stdout, "bloomkv bench -sweep: %s\n", rep.Settings.String())
	fmt.Fprintf(stdout, "each row: a fresh database (L0 compacted at 1 table, so L0 ends empty), fillrandom, then %s Gets of missing and of present keys\n\n", fmtCount(int64(cfg.Reads)))
	for i, c := range configs {
		opts := base
		opts.BitsPerKey, opts.DisableFilters, opts.FilterAllocation = c.bits, c.bits == 0, c.allocation
		// Every flush goes straight on into L1, so that each database ends
		// with an empty L0: otherwise the one to three L0 tables a fill
		// happens to leave would swamp the differences between rows.
		opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 1, 8, 12
		label := fmt.Sprintf("%d/%d %g %s", i+1, len(configs), c.bits, c.allocation)
		row, err := sweepOne(filepath.Join(dir, strconv.Itoa(i)), &opts, cfg, label)
		if err != nil {
			return fmt.Errorf("bits/key %g %s: %w", c.bits, c.allocation, err)
		}
		rep.Rows = append(rep.Rows, *row)
	}
	rep.print(stdout)
	if f.out == "" {
		return nil
	}
	if err := rep.write(f.out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote sweep.csv, sweep.json, fpr.svg, reads.svg and latency.svg in %s\n", f.out)
	return nil
}

func sweepOne(dir string, opts *bloomkv.Options, cfg *workload.Config, label string) (*sweepRow, error) {
	defer os.RemoveAll(dir)
	s, err := workload.OpenBloomkv(dir, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := runPhase(s, cfg, workload.FillRandom, label+" fill"); err != nil {
		return nil, err
	}
	missing, err := runPhase(s, cfg, workload.ReadMissing, label+" readmissing")
	if err != nil {
		return nil, err
	}
	present, err := runPhase(s, cfg, workload.ReadRandom, label+" readrandom")
	if err != nil {
		return nil, err
	}
	m := s.DB.Metrics()
	row := &sweepRow{BitsPerKey: opts.BitsPerKey, Allocation: opts.FilterAllocation.String(), FilterMemory: m.FilterMemory}
	if opts.DisableFilters {
		row.BitsPerKey, row.Allocation = 0, "none"
	}
	var predicted, checks float64
	for i, l := range m.Levels {
		if l.Tables > 0 {
			row.Levels++
		}
		d := missing.levels[i]
		if n := float64(d.FilterNegatives + d.FalsePositives()); n > 0 {
			predicted += n * predictedFPR(l.FilterBitsPerKey)
			checks += n
		}
	}
	sm, sp := missing.sum(), present.sum()
	row.MissingTables = missing.perGet(sm.TableProbes)
	row.MissingFilterNegatives = missing.perGet(sm.FilterNegatives)
	row.MissingBlocks = missing.perGet(sm.BlocksFromFile + sm.BlocksFromCache)
	row.MissingBlocksFromFile = missing.perGet(sm.BlocksFromFile)
	row.MissingBytesRead = missing.perGet(sm.BytesRead)
	row.PresentBlocks = present.perGet(sp.BlocksFromFile + sp.BlocksFromCache)
	row.MeasuredFPR, row.PredictedFPR, row.BoundFPR = 1, 1, 1
	if row.BitsPerKey > 0 {
		row.MeasuredFPR = sm.FalsePositiveRate()
		if checks > 0 {
			row.PredictedFPR = predicted / checks
		}
		row.BoundFPR = math.Exp2(-row.BitsPerKey)
	}
	row.P50MissingMicros = micros(missing.res.Latency.Percentile(0.5))
	row.P99MissingMicros = micros(missing.res.Latency.Percentile(0.99))
	row.P50PresentMicros = micros(present.res.Latency.Percentile(0.5))
	row.P99PresentMicros = micros(present.res.Latency.Percentile(0.99))
	row.MissingOpsPerSec, row.PresentOpsPerSec = missing.res.OpsPerSec(), present.res.OpsPerSec()
	return row, s.Close()
}

func (r *sweepReport) print(w io.Writer) {
	t := newTable(w)
	fmt.Fprintln(t, "bits/key\tallocation\tfilter memory\tlevels\t"+
		"tables/miss\tfilter neg/miss\tblocks/miss\tfrom file/miss\tFPR\tpredicted\tbound\t"+
		"blocks/hit\tp50 hit\tp50 miss\tp99 miss\t")
	for _, row := range r.Rows {
		rates := "-\t-\t-\t"
		if row.BitsPerKey > 0 {
			rates = fmt.Sprintf("%s\t%s\t%s\t", fmtRate(row.MeasuredFPR), fmtRate(row.PredictedFPR), fmtRate(row.BoundFPR))
		}
		fmt.Fprintf(t, "%g\t%s\t%s\t%d\t%.3f\t%.3f\t%.4f\t%.4f\t%s%.3f\t%s\t%s\t%s\t\n",
			row.BitsPerKey, row.Allocation, humanize.Bytes(row.FilterMemory), row.Levels,
			row.MissingTables, row.MissingFilterNegatives, row.MissingBlocks, row.MissingBlocksFromFile, rates,
			row.PresentBlocks, fmtMicros(row.P50PresentMicros), fmtMicros(row.P50MissingMicros), fmtMicros(row.P99MissingMicros))
	}
	t.Flush()
	fmt.Fprintln(w, "\nmiss: a Get of a missing key (readmissing); hit: of a present key (readrandom).")
	fmt.Fprintln(w, "blocks: data blocks read, from the file or the block cache; FPR: false positives over the filter")
	fmt.Fprintln(w, "checks of missing keys; predicted: the blocked filter's rate at each level's bits per key,")
	fmt.Fprintln(w, "weighted by the level's checks; bound: 2^-bits, the least any filter of that memory allows.")
}

func (r *sweepReport) write(dir string) error {
	if err := writeJSON(filepath.Join(dir, "sweep.json"), r); err != nil {
		return err
	}
	rows := [][]string{{"bits_per_key", "allocation", "filter_memory_bytes", "levels", "missing_tables_per_get",
		"missing_filter_negatives_per_get", "missing_blocks_per_get", "missing_blocks_from_file_per_get",
		"missing_bytes_read_per_get", "measured_fpr", "predicted_fpr", "bound_fpr", "present_blocks_per_get",
		"p50_present_us", "p99_present_us", "p50_missing_us", "p99_missing_us", "present_ops_per_sec", "missing_ops_per_sec"}}
	for _, x := range r.Rows {
		rows = append(rows, []string{ftoa(x.BitsPerKey), x.Allocation, strconv.FormatUint(x.FilterMemory, 10), strconv.Itoa(x.Levels),
			ftoa(x.MissingTables), ftoa(x.MissingFilterNegatives), ftoa(x.MissingBlocks), ftoa(x.MissingBlocksFromFile),
			ftoa(x.MissingBytesRead), ftoa(x.MeasuredFPR), ftoa(x.PredictedFPR), ftoa(x.BoundFPR), ftoa(x.PresentBlocks),
			ftoa(x.P50PresentMicros), ftoa(x.P99PresentMicros), ftoa(x.P50MissingMicros), ftoa(x.P99MissingMicros),
			ftoa(x.PresentOpsPerSec), ftoa(x.MissingOpsPerSec)})
	}
	if err := writeCSV(filepath.Join(dir, "sweep.csv"), rows); err != nil {
		return err
	}
	return r.writeCharts(dir)
}

package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/cmd/bloomkv/benchstore"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/progress"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// The range comparison (-range-compare): the range workloads on two
// databases in one run, one with range filters (-range-filter-bits in
// every level) and one without, each filled by fillrange (and more such
// pairs filled and removed, for the fill's ratio), then each scan
// workload run rangeRounds times on each, alternating, so that the two
// measure the same scans under the same load (a machine shared with other
// work drifts: alternating spreads the drift over both). Each scan
// workload runs in two forms: a new Iterator per scan (fresh, as DB.Scan
// does), and one Iterator per thread re-bounded by SetBounds for each scan
// (reuse, workload.Config.RangeReuse), as a program running many short
// scans would write it.

// rangeRounds is how many times each range workload runs on each
// database.
const rangeRounds = 3

// rangeFillPairs is how many more pairs of databases, with range filters
// and without, fillRangePairs fills in turn: with the comparison's own
// pair, six ratios of fill rates, whose median one or two slow moments of
// the machine do not move (one pair's ratio has spanned 0.76–1.19 within
// one run on a 2-core machine, the fill's compactions settling at
// different moments on each side).
const rangeFillPairs = 5

// rangeSample is how many scans of each range workload ExplainRange
// replays, untimed, after the timed run, to count the tables each scan
// considered and skipped (a database without range filters counts none).
const rangeSample = 500

// rangeSide is one database's measurements of one range workload.
type rangeSide struct {
	OpsPerSec      float64
	CPUPerScan     time.Duration // the process's CPU time per scan: what other work on the machine inflates less than ops/s
	P99            time.Duration
	BlocksPerScan  float64 // data blocks from the cache or the file
	FileBlocks     float64
	TablesInRange  float64 // whose key range overlaps the scan's
	TablesSkipped  float64 // by their range filters
	KeysPerScan    float64
	FilterMemory   uint64 // point and range filters, after the fill
	FillOpsPerSec  float64
	FillSettleSecs float64
}

// rangeRow is one range workload on both databases.
type rangeRow struct {
	Workload string
	Iterator string // fresh: an Iterator per scan; reuse: one per thread, SetBounds per scan
	Scans    int
	On, Off  rangeSide
}

// runRangeCompare runs the comparison and prints it, with -out writing
// rangescan.csv.
func runRangeCompare(stdout io.Writer, f *benchFlags, dir string, base bloomkv.Options, cfg *workload.Config) error {
	bits := f.rangeFilterBits
	if bits == 0 {
		bits = 16
	}
	on, off := base, base
	on.RangeFilterBits = []float64{bits}
	var stores [2]*benchstore.Bloomkv
	for i, opts := range []*bloomkv.Options{&on, &off} {
		s, err := benchstore.Open(filepath.Join(dir, strconv.Itoa(i)), opts)
		if err != nil {
			return err
		}
		defer s.Close()
		stores[i] = s
	}
	labels := [2]string{"range filters", "no range filters"}
	var fill [2]*phase
	for i, s := range stores {
		// Each fill starts with the device idle, as the sweep's do.
		_ = procstat.WriteBack()
		p, err := runPhase(s, cfg, workload.FillRange, labels[i]+" fillrange")
		if err != nil {
			return err
		}
		fill[i] = p
	}
	fillRatios, err := fillRangePairs(dir, on, off, cfg, fill)
	if err != nil {
		return err
	}
	// Each fill is then compacted into one sorted run (DB.Compact), so that
	// the two trees are the same but for their range filters: as the fills
	// leave them, their shapes differ with the moments their compactions
	// ran, and so does what a scan of each has to read.
	var compacted [2]time.Duration
	for i, s := range stores {
		t := time.Now()
		pr := progress.New(labels[i]+": compact", 0)
		err := s.DB.Compact(nil, nil)
		pr.Done()
		if err != nil {
			return err
		}
		compacted[i] = time.Since(t)
	}
	var rows []rangeRow
	defer func(reuse bool) { cfg.RangeReuse = reuse }(cfg.RangeReuse)
	for i := range 2 * len(workload.RangeScans()) {
		w := workload.RangeScans()[i/2]
		cfg.RangeReuse = i%2 == 1
		row := rangeRow{Workload: string(w), Iterator: iteratorForm(cfg.RangeReuse)}
		var ops [2]int
		var elapsed, cpu [2]time.Duration
		var lat [2]workload.Histogram
		var hits, misses [2]uint64
		for round := range 2 * rangeRounds {
			i := round % 2
			label := fmt.Sprintf("%s %s, %s iterator (%d/%d)", labels[i], w, row.Iterator, round/2+1, rangeRounds)
			p, err := runPhaseOS(stores[i], cfg, w, label, &osMeasure{dir: filepath.Join(dir, strconv.Itoa(i))})
			if err != nil {
				return err
			}
			cpu[i] += p.cpu
			ops[i] += p.res.Ops
			elapsed[i] += p.res.Elapsed
			lat[i].Merge(&p.res.Latency)
			hits[i] += p.cacheHits
			misses[i] += p.cacheMisses
		}
		for i, s := range stores {
			side := &row.On
			if i == 1 {
				side = &row.Off
			}
			row.Scans = ops[i]
			scans := float64(ops[i])
			side.OpsPerSec, side.P99 = scans/elapsed[i].Seconds(), lat[i].Percentile(0.99)
			side.CPUPerScan = cpu[i] / time.Duration(ops[i])
			side.BlocksPerScan = float64(hits[i]+misses[i]) / scans
			side.FileBlocks = float64(misses[i]) / scans
			if err := sampleRangeScans(s.DB, cfg.Keys, w, side); err != nil {
				return err
			}
			m := s.DB.Metrics()
			side.FilterMemory = m.FilterMemory
			side.FillOpsPerSec, side.FillSettleSecs = fill[i].res.OpsPerSec(), fill[i].settleTime.Seconds()
		}
		rows = append(rows, row)
	}
	printRangeCompare(stdout, cfg, bits, fill, fillRatios, compacted, rows)
	if f.out != "" {
		path := filepath.Join(f.out, "rangescan.csv")
		if err := writeRangeCSV(path, bits, rows); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", path)
	}
	return nil
}

// fillRangePairs fills rangeFillPairs more pairs of databases in dir, with
// range filters (on) and without (off), in turn, the first of each pair
// alternating, each pair removed once filled, and returns the ratios of
// the pairs' fill rates with their settle (phase.settledOpsPerSec), on/off,
// the comparison's own pair (fill) first.
func fillRangePairs(dir string, on, off bloomkv.Options, cfg *workload.Config, fill [2]*phase) ([]float64, error) {
	sides := [2]bloomkv.Options{on, off}
	labels := [2]string{"range filters", "no range filters"}
	pairs, err := fillInTurn(rangeFillPairs, func(p, i int) (float64, error) {
		opts := sides[i]
		label := fmt.Sprintf("fill pair %d/%d, %s", p+1, rangeFillPairs, labels[i])
		pdir := filepath.Join(dir, fmt.Sprintf("pair%d-%d", p, i))
		s, err := benchstore.Open(pdir, &opts)
		if err != nil {
			return 0, err
		}
		_ = procstat.WriteBack()
		ph, err := runPhase(s, cfg, workload.FillRange, label)
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", label, err)
		}
		return ph.settledOpsPerSec(), os.RemoveAll(pdir)
	})
	if err != nil {
		return nil, err
	}
	ratios := []float64{fill[0].settledOpsPerSec() / fill[1].settledOpsPerSec()}
	for _, r := range pairs {
		ratios = append(ratios, r[0]/r[1])
	}
	return ratios, nil
}

// iteratorForm names the form of a range workload's scans.
func iteratorForm(reuse bool) string {
	if reuse {
		return "reuse"
	}
	return "fresh"
}

// sampleRangeScans replays rangeSample scans of workload w, chosen as the
// workload chooses them but by a generator of their own, through
// DB.ExplainRange, and sets the tables in range and skipped and the keys
// per scan in side.
func sampleRangeScans(db *bloomkv.DB, k *workload.Keys, w workload.Workload, side *rangeSide) error {
	width, empty := 0, false
	for _, x := range workload.RangeWidths {
		switch w {
		case workload.RangeScanWorkload(x, false):
			width = x
		case workload.RangeScanWorkload(x, true):
			width, empty = x, true
		}
	}
	r := rand.New(rand.NewPCG(k.Seed, uint64(width)))
	runs := k.N/workload.RangeRun - 1
	var lo, hi []byte
	var inRange, skipped, keys int
	for range rangeSample {
		lo, hi = k.RangeBounds(lo, hi, r.IntN(runs), r.IntN(workload.RangeRun-width+1), width, empty)
		t, err := db.ExplainRange(lo, hi)
		if err != nil {
			return err
		}
		for _, s := range t.Steps {
			if s.Kind == bloomkv.TableStep && s.InRange {
				inRange++
				if !s.Sought {
					skipped++
				}
			}
		}
		keys += t.Keys
	}
	side.TablesInRange = float64(inRange) / rangeSample
	side.TablesSkipped = float64(skipped) / rangeSample
	side.KeysPerScan = float64(keys) / rangeSample
	return nil
}

// printRangeCompare prints the comparison, the two databases side by
// side, with the ratios the range filters' case rests on.
func printRangeCompare(w io.Writer, cfg *workload.Config, bits float64, fill [2]*phase, fillRatios []float64, compacted [2]time.Duration, rows []rangeRow) {
	fmt.Fprintf(w, "range scans: fillrange of %s keys (runs of %d keys, gaps of %d), compacted, then each workload on two databases in turn:\n",
		fmtCount(int64(cfg.Keys.N)), workload.RangeRun, workload.RangeRun)
	fmt.Fprintf(w, "on: range filters of %g bits/key in every level; off: none\n\n", bits)
	tw := newTable(w)
	fmt.Fprintln(tw, "\tops/s on\toff\ton/off\tsettle on\toff\tcompact on\toff\tfilter memory on\toff\t")
	fmt.Fprintf(tw, "fillrange\t%.0f\t%.0f\t%.3f\t%.2fs\t%.2fs\t%.2fs\t%.2fs\t%s\t%s\t\n", fill[0].res.OpsPerSec(), fill[1].res.OpsPerSec(),
		fill[0].res.OpsPerSec()/fill[1].res.OpsPerSec(), fill[0].settleTime.Seconds(), fill[1].settleTime.Seconds(),
		compacted[0].Seconds(), compacted[1].Seconds(),
		humanize.Bytes(rowsFilterMemory(rows, true)), humanize.Bytes(rowsFilterMemory(rows, false)))
	tw.Flush()
	pairs := make([]string, len(fillRatios))
	for i, r := range fillRatios {
		pairs[i] = fmt.Sprintf("%.3f", r)
	}
	median := medianOf(slices.Clone(fillRatios))
	fmt.Fprintf(w, "  fill and settle in %d pairs filled in turn (on/off %s): median %.3f (target ≥ 0.85: %s)\n\n",
		len(fillRatios), strings.Join(pairs, ", "), median, verdict(median, median >= 0.85))
	tw = newTable(w)
	fmt.Fprintln(tw, "workload\titerator\tscans\tkeys/scan\ttables in range on\toff\tskipped on\tskipped %\tblocks/scan on\toff\tops/s on\toff\ton/off\tCPU/scan on\toff\toff/on\tp99 on\toff\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.1f%%\t%.3f\t%.3f\t%.0f\t%.0f\t%.2f\t%v\t%v\t%.2f\t%v\t%v\t\n", r.Workload, r.Iterator, r.Scans, r.On.KeysPerScan,
			r.On.TablesInRange, r.Off.TablesInRange, r.On.TablesSkipped, 100*r.On.TablesSkipped/max(r.On.TablesInRange, 1e-9),
			r.On.BlocksPerScan, r.Off.BlocksPerScan, r.On.OpsPerSec, r.Off.OpsPerSec, r.On.OpsPerSec/r.Off.OpsPerSec,
			r.On.CPUPerScan.Round(time.Microsecond/100), r.Off.CPUPerScan.Round(time.Microsecond/100), float64(r.Off.CPUPerScan)/float64(max(r.On.CPUPerScan, 1)),
			r.On.P99.Round(time.Microsecond/10), r.Off.P99.Round(time.Microsecond/10))
	}
	tw.Flush()
	fmt.Fprintln(w, "iterator: fresh, a new Iterator per scan; reuse, one per thread, re-bounded by SetBounds for each scan;")
	fmt.Fprintln(w, "CPU/scan: the process's CPU time over the workload's runs per scan (which a machine shared with other work inflates less than ops/s);")
	fmt.Fprintln(w, "tables in range: per scan, whose key range overlaps it (the same in both: each fill is compacted); skipped: by range filters;")
	fmt.Fprintln(w, "blocks/scan: data blocks read, from the block cache or the file (ExplainRange replays 500 scans of each kind for the tables)")
}

// rowsFilterMemory returns the filter memory of the database with range
// filters (on) or without, as the rows recorded it.
func rowsFilterMemory(rows []rangeRow, on bool) uint64 {
	if len(rows) == 0 {
		return 0
	}
	if on {
		return rows[0].On.FilterMemory
	}
	return rows[0].Off.FilterMemory
}

// writeRangeCSV writes the comparison, one row per workload.
func writeRangeCSV(path string, bits float64, rows []rangeRow) error {
	out := [][]string{{"workload", "iterator", "scans", "range_filter_bits", "keys_per_scan", "tables_in_range_per_scan_on", "tables_in_range_per_scan_off", "tables_skipped_per_scan_on",
		"blocks_per_scan_on", "blocks_per_scan_off", "file_blocks_per_scan_on", "file_blocks_per_scan_off",
		"ops_per_sec_on", "ops_per_sec_off", "cpu_ns_per_scan_on", "cpu_ns_per_scan_off", "p99_ns_on", "p99_ns_off", "fill_ops_per_sec_on", "fill_ops_per_sec_off",
		"filter_memory_bytes_on", "filter_memory_bytes_off"}}
	for _, r := range rows {
		out = append(out, []string{r.Workload, r.Iterator, strconv.Itoa(r.Scans), ftoa(bits), ftoa(r.On.KeysPerScan), ftoa(r.On.TablesInRange), ftoa(r.Off.TablesInRange), ftoa(r.On.TablesSkipped),
			ftoa(r.On.BlocksPerScan), ftoa(r.Off.BlocksPerScan), ftoa(r.On.FileBlocks), ftoa(r.Off.FileBlocks),
			ftoa(r.On.OpsPerSec), ftoa(r.Off.OpsPerSec), strconv.FormatInt(int64(r.On.CPUPerScan), 10), strconv.FormatInt(int64(r.Off.CPUPerScan), 10), strconv.FormatInt(int64(r.On.P99), 10), strconv.FormatInt(int64(r.Off.P99), 10),
			ftoa(r.On.FillOpsPerSec), ftoa(r.Off.FillOpsPerSec), strconv.FormatUint(r.On.FilterMemory, 10), strconv.FormatUint(r.Off.FilterMemory, 10)})
	}
	return writeCSV(path, out)
}

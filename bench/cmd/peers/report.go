package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// reportFile is the name of the results file -out writes.
const reportFile = "peers.json"

// report is everything a run measured, as -out writes it: the machine,
// the command and its date, the settings, and each size's runs.
type report struct {
	Machine   procstat.Machine    `json:"machine"`
	Command   string              `json:"command"`
	Date      string              `json:"date"`
	Threads   int                 `json:"threads"`
	Cold      bool                `json:"cold"`
	YCSB      string              `json:"ycsb,omitempty"`
	Workloads []workload.Workload `json:"workloads"`
	Settings  peers.Settings      `json:"settings"`
	Sizes     []sizeRun           `json:"sizes"`
}

// sizeRun is the runs of every engine at one number of keys.
type sizeRun struct {
	Keys int `json:"keys"`
	// Written is, for each fill, the user bytes it wrote
	// (workload.Config.WrittenBytes), by the index of the workload.
	Written []int64     `json:"written"`
	Runs    []engineRun `json:"runs"`
	// Killed are the engines killed by the memory cap (-memlimit) before
	// they finished, with no results (engineRun.Killed).
	Killed []engineRun `json:"killed,omitempty"`
}

func newReport(o *options, args []string, ws []workload.Workload) *report {
	return &report{Machine: procstat.ReadMachine(o.dir), Command: "peers " + strings.Join(args, " "),
		Date: time.Now().UTC().Format(time.RFC3339), Threads: o.threads, Cold: o.cold, YCSB: o.ycsb,
		Workloads: ws, Settings: o.settings()}
}

func (r *report) add(n int, cfg *workload.Config, runs []engineRun) {
	r.Sizes = append(r.Sizes[:len(r.Sizes):len(r.Sizes)], r.size(n, cfg, runs))
}

func (r *report) size(n int, cfg *workload.Config, runs []engineRun) sizeRun {
	written := make([]int64, len(r.Workloads))
	for j, w := range r.Workloads {
		written[j] = cfg.WrittenBytes(w)
	}
	size := sizeRun{Keys: n, Written: written}
	for _, run := range runs {
		if run.Killed != "" {
			size.Killed = append(size.Killed, run)
		} else {
			size.Runs = append(size.Runs, run)
		}
	}
	return size
}

func (r *report) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, reportFile), append(b, '\n'), 0o644)
}

func readReport(dir string) (*report, error) {
	b, err := os.ReadFile(filepath.Join(dir, reportFile))
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, reportFile), err)
	}
	if len(r.Sizes) == 0 {
		return nil, fmt.Errorf("%s holds no runs", filepath.Join(dir, reportFile))
	}
	return &r, nil
}

// engines returns the engines' names, as in the first size's runs.
func (r *report) engines() []string {
	var names []string
	for _, run := range r.Sizes[0].Runs {
		names = append(names, run.Name)
	}
	return names
}

// result returns engine e's result of workload j at size i, nil if it has
// none.
func (r *report) result(i int, e string, j int) *result {
	for _, run := range r.Sizes[i].Runs {
		if run.Name == e && j < len(run.Results) {
			return &run.Results[j]
		}
	}
	return nil
}

// shortCount writes a count of keys as 500K, 10M, 1.5M.
func shortCount(n int) string {
	switch {
	case n >= 1e6 && n%100_000 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1e3 && n%100 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "K"
	}
	return fmt.Sprint(n)
}

// fmtCount writes n with thousands separators.
func fmtCount(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// printTables prints the tables of the engines that finished, and a line
// for each the memory cap killed.
func (s *sizeRun) printTables(stdout io.Writer, ws []workload.Workload) {
	if len(s.Runs) > 0 {
		printTables(stdout, s.Runs, ws, s.Written)
	}
	for _, k := range s.Killed {
		fmt.Fprintf(stdout, "%s: no results: %s", k.Name, k.Killed)
		if k.Memcg != nil && k.Memcg.Peak >= 0 {
			fmt.Fprintf(stdout, " (its cgroup's peak: %s)", size(k.Memcg.Peak))
		}
		fmt.Fprintln(stdout)
	}
}

// print prints the report's tables as the run printed them: each size's,
// then, with several sizes, the scale table.
func (r *report) print(stdout io.Writer) {
	fmt.Fprintf(stdout, "%s\n%s, on %s\n", r.Command, r.Date, r.Machine)
	for _, size := range r.Sizes {
		fmt.Fprintf(stdout, "\n%s keys\n\n", fmtCount(size.Keys))
		size.printTables(stdout, r.Workloads)
	}
	if len(r.Sizes) > 1 {
		fmt.Fprintln(stdout)
		printScale(stdout, r, r.Workloads)
	}
}

// printScale prints, for each read workload, its ops/s, p99 and read calls
// per operation at each size, per engine.
func printScale(stdout io.Writer, r *report, ws []workload.Workload) {
	engines := r.engines()
	fmt.Fprint(stdout, "scale: each read workload's ops/s, p99 latency and read calls per operation against the number of keys\n")
	for j, w := range ws {
		if w.IsFill() {
			continue
		}
		fmt.Fprintf(stdout, "\n%s\n", w)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "keys\t")
		for _, e := range engines {
			fmt.Fprintf(tw, "%s ops/s\tp99\treads/op\t", e)
		}
		fmt.Fprintln(tw)
		for i, size := range r.Sizes {
			fmt.Fprintf(tw, "%s\t", shortCount(size.Keys))
			for _, e := range engines {
				if res := r.result(i, e, j); res != nil {
					fmt.Fprintf(tw, "%.0f\t%s\t%s\t", res.opsPerSec(), dur(res.P99NS), num(res.perOp(res.IO.FileReads), 2))
				} else {
					fmt.Fprint(tw, "–\t–\t–\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	fmt.Fprintln(stdout)
}

// num formats x with prec decimals, "–" for NaN.
func num(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// printAmp prints each workload's amplification and cost columns per
// engine: ops/s, CPU seconds, read calls and bytes per operation (the
// file system's), tables and blocks per operation (the engine's counters),
// the share of the time writes stalled, and for each fill its write
// amplification (bytes written to the device per user byte) and space
// amplification (bytes on disk per live user byte).
func printAmp(stdout io.Writer, runs []engineRun, ws []workload.Workload, written []int64) {
	fmt.Fprint(stdout, "\namplification and cost, per workload and engine\n")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tengine\tops/s\tCPU s\treads/op\tread KiB/op\ttables/op\tblocks/op\tstall %\twrite amp\tspace amp\t")
	for j, w := range ws {
		for _, r := range runs {
			res := &r.Results[j]
			stall := "–"
			if x := res.stallShare(); !math.IsNaN(x) {
				stall = fmt.Sprintf("%.1f%%", 100*x)
			}
			space := math.NaN()
			if res.LiveBytes > 0 {
				space = float64(res.DiskBytes) / float64(res.LiveBytes)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", w, r.Name, res.opsPerSec(), float64(res.CPUNS)/1e9,
				num(res.perOp(res.IO.FileReads), 2), num(res.perOp(res.IO.FileBytes)/1024, 2),
				num(res.perOp(res.Engine.Tables), 2), num(res.perOp(res.Engine.Blocks), 2), stall,
				num(res.writeAmp(written[j]), 2), num(space, 2))
		}
	}
	tw.Flush()
	for j, w := range ws {
		for _, r := range runs {
			if res := &r.Results[j]; res.DiskBytesCollected > 0 && res.LiveBytes > 0 {
				fmt.Fprintf(stdout, "%s after %s: space amp %.2f after its value-log collection (%d files rewritten)\n",
					r.Name, w, float64(res.DiskBytesCollected)/float64(res.LiveBytes), res.ValueLogRewrites)
			}
		}
	}
	fmt.Fprintln(stdout, `(reads/op and read KiB/op: read system calls and the bytes they returned, /proc/self/io syscr and rchar — badger maps
 its tables into memory, and reads through a mapping are no calls; tables/op and blocks/op: the engine's counters, bloomkv's
 tables whose key range held the key and data blocks, pebble's block cache hits and misses (index and filter blocks too), – where
 the engine counts none; stall %: the engine's write stall time over the workload's; CPU s: the process's user and system
 time over the workload and a fill's settle, background work included; write amp: bytes written to storage (write_bytes) over
 the fill and its settle per user byte written; space amp: bytes the engine's directory takes on disk after the fill per
 live user byte)`)
}

// printColdTable prints a table of the read workloads — every workload
// if capped (-memlimit) — under title: cell's text for each engine's
// workload measured cold or in a memory cgroup, with operations; – for the
// others.
func printColdTable(stdout io.Writer, title string, runs []engineRun, ws []workload.Workload, capped bool, cell func(*result) string) {
	fmt.Fprintf(stdout, "\n%s\n", title)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, runs, "")
	for j, w := range ws {
		if w.IsFill() && !capped {
			continue
		}
		fmt.Fprintf(tw, "%s\t", w)
		for _, r := range runs {
			if res := &r.Results[j]; (res.Cold || r.Memcg != nil) && res.Ops > 0 {
				fmt.Fprintf(tw, "%s\t", cell(res))
			} else {
				fmt.Fprint(tw, "–\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// benchSettings are a run's settings, as reported.
type benchSettings struct {
	Keys           int     `json:"keys"`
	KeySize        int     `json:"key_size"`
	ValueSize      int     `json:"value_size"`
	Seed           uint64  `json:"seed"`
	Reads          int     `json:"reads"`
	MissRatio      float64 `json:"miss_ratio"`
	ScanLength     int     `json:"scan_length"`
	BitsPerKey     float64 `json:"bits_per_key"`
	Allocation     string  `json:"allocation"`
	Filters        string  `json:"filters,omitempty"` // LevelFilters, from L0: "fuse:16,fuse:12"
	Prefix         string  `json:"prefix,omitempty"`  // the prefix extractor's Name
	Compression    string  `json:"compression"`       // below the base level
	TopCompression string  `json:"top_compression"`   // L0 and the base level
	BlockCacheSize int64   `json:"block_cache_size"`
	MemtableSize   int64   `json:"memtable_size"`
	BaseLevelSize  uint64  `json:"base_level_size"`
	LevelSizing    string  `json:"level_sizing"`
	MaxCompactions int     `json:"max_concurrent_compactions"` // 0: the DB's default
	TargetFileSize uint64  `json:"target_file_size"`
	// MemLimit is the size of the memory cgroup the run was in
	// (-memlimit), 0 if none.
	MemLimit int64 `json:"memlimit,omitempty"`
}

func (s *benchSettings) String() string {
	filters := "no filters"
	switch {
	case s.Filters != "":
		filters = "filters " + s.Filters + " from L0"
	case s.BitsPerKey > 0:
		filters = fmt.Sprintf("%g bits/key %s", s.BitsPerKey, s.Allocation)
	}
	if s.Prefix != "" {
		filters += fmt.Sprintf(" with prefixes (%s)", s.Prefix)
	}
	cache := humanize.Bytes(uint64(max(s.BlockCacheSize, 0)))
	compactions := "default compactions at once"
	if s.MaxCompactions > 0 {
		compactions = fmt.Sprintf("%d compactions at once", s.MaxCompactions)
	}
	compression := s.Compression
	if s.TopCompression != "" && s.TopCompression != s.Compression {
		compression = fmt.Sprintf("%s (L0 and the base level %s)", s.Compression, s.TopCompression)
	}
	capped := ""
	if s.MemLimit > 0 {
		capped = fmt.Sprintf("; in a memory cgroup of %s, the page cache counted", humanize.Bytes(uint64(s.MemLimit)))
	}
	return fmt.Sprintf("%s keys of %d B, values of %d B, seed %d; %s, %s, block cache %s, memtable %s, base level %s (×10 per level, %s), tables %s, %s%s",
		fmtCount(int64(s.Keys)), s.KeySize, s.ValueSize, s.Seed, filters, compression, cache,
		humanize.Bytes(uint64(s.MemtableSize)), humanize.Bytes(s.BaseLevelSize), s.LevelSizing, humanize.Bytes(s.TargetFileSize), compactions, capped)
}

func newSettings(opts *bloomkv.Options, cfg *workload.Config) benchSettings {
	bitsPerKey := opts.BitsPerKey
	if opts.DisableFilters {
		bitsPerKey = 0
	}
	var filters []string
	for _, spec := range opts.LevelFilters {
		filters = append(filters, specName(spec))
	}
	prefix := ""
	if opts.Prefix != nil {
		prefix = opts.Prefix.Name
	}
	return benchSettings{
		Filters: strings.Join(filters, ","), Prefix: prefix,
		Keys: cfg.Keys.N, KeySize: cfg.Keys.KeySize, ValueSize: cfg.Keys.ValueSize, Seed: cfg.Keys.Seed,
		Reads: cfg.Reads, MissRatio: cfg.MissRatio, ScanLength: cfg.ScanLength,
		BitsPerKey: bitsPerKey,
		Allocation: opts.FilterAllocation.String(), Compression: opts.Compression.String(), TopCompression: opts.TopLevelCompression.String(),
		BlockCacheSize: opts.BlockCacheSize, MemtableSize: opts.MemtableSize,
		BaseLevelSize: opts.BaseLevelSize, TargetFileSize: opts.TargetFileSize,
		LevelSizing: opts.LevelSizing.String(), MaxCompactions: opts.MaxConcurrentCompactions,
	}
}

// workloadRow is one workload's line of the table.
type workloadRow struct {
	Workload      string  `json:"workload"`
	Ops           int     `json:"ops"`
	Seconds       float64 `json:"seconds"`
	OpsPerSec     float64 `json:"ops_per_sec"`
	P50Micros     float64 `json:"p50_us"`
	P99Micros     float64 `json:"p99_us"`
	P999Micros    float64 `json:"p999_us"`
	MaxMicros     float64 `json:"max_us"`
	SettleSeconds float64 `json:"settle_seconds,omitempty"` // fills: flush and compactions after

	// Read amplification per Get (read workloads only).
	Gets                  uint64  `json:"gets,omitempty"`
	TablesPerGet          float64 `json:"tables_per_get"`
	FilterNegativesPerGet float64 `json:"filter_negatives_per_get"`
	FalsePositivesPerGet  float64 `json:"false_positives_per_get"`
	BlocksFromFilePerGet  float64 `json:"blocks_from_file_per_get"`
	BlocksFromCachePerGet float64 `json:"blocks_from_cache_per_get"`
	BytesReadPerGet       float64 `json:"bytes_read_per_get"`

	// Per prefix seek (prefix seek workloads only): tables whose key range
	// held the prefix, those its filter ruled out and those sought, and
	// data blocks read from the file and the cache (the block cache's
	// misses and hits; BlocksFromFilePerGet and BlocksFromCachePerGet hold
	// the same).
	PrefixSeeks            uint64  `json:"prefix_seeks,omitempty"`
	PrefixNegativesPerSeek float64 `json:"prefix_filter_negatives_per_seek,omitempty"`
	SoughtPerSeek          float64 `json:"tables_sought_per_seek,omitempty"`

	// YCSB workloads: operations by kind (workload.OpNames).
	Kinds map[string]int `json:"kinds,omitempty"`
	// What the operating system counted (procstat), per operation, over
	// the workload and a fill's settle; absent where it counts nothing.
	OS *osRow `json:"os,omitempty"`
}

// osRow is a workload's costs as the operating system counted them.
type osRow struct {
	Cold bool `json:"cold"` // the page cache was dropped before the workload
	// Capped: the process ran in a memory cgroup (-memlimit).
	Capped           bool    `json:"capped,omitempty"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	StallPercent     float64 `json:"stall_percent"`       // write stalls over the workload's time
	FileReadsPerOp   float64 `json:"file_reads_per_op"`   // read system calls (syscr)
	FileBytesPerOp   float64 `json:"file_bytes_per_op"`   // the bytes they returned (rchar)
	DeviceBytesPerOp float64 `json:"device_bytes_per_op"` // read from the device for the process (read_bytes)
	// DeviceReadsPerOp is the reads the database's device completed per
	// operation, every process's; -1 when the directory is on no block
	// device.
	DeviceReadsPerOp float64 `json:"device_reads_per_op"`
	// Fills: bytes written to storage (write_bytes) per user byte written,
	// -1 where nothing was counted (a tmpfs); bytes on disk after the
	// settle per live user byte.
	WriteAmp  float64 `json:"write_amp,omitempty"`
	SpaceAmp  float64 `json:"space_amp,omitempty"`
	DiskBytes int64   `json:"disk_bytes,omitempty"`
}

func newOSRow(p *phase) *osRow {
	if !p.measured {
		return nil
	}
	ops := float64(max(p.res.Ops, 1))
	r := &osRow{Cold: p.cold, Capped: p.capped, CPUSeconds: p.cpu.Seconds(), FileReadsPerOp: float64(p.io.FileReads) / ops,
		FileBytesPerOp: float64(p.io.FileBytes) / ops, DeviceBytesPerOp: float64(p.io.DeviceBytes) / ops, DeviceReadsPerOp: -1}
	if p.io.DeviceReads >= 0 {
		r.DeviceReadsPerOp = float64(p.io.DeviceReads) / ops
	}
	if p.res.Elapsed > 0 {
		r.StallPercent = 100 * p.stall.Seconds() / p.res.Elapsed.Seconds()
	}
	if p.writtenBytes > 0 {
		r.WriteAmp = -1
		if p.io.WriteBytes > 0 {
			r.WriteAmp = float64(p.io.WriteBytes) / float64(p.writtenBytes)
		}
	}
	if p.liveBytes > 0 {
		r.SpaceAmp, r.DiskBytes = float64(p.diskBytes)/float64(p.liveBytes), p.diskBytes
	}
	return r
}

// levelRow is one level's shape and filter rates.
type levelRow struct {
	Level        int                `json:"level"`
	Tables       int                `json:"tables"`
	Bytes        uint64             `json:"bytes"`
	Filters      string             `json:"filters"` // the tables' families: "bloom", "fuse 8-bit", "2 fuse 8-bit + 1 bloom"
	Entries      uint64             `json:"entries"`
	BitsPerKey   float64            `json:"bits_per_key"`  // the level's filter bits over its entries
	PredictedFPR float64            `json:"predicted_fpr"` // the tables' filters' rates, weighted by their sizes
	MeasuredFPR  map[string]float64 `json:"measured_fpr"`  // by read workload
	AbsentChecks map[string]uint64  `json:"absent_checks"` // filter checks of keys the table lacked
}

type benchReport struct {
	Settings     benchSettings `json:"settings"`
	Workloads    []workloadRow `json:"workloads"`
	Levels       []levelRow    `json:"levels"`
	FilterMemory uint64        `json:"filter_memory_bytes"`
	// IndexMemory is what the tables' indexes pin (Metrics.IndexMemory).
	IndexMemory uint64 `json:"index_memory_bytes"`
	// ExpectedFalsePositiveReads is Metrics' after the last workload;
	// MemoryBudget how the DB divided its MemoryLimit (nil without one).
	ExpectedFalsePositiveReads float64                      `json:"expected_false_positive_reads"`
	MemoryBudget               *bloomkv.MemoryBudgetMetrics `json:"memory_budget,omitempty"`
	// PeakRSS is the process's peak resident set so far (with -sizes,
	// over this size and those before it), 0 if unknown.
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
	// Reopen is the Open of the closed database after the workloads.
	Reopen *reopenRow `json:"reopen,omitempty"`
	reads  []string   // the read workloads, in order
}

func newBenchReport(opts *bloomkv.Options, cfg *workload.Config, phases []*phase, m bloomkv.Metrics, info [manifest.NumLevels]levelInfo) *benchReport {
	r := &benchReport{Settings: newSettings(opts, cfg), FilterMemory: m.FilterMemory, IndexMemory: m.IndexMemory, ExpectedFalsePositiveReads: m.ExpectedFalsePositiveReads}
	if m.MemoryBudget.Limit > 0 {
		b := m.MemoryBudget
		r.MemoryBudget = &b
	}
	for _, p := range phases {
		res := p.res
		row := workloadRow{
			Workload: string(res.Workload), Ops: res.Ops, Seconds: res.Elapsed.Seconds(), OpsPerSec: res.OpsPerSec(),
			P50Micros: micros(res.Latency.Percentile(0.5)), P99Micros: micros(res.Latency.Percentile(0.99)),
			P999Micros: micros(res.Latency.Percentile(0.999)), MaxMicros: micros(res.Latency.Max()),
			SettleSeconds: p.settleTime.Seconds(), OS: newOSRow(p),
		}
		if res.Workload.IsYCSB() {
			row.Kinds = map[string]int{}
			for k, n := range res.Kinds {
				if n > 0 {
					row.Kinds[workload.OpNames[k]] = n
				}
			}
		}
		if res.Workload.IsGet() || (res.Workload.IsYCSB() && p.gets > 0) {
			s := p.sum()
			row.Gets = p.gets
			row.TablesPerGet = p.perGet(s.TableProbes)
			row.FilterNegativesPerGet = p.perGet(s.FilterNegatives)
			row.FalsePositivesPerGet = p.perGet(s.FalsePositives())
			row.BlocksFromFilePerGet = p.perGet(s.BlocksFromFile)
			row.BlocksFromCachePerGet = p.perGet(s.BlocksFromCache)
			row.BytesReadPerGet = p.perGet(s.BytesRead)
			r.reads = append(r.reads, row.Workload)
		}
		if res.Workload.IsPrefixSeek() && p.prefixSeeks > 0 {
			s, per := p.sum(), func(x uint64) float64 { return float64(x) / float64(p.prefixSeeks) }
			row.PrefixSeeks = p.prefixSeeks
			row.TablesPerGet = per(s.PrefixProbes)
			row.PrefixNegativesPerSeek, row.FilterNegativesPerGet = per(s.PrefixFilterNegatives), per(s.PrefixFilterNegatives)
			row.SoughtPerSeek = per(s.PrefixSought)
			row.BlocksFromFilePerGet, row.BlocksFromCachePerGet = per(p.cacheMisses), per(p.cacheHits)
			if res.Workload == workload.SeekPrefixMissing {
				row.FalsePositivesPerGet = row.SoughtPerSeek // every table sought lacks the prefix
			}
		}
		r.Workloads = append(r.Workloads, row)
	}
	for i, l := range m.Levels {
		if l.Tables == 0 {
			continue
		}
		lr := levelRow{Level: i, Tables: l.Tables, Bytes: l.Bytes, Filters: info[i].filters, Entries: l.Entries, BitsPerKey: l.FilterBitsPerKey,
			PredictedFPR: info[i].expectedFPR, MeasuredFPR: map[string]float64{}, AbsentChecks: map[string]uint64{}}
		for _, p := range phases {
			if !p.res.Workload.IsGet() && !(p.res.Workload.IsYCSB() && p.gets > 0) {
				continue
			}
			d := p.levels[i]
			name := string(p.res.Workload)
			lr.MeasuredFPR[name] = d.FalsePositiveRate()
			lr.AbsentChecks[name] = d.FilterNegatives + d.FalsePositives()
		}
		r.Levels = append(r.Levels, lr)
	}
	return r
}

func micros(d interface{ Nanoseconds() int64 }) float64 { return float64(d.Nanoseconds()) / 1e3 }

func fmtMicros(us float64) string {
	if us >= 1000 {
		return fmt.Sprintf("%.2fms", us/1000)
	}
	return fmt.Sprintf("%.1fµs", us)
}

func (r *benchReport) print(w io.Writer) {
	fmt.Fprintf(w, "bloomkv bench: %s\n\n", r.Settings.String())
	t := newTable(w)
	fmt.Fprintln(t, "workload\tops\tops/s\tp50\tp99\tp99.9\tmax\ttables/Get\tfilter neg/Get\tfalse pos/Get\tblocks file/Get\tblocks cache/Get\tbytes/Get\t")
	for _, row := range r.Workloads {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t", row.Workload, fmtCount(int64(row.Ops)), fmtCount(int64(row.OpsPerSec)),
			fmtMicros(row.P50Micros), fmtMicros(row.P99Micros), fmtMicros(row.P999Micros), fmtMicros(row.MaxMicros))
		if row.PrefixSeeks > 0 {
			fp := "-"
			if row.Workload == string(workload.SeekPrefixMissing) {
				fp = fmt.Sprintf("%.4f", row.FalsePositivesPerGet)
			}
			fmt.Fprintf(t, "%.3f\t%.3f\t%s\t%.3f\t%.3f\t-\t\n", row.TablesPerGet, row.FilterNegativesPerGet, fp,
				row.BlocksFromFilePerGet, row.BlocksFromCachePerGet)
			continue
		}
		if row.Gets == 0 {
			fmt.Fprintln(t, "-\t-\t-\t-\t-\t-\t")
			continue
		}
		fmt.Fprintf(t, "%.3f\t%.3f\t%.4f\t%.3f\t%.3f\t%.0f\t\n", row.TablesPerGet, row.FilterNegativesPerGet,
			row.FalsePositivesPerGet, row.BlocksFromFilePerGet, row.BlocksFromCachePerGet, row.BytesReadPerGet)
	}
	t.Flush()
	for _, row := range r.Workloads {
		if row.SettleSeconds > 0 {
			fmt.Fprintf(w, "(%s: then %.1fs to flush the memtable and finish compactions)\n", row.Workload, row.SettleSeconds)
		}
	}

	r.printOS(w)
	r.printKinds(w)

	fmt.Fprintln(w)
	t = newTable(w)
	fmt.Fprint(t, "level\ttables\tsize\tfilter\tbits/key\tpredicted FPR\t")
	for _, name := range r.reads {
		fmt.Fprintf(t, "FPR %s\t", name)
	}
	fmt.Fprintln(t)
	for _, l := range r.Levels {
		pred := "-"
		if l.BitsPerKey > 0 {
			pred = fmtRate(l.PredictedFPR)
		}
		fmt.Fprintf(t, "L%d\t%d\t%s\t%s\t%.2f\t%s\t", l.Level, l.Tables, humanize.Bytes(l.Bytes), l.Filters, l.BitsPerKey, pred)
		for _, name := range r.reads {
			if l.BitsPerKey == 0 || l.AbsentChecks[name] == 0 {
				fmt.Fprint(t, "-\t")
				continue
			}
			fmt.Fprintf(t, "%s (%s)\t", fmtRate(l.MeasuredFPR[name]), fmtCount(int64(l.AbsentChecks[name])))
		}
		fmt.Fprintln(t)
	}
	t.Flush()
	fmt.Fprintf(w, "\nfilter memory: %s (%.2f bits per key over %s keys); expected false-positive reads per absent-key Get: %.4f\n", humanize.Bytes(r.FilterMemory),
		float64(8*r.FilterMemory)/float64(r.Settings.Keys), fmtCount(int64(r.Settings.Keys)), r.ExpectedFalsePositiveReads)
	fmt.Fprintf(w, "index memory: %s (%.2f bytes per key)\n", humanize.Bytes(r.IndexMemory), float64(r.IndexMemory)/float64(r.Settings.Keys))
	if b := r.MemoryBudget; b != nil {
		by := func(n int64) string { return humanize.Bytes(uint64(max(n, 0))) }
		fmt.Fprintf(w, "memory limit %s: memtables %s of %s, tables pinned %s of %s (filters %s of %s), block cache %s of %s, compactions reserved %s; total %s\n",
			by(b.Limit), by(b.Memtables), by(b.MemtablesShare), by(b.Pinned), by(b.PinnedShare), by(b.Filters), by(b.FilterBudget),
			by(b.BlockCache), by(b.BlockCacheCapacity), by(b.Compactions), by(b.Total()))
	}
	if o := r.Reopen; o != nil {
		fmt.Fprintf(w, "reopen after Close: Open took %s (manifest %s in %s edits, WALs %s to replay, %s tables)\n", fmtSeconds(o.OpenSeconds),
			humanize.Bytes(uint64(o.ManifestBytes)), fmtCount(int64(o.ManifestEdits)), humanize.Bytes(uint64(o.WALBytes)), fmtCount(int64(o.Tables)))
	}
	fmt.Fprintln(w, "per Get: tables whose key range held the key; filter negatives (each a block read avoided);")
	fmt.Fprintln(w, "false positives; data blocks read from the file and from the block cache; bytes read from files.")
	fmt.Fprintln(w, "FPR: false positives / filter checks of keys the table lacked (checks in parentheses);")
	fmt.Fprintln(w, "predicted: the expected rate of the level's filters (their family's formula), weighted by table size.")
	for _, row := range r.Workloads {
		if row.PrefixSeeks > 0 {
			fmt.Fprintln(w, "prefix seeks (per seek): tables whose key range held the prefix; filter negatives (tables skipped);")
			fmt.Fprintln(w, "false pos (missing prefixes): tables sought in vain; blocks: the block cache's misses and hits.")
			break
		}
	}
}

// printOS prints the table of what the operating system counted, if it
// counted anything.
func (r *benchReport) printOS(w io.Writer) {
	if len(r.Workloads) == 0 || r.Workloads[0].OS == nil {
		return
	}
	// device: the device columns, for the workloads measured cold or in
	// a memory cgroup.
	cold, device := false, r.Settings.MemLimit > 0
	for _, row := range r.Workloads {
		cold = cold || row.OS.Cold
	}
	device = device || cold
	fmt.Fprintln(w)
	t := newTable(w)
	fmt.Fprint(t, "workload\tCPU s\tstall\twrite amp\tspace amp\treads/op\tread KiB/op\t")
	if device {
		fmt.Fprint(t, "device KiB/op\tdevice reads/op\t")
	}
	fmt.Fprintln(t)
	amp := func(x float64) string {
		switch {
		case x == 0:
			return "-"
		case x < 0:
			return "not counted"
		}
		return fmt.Sprintf("%.2f", x)
	}
	for _, row := range r.Workloads {
		o := row.OS
		fmt.Fprintf(t, "%s\t%.1f\t%.1f%%\t%s\t%s\t%.2f\t%.2f\t", row.Workload, o.CPUSeconds, o.StallPercent, amp(o.WriteAmp), amp(o.SpaceAmp),
			o.FileReadsPerOp, o.FileBytesPerOp/1024)
		if device {
			switch {
			case !o.Cold && !o.Capped:
				fmt.Fprint(t, "-\t-\t")
			case o.DeviceReadsPerOp < 0:
				fmt.Fprintf(t, "%.2f\tnot counted\t", o.DeviceBytesPerOp/1024)
			default:
				fmt.Fprintf(t, "%.2f\t%.3f\t", o.DeviceBytesPerOp/1024, o.DeviceReadsPerOp)
			}
		}
		fmt.Fprintln(t)
	}
	t.Flush()
	if r.PeakRSS > 0 {
		fmt.Fprintf(w, "peak RSS: %s\n", humanize.Bytes(uint64(r.PeakRSS)))
	}
	fmt.Fprintln(w, "CPU s: the process's user and system time (background compactions too); stall: write stall time over the workload's;")
	fmt.Fprintln(w, "write amp: bytes written to storage (/proc/self/io write_bytes) over the fill and its settle per user byte written;")
	fmt.Fprintln(w, "space amp: the database's bytes on disk after the settle per live user byte (below 1: compression);")
	fmt.Fprintln(w, "reads/op, read KiB/op: read system calls and the bytes they returned (syscr, rchar), page-cache hits included.")
	if cold {
		fmt.Fprintln(w, "device KiB/op: read from the device for this process (read_bytes), the page cache dropped before the workload;")
	}
	if r.Settings.MemLimit > 0 {
		fmt.Fprintf(w, "device KiB/op: read from the device for this process (read_bytes), in its memory cgroup of %s (-memlimit), which counts its page cache;\n",
			humanize.Bytes(uint64(r.Settings.MemLimit)))
	}
	if device {
		fmt.Fprintln(w, "device reads/op: reads the database's block device completed (its stat), every process's: an upper bound.")
	}
}

// printKinds prints the YCSB workloads' operations by kind.
func (r *benchReport) printKinds(w io.Writer) {
	for _, row := range r.Workloads {
		if len(row.Kinds) == 0 || row.Workload == string(workload.YCSBLoad) {
			continue
		}
		var parts []string
		for _, name := range workload.OpNames {
			if n := row.Kinds[name]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %s (%.1f%%)", name, fmtCount(int64(n)), 100*float64(n)/float64(row.Ops)))
			}
		}
		fmt.Fprintf(w, "%s: %s\n", row.Workload, strings.Join(parts, ", "))
	}
}

// printBenchScale prints, for each read workload, ops/s, p99 and the data
// blocks read from files per Get at each size of -sizes.
func printBenchScale(w io.Writer, reps []*benchReport) {
	fmt.Fprintln(w, "scale: each read workload's ops/s, p99 and data blocks read from files per Get against the number of keys")
	t := newTable(w)
	fmt.Fprintln(t, "workload\tkeys\tops/s\tp99\tblocks file/Get\treads/op\t")
	for j, row := range reps[0].Workloads {
		if row.Gets == 0 && row.PrefixSeeks == 0 && row.Workload != string(workload.Scan) {
			continue
		}
		for _, rep := range reps {
			x := rep.Workloads[j]
			reads := "-"
			if x.OS != nil {
				reads = fmt.Sprintf("%.2f", x.OS.FileReadsPerOp)
			}
			fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%.3f\t%s\t\n", x.Workload, fmtCount(int64(rep.Settings.Keys)), fmtCount(int64(x.OpsPerSec)),
				fmtMicros(x.P99Micros), x.BlocksFromFilePerGet, reads)
		}
	}
	t.Flush()
	printBenchGrowth(w, reps)
}

// printBenchGrowth prints, for -sizes, what grows with the tree: the Open
// of the closed database and what it reads (the manifest, the WALs), the
// memory the tables pin per key (filters and indexes), and the tables a
// Get consults, present and absent keys.
func printBenchGrowth(w io.Writer, reps []*benchReport) {
	fmt.Fprintln(w, "\ngrowth: the reopen after Close, the tables' pinned filters and indexes per key, and tables consulted per Get")
	t := newTable(w)
	fmt.Fprintln(t, "keys\tOpen\tmanifest\tedits\tWALs\ttables\tfilters B/key\tindexes B/key\ttables/Get present\ttables/Get absent\t")
	perGet := func(rep *benchReport, name workload.Workload) string {
		for _, row := range rep.Workloads {
			if row.Workload == string(name) && row.Gets > 0 {
				return fmt.Sprintf("%.2f", row.TablesPerGet)
			}
		}
		return "-"
	}
	for _, rep := range reps {
		keys := float64(rep.Settings.Keys)
		open, manifest, edits, wals, tables := "-", "-", "-", "-", "-"
		if o := rep.Reopen; o != nil {
			open, manifest, wals = fmtSeconds(o.OpenSeconds), humanize.Bytes(uint64(o.ManifestBytes)), humanize.Bytes(uint64(o.WALBytes))
			edits, tables = fmtCount(int64(o.ManifestEdits)), fmtCount(int64(o.Tables))
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t\n", fmtCount(int64(rep.Settings.Keys)), open, manifest, edits, wals, tables,
			float64(rep.FilterMemory)/keys, float64(rep.IndexMemory)/keys, perGet(rep, workload.ReadRandom), perGet(rep, workload.ReadMissing))
	}
	t.Flush()
}

// fmtSeconds formats a duration in seconds to three significant digits,
// in ms below a second.
func fmtSeconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.3g ms", 1000*s)
	}
	return fmt.Sprintf("%.3g s", s)
}

// write writes bench.json and bench.csv into dir.
func (r *benchReport) write(dir string) error {
	if err := writeJSON(filepath.Join(dir, "bench.json"), r); err != nil {
		return err
	}
	rows := [][]string{{"workload", "ops", "seconds", "ops_per_sec", "p50_us", "p99_us", "p999_us", "max_us", "gets", "tables_per_get",
		"filter_negatives_per_get", "false_positives_per_get", "blocks_from_file_per_get", "blocks_from_cache_per_get", "bytes_read_per_get"}}
	for _, w := range r.Workloads {
		rows = append(rows, []string{w.Workload, strconv.Itoa(w.Ops), ftoa(w.Seconds), ftoa(w.OpsPerSec), ftoa(w.P50Micros),
			ftoa(w.P99Micros), ftoa(w.P999Micros), ftoa(w.MaxMicros), strconv.FormatUint(w.Gets, 10), ftoa(w.TablesPerGet), ftoa(w.FilterNegativesPerGet),
			ftoa(w.FalsePositivesPerGet), ftoa(w.BlocksFromFilePerGet), ftoa(w.BlocksFromCachePerGet), ftoa(w.BytesReadPerGet)})
	}
	return writeCSV(filepath.Join(dir, "bench.csv"), rows)
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

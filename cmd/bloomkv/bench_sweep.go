package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/cmd/bloomkv/benchstore"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/procstat"
	"github.com/bloomkv/bloomkv/internal/progress"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/bloomkv/bloomkv/sstable"
)

// The sweep's policies: how a database's filters are chosen.
const (
	policyNone        = "none"        // no filters
	policyUniform     = "uniform"     // Bloom, BitsPerKey in every table (UniformAllocation)
	policyOptimal     = "optimal"     // Bloom, Monkey's bits per level (OptimalAllocation)
	policyBest        = "best"        // BestAllocation: family and parameter per level
	policyFuse        = "fuse"        // the same fuse filter on every level (LevelFilters)
	policyProgressive = "progressive" // Pebble's widths, shifted by an offset (LevelFilters = ProgressiveFilters)
	policyPrefix      = "prefix"      // the prefix workloads, with and without prefix filters
)

// sweepPolicies are the policies -sweep-policies takes, in the order the
// sweep runs them.
var sweepPolicies = []string{policyUniform, policyOptimal, policyBest, policyFuse, policyProgressive, policyPrefix}

// sweepPlan is what the sweep runs, from its flags.
type sweepPlan struct {
	bits     []float64 // budgets of uniform, optimal and best; 0 is the database without filters
	policies map[string]bool
	fuse     []int // widths of the fuse databases
	offsets  []int // of the progressive databases; nil: from the budgets (ProgressiveOffset)
	sizes    []int // table sizes of the family measurements
	probes   int
}

// sweepPlan parses the sweep's flags.
func (f *benchFlags) sweepPlan() (*sweepPlan, error) {
	p := &sweepPlan{policies: map[string]bool{}, probes: f.sweepProbes}
	var err error
	if p.bits, err = parseList(f.sweepBits, "-sweep-bits", func(s string) (float64, error) {
		b, err := strconv.ParseFloat(s, 64)
		if err == nil && b != 0 && sstable.Bloom(b).Check() != nil {
			err = fmt.Errorf("%v bits per key is outside a Bloom filter's range", b)
		}
		return b, err
	}); err != nil {
		return nil, err
	}
	if f.sweepPolicies != "none" {
		names, err := parseList(f.sweepPolicies, "-sweep-policies", func(s string) (string, error) {
			if !slices.Contains(sweepPolicies, s) {
				return "", fmt.Errorf("unknown policy %q (want %s, or none)", s, strings.Join(sweepPolicies, ", "))
			}
			return s, nil
		})
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			p.policies[n] = true
		}
	}
	if p.fuse, err = parseList(f.sweepFuse, "-sweep-fuse", func(s string) (int, error) {
		w, err := strconv.Atoi(s)
		if err == nil {
			err = sstable.Fuse(w).Check()
		}
		return w, err
	}); err != nil {
		return nil, err
	}
	if f.sweepOffsets != "auto" {
		if p.offsets, err = parseList(f.sweepOffsets, "-sweep-offsets", strconv.Atoi); err != nil {
			return nil, err
		}
	}
	if f.sweepSizes != "none" {
		if p.sizes, err = parseList(f.sweepSizes, "-sweep-sizes", func(s string) (int, error) {
			n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
			if err == nil && (n < 1 || n > 10_000_000) {
				err = fmt.Errorf("%d keys per table: want 1 to 10,000,000", n)
			}
			return n, err
		}); err != nil {
			return nil, err
		}
	}
	if p.probes < 1 {
		return nil, errors.New("-sweep-probes must be at least 1")
	}
	return p, nil
}

// parseList parses a comma-separated list with parse.
func parseList[T any](list, flag string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		x, err := parse(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", flag, item, err)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: an empty list", flag)
	}
	return out, nil
}

// sweepRow is one database of the sweep: its filter setting, memory, and
// what Gets of missing and present keys cost.
type sweepRow struct {
	Policy string  `json:"policy"` // see the policy constants
	Param  float64 `json:"param"`  // bits per key budget (uniform, optimal, best), fingerprint width (fuse), offset (progressive)

	BitsPerKey      float64 `json:"bits_per_key"`        // the budget; for fuse and progressive the bits spent
	Allocation      string  `json:"allocation"`          // uniform, optimal, none, best, fuse, progressive: the policy
	Filters         string  `json:"filters"`             // each level's filters, from the manifest: "L1:b10.0 L2:f8"
	FilterMemory    uint64  `json:"filter_memory_bytes"` // Metrics.FilterMemory
	SpentBitsPerKey float64 `json:"spent_bits_per_key"`  // FilterMemory·8 / keys
	Levels          int     `json:"levels"`              // non-empty levels, L0 included

	// Per Get of a missing key.
	MissingTables          float64 `json:"missing_tables_per_get"`
	MissingFilterNegatives float64 `json:"missing_filter_negatives_per_get"`
	MissingBlocks          float64 `json:"missing_blocks_per_get"` // data blocks, from file or cache: every one a false positive's
	MissingBlocksFromFile  float64 `json:"missing_blocks_from_file_per_get"`
	MissingBytesRead       float64 `json:"missing_bytes_read_per_get"`
	PredictedBlocks        float64 `json:"predicted_blocks_per_get"`  // Σ over levels of checks per Get × the level's filters' rate
	ModelBlocks            float64 `json:"model_blocks_per_get"`      // compaction.ExpectedFalsePositiveReads of the final tree
	NormalizedBlocks       float64 `json:"normalized_blocks_per_get"` // the levels' measured rates at the reference tree's probes (see normalize)
	// The least ModelBlocks any filters of the row's memory could give its
	// final tree (compaction.FalsePositiveFloor): perfect filters (rate
	// 2^−bits), and Bloom, fuse and Ribbon filters at the tree's table sizes
	// (compaction.FamilyFalsePositiveFloor).
	FloorBlocks     float64 `json:"floor_blocks_per_get"`
	FuseFloorBlocks float64 `json:"fuse_floor_blocks_per_get"`
	MeasuredFPR     float64 `json:"measured_fpr"`  // over all levels' checks
	PredictedFPR    float64 `json:"predicted_fpr"` // the levels' rates weighted by their checks
	BoundFPR        float64 `json:"bound_fpr"`     // 2^−bits: the least any filter of this memory allows

	// Per Get of a present key.
	PresentBlocks float64 `json:"present_blocks_per_get"`

	P50PresentMicros float64 `json:"p50_present_us"`
	P99PresentMicros float64 `json:"p99_present_us"`
	P50MissingMicros float64 `json:"p50_missing_us"`
	P99MissingMicros float64 `json:"p99_missing_us"`
	MissingOpsPerSec float64 `json:"missing_ops_per_sec"`
	PresentOpsPerSec float64 `json:"present_ops_per_sec"`

	// The fill: its Puts per second, and keys per second counting the
	// flush and compactions after it (where the filters are built).
	FillOpsPerSec     float64 `json:"fill_ops_per_sec"`
	FillSettledPerSec float64 `json:"fill_settled_keys_per_sec"`

	// Per level, per missing-key Get: the tables probed, and the rate at
	// which a probe read a block — measured where the level was probed,
	// its filters' expected rate where it was not, 0 where it is empty.
	LevelProbes [manifest.NumLevels]float64 `json:"level_probes_per_get"`
	LevelRates  [manifest.NumLevels]float64 `json:"level_read_rates"`
}

// normalize sets each row's NormalizedBlocks: its levels' read rates
// weighted by the probes per missing-key Get of a reference row's levels
// (Uniform at 10 bits per key, or the first row) instead of its own. The
// databases' trees differ in how much of the key space their small levels
// cover when the fill ends — compactions run beside it — and so in the
// tables a missing key probes (1.1 to 2.1 per Get at the sweep's
// defaults), which moves the blocks read per Get as much as the filters
// do; at one tree's probes the policies compare by their filters alone.
func normalize(rows []sweepRow) {
	if len(rows) == 0 {
		return
	}
	ref := &rows[0]
	for i := range rows {
		if rows[i].Policy == policyUniform && rows[i].Param == 10 {
			ref = &rows[i]
		}
	}
	for i := range rows {
		var sum float64
		for l, probes := range ref.LevelProbes {
			sum += probes * rows[i].LevelRates[l]
		}
		rows[i].NormalizedBlocks = sum
	}
}

// prefixRow is one database of the prefix workloads: fillprefix, then
// seeks of present and of missing prefixes.
type prefixRow struct {
	PrefixFilters bool    `json:"prefix_filters"` // the tables' filters hold the prefixes
	Filters       string  `json:"filters"`
	FilterMemory  uint64  `json:"filter_memory_bytes"`
	Seeks         uint64  `json:"seeks"` // of each kind
	KeysPerPrefix int     `json:"keys_per_prefix"`
	TablesPerSeek float64 `json:"missing_tables_per_seek"` // whose key range held the missing prefix
	SoughtPerSeek float64 `json:"missing_sought_per_seek"` // of them, sought
	BlocksPerSeek float64 `json:"missing_blocks_per_seek"` // data blocks read (block cache misses and hits)
	Predicted     float64 `json:"missing_predicted_sought_per_seek"`
	PresentBlocks float64 `json:"present_blocks_per_seek"`
	PresentSought float64 `json:"present_sought_per_seek"`
	P50Missing    float64 `json:"p50_missing_us"`
	P50Present    float64 `json:"p50_present_us"`
}

// sweepTargets compare the policies at the memory of Uniform Bloom at 10
// bits per key, each policy's curve interpolated there (log-linearly
// between its two nearest databases).
// A figure the sweep did not measure (a policy it did not run, or whose
// databases do not span the memory) is NaN, null in JSON.
type sweepTargets struct {
	Memory           uint64    `json:"memory_bytes"` // Uniform at 10 bits per key
	Uniform          float64   `json:"uniform_blocks_per_missing_get"`
	Optimal          jsonFloat `json:"optimal_blocks_per_missing_get"`
	Best             jsonFloat `json:"best_blocks_per_missing_get"`
	Progressive      jsonFloat `json:"progressive_blocks_per_missing_get"`
	BestVsUniform    jsonFloat `json:"best_vs_uniform"`      // target ≤ 0.4
	BestVsProgress   jsonFloat `json:"best_vs_progressive"`  // target ≤ 0.5
	BestFillVsBloom  jsonFloat `json:"best_fill_vs_uniform"` // fill+settle keys/s at 10 bits, target ≥ 0.9
	BestFillSettled  float64   `json:"best_fill_settled_keys_per_sec"`
	BloomFillSettled float64   `json:"uniform_fill_settled_keys_per_sec"`
	// The same ratio over every budget both ran: one database's fill is
	// as noisy as the machine is busy.
	BestFillMeanVsBloom jsonFloat `json:"best_fill_mean_vs_uniform"`
	FillBudgets         int       `json:"fill_budgets"`
	// FillPairs are best's and uniform's fill+settle keys/s at 10 bits
	// per key in the sweep's own databases and in fillPairsRun more pairs,
	// filled in turn (uniform first, then best first, alternately), so
	// that a drift of the machine falls on both; BestFillPairsVsBloom is
	// the median of the pairs' ratios, best / uniform.
	FillPairs            [][2]float64 `json:"fill_pairs_uniform_best,omitempty"`
	BestFillPairsVsBloom jsonFloat    `json:"best_fill_pairs_median_vs_uniform"`

	// The same comparison in NormalizedBlocks: at the reference tree's
	// probes.
	NormUniform        float64   `json:"normalized_uniform"`
	NormOptimal        jsonFloat `json:"normalized_optimal"`
	NormBest           jsonFloat `json:"normalized_best"`
	NormProgressive    jsonFloat `json:"normalized_progressive"`
	NormBestVsUniform  jsonFloat `json:"normalized_best_vs_uniform"`
	NormBestVsProgress jsonFloat `json:"normalized_best_vs_progressive"`

	// The floors beside the progressive policy, all on its databases'
	// trees (model reads, compaction.ExpectedFalsePositiveReads, and
	// FloorBlocks, FuseFloorBlocks, interpolated like the rest): if the
	// floor of perfect filters is above half the progressive policy's
	// reads, no filters of that memory meet best ≤ 0.5× progressive; if
	// the families' (still named fuse here) is, no plan of Bloom, fuse and
	// Ribbon filters does.
	ProgressiveModel    jsonFloat `json:"progressive_model_blocks_per_missing_get"`
	BestModel           jsonFloat `json:"best_model_blocks_per_missing_get"`
	Floor               jsonFloat `json:"floor_blocks_per_missing_get"`
	FuseFloor           jsonFloat `json:"fuse_floor_blocks_per_missing_get"`
	FloorVsProgress     jsonFloat `json:"floor_vs_progressive"`
	FuseFloorVsProgress jsonFloat `json:"fuse_floor_vs_progressive"`
	BestModelVsProgress jsonFloat `json:"best_model_vs_progressive"`
	UniformFloor        float64   `json:"uniform_floor_blocks_per_missing_get"` // on the reference tree, at its memory
	UniformFuseFloor    float64   `json:"uniform_fuse_floor_blocks_per_missing_get"`
}

// jsonFloat is a float64 that encodes NaN and ±Inf as null, and decodes
// null as NaN.
type jsonFloat float64

func (x jsonFloat) MarshalJSON() ([]byte, error) {
	if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

func (x *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = jsonFloat(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(x))
}

type sweepReport struct {
	Settings benchSettings `json:"settings"`
	Rows     []sweepRow    `json:"rows"`
	Targets  *sweepTargets `json:"targets,omitempty"`
	Prefix   []prefixRow   `json:"prefix,omitempty"`
	Families []familyRow   `json:"families,omitempty"`
	Costs    []costRow     `json:"costs,omitempty"`
}

// sweepConfig is one database of the sweep.
type sweepConfig struct {
	policy string
	param  float64
}

func (c sweepConfig) label() string {
	switch c.policy {
	case policyNone:
		return "no filters"
	case policyFuse:
		return sstable.Fuse(int(c.param)).String()
	case policyProgressive:
		return fmt.Sprintf("progressive %+g", c.param)
	}
	return fmt.Sprintf("%s %g bits/key", c.policy, c.param)
}

// options returns base with c's filters.
func (c sweepConfig) options(base bloomkv.Options) bloomkv.Options {
	opts := base
	switch c.policy {
	case policyNone:
		opts.DisableFilters = true
	case policyUniform:
		opts.BitsPerKey, opts.FilterAllocation = c.param, bloomkv.UniformAllocation
	case policyOptimal:
		opts.BitsPerKey, opts.FilterAllocation = c.param, bloomkv.OptimalAllocation
	case policyBest:
		opts.BitsPerKey, opts.FilterAllocation = c.param, bloomkv.BestAllocation
	case policyFuse:
		opts.LevelFilters = []bloomkv.FilterSpec{bloomkv.Fuse(int(c.param))}
	case policyProgressive:
		filters := compaction.ProgressiveFilters(int(c.param))
		opts.LevelFilters = filters[:]
	}
	// Every flush goes straight on into L1, so that each database ends
	// with an empty L0: otherwise the one to three L0 tables a fill
	// happens to leave would swamp the differences between rows.
	opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 1, 8, 12
	return opts
}

func runSweep(stdout io.Writer, f *benchFlags, plan *sweepPlan, dir string, base bloomkv.Options, cfg *workload.Config) error {
	var configs []sweepConfig
	for _, b := range plan.bits {
		if plan.policies[policyUniform] {
			if b == 0 {
				configs = append(configs, sweepConfig{policyNone, 0})
			} else {
				configs = append(configs, sweepConfig{policyUniform, b})
			}
		}
		if b > 0 && plan.policies[policyOptimal] {
			configs = append(configs, sweepConfig{policyOptimal, b})
		}
	}
	for _, b := range plan.bits {
		if b > 0 && plan.policies[policyBest] {
			configs = append(configs, sweepConfig{policyBest, b})
		}
	}
	if plan.policies[policyFuse] {
		for _, w := range plan.fuse {
			configs = append(configs, sweepConfig{policyFuse, float64(w)})
		}
	}
	progressive := plan.policies[policyProgressive]
	if progressive && plan.offsets != nil {
		for _, d := range plan.offsets {
			configs = append(configs, sweepConfig{policyProgressive, float64(d)})
		}
		progressive = false
	}
	if progressive && len(configs) == 0 {
		// The offsets come from a tree's shape: Pebble's own widths first.
		configs = append(configs, sweepConfig{policyProgressive, 0})
	}

	settingsOpts := base
	settingsOpts.BitsPerKey = 10
	rep := &sweepReport{Settings: newSettings(&settingsOpts, cfg)}
	rep.Settings.BitsPerKey, rep.Settings.Allocation = 0, "sweep"
	fmt.Fprintf(stdout, "bloomkv bench -sweep: %s\n", rep.Settings.String())
	run := func(c sweepConfig, i, total int) (*compaction.Shape, error) {
		opts := c.options(base)
		label := fmt.Sprintf("%d/%d %s", i+1, total, c.label())
		row, shape, err := sweepOne(filepath.Join(dir, strconv.Itoa(i)), &opts, cfg, label)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.label(), err)
		}
		row.Policy, row.Param, row.Allocation = c.policy, c.param, c.policy
		switch c.policy {
		case policyUniform, policyOptimal, policyBest:
			row.BitsPerKey = c.param
		case policyFuse, policyProgressive:
			row.BitsPerKey = row.SpentBitsPerKey
		}
		row.BoundFPR = 1
		if row.BitsPerKey > 0 {
			row.BoundFPR = math.Exp2(-row.BitsPerKey)
		}
		rep.Rows = append(rep.Rows, *row)
		return shape, nil
	}
	if len(configs) > 0 {
		fmt.Fprintf(stdout, "each database: fresh (L0 compacted at 1 table, so L0 ends empty), after a sync (the device idle), fillrandom, then %s Gets of missing and of present keys\n", fmtCount(int64(cfg.Reads)))
	}
	var shape *compaction.Shape
	for i := 0; i < len(configs); i++ {
		s, err := run(configs[i], i, len(configs))
		if err != nil {
			return err
		}
		if shape == nil {
			shape = s
		}
		if progressive && i == len(configs)-1 {
			// The progressive policy at no more memory than each budget,
			// on the shape of the trees the sweep builds.
			progressive = false
			for _, d := range progressiveOffsets(*shape, plan.bits) {
				if c := (sweepConfig{policyProgressive, float64(d)}); !slices.Contains(configs, c) {
					configs = append(configs, c)
				}
			}
		}
	}
	if plan.policies[policyPrefix] {
		for i, withPrefix := range []bool{true, false} {
			row, err := sweepPrefix(filepath.Join(dir, "prefix"+strconv.Itoa(i)), base, cfg, withPrefix)
			if err != nil {
				return fmt.Errorf("prefix workloads: %w", err)
			}
			rep.Prefix = append(rep.Prefix, *row)
		}
	}
	normalize(rep.Rows)
	rep.Targets = targets(rep.Rows)
	if err := fillPairs(rep.Targets, dir, base, cfg); err != nil {
		return err
	}
	if len(plan.sizes) > 0 {
		pr := progress.New("filter measurements", 0)
		var err error
		rep.Families, err = measureFamilies(sweepFamilies, plan.sizes, plan.probes, cfg.Keys.Seed)
		if err == nil {
			rep.Costs, err = measureCosts(sweepFamilies, costSizes(plan.sizes), cfg.Keys.Seed)
		}
		pr.Done()
		if err != nil {
			return err
		}
	}
	rep.print(stdout)
	if f.out == "" {
		return nil
	}
	if err := rep.write(f.out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s in %s\n", strings.Join(rep.files(), ", "), f.out)
	return nil
}

// fillPairsRun is how many more pairs of databases at 10 bits per key,
// uniform and best, fillPairs fills: with the sweep's own pair, eight
// ratios, whose median two or three slow moments of the machine do not
// move (one pair's ratio has spanned 0.69–1.12 within one run, and the
// median of four 0.83–1.03 over two runs of the same code).
const fillPairsRun = 7

// fillPairs fills fillPairsRun more pairs of databases at 10 bits per key,
// uniform and best, in turn, and sets t's FillPairs and their median
// ratio; it does nothing if the sweep ran no such pair.
func fillPairs(t *sweepTargets, dir string, base bloomkv.Options, cfg *workload.Config) error {
	if t.BestFillSettled == 0 || t.BloomFillSettled == 0 {
		return nil
	}
	pair := [2]sweepConfig{{policyUniform, 10}, {policyBest, 10}}
	more, err := fillInTurn(fillPairsRun, func(p, i int) (float64, error) {
		opts := pair[i].options(base)
		label := fmt.Sprintf("fill pair %d/%d %s", p+1, fillPairsRun, pair[i].label())
		row, _, err := sweepOne(filepath.Join(dir, fmt.Sprintf("pair%d-%s", p, pair[i].policy)), &opts, cfg, label)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", label, err)
		}
		return row.FillSettledPerSec, nil
	})
	if err != nil {
		return err
	}
	t.FillPairs = append([][2]float64{{t.BloomFillSettled, t.BestFillSettled}}, more...)
	ratios := make([]float64, len(t.FillPairs))
	for i, r := range t.FillPairs {
		ratios[i] = r[1] / r[0]
	}
	t.BestFillPairsVsBloom = jsonFloat(medianOf(ratios))
	return nil
}

// costSizes are the table sizes the costs are timed at: the smallest,
// the largest and one between, of sizes.
func costSizes(sizes []int) []int {
	s := slices.Clone(sizes)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) <= 3 {
		return s
	}
	return []int{s[0], s[len(s)/2], s[len(s)-1]}
}

// progressiveOffsets returns, for each budget of bits, the offset at which
// Pebble's widths spend at most that memory on a tree of shape s, each
// once, in the order of the budgets.
func progressiveOffsets(s compaction.Shape, bits []float64) []int {
	var offsets []int
	for _, b := range bits {
		if b <= 0 {
			continue
		}
		if d := compaction.ProgressiveOffset(s, b); !slices.Contains(offsets, d) {
			offsets = append(offsets, d)
		}
	}
	return offsets
}

func sweepOne(dir string, opts *bloomkv.Options, cfg *workload.Config, label string) (*sweepRow, *compaction.Shape, error) {
	defer os.RemoveAll(dir)
	// The fill starts with the device idle: the databases before it leave
	// dirty pages whose writeback would slow it, more or less by chance.
	// Off Linux there is no such sync.
	_ = procstat.WriteBack()
	s, err := benchstore.Open(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	fill, err := runPhase(s, cfg, workload.FillRandom, label+" fill")
	if err != nil {
		return nil, nil, err
	}
	missing, err := runPhase(s, cfg, workload.ReadMissing, label+" readmissing")
	if err != nil {
		return nil, nil, err
	}
	present, err := runPhase(s, cfg, workload.ReadRandom, label+" readrandom")
	if err != nil {
		return nil, nil, err
	}
	m := s.DB.Metrics()
	info, shape, err := treeInfo(dir, opts, cfg.Keys.N)
	if err != nil {
		return nil, nil, err
	}
	row := &sweepRow{FilterMemory: m.FilterMemory, SpentBitsPerKey: 8 * float64(m.FilterMemory) / float64(cfg.Keys.N)}
	var predicted, checks, unfiltered float64
	var specs [manifest.NumLevels]sstable.FilterSpec
	var filters []string
	for i, l := range m.Levels {
		if l.Tables > 0 {
			row.Levels++
			filters = append(filters, fmt.Sprintf("L%d:%s", i, compactKinds(info[i].filters, l.FilterBitsPerKey)))
			specs[i] = levelSpec(info[i])
		}
		d := missing.levels[i]
		if n := float64(d.FilterNegatives + d.FalsePositives()); n > 0 {
			predicted += n * info[i].expectedFPR
			checks += n
		}
		// Without a filter every probe of a table reads a block.
		unfiltered += float64(d.TableProbes - d.FilterChecks)
		row.LevelProbes[i] = missing.perGet(d.TableProbes)
		// A level without tables reads nothing (the trees of one sweep
		// have the same levels; this only keeps NormalizedBlocks finite).
		row.LevelRates[i] = 0
		if l.Tables > 0 {
			row.LevelRates[i] = info[i].expectedFPR
		}
		if d.TableProbes > 0 {
			row.LevelRates[i] = float64(d.FalsePositives()+d.TableProbes-d.FilterChecks) / float64(d.TableProbes)
		}
	}
	row.Filters = strings.Join(filters, " ")
	sm, sp := missing.sum(), present.sum()
	row.MissingTables = missing.perGet(sm.TableProbes)
	row.MissingFilterNegatives = missing.perGet(sm.FilterNegatives)
	row.MissingBlocks = missing.perGet(sm.BlocksFromFile + sm.BlocksFromCache)
	row.MissingBlocksFromFile = missing.perGet(sm.BlocksFromFile)
	row.MissingBytesRead = missing.perGet(sm.BytesRead)
	row.PresentBlocks = present.perGet(sp.BlocksFromFile + sp.BlocksFromCache)
	row.PredictedBlocks = (predicted + unfiltered) / float64(max(missing.gets, 1))
	row.ModelBlocks = compaction.ExpectedFalsePositiveReads(shape, specs)
	row.FloorBlocks = compaction.FalsePositiveFloor(shape, row.SpentBitsPerKey)
	row.FuseFloorBlocks = compaction.FamilyFalsePositiveFloor(floorShape(shape, opts), row.SpentBitsPerKey)
	row.MeasuredFPR, row.PredictedFPR = 1, 1
	if !opts.DisableFilters {
		row.MeasuredFPR = sm.FalsePositiveRate()
		if checks > 0 {
			row.PredictedFPR = predicted / checks
		}
	}
	row.P50MissingMicros = micros(missing.res.Latency.Percentile(0.5))
	row.P99MissingMicros = micros(missing.res.Latency.Percentile(0.99))
	row.P50PresentMicros = micros(present.res.Latency.Percentile(0.5))
	row.P99PresentMicros = micros(present.res.Latency.Percentile(0.99))
	row.MissingOpsPerSec, row.PresentOpsPerSec = missing.res.OpsPerSec(), present.res.OpsPerSec()
	row.FillOpsPerSec = fill.res.OpsPerSec()
	row.FillSettledPerSec = fill.settledOpsPerSec()
	return row, &shape, s.Close()
}

// floorShape is s with tables of the largest size the database writes,
// for FamilyFalsePositiveFloor, whose bound holds for tables up to the
// shape's size (a filter costs less per key in a larger table): a
// quarter over the larger of TargetFileSize, where compactions cut their
// outputs (after the entry that reaches it), and the memtable's size,
// which a flushed table does not exceed (its entries take less room in a
// table's blocks than in the memtable).
func floorShape(s compaction.Shape, opts *bloomkv.Options) compaction.Shape {
	s.TableSize = 1.25 * float64(max(opts.TargetFileSize, uint64(max(opts.MemtableSize, 0))))
	return s
}

// levelSpec is the filter of a level for the allocation's model: its
// tables' family and rate (a Bloom filter of the rate's bits per key
// stands for a mix).
func levelSpec(l levelInfo) sstable.FilterSpec {
	switch {
	case l.expectedFPR >= 1:
		return sstable.FilterSpec{}
	case strings.HasPrefix(l.filters, "fuse ") && !strings.Contains(l.filters, "+"):
		var w int
		if _, err := fmt.Sscanf(l.filters, "fuse %d-bit", &w); err == nil {
			return sstable.Fuse(w)
		}
	case strings.HasPrefix(l.filters, "ribbon ") && !strings.Contains(l.filters, "+"):
		var w int
		if _, err := fmt.Sscanf(l.filters, "ribbon %d-bit", &w); err == nil {
			return sstable.Ribbon(w)
		}
	}
	return sstable.FilterSpec{Family: sstable.BloomFamily, Bits: bloomBitsForFPR(l.expectedFPR)}
}

// bloomBitsForFPR is the bits per key, to a hundredth, of the blocked
// Bloom filter of rate p.
func bloomBitsForFPR(p float64) float64 {
	lo, hi := 1.0, 64.0
	for hi-lo > 0.005 {
		mid := (lo + hi) / 2
		if sstable.Bloom(mid).ExpectedFalsePositiveRate() > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Round(hi*100) / 100
}

// compactKinds renders a level's filters for the sweep's table: "b10.0"
// for Bloom at its mean bits per key, "f8" for 8-bit fuse, "r8" for 8-bit
// ribbon, "-" for none, mixes joined by "+" ("f8+b").
func compactKinds(kinds string, bits float64) string {
	var parts []string
	for _, k := range strings.Split(kinds, " + ") {
		fields := strings.Fields(k)
		if len(fields) > 1 && fields[0] != "fuse" && fields[0] != "ribbon" && fields[0] != "bloom" && fields[0] != "none" {
			fields = fields[1:] // a count
		}
		switch {
		case len(fields) == 0 || fields[0] == "none":
			parts = append(parts, "-")
		case fields[0] == "bloom" && !strings.Contains(kinds, "+"):
			parts = append(parts, fmt.Sprintf("b%.1f", bits))
		case fields[0] == "bloom":
			parts = append(parts, "b")
		case fields[0] == "fuse" && len(fields) > 1:
			parts = append(parts, "f"+strings.TrimSuffix(fields[1], "-bit"))
		case fields[0] == "ribbon" && len(fields) > 1:
			parts = append(parts, "r"+strings.TrimSuffix(fields[1], "-bit"))
		default:
			parts = append(parts, fields[0])
		}
	}
	return strings.Join(parts, "+")
}

// sweepPrefix runs the prefix workloads on a database of Bloom filters of
// 10 bits per key, whose tables hold the keys' prefixes (withPrefix) or
// not: a database filled without a prefix extractor and reopened with
// one, so that its seeks consult no table's filter for the prefix.
func sweepPrefix(dir string, base bloomkv.Options, cfg *workload.Config, withPrefix bool) (*prefixRow, error) {
	defer os.RemoveAll(dir)
	opts := sweepConfig{policyUniform, 10}.options(base)
	if withPrefix {
		opts.Prefix = benchstore.PrefixExtractor()
	}
	label := "prefix filters"
	if !withPrefix {
		label = "no prefix filters"
	}
	s, err := benchstore.Open(dir, &opts)
	if err != nil {
		return nil, err
	}
	defer func() { s.Close() }()
	if _, err := runPhase(s, cfg, workload.FillPrefix, label+" fillprefix"); err != nil {
		return nil, err
	}
	if !withPrefix {
		if err := s.Close(); err != nil {
			return nil, err
		}
		opts.Prefix = benchstore.PrefixExtractor()
		if s, err = benchstore.Open(dir, &opts); err != nil {
			return nil, err
		}
	}
	present, err := runPhase(s, cfg, workload.SeekPrefix, label+" seekprefix")
	if err != nil {
		return nil, err
	}
	missing, err := runPhase(s, cfg, workload.SeekPrefixMissing, label+" seekprefixmissing")
	if err != nil {
		return nil, err
	}
	m := s.DB.Metrics()
	info, _, err := treeInfo(dir, &opts, cfg.Keys.N)
	if err != nil {
		return nil, err
	}
	row := &prefixRow{PrefixFilters: withPrefix, FilterMemory: m.FilterMemory, Seeks: missing.prefixSeeks, KeysPerPrefix: cfg.PrefixKeys}
	if row.KeysPerPrefix == 0 {
		row.KeysPerPrefix = workload.DefaultPrefixKeys
	}
	row.Filters = "bloom:10, tables without prefixes"
	if withPrefix {
		row.Filters = "bloom:10 holding the prefixes"
	}
	per := func(p *phase, x uint64) float64 { return float64(x) / float64(max(p.prefixSeeks, 1)) }
	sm, sp := missing.sum(), present.sum()
	row.TablesPerSeek = per(missing, sm.PrefixProbes)
	row.SoughtPerSeek = per(missing, sm.PrefixSought)
	row.BlocksPerSeek = per(missing, missing.cacheHits+missing.cacheMisses)
	row.PresentSought = per(present, sp.PrefixSought)
	row.PresentBlocks = per(present, present.cacheHits+present.cacheMisses)
	row.Predicted = row.TablesPerSeek // every table in range is sought
	if withPrefix {
		var predicted float64
		for i := range missing.levels {
			predicted += float64(missing.levels[i].PrefixProbes) * info[i].expectedFPR
		}
		row.Predicted = per(missing, uint64(math.Round(predicted*1e6))) / 1e6
	}
	row.P50Missing = micros(missing.res.Latency.Percentile(0.5))
	row.P50Present = micros(present.res.Latency.Percentile(0.5))
	return row, s.Close()
}

// targets compares the policies at the memory of Uniform Bloom at 10 bits
// per key, or returns nil if the sweep ran no such database.
func targets(rows []sweepRow) *sweepTargets {
	var ref *sweepRow
	for i := range rows {
		if rows[i].Policy == policyUniform && rows[i].Param == 10 {
			ref = &rows[i]
		}
	}
	if ref == nil {
		return nil
	}
	t := &sweepTargets{Memory: ref.FilterMemory, Uniform: ref.MissingBlocks, BloomFillSettled: ref.FillSettledPerSec}
	at := func(policy string, y func(*sweepRow) float64) jsonFloat {
		return jsonFloat(curveAt(rows, policy, float64(ref.FilterMemory), y))
	}
	raw := func(r *sweepRow) float64 { return r.MissingBlocks }
	norm := func(r *sweepRow) float64 { return r.NormalizedBlocks }
	t.Optimal, t.Best, t.Progressive = at(policyOptimal, raw), at(policyBest, raw), at(policyProgressive, raw)
	t.BestVsUniform, t.BestVsProgress = t.Best/jsonFloat(t.Uniform), t.Best/t.Progressive
	t.NormUniform = ref.NormalizedBlocks
	t.NormOptimal, t.NormBest, t.NormProgressive = at(policyOptimal, norm), at(policyBest, norm), at(policyProgressive, norm)
	t.NormBestVsUniform, t.NormBestVsProgress = t.NormBest/jsonFloat(t.NormUniform), t.NormBest/t.NormProgressive
	model := func(r *sweepRow) float64 { return r.ModelBlocks }
	t.ProgressiveModel, t.BestModel = at(policyProgressive, model), at(policyBest, model)
	t.Floor = at(policyProgressive, func(r *sweepRow) float64 { return r.FloorBlocks })
	t.FuseFloor = at(policyProgressive, func(r *sweepRow) float64 { return r.FuseFloorBlocks })
	t.FloorVsProgress, t.FuseFloorVsProgress = t.Floor/t.ProgressiveModel, t.FuseFloor/t.ProgressiveModel
	t.BestModelVsProgress = t.BestModel / t.ProgressiveModel
	t.UniformFloor, t.UniformFuseFloor = ref.FloorBlocks, ref.FuseFloorBlocks
	t.BestFillVsBloom, t.BestFillPairsVsBloom = jsonFloat(math.NaN()), jsonFloat(math.NaN())
	uniform := map[float64]float64{}
	for _, r := range rows {
		if r.Policy == policyUniform {
			uniform[r.Param] = r.FillSettledPerSec
		}
	}
	var best, bloom float64
	for _, r := range rows {
		if r.Policy != policyBest {
			continue
		}
		if r.Param == 10 {
			t.BestFillSettled = r.FillSettledPerSec
			t.BestFillVsBloom = jsonFloat(r.FillSettledPerSec / ref.FillSettledPerSec)
		}
		if u, ok := uniform[r.Param]; ok {
			best, bloom = best+r.FillSettledPerSec, bloom+u
			t.FillBudgets++
		}
	}
	t.BestFillMeanVsBloom = jsonFloat(best / bloom)
	return t
}

// curveAt interpolates y, blocks per missing-key Get, of policy's
// databases at memory bytes of filters, log-linearly between the two
// nearest; NaN if its databases do not span memory.
func curveAt(rows []sweepRow, policy string, memory float64, y func(*sweepRow) float64) float64 {
	type point struct{ mem, blocks float64 }
	var pts []point
	for i := range rows {
		if r := &rows[i]; r.Policy == policy {
			pts = append(pts, point{float64(r.FilterMemory), y(r)})
		}
	}
	slices.SortFunc(pts, func(a, b point) int { return int(math.Copysign(1, a.mem-b.mem)) })
	for i := range pts {
		if pts[i].mem == memory {
			return pts[i].blocks
		}
		if i > 0 && pts[i-1].mem < memory && memory < pts[i].mem {
			a, b := pts[i-1], pts[i]
			if a.blocks <= 0 || b.blocks <= 0 {
				return a.blocks + (b.blocks-a.blocks)*(memory-a.mem)/(b.mem-a.mem)
			}
			f := (memory - a.mem) / (b.mem - a.mem)
			return math.Exp(math.Log(a.blocks) + f*(math.Log(b.blocks)-math.Log(a.blocks)))
		}
	}
	return math.NaN()
}

func (r *sweepReport) print(w io.Writer) {
	if len(r.Rows) > 0 {
		fmt.Fprintln(w)
		t := newTable(w)
		fmt.Fprintln(t, "policy\tparam\tfilters\tfilter memory\tbits/key\t"+
			"tables/miss\tfilter neg/miss\tblocks/miss\tpredicted\tmodel\tfloor\tnormalized\tfrom file/miss\tFPR\tpredicted FPR\t"+
			"blocks/hit\tp50 hit\tp50 miss\tp99 miss\tfill/s\tsettled/s\t")
		for _, row := range r.Rows {
			param := "-"
			if row.Policy != policyNone {
				param = strconv.FormatFloat(row.Param, 'g', -1, 64)
			}
			rates := "-\t-\t"
			if row.Policy != policyNone {
				rates = fmt.Sprintf("%s\t%s\t", fmtRate(row.MeasuredFPR), fmtRate(row.PredictedFPR))
			}
			fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%.2f\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%s%.3f\t%s\t%s\t%s\t%s\t%s\t\n",
				row.Policy, param, row.Filters, humanize.Bytes(row.FilterMemory), row.SpentBitsPerKey,
				row.MissingTables, row.MissingFilterNegatives, row.MissingBlocks, row.PredictedBlocks, row.ModelBlocks, row.FloorBlocks, row.NormalizedBlocks,
				row.MissingBlocksFromFile, rates, row.PresentBlocks, fmtMicros(row.P50PresentMicros), fmtMicros(row.P50MissingMicros),
				fmtMicros(row.P99MissingMicros), fmtCount(int64(row.FillOpsPerSec)), fmtCount(int64(row.FillSettledPerSec)))
		}
		t.Flush()
		fmt.Fprintln(w, "\nparam: bits per key budget (uniform, optimal, best), fingerprint bits (fuse), offset of Pebble's")
		fmt.Fprintln(w, "16/16/16/12/10/8/4 widths (progressive, emulated with LevelFilters). filters: each level's, from the")
		fmt.Fprintln(w, "manifest (b: Bloom at its bits per key; f: fuse, r: Ribbon at their widths). bits/key: filter memory per key.")
		fmt.Fprintln(w, "miss: a Get of a missing key (readmissing); hit: of a present key (readrandom). blocks: data blocks")
		fmt.Fprintln(w, "read, from the file or the block cache, each a false positive's for a missing key; predicted: the")
		fmt.Fprintln(w, "filter checks per miss of each level times its filters' rate; model: the allocation's expected reads")
		fmt.Fprintln(w, "(compaction.ExpectedFalsePositiveReads) of the final tree; floor: the least model any filters of the same")
		fmt.Fprintln(w, "memory could give that tree (perfect filters, rate 2^-bits, optimally allocated:")
		fmt.Fprintln(w, "compaction.FalsePositiveFloor); normalized: the levels' measured read rates at")
		fmt.Fprintln(w, "the probes per level of uniform at 10 bits/key (the trees differ in what their small levels cover when")
		fmt.Fprintln(w, "the fill ends, which moves tables/miss, and blocks/miss with it). FPR: false positives over the filter")
		fmt.Fprintln(w, "checks of missing keys. fill/s: Puts per second; settled/s: keys per second, flush and compactions after")
		fmt.Fprintln(w, "the fill included (where the filters are built).")
	}
	if t := r.Targets; t != nil {
		fmt.Fprintf(w, "\nat the memory of Uniform Bloom at 10 bits/key (%s), blocks read per missing-key Get:\n", humanize.Bytes(t.Memory))
		fmt.Fprintf(w, "  uniform %.4f, optimal %s, progressive (emulated) %s, best %s\n", t.Uniform, fmtMaybe(t.Optimal), fmtMaybe(t.Progressive), fmtMaybe(t.Best))
		fmt.Fprintf(w, "  best / uniform = %s (target ≤ 0.4: %s); best / progressive = %s (target ≤ 0.5: %s)\n",
			fmtMaybe(t.BestVsUniform), verdict(t.BestVsUniform, t.BestVsUniform <= 0.4), fmtMaybe(t.BestVsProgress), verdict(t.BestVsProgress, t.BestVsProgress <= 0.5))
		if t.BestFillSettled > 0 {
			fmt.Fprintf(w, "  fill, flush and compactions at 10 bits/key: best %s keys/s, uniform %s: %.2f× (target ≥ 0.9: %s)\n",
				fmtCount(int64(t.BestFillSettled)), fmtCount(int64(t.BloomFillSettled)), t.BestFillVsBloom, verdict(t.BestFillVsBloom, t.BestFillVsBloom >= 0.9))
			fmt.Fprintf(w, "    over the %d budgets both ran: %.2f× (target ≥ 0.9: %s)\n", t.FillBudgets, t.BestFillMeanVsBloom,
				verdict(t.BestFillMeanVsBloom, t.BestFillMeanVsBloom >= 0.9))
		}
		if len(t.FillPairs) > 1 {
			ratios := make([]string, len(t.FillPairs))
			for i, r := range t.FillPairs {
				ratios[i] = fmt.Sprintf("%.2f", r[1]/r[0])
			}
			fmt.Fprintf(w, "    in %d pairs filled in turn (best / uniform %s): median %.2f× (target ≥ 0.9: %s)\n", len(t.FillPairs),
				strings.Join(ratios, ", "), t.BestFillPairsVsBloom, verdict(t.BestFillPairsVsBloom, t.BestFillPairsVsBloom >= 0.9))
		}
		fmt.Fprintf(w, "  at the reference tree's probes per level (normalized): uniform %.4f, optimal %s, progressive %s, best %s;\n",
			t.NormUniform, fmtMaybe(t.NormOptimal), fmtMaybe(t.NormProgressive), fmtMaybe(t.NormBest))
		fmt.Fprintf(w, "    best / uniform = %s (target ≤ 0.4: %s); best / progressive = %s (target ≤ 0.5: %s)\n",
			fmtMaybe(t.NormBestVsUniform), verdict(t.NormBestVsUniform, t.NormBestVsUniform <= 0.4),
			fmtMaybe(t.NormBestVsProgress), verdict(t.NormBestVsProgress, t.NormBestVsProgress <= 0.5))
		if !math.IsNaN(float64(t.FloorVsProgress)) {
			fmt.Fprintf(w, "  the floor, on progressive's trees (model reads): progressive %.4f, best %s; floor of perfect filters %.4f\n",
				t.ProgressiveModel, fmtMaybe(t.BestModel), t.Floor)
			fmt.Fprintf(w, "    = %.2f× progressive (%s); of Bloom, fuse and Ribbon filters at the trees' table sizes %.4f = %.2f× (%s)\n",
				t.FloorVsProgress, attainable(t.FloorVsProgress, "any filters"),
				t.FuseFloor, t.FuseFloorVsProgress, attainable(t.FuseFloorVsProgress, "Bloom, fuse and Ribbon filters"))
			fmt.Fprintf(w, "    best's model %s× progressive's; uniform's tree: floor %.4f, Bloom, fuse and Ribbon floor %.4f\n",
				fmtRatio(t.BestModelVsProgress), t.UniformFloor, t.UniformFuseFloor)
		}
		fmt.Fprintln(w, "  (each policy's curve interpolated at that memory between its two nearest databases)")
	}
	if len(r.Prefix) > 0 {
		fmt.Fprintf(w, "\nprefix workloads: fillprefix (%d keys per prefix), then %s seeks of present and of missing prefixes:\n\n",
			r.Prefix[0].KeysPerPrefix, fmtCount(int64(r.Prefix[0].Seeks)))
		t := newTable(w)
		fmt.Fprintln(t, "filters\tfilter memory\ttables/missing seek\tsought/missing seek\tpredicted\tblocks/missing seek\tsought/present seek\tblocks/present seek\tp50 missing\tp50 present\t")
		for _, p := range r.Prefix {
			fmt.Fprintf(t, "%s\t%s\t%.3f\t%.4f\t%.4f\t%.4f\t%.3f\t%.3f\t%s\t%s\t\n", p.Filters, humanize.Bytes(p.FilterMemory), p.TablesPerSeek,
				p.SoughtPerSeek, p.Predicted, p.BlocksPerSeek, p.PresentSought, p.PresentBlocks, fmtMicros(p.P50Missing), fmtMicros(p.P50Present))
		}
		t.Flush()
		fmt.Fprintln(w, "tables: whose key range held the prefix; sought: of them, opened and sought (a missing prefix's: each a")
		fmt.Fprintln(w, "false positive); predicted: tables × their filters' rate with prefix filters, every table without;")
		fmt.Fprintln(w, "blocks: data blocks read (the block cache's misses and hits).")
	}
	printFamilies(w, r.Families, r.Costs)
}

// attainable says whether a floor at ratio x of the progressive policy's
// reads leaves best ≤ 0.5× progressive within reach of filters.
func attainable(x jsonFloat, filters string) string {
	if x > 0.5 {
		return "above 0.5: the target is out of reach of " + filters
	}
	return "≤ 0.5: " + filters + " could reach the target"
}

// fmtRatio renders a ratio to two decimals, or n/a.
func fmtRatio(x jsonFloat) string {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(x))
}

func fmtMaybe[F ~float64](x F) string {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", float64(x))
}

// verdict says whether a target on x is met (ok), or not measured.
func verdict[F ~float64](x F, ok bool) string {
	switch {
	case math.IsNaN(float64(x)) || math.IsInf(float64(x), 0):
		return "not measured"
	case ok:
		return "met"
	}
	return "NOT met"
}

// files lists what write writes.
func (r *sweepReport) files() []string {
	files := []string{"sweep.csv", "sweep.json"}
	if len(r.Families) > 0 {
		files = append(files, "families.csv", "costs.csv")
	}
	if len(r.Prefix) > 0 {
		files = append(files, "prefix.csv")
	}
	return append(files, r.chartNames()...)
}

func (r *sweepReport) write(dir string) error {
	if err := writeJSON(filepath.Join(dir, "sweep.json"), r); err != nil {
		return err
	}
	rows := [][]string{{"bits_per_key", "allocation", "filter_memory_bytes", "levels", "missing_tables_per_get",
		"missing_filter_negatives_per_get", "missing_blocks_per_get", "missing_blocks_from_file_per_get",
		"missing_bytes_read_per_get", "measured_fpr", "predicted_fpr", "bound_fpr", "present_blocks_per_get",
		"p50_present_us", "p99_present_us", "p50_missing_us", "p99_missing_us", "present_ops_per_sec", "missing_ops_per_sec",
		"policy", "param", "filters", "spent_bits_per_key", "predicted_blocks_per_get", "model_blocks_per_get",
		"fill_ops_per_sec", "fill_settled_keys_per_sec", "normalized_blocks_per_get", "floor_blocks_per_get", "fuse_floor_blocks_per_get"}}
	for _, x := range r.Rows {
		rows = append(rows, []string{ftoa(x.BitsPerKey), x.Allocation, strconv.FormatUint(x.FilterMemory, 10), strconv.Itoa(x.Levels),
			ftoa(x.MissingTables), ftoa(x.MissingFilterNegatives), ftoa(x.MissingBlocks), ftoa(x.MissingBlocksFromFile),
			ftoa(x.MissingBytesRead), ftoa(x.MeasuredFPR), ftoa(x.PredictedFPR), ftoa(x.BoundFPR), ftoa(x.PresentBlocks),
			ftoa(x.P50PresentMicros), ftoa(x.P99PresentMicros), ftoa(x.P50MissingMicros), ftoa(x.P99MissingMicros),
			ftoa(x.PresentOpsPerSec), ftoa(x.MissingOpsPerSec),
			x.Policy, ftoa(x.Param), x.Filters, ftoa(x.SpentBitsPerKey), ftoa(x.PredictedBlocks), ftoa(x.ModelBlocks),
			ftoa(x.FillOpsPerSec), ftoa(x.FillSettledPerSec), ftoa(x.NormalizedBlocks), ftoa(x.FloorBlocks), ftoa(x.FuseFloorBlocks)})
	}
	if err := writeCSV(filepath.Join(dir, "sweep.csv"), rows); err != nil {
		return err
	}
	if len(r.Families) > 0 {
		rows := [][]string{{"filter", "keys", "tables", "built", "bits_per_key", "planned_bits_per_key", "probes", "false_positives",
			"measured_fpr", "expected_fpr", "formula_fpr", "nominal_fpr", "interval_low", "interval_high", "within"}}
		for _, x := range r.Families {
			rows = append(rows, []string{x.Filter, strconv.Itoa(x.Keys), strconv.Itoa(x.Tables), x.Built, ftoa(x.BitsPerKey),
				ftoa(x.PlannedBits), strconv.FormatInt(x.Probes, 10), strconv.FormatInt(x.FalsePos, 10), ftoa(x.MeasuredFPR),
				ftoa(x.ExpectedFPR), ftoa(x.FormulaFPR), ftoa(x.NominalFPR), ftoa(x.IntervalLow), ftoa(x.IntervalHigh), strconv.FormatBool(x.Within)})
		}
		if err := writeCSV(filepath.Join(dir, "families.csv"), rows); err != nil {
			return err
		}
		rows = [][]string{{"filter", "keys", "serialized_bits_per_key", "build_ns_per_key", "build_vs_baseline", "lookup_ns", "lookup_vs_baseline"}}
		for _, x := range r.Costs {
			rows = append(rows, []string{x.Filter, strconv.Itoa(x.Keys), ftoa(x.BitsPerKey), ftoa(x.BuildNsPerKey),
				ftoa(x.BuildVsBaseline), ftoa(x.LookupNs), ftoa(x.LookupVsBase)})
		}
		if err := writeCSV(filepath.Join(dir, "costs.csv"), rows); err != nil {
			return err
		}
	}
	if len(r.Prefix) > 0 {
		rows := [][]string{{"prefix_filters", "filters", "filter_memory_bytes", "seeks", "keys_per_prefix", "missing_tables_per_seek",
			"missing_sought_per_seek", "missing_predicted_sought_per_seek", "missing_blocks_per_seek", "present_sought_per_seek",
			"present_blocks_per_seek", "p50_missing_us", "p50_present_us"}}
		for _, x := range r.Prefix {
			rows = append(rows, []string{strconv.FormatBool(x.PrefixFilters), x.Filters, strconv.FormatUint(x.FilterMemory, 10),
				strconv.FormatUint(x.Seeks, 10), strconv.Itoa(x.KeysPerPrefix), ftoa(x.TablesPerSeek), ftoa(x.SoughtPerSeek),
				ftoa(x.Predicted), ftoa(x.BlocksPerSeek), ftoa(x.PresentSought), ftoa(x.PresentBlocks), ftoa(x.P50Missing), ftoa(x.P50Present)})
		}
		if err := writeCSV(filepath.Join(dir, "prefix.csv"), rows); err != nil {
			return err
		}
	}
	return r.writeCharts(dir)
}

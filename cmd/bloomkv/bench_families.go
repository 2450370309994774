package main

// The sweep's filter-family measurements, made on tables written and read
// as the DB writes and reads them, without a DB around them: each family's
// false-positive rate against its formula by table size, the bits per key
// a table actually spends, and what building and querying each filter
// costs, beside a Bloom filter's in the same run.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/sstable"
)

// sweepFamilies are the filters whose rates and costs the sweep measures
// per table size; the first is the baseline the costs are given against.
var sweepFamilies = []sstable.FilterSpec{sstable.Bloom(10), sstable.Fuse(8), sstable.Fuse(16), sstable.Ribbon(8), sstable.Ribbon(16)}

// familyMinKeys is how many keys the tables of one size hold together:
// at small sizes many tables are written, so that the measured rate is an
// average over key sets, as the formulas are, and not one small filter's.
const familyMinKeys = 100_000

// familyAlpha is the two-sided significance of the binomial check of a
// measured rate: the measurement falls outside the interval with
// probability 1e-4 when the formula holds.
const familyAlpha = 1e-4

// familyRow is one filter at one table size: what the tables' filters
// spent and how often they said "maybe" to keys they lack.
type familyRow struct {
	Filter       string  `json:"filter"` // the spec the tables were written with
	Keys         int     `json:"keys"`   // per table
	Tables       int     `json:"tables"`
	Built        string  `json:"built"`                  // the families built ("bloom" where fuse fell back)
	BitsPerKey   float64 `json:"bits_per_key"`           // serialized filter bytes ·8 / keys: what a table spends
	PlannedBits  float64 `json:"planned_bits_per_key"`   // FilterSpec.BitsPerKey(keys): the planner's figure
	Probes       int64   `json:"probes"`                 // absent keys asked, over all the tables
	FalsePos     int64   `json:"false_positives"`        // of them, "maybe"
	MeasuredFPR  float64 `json:"measured_fpr"`           // FalsePos / Probes
	ExpectedFPR  float64 `json:"expected_fpr"`           // mean of the built filters' exact rates (expectedFPR)
	FormulaFPR   float64 `json:"formula_fpr"`            // mean of their ExpectedFalsePositiveRate
	NominalFPR   float64 `json:"nominal_fpr"`            // the spec's rate (2^-w for fuse)
	IntervalLow  float64 `json:"interval_low"`           // the binomial interval around ExpectedFPR,
	IntervalHigh float64 `json:"interval_high"`          // at two-sided significance familyAlpha
	Within       bool    `json:"within_binomial_bounds"` // MeasuredFPR in the interval
}

// costRow is what building and querying one filter over one set costs.
type costRow struct {
	Filter          string  `json:"filter"`
	Keys            int     `json:"keys"`
	BuildNsPerKey   float64 `json:"build_ns_per_key"`
	LookupNs        float64 `json:"lookup_ns"`               // per query of an absent key
	BuildVsBaseline float64 `json:"build_vs_baseline"`       // ratio to sweepFamilies[0] at the same keys
	LookupVsBase    float64 `json:"lookup_vs_baseline"`      // likewise
	BitsPerKey      float64 `json:"serialized_bits_per_key"` // of the filter built
}

// specName renders a spec as the bench's flags take it: "bloom:10",
// "fuse:8", "none".
func specName(s sstable.FilterSpec) string {
	if s.Family == sstable.NoFilter {
		return "none"
	}
	return fmt.Sprintf("%v:%g", s.Family, s.Bits)
}

// measureFamilies measures every spec of specs at every table size of
// sizes, asking probes absent keys at each. The keys are the workload's
// (present ones in the tables, missing ones asked), so the measurement is
// the same on every run; seed seeds only their unused values.
func measureFamilies(specs []sstable.FilterSpec, sizes []int, probes int, seed uint64) ([]familyRow, error) {
	// Present keys for the tables; missing keys, each asked once per row:
	// a key asked twice would count twice what is one draw.
	maxKeys := probes
	for _, n := range sizes {
		maxKeys = max(maxKeys, n*familyTables(n))
	}
	keys, err := workload.NewKeys(maxKeys, workload.DefaultKeySize, 0, seed)
	if err != nil {
		return nil, err
	}
	var rows []familyRow
	for _, spec := range specs {
		for _, n := range sizes {
			row, err := measureFamily(keys, spec, n, probes)
			if err != nil {
				return nil, fmt.Errorf("%s at %d keys: %w", specName(spec), n, err)
			}
			rows = append(rows, *row)
		}
	}
	return rows, nil
}

// familyTables is how many tables of n keys measureFamily writes.
func familyTables(n int) int { return max(1, (familyMinKeys+n-1)/n) }

func measureFamily(keys *workload.Keys, spec sstable.FilterSpec, n, probes int) (*familyRow, error) {
	tables := familyTables(n)
	row := &familyRow{Filter: specName(spec), Keys: n, Tables: tables, PlannedBits: spec.BitsPerKey(n),
		NominalFPR: spec.ExpectedFalsePositiveRate()}
	built := map[string]int{}
	var filterBytes, expected, formula float64
	key := make([]byte, 0, keys.KeySize)
	var buf bytes.Buffer
	for t := range tables {
		buf.Reset()
		w, err := sstable.NewWriter(&buf, sstable.WriterOptions{Filter: spec, Compression: sstable.SnappyCompression})
		if err != nil {
			return nil, err
		}
		for i := t * n; i < (t+1)*n; i++ {
			key = keys.Present(key, i)
			if err := w.Add(sstable.MakeInternalKey(key, sstable.SeqNum(i+1), sstable.KindSet), nil); err != nil {
				return nil, err
			}
		}
		props, err := w.Finish()
		if err != nil {
			return nil, err
		}
		r, err := sstable.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), sstable.ReaderOptions{FileName: "sweep"})
		if err != nil {
			return nil, err
		}
		f := r.Filter()
		if f == nil {
			r.Close()
			return nil, fmt.Errorf("table written with %v has no filter", spec)
		}
		built[props.FilterFamily.String()]++
		filterBytes += float64(props.FilterBytes)
		formula += f.ExpectedFalsePositiveRate()
		expected += expectedFPR(f)
		// The probes of this table: missing keys, each of them inside
		// the key range of some table but in none, so that the filter
		// alone can answer them; each asked once in the row.
		share := probes/tables + btoi(t < probes%tables)
		for i := range share {
			key = keys.Missing(key, int(row.Probes)+i)
			if f.MayContainHash(bloom.Hash(key)) {
				row.FalsePos++
			}
		}
		row.Probes += int64(share)
		r.Close()
	}
	var families []string
	for _, name := range []string{"bloom", "fuse", "ribbon"} {
		if c := built[name]; c == tables {
			families = append(families, name)
		} else if c > 0 {
			families = append(families, fmt.Sprintf("%s×%d", name, c))
		}
	}
	row.Built = strings.Join(families, "+")
	row.BitsPerKey = 8 * filterBytes / float64(tables*n)
	row.ExpectedFPR = expected / float64(tables)
	row.FormulaFPR = formula / float64(tables)
	if row.Probes > 0 {
		row.MeasuredFPR = float64(row.FalsePos) / float64(row.Probes)
		lo, hi := binomialInterval(row.Probes, row.ExpectedFPR, familyAlpha)
		row.IntervalLow, row.IntervalHigh = float64(lo)/float64(row.Probes), float64(hi)/float64(row.Probes)
		row.Within = row.FalsePos >= lo && row.FalsePos <= hi
	}
	return row, nil
}

// expectedFPR is the false-positive rate to expect of filter f for a key
// it lacks, averaged over key sets of f's size. For a fuse filter that is
// its formula, 2^-w. For a blocked Bloom filter of B blocks, k probes and
// n keys, it is the classic rate of a 512-bit filter of the keys in the
// probed block, averaged over that block's load, Binomial(n, 1/B):
//
//	Σ_i C(n, i)·B^-i·(1 − 1/B)^(n−i) · (1 − (1 − 1/512)^(k·i))^k
//
// bloom.BlockedFalsePositiveRate takes the load as Poisson with mean n/B,
// which is exact only for many blocks: a table of 100 keys has two, whose
// loads vary half as much, and a rate 8% below the formula's.
func expectedFPR(f sstable.Filter) float64 {
	b, ok := f.(*bloom.Blocked)
	if !ok || b.Keys() == 0 {
		return f.ExpectedFalsePositiveRate()
	}
	n, blocks, k := float64(b.Keys()), float64(b.Bits()/512), float64(b.Probes())
	if blocks == 1 {
		return math.Pow(-math.Expm1(k*n*math.Log1p(-1.0/512)), k)
	}
	lgn, _ := math.Lgamma(n + 1)
	lp, lq := -math.Log(blocks), math.Log1p(-1/blocks)
	mean := n / blocks
	sd := math.Sqrt(mean)
	var sum float64
	for i := max(0, math.Floor(mean-40*sd-40)); i <= min(n, mean+40*sd+40); i++ {
		a, _ := math.Lgamma(i + 1)
		c, _ := math.Lgamma(n - i + 1)
		load := math.Exp(lgn - a - c + i*lp + (n-i)*lq)
		sum += load * math.Pow(-math.Expm1(k*i*math.Log1p(-1.0/512)), k)
	}
	return sum
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// binomialInterval returns the counts lo ≤ hi between which a count of
// successes in m trials of probability p falls with probability at least
// 1−alpha: P(X < lo) ≤ alpha/2 and P(X > hi) ≤ alpha/2, from the exact
// binomial distribution (summed in log space, so that it holds for rates
// as small as 2^-16 and as many trials as a sweep makes).
func binomialInterval(m int64, p, alpha float64) (lo, hi int64) {
	switch {
	case m <= 0:
		return 0, 0
	case p <= 0:
		return 0, 0
	case p >= 1:
		return m, m
	}
	fm := float64(m)
	lgm, _ := math.Lgamma(fm + 1)
	lp, lq := math.Log(p), math.Log1p(-p)
	pmf := func(k int64) float64 {
		fk := float64(k)
		a, _ := math.Lgamma(fk + 1)
		b, _ := math.Lgamma(fm - fk + 1)
		return math.Exp(lgm - a - b + fk*lp + (fm-fk)*lq)
	}
	// Start the sums where the mass is negligible below: 40 standard
	// deviations under the mean.
	mean, sd := fm*p, math.Sqrt(fm*p*(1-p))
	k := max(int64(0), int64(mean-40*sd-40))
	cdf := 0.0
	lo = -1
	for ; k <= m; k++ {
		cdf += pmf(k)
		if lo < 0 && cdf > alpha/2 {
			lo = k
		}
		if cdf >= 1-alpha/2 {
			return lo, k
		}
	}
	return max(lo, 0), m
}

// measureCosts times building and querying each spec's filter over the
// hashes of n keys at each size of sizes, directly (bloom.BuildBlocked,
// fuse.Build, ribbon.Build: what a table's writer calls), and gives each
// against the first spec's at the same size, so that the ratios hold on
// any machine.
// The specs take turns, costRounds times, and each keeps its fastest
// round: what another process takes of the CPU meanwhile slows some rounds
// of every spec, not one spec.
func measureCosts(specs []sstable.FilterSpec, sizes []int, seed uint64) ([]costRow, error) {
	var rows []costRow
	for _, n := range sizes {
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		hashes := make([]uint64, n)
		for i := range hashes {
			hashes[i] = rng.Uint64()
		}
		absent := make([]uint64, 1<<14)
		for i := range absent {
			absent[i] = rng.Uint64()
		}
		first := len(rows)
		filters := make([]sstable.Filter, len(specs))
		for i, spec := range specs {
			f, size, err := buildForCost(spec, hashes)
			if err != nil {
				return nil, fmt.Errorf("%s at %d keys: %w", specName(spec), n, err)
			}
			filters[i] = f
			rows = append(rows, costRow{Filter: specName(spec), Keys: n, BitsPerKey: 8 * float64(size) / float64(n),
				BuildNsPerKey: math.Inf(1), LookupNs: math.Inf(1)})
		}
		var sink int
		for range costRounds {
			for i, spec := range specs {
				row := &rows[first+i]
				d, reps, err := timed(func() error {
					_, _, err := buildForCost(spec, hashes)
					return err
				})
				if err != nil {
					return nil, err
				}
				row.BuildNsPerKey = min(row.BuildNsPerKey, float64(d.Nanoseconds())/float64(reps)/float64(n))
				f := filters[i]
				d, reps, _ = timed(func() error {
					for _, h := range absent {
						sink += btoi(f.MayContainHash(h))
					}
					return nil
				})
				row.LookupNs = min(row.LookupNs, float64(d.Nanoseconds())/float64(reps)/float64(len(absent)))
			}
		}
		if sink < 0 { // never: keeps the lookups from being optimized away
			return nil, fmt.Errorf("negative count")
		}
		for i := first; i < len(rows); i++ {
			rows[i].BuildVsBaseline = rows[i].BuildNsPerKey / rows[first].BuildNsPerKey
			rows[i].LookupVsBase = rows[i].LookupNs / rows[first].LookupNs
		}
	}
	return rows, nil
}

// buildForCost builds spec's filter over hashes as a table's writer does,
// and returns it with its serialized size.
func buildForCost(spec sstable.FilterSpec, hashes []uint64) (sstable.Filter, int, error) {
	switch spec.Family {
	case sstable.BloomFamily:
		b, err := bloom.BuildBlocked(hashes, spec.Bits)
		if err != nil {
			return nil, 0, err
		}
		return b, b.SizeBytes() + bloomOverheadBytes, nil
	case sstable.FuseFamily:
		b, err := fuse.Build(hashes, int(spec.Bits))
		if err != nil {
			return nil, 0, err
		}
		return b, fuse.SizeBytes(len(hashes), int(spec.Bits)), nil
	case sstable.RibbonFamily:
		b, err := ribbon.Build(hashes, int(spec.Bits))
		if err != nil {
			return nil, 0, err
		}
		return b, ribbon.SizeBytes(len(hashes), int(spec.Bits)), nil
	}
	return nil, 0, fmt.Errorf("no filter to time for %v", spec)
}

// costRounds and costTime are how often, and for how long at least each
// time, measureCosts times each spec.
var (
	costRounds = 5
	costTime   = 10 * time.Millisecond
)

// timed runs f until costTime has passed (at least twice, the first run
// untimed: a warm-up) and returns the time of the timed runs and their
// number.
func timed(f func() error) (time.Duration, int, error) {
	if err := f(); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	reps := 0
	for {
		if err := f(); err != nil {
			return 0, 0, err
		}
		reps++
		if d := time.Since(start); d >= costTime {
			return d, reps, nil
		}
	}
}

// printFamilies prints the family measurements.
func printFamilies(w io.Writer, rows []familyRow, costs []costRow) {
	if len(rows) > 0 {
		fmt.Fprintf(w, "\nfilters by table size: tables written as the DB writes them (a fuse spec falls back to a Bloom\n")
		fmt.Fprintf(w, "filter of its rate where that is smaller), each asked about keys it lacks:\n\n")
		t := newTable(w)
		fmt.Fprintln(t, "filter\tkeys/table\ttables\tbuilt\tbits/key\tplanned\tprobes\tmeasured FPR\texpected\tbinomial interval\twithin\tformula\tnominal\t")
		for _, r := range rows {
			within := "yes"
			if !r.Within {
				within = "NO"
			}
			fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t[%s, %s]\t%s\t%s\t%s\t\n", r.Filter, fmtCount(int64(r.Keys)), r.Tables, r.Built,
				r.BitsPerKey, r.PlannedBits, fmtCount(r.Probes), fmtRate(r.MeasuredFPR), fmtRate(r.ExpectedFPR),
				fmtRate(r.IntervalLow), fmtRate(r.IntervalHigh), within, fmtRate(r.FormulaFPR), fmtRate(r.NominalFPR))
		}
		t.Flush()
		fmt.Fprintf(w, "bits/key: serialized filter bytes ·8 per key, what a table spends; planned: FilterSpec.BitsPerKey.\n")
		fmt.Fprintf(w, "expected: the built filters' rate for their size (fuse, ribbon: 2^-w; Bloom: the blocked formula over the exact,\n")
		fmt.Fprintf(w, "binomial, load of a table's blocks); interval: where the false positives fall with probability %.4g\n", 1-familyAlpha)
		fmt.Fprintf(w, "if that rate holds (exact binomial, two-sided %g); formula: ExpectedFalsePositiveRate (Bloom: Poisson\n", familyAlpha)
		fmt.Fprintf(w, "load, exact for many blocks); nominal: the spec's rate.\n")
	}
	if len(costs) > 0 {
		fmt.Fprintf(w, "\nfilter cost, this run (build: bloom.BuildBlocked / fuse.Build / ribbon.Build over the keys' hashes; lookup: a query of\n")
		fmt.Fprintf(w, "an absent hash); ×%s: the ratio to %s at the same keys:\n\n", costs[0].Filter, costs[0].Filter)
		t := newTable(w)
		fmt.Fprintf(t, "filter\tkeys\tbits/key\tbuild ns/key\t×%s\tlookup ns\t×%s\t\n", costs[0].Filter, costs[0].Filter)
		for _, c := range costs {
			fmt.Fprintf(t, "%s\t%s\t%.2f\t%.1f\t%.2f\t%.1f\t%.2f\t\n", c.Filter, fmtCount(int64(c.Keys)), c.BitsPerKey,
				c.BuildNsPerKey, c.BuildVsBaseline, c.LookupNs, c.LookupVsBase)
		}
		t.Flush()
	}
}

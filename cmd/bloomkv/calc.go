package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/sstable"
)

// runCalc sizes filters for n items. The Bloom family (the default): a
// classic and a blocked filter, either at a target rate p (each filter
// takes the memory it needs) or at a fixed bits per key (each filter gets
// that memory and reaches the rate it can); with -k, each beside the same
// filter with k probes instead of the optimal number. The fuse and ribbon
// families: a binary fuse filter of -bits fingerprint bits, or a Standard
// Ribbon filter of -bits result bits, or of the narrowest width that
// reaches p, beside the blocked Bloom filter of the same rate.
func runCalc(args []string, stdout io.Writer) error {
	fs := newFlagSet("calc", "[flags]")
	nItems := countFlag(1_000_000)
	fs.Var(&nItems, "n", "number of items, as an integer or in e-notation (1e9)")
	p := fs.Float64("p", 0.01, "target false-positive rate, in (0, 1)")
	bitsPerKey := fs.Float64("bits-per-key", 0, "bloom: bits per item; if set, sizes by memory instead of -p")
	family := fs.String("family", "bloom", "filter family: bloom (classic and blocked), fuse (binary fuse) or ribbon (Standard Ribbon)")
	width := fs.Int("bits", 0, "fuse: fingerprint bits w, in [1, 16]; ribbon: result bits w, in [1, 32] (rate 2^-w); if set, instead of the narrowest width that reaches -p")
	fixedK := fs.Int("k", 0, "bloom: compare a fixed number of probes, in [1, 64], with the optimal one")
	if err := parse(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var err error
	switch *family {
	case "bloom":
		if set["bits"] {
			return usageError{errors.New("-bits is the fuse family's fingerprint width, or the ribbon family's result width; a Bloom filter is sized by -p or -bits-per-key")}
		}
		k := 0
		if set["k"] {
			if *fixedK < 1 || *fixedK > bloom.MaxProbes {
				return usageError{&bloom.ArgumentError{Arg: "k", Value: *fixedK, Reason: fmt.Sprintf("probes must be in [1, %d]", bloom.MaxProbes)}}
			}
			k = *fixedK
		}
		err = calcBloom(stdout, int(nItems), *p, *bitsPerKey, set["bits-per-key"], k)
	case "fuse":
		if set["k"] {
			return usageError{errors.New("-k is a Bloom filter's probe count; a fuse filter always probes 3 slots")}
		}
		if set["bits-per-key"] {
			return usageError{errors.New("-bits-per-key sizes a Bloom filter; a fuse filter is sized by -p or -bits (its fingerprint width)")}
		}
		err = calcStatic(stdout, fuseFamily, int(nItems), *p, *width, set["bits"])
	case "ribbon":
		if set["k"] {
			return usageError{errors.New("-k is a Bloom filter's probe count; a Ribbon filter always reads the 128 slots of its row")}
		}
		if set["bits-per-key"] {
			return usageError{errors.New("-bits-per-key sizes a Bloom filter; a Ribbon filter is sized by -p or -bits (its result width)")}
		}
		err = calcStatic(stdout, ribbonFamily, int(nItems), *p, *width, set["bits"])
	default:
		return usageError{fmt.Errorf("-family %q: want bloom, fuse or ribbon", *family)}
	}
	var bae *bloom.ArgumentError
	var fae *fuse.ArgumentError
	var rae *ribbon.ArgumentError
	if errors.As(err, &bae) || errors.As(err, &fae) || errors.As(err, &rae) {
		return usageError{err}
	}
	return err
}

// calcBloom prints the classic and blocked filters for n items at rate p or
// at bitsPerKey (bitsSet), and with fixedK > 0 the comparison of that k with
// the optimal one.
func calcBloom(stdout io.Writer, n int, p, bitsPerKey float64, bitsSet bool, fixedK int) error {
	var rows []calcRow
	var err error
	if bitsSet {
		rows, err = calcByBits(n, bitsPerKey)
	} else {
		rows, err = calcByRate(n, p)
	}
	if err != nil {
		return err
	}

	if bitsSet {
		fmt.Fprintf(stdout, "Bloom filters for n = %d items at %g bits per item\n\n", n, bitsPerKey)
	} else {
		fmt.Fprintf(stdout, "Bloom filters for n = %d items at false-positive rate p = %g\n\n", n, p)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\tbits (m)\tprobes (k)\tbytes\tbits/item\texpected FPR\tbound bits/item\tover bound\t")
	for _, r := range rows {
		bound := bloom.MinBitsPerKey(r.fpr)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.2f\t%.4f%%\t%.2f\t%.2f×\t\n",
			r.name, r.bits, r.probes, humanize.Bytes(r.bits/8), float64(r.bits)/float64(n), 100*r.fpr, bound, float64(r.bits)/float64(n)/bound)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nbound: log2(1/FPR) bits per item, the least any filter with that rate can use.\n")
	fmt.Fprintf(stdout, "blocked: all probes of an item in one 512-bit block, one cache miss per query.\n")
	if fixedK > 0 {
		printFixedK(stdout, fixedKRows(rows, n, p, bitsSet, fixedK), fixedK, bitsSet)
	}
	return nil
}

// fixedKRow compares, for one filter of calcBloom's table, the optimal
// probe count with a fixed one: the rate each reaches in the filter's
// memory, and the memory each needs for the target rate — p, or with
// -bits-per-key the rate the optimal k reaches.
type fixedKRow struct {
	name          string
	optK          int
	bitsPerItem   float64 // the filter's memory, m/n
	optFPR, fpr   float64 // at bitsPerItem, with the optimal k and the fixed one
	target        float64 // the rate the bits-per-item columns are for
	optNeed, need float64 // bits per item for target: optimal k, fixed k (+Inf: out of reach)
	tooManyProbes bool    // blocked only: the fixed k is more than a block takes
}

// fixedKRows derives the comparison of k probes with the optimal ones from
// calcBloom's rows (classic, then blocked).
func fixedKRows(rows []calcRow, n int, p float64, bitsSet bool, k int) []fixedKRow {
	out := make([]fixedKRow, 0, len(rows))
	for _, r := range rows {
		c := float64(r.bits) / float64(n)
		target := p
		if bitsSet {
			target = r.fpr
		}
		row := fixedKRow{name: r.name, optK: r.probes, bitsPerItem: c, optFPR: r.fpr, target: target}
		switch r.name {
		case "classic":
			row.fpr = bloom.ClassicFalsePositiveRate(r.bits, k, float64(n))
			row.optNeed, row.need = bloom.ClassicBitsPerKey(target, r.probes), bloom.ClassicBitsPerKey(target, k)
		case "blocked":
			row.tooManyProbes = k > bloom.MaxBlockedProbes
			row.fpr = bloom.BlockedFalsePositiveRate(c, k)
			row.optNeed, row.need = bloom.BlockedBitsPerKeyAtProbes(target, r.probes), bloom.BlockedBitsPerKeyAtProbes(target, k)
		}
		out = append(out, row)
	}
	return out
}

func printFixedK(stdout io.Writer, rows []fixedKRow, k int, bitsSet bool) {
	fmt.Fprintf(stdout, "\nk = %d probes against the optimal number, in the same memory and for the same rate:\n\n", k)
	forRate := "bits/item for p"
	if bitsSet {
		forRate = "bits/item for the optimal k's FPR"
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "filter\tprobes (k)\tbits/item\texpected FPR\tFPR vs optimal\t%s\tbits vs optimal\t\n", forRate)
	outOfReach := false
	for _, r := range rows {
		optNeed, optRatio := fmtNeed(r.optNeed, r.optNeed)
		outOfReach = outOfReach || math.IsInf(r.optNeed, 1)
		fmt.Fprintf(tw, "%s\t%d (optimal)\t%.2f\t%s\t1×\t%s\t%s\t\n", r.name, r.optK, r.bitsPerItem, fmtPercent(r.optFPR), optNeed, optRatio)
		if r.tooManyProbes {
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t-\t-\t\n", r.name, k)
			continue
		}
		need, ratio := fmtNeed(r.need, r.optNeed)
		outOfReach = outOfReach || math.IsInf(r.need, 1)
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%.2f×\t%s\t%s\t\n", r.name, k, r.bitsPerItem, fmtPercent(r.fpr), r.fpr/r.optFPR, need, ratio)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	if bitsSet {
		fmt.Fprintf(stdout, "the optimal k's FPR: each filter's at its bits per item above.\n")
	}
	fmt.Fprintf(stdout, "classic: bits/item for a rate p with k probes is −k / ln(1 − p^(1/k)); the optimal k ≈ (m/n)·ln 2.\n")
	if outOfReach {
		fmt.Fprintf(stdout, "> %d: no blocked filter of up to %d bits per item reaches the rate with that k.\n", bloom.MaxBitsPerKey, bloom.MaxBitsPerKey)
	}
	if k > bloom.MaxBlockedProbes {
		fmt.Fprintf(stdout, "blocked: at most %d probes fit one 512-bit block.\n", bloom.MaxBlockedProbes)
	}
}

// fmtNeed prints the bits per item a filter needs, and their ratio to
// those of the optimal k, optNeed; +Inf, out of reach, shows as "> 64".
func fmtNeed(need, optNeed float64) (string, string) {
	switch {
	case math.IsInf(need, 1):
		return fmt.Sprintf("> %d", bloom.MaxBitsPerKey), "-"
	case math.IsInf(optNeed, 1):
		return fmt.Sprintf("%.2f", need), "-"
	}
	return fmt.Sprintf("%.2f", need), fmt.Sprintf("%.2f×", need/optNeed)
}

// fmtPercent prints a rate with four significant digits, as a percentage.
func fmtPercent(r float64) string { return fmt.Sprintf("%.4g%%", 100*r) }

// staticFamily describes a static filter family for calc: a filter of
// width w answers at rate 2^-w, in SizeBytes of memory.
type staticFamily struct {
	name       string // as in -family and the comparisons: "fuse"
	title      string // "Binary fuse filter"
	unit       string // what w counts: "fingerprints"
	minBits    int
	maxBits    int
	sizeBytes  func(n, w int) int
	rate       func(w int) float64
	spec       func(w int) sstable.FilterSpec
	argError   func(arg string, value any, reason string) error
	widthError string // why -bits is out of range
	footnote   string // how the family's queries and sizes work
}

// fuseFamily is the fuse family for calc.
var fuseFamily = staticFamily{
	name: "fuse", title: "Binary fuse filter", unit: "fingerprints",
	minBits: fuse.MinBits, maxBits: fuse.MaxBits,
	sizeBytes: fuse.SizeBytes, rate: fuse.FalsePositiveRate, spec: sstable.Fuse,
	argError: func(arg string, value any, reason string) error {
		return &fuse.ArgumentError{Arg: arg, Value: value, Reason: reason}
	},
	widthError: "the fingerprint width",
	footnote:   "fuse: three w-bit slots per query, ~1.125·w bits per item for large n; bytes include its 60-67-byte header and checksum.",
}

// ribbonFamily is the ribbon family for calc.
var ribbonFamily = staticFamily{
	name: "ribbon", title: "Standard Ribbon filter", unit: "results",
	minBits: ribbon.MinBits, maxBits: ribbon.MaxBits,
	sizeBytes: ribbon.SizeBytes, rate: ribbon.FalsePositiveRate, spec: sstable.Ribbon,
	argError: func(arg string, value any, reason string) error {
		return &ribbon.ArgumentError{Arg: arg, Value: value, Reason: reason}
	},
	widthError: "the result width",
	footnote:   "ribbon: w parities of 128 slots per query, 1.05-1.09 slots of w bits per item from 10^3 to 10^8 items (in multiples of 64, at least 128); bytes include its 52-byte header and checksum.",
}

// widthFor returns the narrowest width w of fam with 2^-w ≤ p.
func (fam staticFamily) widthFor(p float64) (int, error) {
	if !(p > 0 && p < 1) {
		return 0, fam.argError("p", p, "must be in (0, 1)")
	}
	for w := fam.minBits; w <= fam.maxBits; w++ {
		if fam.rate(w) <= p {
			return w, nil
		}
	}
	return 0, fam.argError("p", p, fmt.Sprintf(
		"below %.3g = 2^-%d, the rate of the widest %s; use -family bloom", fam.rate(fam.maxBits), fam.maxBits, strings.TrimSuffix(fam.unit, "s")))
}

// calcStatic sizes a filter of fam of w bits for n items (w from -bits,
// or the narrowest that reaches p), and compares it with the blocked Bloom
// filter of the same rate, and of rate p.
func calcStatic(stdout io.Writer, fam staticFamily, n int, p float64, w int, widthSet bool) error {
	if n < 1 {
		return fam.argError("n", n, "must be at least 1")
	}
	if widthSet {
		if w < fam.minBits || w > fam.maxBits {
			return fam.argError("bits", w, fmt.Sprintf("%s must be in [%d, %d]", fam.widthError, fam.minBits, fam.maxBits))
		}
	} else {
		var err error
		if w, err = fam.widthFor(p); err != nil {
			return err
		}
	}
	size := fam.sizeBytes(n, w)
	if size == 0 {
		return fam.argError("n", n, fmt.Sprintf("more keys than a %s filter holds (2^31), or than this platform can hold in one slice", fam.name))
	}
	rate := fam.rate(w)
	bpk := 8 * float64(size) / float64(n)

	if widthSet {
		fmt.Fprintf(stdout, "%s for n = %d items with %d-bit %s\n\n", fam.title, n, w, fam.unit)
	} else {
		fmt.Fprintf(stdout, "%s for n = %d items at false-positive rate p = %g: %d-bit %s, the narrowest with 2^-w ≤ p\n\n", fam.title, n, p, w, fam.unit)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\twidth (w)\tbytes\tbits/item\texpected FPR\tbound bits/item\tover bound\t")
	bound := bloom.MinBitsPerKey(rate)
	fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.4f%%\t%.2f\t%.2f×\t\n", fam.name, w, humanize.Bytes(uint64(size)), bpk, 100*rate, bound, bpk/bound)
	tw.Flush()

	fmt.Fprintln(stdout, "\nboth families, serialized sizes:")
	compare := func(label string, bloomRate float64) error {
		c := bloom.BlockedBitsPerKey(bloomRate)
		blocked, err := blockedRow(n, c)
		if err != nil {
			return err
		}
		bloomBytes := blocked.bits/8 + bloomOverheadBytes
		bloomBPK := 8 * float64(bloomBytes) / float64(n)
		fmt.Fprintf(stdout, "  %s: %s %d-bit %s (%.2f bits/item, %s) vs blocked Bloom %s (%.2f bits/item, %d probes, %s): %s\n",
			label, fam.name, w, humanize.Bytes(uint64(size)), bpk, fmtRate(rate), humanize.Bytes(bloomBytes), bloomBPK, blocked.probes,
			fmtRate(blocked.fpr), smaller(fam.name, float64(size), float64(bloomBytes)))
		return nil
	}
	if err := compare(fmt.Sprintf("at the same rate 2^-%d = %s", w, fmtRate(rate)), rate); err != nil {
		return err
	}
	if !widthSet && rate < p {
		if err := compare(fmt.Sprintf("at p = %g (%s reaches %s)", p, fam.name, fmtRate(rate)), p); err != nil {
			return err
		}
	}
	table := fam.spec(w).BitsPerKey(n)
	if table < bpk {
		fmt.Fprintf(stdout, "\nas a table's filter: %.2f bits/item, a Bloom filter of the same rate, which is smaller than the %s filter for so few keys.\n", table, fam.name)
	} else {
		fmt.Fprintf(stdout, "\nas a table's filter: %.2f bits/item, the %s filter (a table falls back to a Bloom filter of the same rate only where that is smaller).\n", table, fam.name)
	}
	fmt.Fprintf(stdout, "bound: log2(1/FPR) bits per item, the least any filter with that rate can use.\n")
	fmt.Fprintln(stdout, fam.footnote)
	return nil
}

// bloomOverheadBytes is a serialized Bloom filter's header and checksum.
const bloomOverheadBytes = 36 + 4

// smaller says which of a filter of family name of a bytes and a Bloom
// filter of b bytes is smaller, and by how much.
func smaller(name string, a, b float64) string {
	switch {
	case a < b:
		return fmt.Sprintf("%s is %.1f%% smaller", name, 100*(1-a/b))
	case a > b:
		return fmt.Sprintf("Bloom is %.1f%% smaller", 100*(1-b/a))
	}
	return "the same size"
}

type calcRow struct {
	name   string
	bits   uint64
	probes int
	fpr    float64
}

func calcByRate(n int, p float64) ([]calcRow, error) {
	m, k, err := bloom.ClassicParams(n, p)
	if err != nil {
		return nil, err
	}
	c := bloom.BlockedBitsPerKey(p)
	blocked, err := blockedRow(n, c)
	if err != nil {
		return nil, err
	}
	classic := calcRow{"classic", m, k, bloom.ClassicFalsePositiveRate(m, k, float64(n))}
	return []calcRow{classic, blocked}, nil
}

func calcByBits(n int, c float64) ([]calcRow, error) {
	if n < 1 {
		return nil, &bloom.ArgumentError{Arg: "n", Value: n, Reason: "must be at least 1"}
	}
	if ae := (*bloom.ArgumentError)(nil); errors.As(bloom.CheckBitsPerKey(c), &ae) {
		renamed := *ae
		renamed.Arg = "bits-per-key" // the filter's rule, under the flag's name
		return nil, &renamed
	}
	m := uint64(math.Ceil(float64(n) * c))
	if m > bloom.MaxBits {
		return nil, &bloom.ArgumentError{Arg: "n", Value: n, Reason: fmt.Sprintf("needs %d bits, more than the maximum %d", m, uint64(bloom.MaxBits))}
	}
	k := max(1, int(math.Round(c*math.Ln2)))
	blocked, err := blockedRow(n, c)
	if err != nil {
		return nil, err
	}
	classic := calcRow{"classic", m, k, bloom.ClassicFalsePositiveRate(m, k, float64(n))}
	return []calcRow{classic, blocked}, nil
}

// blockedRow sizes a blocked filter as NewBlocked does: whole 512-bit
// blocks, and the rate at the bits per item those blocks give.
func blockedRow(n int, c float64) (calcRow, error) {
	f, err := bloom.NewBlocked(0, c) // validates c and gives k; sized below
	if err != nil {
		return calcRow{}, err
	}
	blocks := max(1, uint64(math.Ceil(float64(n)*c/512)))
	bits := blocks * 512
	return calcRow{"blocked", bits, f.Probes(), bloom.BlockedFalsePositiveRate(float64(bits)/float64(n), f.Probes())}, nil
}

// countFlag is a count given as an integer (1000000) or in e-notation
// (1e6), which must then be a whole number.
type countFlag int

func (c *countFlag) String() string { return strconv.Itoa(int(*c)) }

func (c *countFlag) Set(v string) error {
	if n, err := strconv.Atoi(v); err == nil {
		*c = countFlag(n)
		return nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) > math.MaxInt64/2 {
		return fmt.Errorf("%q is not a whole number (write 1000000 or 1e6)", v)
	}
	*c = countFlag(x)
	return nil
}

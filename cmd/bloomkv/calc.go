package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/humanize"
)

// runCalc sizes a classic and a blocked filter for n items, either at a
// target rate p (each filter takes the memory it needs) or at a fixed bits
// per key (each filter gets that memory and reaches the rate it can).
func runCalc(args []string, stdout io.Writer) error {
	fs := newFlagSet("calc")
	n := fs.Int("n", 1_000_000, "number of items")
	p := fs.Float64("p", 0.01, "target false-positive rate, in (0, 1)")
	bitsPerKey := fs.Float64("bits-per-key", 0, "bits per item; if set, sizes by memory instead of -p")
	if err := parse(fs, args); err != nil {
		return err
	}
	bitsSet := false
	fs.Visit(func(f *flag.Flag) { bitsSet = bitsSet || f.Name == "bits-per-key" })

	var rows []calcRow
	var err error
	if bitsSet {
		rows, err = calcByBits(*n, *bitsPerKey)
	} else {
		rows, err = calcByRate(*n, *p)
	}
	if err != nil {
		var ae *bloom.ArgumentError
		if errors.As(err, &ae) {
			return usageError{err}
		}
		return err
	}

	if bitsSet {
		fmt.Fprintf(stdout, "Bloom filters for n = %d items at %g bits per item\n\n", *n, *bitsPerKey)
	} else {
		fmt.Fprintf(stdout, "Bloom filters for n = %d items at false-positive rate p = %g\n\n", *n, *p)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\tbits (m)\tprobes (k)\tbytes\tbits/item\texpected FPR\tbound bits/item\tover bound\t")
	for _, r := range rows {
		bound := bloom.MinBitsPerKey(r.fpr)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.2f\t%.4f%%\t%.2f\t%.2f×\t\n",
			r.name, r.bits, r.probes, humanize.Bytes(r.bits/8), float64(r.bits)/float64(*n), 100*r.fpr, bound, float64(r.bits)/float64(*n)/bound)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nbound: log2(1/FPR) bits per item, the least any filter with that rate can use.\n")
	fmt.Fprintf(stdout, "blocked: all probes of an item in one 512-bit block, one cache miss per query.\n")
	return nil
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

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/sstable"
)

// runCalc sizes filters for n items. The Bloom family (the default): a
// classic and a blocked filter, either at a target rate p (each filter
// takes the memory it needs) or at a fixed bits per key (each filter gets
// that memory and reaches the rate it can). The fuse family: a binary fuse
// filter of -bits fingerprint bits, or of the narrowest width that reaches
// p, beside the blocked Bloom filter of the same rate.
func runCalc(args []string, stdout io.Writer) error {
	fs := newFlagSet("calc")
	n := fs.Int("n", 1_000_000, "number of items")
	p := fs.Float64("p", 0.01, "target false-positive rate, in (0, 1)")
	bitsPerKey := fs.Float64("bits-per-key", 0, "bloom: bits per item; if set, sizes by memory instead of -p")
	family := fs.String("family", "bloom", "filter family: bloom (classic and blocked) or fuse (binary fuse)")
	width := fs.Int("bits", 0, "fuse: fingerprint bits w, in [1, 16] (rate 2^-w); if set, instead of the narrowest width that reaches -p")
	if err := parse(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var err error
	switch *family {
	case "bloom":
		if set["bits"] {
			return usageError{errors.New("-bits is the fuse family's fingerprint width; a Bloom filter is sized by -p or -bits-per-key")}
		}
		err = calcBloom(stdout, *n, *p, *bitsPerKey, set["bits-per-key"])
	case "fuse":
		if set["bits-per-key"] {
			return usageError{errors.New("-bits-per-key sizes a Bloom filter; a fuse filter is sized by -p or -bits (its fingerprint width)")}
		}
		err = calcFuse(stdout, *n, *p, *width, set["bits"])
	default:
		return usageError{fmt.Errorf("-family %q: want bloom or fuse", *family)}
	}
	var bae *bloom.ArgumentError
	var fae *fuse.ArgumentError
	if errors.As(err, &bae) || errors.As(err, &fae) {
		return usageError{err}
	}
	return err
}

func calcBloom(stdout io.Writer, n int, p, bitsPerKey float64, bitsSet bool) error {
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
	return nil
}

// fuseWidthFor returns the narrowest fingerprint width w with 2^-w ≤ p.
func fuseWidthFor(p float64) (int, error) {
	if !(p > 0 && p < 1) {
		return 0, &fuse.ArgumentError{Arg: "p", Value: p, Reason: "must be in (0, 1)"}
	}
	for w := fuse.MinBits; w <= fuse.MaxBits; w++ {
		if fuse.FalsePositiveRate(w) <= p {
			return w, nil
		}
	}
	return 0, &fuse.ArgumentError{Arg: "p", Value: p, Reason: fmt.Sprintf(
		"below %.3g = 2^-%d, the rate of the widest fingerprint; use -family bloom", fuse.FalsePositiveRate(fuse.MaxBits), fuse.MaxBits)}
}

// calcFuse sizes a binary fuse filter of w-bit fingerprints for n items
// (w from -bits, or the narrowest that reaches p), and compares it with the
// blocked Bloom filter of the same rate, and of rate p.
func calcFuse(stdout io.Writer, n int, p float64, w int, widthSet bool) error {
	if n < 1 {
		return &fuse.ArgumentError{Arg: "n", Value: n, Reason: "must be at least 1"}
	}
	if widthSet {
		if w < fuse.MinBits || w > fuse.MaxBits {
			return &fuse.ArgumentError{Arg: "bits", Value: w, Reason: fmt.Sprintf("the fingerprint width must be in [%d, %d]", fuse.MinBits, fuse.MaxBits)}
		}
	} else {
		var err error
		if w, err = fuseWidthFor(p); err != nil {
			return err
		}
	}
	size := fuse.SizeBytes(n, w)
	if size == 0 {
		return &fuse.ArgumentError{Arg: "n", Value: n, Reason: "more keys than a fuse filter holds (2^31), or than this platform can hold in one slice"}
	}
	rate := fuse.FalsePositiveRate(w)
	bpk := 8 * float64(size) / float64(n)

	if widthSet {
		fmt.Fprintf(stdout, "Binary fuse filter for n = %d items with %d-bit fingerprints\n\n", n, w)
	} else {
		fmt.Fprintf(stdout, "Binary fuse filter for n = %d items at false-positive rate p = %g: %d-bit fingerprints, the narrowest with 2^-w ≤ p\n\n", n, p, w)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\twidth (w)\tbytes\tbits/item\texpected FPR\tbound bits/item\tover bound\t")
	bound := bloom.MinBitsPerKey(rate)
	fmt.Fprintf(tw, "fuse\t%d\t%s\t%.2f\t%.4f%%\t%.2f\t%.2f×\t\n", w, humanize.Bytes(uint64(size)), bpk, 100*rate, bound, bpk/bound)
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
		fmt.Fprintf(stdout, "  %s: fuse %d-bit %s (%.2f bits/item, %s) vs blocked Bloom %s (%.2f bits/item, %d probes, %s): %s\n",
			label, w, humanize.Bytes(uint64(size)), bpk, fmtRate(rate), humanize.Bytes(bloomBytes), bloomBPK, blocked.probes,
			fmtRate(blocked.fpr), smaller(float64(size), float64(bloomBytes)))
		return nil
	}
	if err := compare(fmt.Sprintf("at the same rate 2^-%d = %s", w, fmtRate(rate)), rate); err != nil {
		return err
	}
	if !widthSet && rate < p {
		if err := compare(fmt.Sprintf("at p = %g (fuse reaches %s)", p, fmtRate(rate)), p); err != nil {
			return err
		}
	}
	table := sstable.Fuse(w).BitsPerKey(n)
	if table < bpk {
		fmt.Fprintf(stdout, "\nas a table's filter: %.2f bits/item, a Bloom filter of the same rate, which is smaller than the fuse filter for so few keys.\n", table)
	} else {
		fmt.Fprintf(stdout, "\nas a table's filter: %.2f bits/item, the fuse filter (a table falls back to a Bloom filter of the same rate only where that is smaller).\n", table)
	}
	fmt.Fprintf(stdout, "bound: log2(1/FPR) bits per item, the least any filter with that rate can use.\n")
	fmt.Fprintf(stdout, "fuse: three w-bit slots per query, ~1.125·w bits per item for large n; bytes include its 60-67-byte header and checksum.\n")
	return nil
}

// bloomOverheadBytes is a serialized Bloom filter's header and checksum.
const bloomOverheadBytes = 36 + 4

// smaller says which of a fuse filter of a bytes and a Bloom filter of b
// bytes is smaller, and by how much.
func smaller(a, b float64) string {
	switch {
	case a < b:
		return fmt.Sprintf("fuse is %.1f%% smaller", 100*(1-a/b))
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

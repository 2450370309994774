package main

// inspect: what any file of a DB directory holds — a table, a WAL, a
// manifest, CURRENT — read with the packages' own readers, so that damage is
// reported as they report it (file and offset), never crashed on.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/rangefilter"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/sstable"
)

func runInspect(args []string, stdout io.Writer) error {
	fs := newFlagSet("inspect", "[flags] FILE")
	verbose := fs.Bool("v", false, "print every entry: a table's keys and values, a WAL's writes, a manifest's tables")
	kind := fs.String("type", "", "the file's `type`: table, blob, wal, manifest or current; default: from its contents (a table's or blob file's footer, the log's first record, a manifest's name), or, for an empty file, its name")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := wantOperands(fs.Args(), "FILE"); err != nil {
		return err
	}
	path := fs.Arg(0)
	name := filepath.Base(path)
	switch *kind {
	case "", "table", "blob", "wal", "manifest", "current":
	default:
		return usageError{fmt.Errorf("unknown -type %q: want table, blob, wal, manifest or current", *kind)}
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: no such file", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.IsDir() {
		return usageError{fmt.Errorf("%s is a directory: inspect takes one of its files (tree draws a database)", path)}
	}
	t := *kind
	if t == "" {
		if t = fileType(f, info.Size(), name); t == "" {
			return usageError{fmt.Errorf("cannot tell what %s is: neither its bytes (a table, a log of batches or edits, CURRENT) nor its name say; give -type", path)}
		}
	}
	if t == "lock" {
		fmt.Fprintf(stdout, "%s: the directory lock; it holds no data\n", name)
		return nil
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	switch t {
	case "table":
		err = inspectTable(w, f, info.Size(), name, *verbose)
	case "blob":
		err = inspectBlob(w, f, info.Size(), name, *verbose)
	case "wal":
		err = inspectWAL(w, f, info.Size(), name, *verbose)
	case "manifest":
		err = inspectManifest(w, f, info.Size(), name, *verbose)
	default:
		err = inspectCurrent(w, f, name)
	}
	if err != nil {
		return trimmedError{err}
	}
	return nil
}

// fileType tells what a file of a DB directory is from its bytes: "table"
// or "blob" (the footer's magic at its end), "current" (a manifest's name and a
// newline), "wal" or "manifest" (a log whose first record is a batch, or a
// version edit), so that a renamed file is still what it is. A file whose
// bytes say none of these — empty or zeros, as a new WAL or the LOCK file
// is, or damaged where its type shows — is told by its name, as
// manifest.ParseFilename reads it, so that a damaged table gets the table
// reader's error. It returns "" for a file it cannot tell.
func fileType(f io.ReaderAt, size int64, name string) string {
	if size >= int64(len(sstable.Magic)) {
		tail := make([]byte, len(sstable.Magic))
		if _, err := f.ReadAt(tail, size-int64(len(tail))); err == nil && string(tail) == sstable.Magic {
			return "table"
		}
	}
	if size >= int64(len(blob.Magic)) {
		tail := make([]byte, len(blob.Magic))
		if _, err := f.ReadAt(tail, size-int64(len(tail))); err == nil && string(tail) == blob.Magic {
			return "blob"
		}
	}
	if size <= 64 {
		b := make([]byte, size)
		if _, err := f.ReadAt(b, 0); err == nil {
			if line, ok := bytes.CutSuffix(b, []byte("\n")); ok {
				if t, _, valid := manifest.ParseFilename(string(line)); valid && t == manifest.FileTypeManifest {
					return "current"
				}
			}
		}
	}
	r := record.NewReader(io.NewSectionReader(f, 0, size), name)
	if rec, err := r.Next(); err == nil {
		if batchrepr.Decode(rec, func(batchrepr.Entry) {}) == nil {
			return "wal"
		}
		if _, err := manifest.Decode(rec); err == nil {
			return "manifest"
		}
	}
	ft, _, ok := manifest.ParseFilename(name)
	switch {
	case !ok:
		return ""
	case ft == manifest.FileTypeTable:
		return "table"
	case ft == manifest.FileTypeBlob:
		return "blob"
	case ft == manifest.FileTypeWAL:
		return "wal"
	case ft == manifest.FileTypeManifest:
		return "manifest"
	case ft == manifest.FileTypeCurrent:
		return "current"
	case ft == manifest.FileTypeLock && size == 0:
		return "lock"
	}
	return ""
}

// ratio is raw over stored, the compression ratio.
func ratio(raw, stored uint64) string {
	if stored == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(raw)/float64(stored))
}

func inspectTable(w *bufio.Writer, f *os.File, size int64, name string, verbose bool) error {
	r, err := sstable.Open(f, size, sstable.ReaderOptions{FileName: name})
	if err != nil {
		return err
	}
	l, err := r.Layout()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "table %s: %d bytes (%s)\n", name, size, humanize.Bytes(uint64(size)))
	fmt.Fprintf(w, "footer at %d: format version %d, 64 bytes\n", l.FooterOffset, l.FormatVersion)

	fmt.Fprintln(w, "\nblocks (each followed by a 5-byte trailer: compression type, CRC-32C):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "block\tpadding\toffset\tstored\traw\tcompression\tratio\t last key\t")
	var stored, raw uint64
	row := func(what string, b sstable.BlockInfo, lastKey string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\t%s\t %s\t\n", what, b.Padding, b.Offset, b.Length, b.RawLength, b.Compression, ratio(b.RawLength, b.Length), lastKey)
	}
	for i, b := range l.Data {
		row(fmt.Sprintf("data %d", i), b, formatInternalKey(b.LastKey))
		stored += b.Length
		raw += b.RawLength
	}
	if l.Filter.Length > 0 {
		row("filter", l.Filter, "")
	}
	for i, b := range l.IndexPartitions {
		row(fmt.Sprintf("index part %d", i), b, "")
	}
	if l.IndexPartitions != nil {
		row("index top", l.Index, "")
	} else {
		row("index", l.Index, "")
	}
	if l.RangeDels.Length > 0 {
		row("range dels", l.RangeDels, "")
	}
	if l.RangeFilter.Length > 0 {
		row("range filter", l.RangeFilter, "")
	}
	row("properties", l.Properties, "")
	for i, b := range l.PagedFilter {
		row(fmt.Sprintf("paged filter %d", i), b, "")
	}
	fmt.Fprintf(tw, "footer\t0\t%d\t64\t64\t\t\t\t\n", l.FooterOffset)
	tw.Flush()
	fmt.Fprintf(w, "data: %s, %d bytes stored, %d raw, ratio %s\n", count(len(l.Data), "block"), stored, raw, ratio(raw, stored))
	if l.BlockAlign > 0 {
		fmt.Fprintf(w, "data blocks aligned to %d-byte pages: %d bytes of padding (%.1f%% of the data)\n", l.BlockAlign, l.Padding, 100*float64(l.Padding)/float64(max(1, stored)))
	} else {
		fmt.Fprintln(w, "data blocks not aligned to pages")
	}

	p := r.Properties()
	fmt.Fprintln(w, "\nproperties:")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(p.String(), "\n"), "\n") {
		fmt.Fprintf(w, "  %s", strings.TrimSuffix(line, "\n")+"\n")
	}

	fmt.Fprintln(w, "\nfilter:")
	describeFilter(w, r.Filter(), p)
	if rf := r.RangeFilter(); rf != nil {
		fmt.Fprintln(w, "\nrange filter:")
		describeRangeFilter(w, rf, p)
	}
	fmt.Fprintf(w, "\nkey range: %s .. %s\n", formatInternalKey(p.Smallest), formatInternalKey(p.Largest))

	if verbose {
		fmt.Fprintln(w, "\nentries:")
		it := r.NewIterator()
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			expires := ""
			if k.Kind().HasExpiry() {
				expiry, rest, ok := base.SplitExpiry(v)
				if !ok {
					fmt.Fprintf(w, "  %s -> value %x too short for an expiry\n", formatInternalKey(k), v)
					continue
				}
				expires, v = " (expires "+time.Unix(0, expiry).UTC().Format(time.RFC3339Nano)+")", rest
			}
			switch k.Kind().WithoutExpiry() {
			case base.KindDelete:
				fmt.Fprintf(w, "  %s\n", formatInternalKey(k))
			case base.KindSetBlob:
				h, ok := blob.DecodeHandle(v)
				if !ok {
					fmt.Fprintf(w, "  %s -> malformed handle %x\n", formatInternalKey(k), v)
					break
				}
				fmt.Fprintf(w, "  %s -> %s%s\n", formatInternalKey(k), h, expires)
			default:
				fmt.Fprintf(w, "  %s = %s%s\n", formatInternalKey(k), printable(string(v)), expires)
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}

// inspectBlob prints a blob file: its footer, and, checking every record,
// its values' count and bytes; with verbose every record's offset and
// value.
func inspectBlob(w *bufio.Writer, f *os.File, size int64, name string, verbose bool) error {
	fmt.Fprintf(w, "blob file %s: %d bytes (%s)\n", name, size, humanize.Bytes(uint64(size)))
	r, err := blob.Open(f, size, name)
	if err != nil {
		return err
	}
	p := r.Properties()
	fmt.Fprintf(w, "footer at %d: format version %d, %d bytes: %s stored in %d bytes\n", size-blob.FooterLen, p.Version, blob.FooterLen, count(int(p.Values), "value"), p.ValueBytes)
	if verbose {
		fmt.Fprintln(w, "\nrecords (offset: stored bytes, compression, value):")
	}
	var valueBytes uint64
	compressed := 0
	err = r.Scan(func(rec blob.Record) error {
		valueBytes += uint64(len(rec.Value))
		if rec.Compression != compress.None {
			compressed++
		}
		if verbose {
			fmt.Fprintf(w, "  %d: %d bytes, %s = %d bytes: %s\n", rec.Offset, rec.Length, rec.Compression, len(rec.Value), printable(string(rec.Value)))
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(w, "damaged: see the error")
		return err
	}
	fmt.Fprintf(w, "every record checked: %d bytes of records for %d bytes of values, %d of them compressed\n", size-blob.FooterLen, valueBytes, compressed)
	return nil
}

// inspectProbes is how many random hashes inspect asks a table's filter
// about to measure its false-positive rate: each is a key the table
// almost surely lacks (a table of n keys holds one with probability
// n/2^64), so every "maybe" is a false positive.
const inspectProbes = 100_000

// describeFilter prints a table's filter: its family, its size and
// parameters, and its false-positive rate — expected from its family's
// formula, and measured on inspectProbes random hashes (a fixed seed, so
// the output is the same each time).
func describeFilter(w io.Writer, fl sstable.Filter, p sstable.Properties) {
	if fl == nil {
		fmt.Fprintln(w, "  none: every lookup in the key range reads a data block")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  family\t%v\n", p.FilterFamily)
	switch f := fl.(type) {
	case *bloom.Blocked:
		fill := f.FillRatio()
		fmt.Fprintf(tw, "  size\t%d bits (%d blocks of 512), %d bytes\n", f.Bits(), f.Bits()/512, f.SizeBytes())
		fmt.Fprintf(tw, "  keys\t%d\n", f.Keys())
		fmt.Fprintf(tw, "  bits/key\t%.2f\n", f.BitsPerKey())
		fmt.Fprintf(tw, "  probes\t%d\n", f.Probes())
		fmt.Fprintf(tw, "  fill ratio\t%.4f\n", fill)
		fmt.Fprintf(tw, "  FPR estimated\t%.4f%% (fill ratio^probes)\n", 100*math.Pow(fill, float64(f.Probes())))
		fmt.Fprintf(tw, "  FPR expected\t%.4f%% (blocked-filter formula at these bits/key and probes)\n", 100*f.ExpectedFalsePositiveRate())
	case *fuse.Filter:
		fmt.Fprintf(tw, "  width\t%d-bit fingerprints\n", f.Bits())
		fmt.Fprintf(tw, "  slots\t%d (%.3f per key)\n", f.Slots(), float64(f.Slots())/float64(max(f.Keys(), 1)))
		keys := float64(max(f.Keys(), 1))
		fmt.Fprintf(tw, "  size\t%d bytes of slots, %d serialized (header and checksums)\n", f.SizeBytes(), p.FilterBytes)
		fmt.Fprintf(tw, "  keys\t%d\n", f.Keys())
		fmt.Fprintf(tw, "  bits/key\t%.2f serialized, %.2f of slots\n", 8*float64(p.FilterBytes)/keys, 8*float64(f.SizeBytes())/keys)
		fmt.Fprintf(tw, "  FPR expected\t%.4f%% (2^-%d)\n", 100*f.ExpectedFalsePositiveRate(), f.Bits())
	case *ribbon.Filter:
		keys := float64(max(f.Keys(), 1))
		fmt.Fprintf(tw, "  width\t%d-bit results\n", f.Bits())
		fmt.Fprintf(tw, "  slots\t%d (%.3f per key)\n", f.Slots(), float64(f.Slots())/keys)
		fmt.Fprintf(tw, "  size\t%d bytes of solution, %d serialized (header and checksums)\n", f.SizeBytes(), p.FilterBytes)
		fmt.Fprintf(tw, "  keys\t%d\n", f.Keys())
		fmt.Fprintf(tw, "  bits/key\t%.2f serialized, %.2f of solution\n", 8*float64(p.FilterBytes)/keys, 8*float64(f.SizeBytes())/keys)
		fmt.Fprintf(tw, "  FPR expected\t%.4f%% (2^-%d)\n", 100*f.ExpectedFalsePositiveRate(), f.Bits())
	default:
		fmt.Fprintf(tw, "  size\t%d bytes\n", fl.SizeBytes())
		fmt.Fprintf(tw, "  keys\t%d\n", fl.Keys())
		fmt.Fprintf(tw, "  bits/key\t%.2f\n", fl.BitsPerKey())
		fmt.Fprintf(tw, "  FPR expected\t%.4f%%\n", 100*fl.ExpectedFalsePositiveRate())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hits := 0
	for range inspectProbes {
		if fl.MayContainHash(rng.Uint64()) {
			hits++
		}
	}
	fmt.Fprintf(tw, "  FPR measured\t%.4f%% (%d of %s random hashes)\n", 100*float64(hits)/inspectProbes, hits, fmtCount(inspectProbes))
	if p.FilterPrefix != "" {
		fmt.Fprintf(tw, "  prefixes\tby extractor %q: the filter holds each key's prefix too\n", p.FilterPrefix)
	}
	tw.Flush()
}

// describeRangeFilter prints a table's range filter: its family, size,
// keys and bits per key, whether it is exact, and the design's bound on
// its false-positive rate for empty scans of a few widths.
func describeRangeFilter(w io.Writer, rf sstable.RangeFilter, p sstable.Properties) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  family\t%v\n", p.RangeFilterFamily)
	fmt.Fprintf(tw, "  size\t%d bytes serialized\n", rf.SizeBytes())
	fmt.Fprintf(tw, "  keys\t%d\n", rf.Keys())
	fmt.Fprintf(tw, "  bits/key\t%.2f\n", rf.BitsPerKey())
	if f, ok := rf.(*rangefilter.Filter); ok {
		exact := "no: hashed (Grafite)"
		if f.Exact() {
			exact = "yes: the keys' mapped values, unhashed"
		}
		fmt.Fprintf(tw, "  exact\t%s\n", exact)
		var bounds []string
		for _, width := range []uint64{2, 8, 32, 128} {
			bounds = append(bounds, fmt.Sprintf("%d keys %.4f%%", width, 100*f.FalsePositiveBound(width)))
		}
		fmt.Fprintf(tw, "  FPR bound\t%s (empty scans of that many consecutive keys)\n", strings.Join(bounds, ", "))
	}
	tw.Flush()
}

// formatInternalKey renders an internal key as "key#seq,KIND", the key as
// printable renders it.
func formatInternalKey(k base.InternalKey) string {
	return fmt.Sprintf("%s#%d,%s", printable(string(k.UserKey)), k.SeqNum(), k.Kind())
}

// inspectWAL prints a WAL's records and writes. A file none of whose
// records is an intact batch gets its error alone.
func inspectWAL(out *bufio.Writer, f *os.File, size int64, name string, verbose bool) error {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	fmt.Fprintf(w, "WAL %s: %d bytes (%s), %s of 32 KiB\n", name, size, humanize.Bytes(uint64(size)), count(int((size+record.BlockSize-1)/record.BlockSize), "block"))
	r := record.NewReader(f, name)
	var records, entries, sets, deletes, merges int
	var minSeq, maxSeq uint64
	var bad error
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			bad = err
			break
		}
		first, count, err := batchrepr.Header(rec)
		if err == nil && verbose {
			fmt.Fprintf(w, "  record %d at %d: batch of %d, seqnums from %d\n", records, r.Offset(), count, first)
		}
		n := 0
		if err == nil {
			err = batchrepr.Decode(rec, func(e batchrepr.Entry) {
				n++
				switch e.Kind {
				case base.KindSet, base.KindSetTTL:
					sets++
				case base.KindMerge:
					merges++
				default:
					deletes++
				}
				if verbose {
					switch e.Kind {
					case base.KindDelete:
						fmt.Fprintf(w, "    %d DEL %s\n", e.Seq, printable(string(e.Key)))
					case base.KindRangeDelete:
						fmt.Fprintf(w, "    %d RANGEDEL [%s, %s)\n", e.Seq, printable(string(e.Key)), printable(string(e.Value)))
					case base.KindMerge:
						fmt.Fprintf(w, "    %d MERGE %s = %s\n", e.Seq, printable(string(e.Key)), printable(string(e.Value)))
					case base.KindSetTTL: // Decode checked the expiry's length
						expiry, v, _ := base.SplitExpiry(e.Value)
						fmt.Fprintf(w, "    %d SETTTL %s = %s (expires %s)\n", e.Seq, printable(string(e.Key)), printable(string(v)), time.Unix(0, expiry).UTC().Format(time.RFC3339Nano))
					default:
						fmt.Fprintf(w, "    %d SET %s = %s\n", e.Seq, printable(string(e.Key)), printable(string(e.Value)))
					}
				}
			})
		}
		seq := uint64(first)
		if err != nil {
			bad = base.Corruptf(name, r.Offset(), "record %d is not a batch: %v", records, err)
			break
		}
		if n > 0 {
			if records == 0 || seq < minSeq {
				minSeq = seq
			}
			maxSeq = max(maxSeq, seq+uint64(n)-1)
		}
		records++
		entries += n
	}
	fmt.Fprintf(w, "records: %d (each a batch, committed atomically)\n", records)
	fmt.Fprintf(w, "writes: %d (%s, %s", entries, count(sets, "set"), count(deletes, "delete"))
	if merges > 0 {
		fmt.Fprintf(w, ", %s", count(merges, "merge"))
	}
	fmt.Fprint(w, ")")
	if entries > 0 {
		fmt.Fprintf(w, ", seqnums %d-%d", minSeq, maxSeq)
	}
	fmt.Fprintln(w)
	if bad == nil && r.NotALog() {
		bad = notALog(name)
	}
	if bad != nil && records == 0 {
		return bad
	}
	defer func() { w.Flush(); out.Write(buf.Bytes()) }()
	if bad != nil {
		fmt.Fprintln(w, "damaged: see the error; recovery of this log would fail here unless it is the torn tail of the newest WAL")
		return bad
	}
	if off, torn := r.TornTail(); torn {
		fmt.Fprintf(w, "torn tail: the intact log ends at %d; the %d bytes after it (a write cut short by a crash, never acknowledged) are dropped by recovery\n", off, size-off)
	} else {
		fmt.Fprintln(w, "torn tail: none")
	}
	return nil
}

// inspectManifest prints a manifest's edits and the state they add up to.
// A file none of whose edits is intact gets its error alone: no summary of
// a state it does not hold.
func inspectManifest(out *bufio.Writer, f *os.File, size int64, name string, verbose bool) error {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	fmt.Fprintf(w, "manifest %s: %d bytes, a log of version edits (the first a snapshot)\n", name, size)
	r := record.NewReader(f, name)
	state := manifest.State{}
	edits := 0
	var bad error
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			bad = err
			break
		}
		e, err := manifest.Decode(rec)
		if err != nil {
			bad = base.Corruptf(name, r.Offset(), "edit %d: %v", edits, err)
			break
		}
		fmt.Fprintf(w, "edit %d at %d:%s\n", edits, r.Offset(), editSummary(&e))
		if verbose {
			for _, d := range e.DeletedFiles {
				fmt.Fprintf(w, "  - L%d %s\n", d.Level, manifest.MakeFilename(manifest.FileTypeTable, d.FileNum))
			}
			for _, b := range e.NewBlobFiles {
				fmt.Fprintf(w, "  + %s  %d bytes  %s of %d bytes\n", manifest.MakeFilename(manifest.FileTypeBlob, b.FileNum), b.Size, count(int(b.Values), "value"), b.ValueBytes)
			}
			for _, nf := range e.NewFiles {
				m := nf.Meta
				fmt.Fprintf(w, "  + L%d %s  %s .. %s  seqnums %d-%d  %d bytes  %s%s\n", nf.Level,
					manifest.MakeFilename(manifest.FileTypeTable, m.FileNum), formatInternalKey(m.Smallest),
					formatInternalKey(m.Largest), m.SmallestSeqNum, m.LargestSeqNum, m.Size, tableFilter(m)+tableCompression(m), blobRefs(m))
			}
		}
		next, err := state.Apply(&e)
		if err != nil {
			bad = base.Corruptf(name, r.Offset(), "edit %d does not apply: %v", edits, err)
			break
		}
		state = next
		edits++
	}
	if bad == nil && r.NotALog() {
		bad = notALog(name)
	}
	if off, torn := r.TornTail(); torn && bad == nil {
		fmt.Fprintf(w, "torn tail at %d: an edit cut short by a crash, never acknowledged; recovery ignores it\n", off)
	}
	if bad == nil && edits == 0 {
		// A manifest's first edit, the snapshot, is synced before CURRENT
		// names it: manifest.Recover refuses one without it.
		bad = base.Corruptf(name, 0, "no intact edit: a manifest begins with a snapshot edit, made durable before CURRENT may name it")
	}
	if edits == 0 {
		return bad
	}
	defer func() { w.Flush(); out.Write(buf.Bytes()) }()
	fmt.Fprintf(w, "\nafter %s: log %s, next file number %d, last seqnum %d\n", count(edits, "edit"),
		manifest.MakeFilename(manifest.FileTypeWAL, state.LogNumber), state.NextFileNumber, state.LastSeqNum)
	if v := state.Version; v != nil {
		for level, files := range v.Levels {
			if len(files) > 0 {
				fmt.Fprintf(w, "  L%d: %s, %d bytes\n", level, count(len(files), "table"), v.LevelSize(level))
			}
		}
		for _, b := range v.Blobs {
			fmt.Fprintf(w, "  %s: %d bytes, %d of %d value bytes live (%.0f%% dead)\n", manifest.MakeFilename(manifest.FileTypeBlob, b.FileNum),
				b.Size, b.LiveBytes, b.ValueBytes, 100*b.DeadShare())
		}
	}
	return bad
}

// blobRefs renders a table's blob references, after two spaces; empty for
// none.
func blobRefs(m *manifest.FileMetadata) string {
	var b strings.Builder
	for i, r := range m.BlobRefs {
		sep := ", "
		if i == 0 {
			sep = "  values in "
		}
		fmt.Fprintf(&b, "%s%s (%d bytes)", sep, manifest.MakeFilename(manifest.FileTypeBlob, r.FileNum), r.Bytes)
	}
	return b.String()
}

// notALog is the error for a file named as a WAL or manifest whose bytes
// show no sign of being a log (see record.Reader.NotALog). The Reader reads it
// as a torn tail at offset 0, which recovery would drop from the newest WAL;
// out of recovery, with no crash to explain it, it is corruption.
func notALog(name string) error {
	return base.Corruptf(name, 0, "not a log: no chunk is intact, and the bytes are neither zeros nor a first record cut short by the end of the file")
}

// editSummary renders an edit's counters and table counts, each after a
// space.
func editSummary(e *manifest.VersionEdit) string {
	var b strings.Builder
	if e.LogNumber != 0 {
		fmt.Fprintf(&b, " log %s,", manifest.MakeFilename(manifest.FileTypeWAL, e.LogNumber))
	}
	if e.NextFileNumber != 0 {
		fmt.Fprintf(&b, " next file %d,", e.NextFileNumber)
	}
	if e.LastSeqNum != 0 {
		fmt.Fprintf(&b, " last seqnum %d,", e.LastSeqNum)
	}
	fmt.Fprintf(&b, " -%s, +%s", count(len(e.DeletedFiles), "table"), count(len(e.NewFiles), "table"))
	if len(e.NewBlobFiles) > 0 {
		fmt.Fprintf(&b, ", +%s", count(len(e.NewBlobFiles), "blob file"))
	}
	return b.String()
}

func inspectCurrent(w *bufio.Writer, f *os.File, name string) error {
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return err
	}
	line, ok := bytes.CutSuffix(b, []byte("\n"))
	if t, _, valid := manifest.ParseFilename(string(line)); !ok || !valid || t != manifest.FileTypeManifest {
		what := fmt.Sprintf("%d bytes", len(b))
		if len(b) <= 40 && printable(string(b)) == string(b) {
			what = strconv.Quote(string(b))
		} else if len(b) == 256 {
			what = "256 bytes and more"
		}
		return base.Corruptf(name, 0, "holds %s, not the name of a manifest and a newline", what)
	}
	fmt.Fprintf(w, "%s: names the live manifest, %s\n", name, line)
	return nil
}

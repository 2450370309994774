package main

// tree: the shape of the LSM tree, read from its manifest.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

// runTree draws the levels and their tables from the manifest. It only
// reads: it neither opens the DB (which would replay and flush its WALs) nor
// takes its lock, so it works beside a process that has the DB open.
func runTree(args []string, stdout io.Writer) error {
	f := newDBFlags("tree", "")
	f.addHex("the tables' key ranges are printed in hexadecimal")
	ops, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := wantOperands(ops); err != nil {
		return err
	}
	rec, err := manifest.Recover(vfs.Default, f.dir)
	if errors.Is(err, manifest.ErrNoManifest) {
		return fmt.Errorf("%s holds no bloomkv database", f.dir)
	}
	if err != nil {
		return trimmedError{err}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	fmt.Fprintf(w, "%s, next file number %d, last seqnum %d\n",
		manifest.MakeFilename(manifest.FileTypeManifest, rec.ManifestFileNum), rec.NextFileNumber, rec.LastSeqNum)

	// The WALs the manifest still needs hold the memtable's writes: they
	// are replayed into L0 by the next Open.
	names, err := os.ReadDir(f.dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "memtable (in the WALs, replayed by Open)")
	var wals []string
	for _, e := range names {
		if t, num, ok := manifest.ParseFilename(e.Name()); ok && t == manifest.FileTypeWAL && num >= rec.LogNumber {
			info, err := e.Info()
			if err != nil {
				return err
			}
			wals = append(wals, fmt.Sprintf("%s  %s", e.Name(), humanize.Bytes(uint64(info.Size()))))
		}
	}
	slices.Sort(wals)
	drawBranches(w, "  ", wals)

	v := rec.Version
	if v == nil {
		v = &manifest.Version{}
	}
	var tables int
	var bytes uint64
	for level, files := range v.Levels {
		if len(files) == 0 {
			continue
		}
		bits := manifest.FilterBitsPerKey(files)
		order := "sorted, non-overlapping: a lookup reads at most one"
		if level == 0 {
			order = "may overlap: a lookup tries each in range, newest first"
		}
		fmt.Fprintf(w, "L%d  %s, %s, %s  (%s)\n", level, count(len(files), "table"), humanize.Bytes(v.LevelSize(level)), levelFilters(files, bits), order)
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, m := range files {
			fmt.Fprintf(tw, "%s\t%s\t%s .. %s\tseqnums %d-%d\t%s\n", manifest.MakeFilename(manifest.FileTypeTable, m.FileNum),
				humanize.Bytes(m.Size), f.format(m.Smallest.UserKey), f.format(m.Largest.UserKey), m.SmallestSeqNum, m.LargestSeqNum, tableFilter(m)+tableCompression(m)+tableIngested(m))
		}
		tw.Flush()
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		drawBranches(w, "  ", lines)
		tables += len(files)
		bytes += v.LevelSize(level)
	}
	if len(v.Blobs) > 0 {
		var size, live, values uint64
		var lines []string
		for _, b := range v.Blobs {
			size += b.Size
			live += b.LiveBytes
			values += b.ValueBytes
			lines = append(lines, fmt.Sprintf("%s  %s  %.0f%% dead", manifest.MakeFilename(manifest.FileTypeBlob, b.FileNum), humanize.Bytes(b.Size), 100*b.DeadShare()))
		}
		fmt.Fprintf(w, "blob files  %s, %s, %.0f%% of their values dead  (values the tables hold handles to)\n",
			count(len(v.Blobs), "file"), humanize.Bytes(size), 100*float64(values-live)/float64(max(values, 1)))
		drawBranches(w, "  ", lines)
		bytes += size
	}
	fmt.Fprintf(w, "total: %s, %s\n", count(tables, "table")+blobCount(len(v.Blobs)), humanize.Bytes(bytes))
	return nil
}

// blobCount is ", N blob files" for n > 0, nothing for none.
func blobCount(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + count(n, "blob file")
}

// tableFilter renders a table's filter from its manifest record: "bloom
// 10.2 bits/key", "fuse 8-bit 9.3 bits/key", "ribbon 8-bit 8.4 bits/key"
// or "no filter".
func tableFilter(m *manifest.FileMetadata) string {
	family, param := m.Filter()
	switch sstable.FilterFamily(family) {
	case sstable.NoFilter:
		return "no filter"
	case sstable.BloomFamily:
		return fmt.Sprintf("bloom %.1f bits/key", m.FilterBitsPerKey)
	case sstable.FuseFamily, sstable.RibbonFamily:
		return fmt.Sprintf("%v %g-bit %.1f bits/key", sstable.FilterFamily(family), param, m.FilterBitsPerKey)
	}
	return fmt.Sprintf("%v %g, %.1f bits/key", sstable.FilterFamily(family), param, m.FilterBitsPerKey)
}

// tableCompression renders a table's block compression from its manifest
// record, to follow its filter: ", snappy", ", uncompressed", or nothing for a
// record of before compressions were recorded.
func tableCompression(m *manifest.FileMetadata) string {
	if m.Compression == 0 {
		return ""
	}
	if c := sstable.Compression(m.Compression); c != sstable.NoCompression {
		return ", " + c.String()
	}
	return ", uncompressed"
}

// tableIngested marks a table DB.Ingest added: ", ingested", or nothing.
func tableIngested(m *manifest.FileMetadata) string {
	if m.GlobalSeqNum != 0 {
		return ", ingested"
	}
	return ""
}

// filterKind is a table's filter without its size: "bloom", "fuse 8-bit",
// "ribbon 8-bit", "none".
func filterKind(m *manifest.FileMetadata) string {
	family, param := m.Filter()
	if f := sstable.FilterFamily(family); f == sstable.FuseFamily || f == sstable.RibbonFamily {
		return fmt.Sprintf("%v %g-bit", f, param)
	}
	return sstable.FilterFamily(family).String()
}

// levelFilters summarizes the filters of a level's tables, whose mean bits
// per key is bits: "filter bloom 10.2 bits/key", or for a level of mixed
// families "filters 3 fuse 8-bit + 1 bloom, 9.6 bits/key".
func levelFilters(files []*manifest.FileMetadata, bits float64) string {
	kinds, mixed := levelKinds(files)
	switch {
	case kinds == "none":
		return "no filters"
	case mixed:
		return fmt.Sprintf("filters %s, %.1f bits/key", kinds, bits)
	}
	return fmt.Sprintf("filter %s %.1f bits/key", kinds, bits)
}

// levelKinds names the filters of a level's tables: "bloom", "fuse
// 8-bit", "none", or for mixed ones "3 fuse 8-bit + 1 bloom" (mixed true).
func levelKinds(files []*manifest.FileMetadata) (kinds string, mixed bool) {
	var names []string
	counts := map[string]int{}
	for _, m := range files {
		k := filterKind(m)
		if counts[k] == 0 {
			names = append(names, k)
		}
		counts[k]++
	}
	if len(names) == 1 {
		return names[0], false
	}
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, " + "), true
}

// drawBranches writes lines as the branches of a tree.
func drawBranches(w io.Writer, indent string, lines []string) {
	if len(lines) == 0 {
		fmt.Fprintf(w, "%s└── (none)\n", indent)
	}
	for i, l := range lines {
		branch := "├── "
		if i == len(lines)-1 {
			branch = "└── "
		}
		fmt.Fprintf(w, "%s%s%s\n", indent, branch, l)
	}
}

// count renders n things, "1 table" or "2 tables".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

package main

// version: which build of bloomkv this is, and the on-disk formats it
// reads and writes.

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/rangefilter"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/sstable"
)

// modulePath is the module whose version the tool reports.
const modulePath = "github.com/bloomkv/bloomkv"

// runVersion prints the bloomkv module's version as the build recorded it
// (a tag such as v0.1.0 for `go install …@v0.1.0`, "(devel)" for a build
// from a clone, with the commit when the build stamped one), the Go
// release that built the tool, and each on-disk format with the versions
// this build reads and writes, taken from the packages' own constants.
func runVersion(args []string, stdout io.Writer) error {
	fs := newFlagSet("version", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("the binary carries no build information")
	}
	fmt.Fprintf(stdout, "bloomkv %s\n", buildVersion(info))
	fmt.Fprintf(stdout, "built with %s\n\n", info.GoVersion)
	writeFormats(stdout)
	return nil
}

// buildVersion returns the version of modulePath in info: the main
// module's when the tool was built from it (with the commit and a "+dirty"
// mark when the build stamped them), else the dependency's.
func buildVersion(info *debug.BuildInfo) string {
	if info.Main.Path != modulePath {
		for _, d := range info.Deps {
			if d.Path == modulePath {
				return d.Version
			}
		}
		return "(unknown)"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += ", commit " + rev
		if modified == "true" {
			v += "+dirty"
		}
	}
	return v
}

// writeFormats prints the on-disk formats and the versions of each that
// this build reads and writes.
func writeFormats(w io.Writer) {
	versions := func(newest int) string {
		if newest == 1 {
			return "version 1"
		}
		return fmt.Sprintf("versions 1–%d", newest)
	}
	fmt.Fprintln(w, "on-disk formats (read and written):")
	for _, f := range []struct{ file, format string }{
		{"NNNNNN.sst", "table, format " + versions(sstable.FormatVersion) + " (each table written in the oldest that holds it)"},
		{"NNNNNN.blob", "blob file, format " + versions(blob.FormatVersion) + " (each blob file written in the oldest that holds it)"},
		{"NNNNNN.log", "WAL: LevelDB's log format, one batch per record (unversioned)"},
		{"MANIFEST-NNNNNN", fmt.Sprintf("version edits in the WAL's log format, field tags 1–%d", manifest.LastTag)},
		{"CURRENT", "the live manifest's name and a newline"},
		{"filter block", "bloom format " + versions(bloom.FormatVersion) + ", fuse " + versions(fuse.FormatVersion) + ", ribbon " + versions(ribbon.FormatVersion)},
		{"range filter block", "rangefilter format " + versions(rangefilter.FormatVersion)},
	} {
		fmt.Fprintf(w, "  %-19s %s\n", f.file, f.format)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/sstable"
)

// writeTable writes a table of keys, each set to its upper case, at path.
func writeTable(t *testing.T, path string, keys ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := sstable.NewWriter(f, sstable.WriterOptions{Filter: sstable.Bloom(10)})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := w.Add(sstable.MakeInternalKey([]byte(k), 0, sstable.KindSet), []byte(strings.ToUpper(k))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestIngestCommand ingests two tables into a new database, then one over
// a key written by put, and checks what scan and tree show; the source
// files stay; a bad table or no FILE is refused, changing nothing.
func TestIngestCommand(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "db")
	one, two, three := filepath.Join(root, "1.sst"), filepath.Join(root, "2.sst"), filepath.Join(root, "3.sst")
	writeTable(t, one, "a", "b")
	writeTable(t, two, "x", "y")
	writeTable(t, three, "b", "c")
	size := func(p string) int64 {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	bad := filepath.Join(root, "bad.sst")
	if err := os.WriteFile(bad, []byte("not a table"), 0o644); err != nil {
		t.Fatal(err)
	}
	runScript(t, dir, []step{
		{args: []string{"ingest", "-db", "DB", one, two}, stdout: "ingested 2 tables, " + strconv.FormatInt(size(one)+size(two), 10) + " bytes\n"},
		{args: []string{"put", "-db", "DB", "b", "put"}},
		{args: []string{"ingest", "-db", "DB", three}, stdout: "ingested 1 tables, " + strconv.FormatInt(size(three), 10) + " bytes\n"},
		{args: []string{"scan", "-db", "DB"}, stdout: "a\tA\nb\tB\nc\tC\nx\tX\ny\tY\n"},
		{args: []string{"ingest", "-db", "DB"}, code: exitUsage,
			stderr: "bloomkv ingest: want at least one FILE after the flags: a table written with package sstable\n"},
	})
	var stdout, stderr strings.Builder
	if code := run([]string{"ingest", "-db", dir, bad}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), bad) ||
		!strings.Contains(stderr.String(), "corruption") {
		t.Errorf("ingest of a bad table: exit %d, stderr %q; want exit %d and a corruption naming the file", code, stderr.String(), exitFailure)
	}
	stdout.Reset()
	if code := run([]string{"tree", "-db", dir}, &stdout, &stderr); code != 0 || strings.Count(stdout.String(), ", ingested") != 3 {
		t.Errorf("tree: exit %d, want 3 tables marked ingested in:\n%s", code, stdout.String())
	}
	for _, p := range []string{one, two, three} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("source %s: %v", p, err)
		}
	}
}

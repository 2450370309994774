package bloomkv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// mappedTables returns the files of dir that the process has mapped, from
// /proc/self/maps.
func mappedTables(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), dir+"/"); i >= 0 {
			names = append(names, filepath.Base(strings.TrimSpace(sc.Text()[i:])))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestMmapTables reads DBs of several tables under each MmapTables, of
// values kept in the tables and of values in blob files, against a map of
// what was written, and checks which files are mapped against the option's
// rule: /proc/self/maps lists the tables the Gets read exactly when the
// rule maps them, never a blob file or another file, and no file once the
// DB is closed.
func TestMmapTables(t *testing.T) {
	for _, c := range []struct {
		name        string
		mapping     TableMapping
		memoryLimit int64
		valueSize   int // at DefaultValueSeparationMinSize, separated
		wantMapped  bool
	}{
		{"all/inline", MapAllTables, 0, 100, true},
		{"all/separated", MapAllTables, 0, 1024, true},
		{"none/separated", MapNoTables, 0, 1024, false},
		{"default/separated", MapHandleTables, 0, 1024, true},
		{"default/inline", MapHandleTables, 0, 100, false},
		{"default/separated/MemoryLimit", MapHandleTables, 8 << 20, 1024, false},
		{"all/separated/MemoryLimit", MapAllTables, 8 << 20, 1024, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := &Options{FS: vfs.Default, MemtableSize: 64 << 10, MmapTables: c.mapping, MemoryLimit: c.memoryLimit}
			if c.memoryLimit == 0 {
				opts.BlockCacheSize = -1
			}
			d, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			model := map[string]string{}
			for i := range 3000 {
				k := fmt.Sprintf("key%05d", i*7919%3000)
				v := fmt.Sprintf("value%d-", i)
				v += strings.Repeat("x", c.valueSize-len(v))
				if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
					t.Fatal(err)
				}
				model[k] = v
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			for k, v := range model {
				got, err := d.Get([]byte(k))
				if err != nil || string(got) != v {
					t.Fatalf("Get(%s) = %.20q, %v; want %.20q", k, got, err, v)
				}
			}
			if _, err := d.Get([]byte("key99999")); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get of an absent key: %v", err)
			}
			mapped := mappedTables(t, dir)
			if c.wantMapped == (len(mapped) == 0) {
				t.Errorf("mapped files of the DB: %v; want tables mapped: %v", mapped, c.wantMapped)
			}
			for _, name := range mapped {
				if !strings.HasSuffix(name, ".sst") {
					t.Errorf("%s mapped: only tables are", name)
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if mapped := mappedTables(t, dir); len(mapped) > 0 {
				t.Errorf("after Close, still mapped: %v", mapped)
			}
		})
	}
}

// TestMmapTablesFault truncates a table beneath a DB that reads it through a
// mapping: a Get of a key in its lost pages returns an error wrapping
// vfs.ErrMappedFault — a read that failed, not ErrCorruption, since the
// mapping cannot tell a device's error from damage — and the process and
// the DB go on.
func TestMmapTablesFault(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, &Options{FS: vfs.Default, BlockCacheSize: -1, MmapTables: MapAllTables})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 5000 {
		if err := d.Put(fmt.Appendf(nil, "key%05d", i), fmt.Appendf(nil, "value%05d", i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get([]byte("key04999")); err != nil { // maps the table
		t.Fatal(err)
	}
	tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(tables) != 1 {
		t.Fatalf("tables %v, %v; want one", tables, err)
	}
	if err := os.Truncate(tables[0], 0); err != nil {
		t.Fatal(err)
	}
	_, err = d.Get([]byte("key02500"))
	if !errors.Is(err, vfs.ErrMappedFault) || errors.Is(err, ErrCorruption) {
		t.Fatalf("Get of a key in a truncated mapped table: %v; want vfs.ErrMappedFault, not ErrCorruption", err)
	}
	if _, err := d.Get([]byte("absent")); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an absent key, which its filter answers: %v", err)
	}
}

package bloomkv

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// dirContents returns every file below dir, by path relative to dir, with
// its contents: the oracle that "nothing was written or deleted" is checked
// against, before and after.
func dirContents(t *testing.T, fs vfs.FS, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(rel string)
	walk = func(rel string) {
		names, err := fs.List(fs.PathJoin(dir, rel))
		if err != nil {
			t.Fatalf("List %s: %v", rel, err)
		}
		for _, name := range names {
			p := fs.PathJoin(rel, name)
			info, err := fs.Stat(fs.PathJoin(dir, p))
			if err != nil {
				t.Fatalf("Stat %s: %v", p, err)
			}
			if info.IsDir() {
				out[p+"/"] = ""
				walk(p)
				continue
			}
			f, err := fs.Open(fs.PathJoin(dir, p))
			if err != nil {
				t.Fatalf("Open %s: %v", p, err)
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				t.Fatalf("read %s: %v", p, err)
			}
			out[p] = string(b)
		}
	}
	walk("")
	return out
}

// diffContents describes how two dirContents differ, or returns "".
func diffContents(before, after map[string]string) string {
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		a, ok := after[name]
		switch {
		case !ok:
			diffs = append(diffs, name+" was deleted")
		case a != before[name]:
			diffs = append(diffs, fmt.Sprintf("%s changed (%d bytes, now %d)", name, len(before[name]), len(a)))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[name]; !ok {
			diffs = append(diffs, name+" was created")
		}
	}
	return strings.Join(diffs, "; ")
}

// writeFile creates name in fs holding contents.
func writeFile(t *testing.T, fs vfs.FS, name, contents string) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(contents)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// makeDB creates a DB in dir on fs holding keys k0…k(n-1), some flushed to
// tables and the rest only in the WAL, and closes it.
func makeDB(t *testing.T, fs vfs.FS, dir string, n int) kvModel {
	t.Helper()
	d, err := Open(dir, &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	m := kvModel{}
	for i := range n {
		k, v := fmt.Sprintf("k%04d", i), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v), nil); err != nil {
			t.Fatal(err)
		}
		m[k] = v
		if i == n/2 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpenForeignDirectory checks that Open refuses, and leaves untouched,
// every directory without CURRENT it may not create a DB in: a DB whose
// CURRENT is lost (each kind of DB file alone, and all of them), and a
// directory of other files; and that it creates a DB in a missing, an empty
// or a lost+found-only directory, and over what an interrupted creation
// leaves.
func TestOpenForeignDirectory(t *testing.T) {
	// A real DB, whose CURRENT is then removed: its files are what a copy
	// without CURRENT, or a deleted CURRENT, leaves.
	src := vfs.NewMem()
	makeDB(t, src, "db", 200)
	if err := src.Remove("db/CURRENT"); err != nil {
		t.Fatal(err)
	}
	lost := dirContents(t, src, "db")
	var sst, log, man string
	for name := range lost {
		switch typ, _, _ := manifest.ParseFilename(name); typ {
		case manifest.FileTypeTable:
			sst = name
		case manifest.FileTypeWAL:
			log = name
		case manifest.FileTypeManifest:
			man = name
		}
	}
	if sst == "" || log == "" || man == "" {
		t.Fatalf("the DB lacks a table, a WAL or a manifest: %v", slices.Sorted(maps.Keys(lost)))
	}
	manifestWithTables := lost[man]

	for _, tc := range []struct {
		name  string
		files map[string]string
		want  error // nil: Open creates a DB
	}{
		{"missing", nil, nil},
		{"empty", map[string]string{}, nil},
		{"lost+found only", map[string]string{"lost+found/": ""}, nil},
		{"LOCK only", map[string]string{"LOCK": ""}, nil},
		{"a lost CURRENT", lost, ErrCorruption},
		{"a table alone", map[string]string{sst: lost[sst]}, ErrCorruption},
		{"a WAL alone", map[string]string{log: lost[log]}, ErrCorruption},
		{"an empty WAL", map[string]string{"000007.log": ""}, ErrCorruption},
		{"a manifest that records tables", map[string]string{"MANIFEST-000009": manifestWithTables}, ErrCorruption},
		{"a manifest of foreign bytes", map[string]string{"MANIFEST-000002": "not a manifest at all, but someone's notes"}, ErrCorruption},
		{"a temporary file of foreign bytes", map[string]string{"000003.tmp": "someone's scratch file"}, ErrCorruption},
		{"other files", map[string]string{"notes.txt": "mine", "photos/": "", "photos/a.jpg": "jpeg"}, iofs.ErrExist},
		{"other files and a table", map[string]string{"notes.txt": "mine", sst: lost[sst]}, ErrCorruption},
		// What a crash in the middle of creating a DB leaves: a manifest
		// with no table, whole or cut to zeros, and CURRENT's temporary
		// file, whole or cut short.
		{"an interrupted creation", map[string]string{"LOCK": "", "MANIFEST-000002": emptyManifest(t), "000002.tmp": "MANIFEST-000002\n"}, nil},
		{"an interrupted creation, cut short", map[string]string{"MANIFEST-000002": "", "000002.tmp": "MANIF"}, nil},
		{"an interrupted creation, zeros", map[string]string{"MANIFEST-000002": emptyManifest(t) + strings.Repeat("\x00", 100)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, osFS := range []bool{false, true} {
				fs, dir := vfs.FS(vfs.NewMem()), "db"
				if osFS {
					fs, dir = vfs.Default, t.TempDir()+"/db"
				}
				if tc.files != nil {
					if err := fs.MkdirAll(dir); err != nil {
						t.Fatal(err)
					}
				}
				for _, name := range slices.Sorted(maps.Keys(tc.files)) { // a directory before its files
					contents := tc.files[name]
					if strings.HasSuffix(name, "/") {
						if err := fs.MkdirAll(fs.PathJoin(dir, name)); err != nil {
							t.Fatal(err)
						}
						continue
					}
					writeFile(t, fs, fs.PathJoin(dir, name), contents)
				}
				var before map[string]string
				if tc.files != nil {
					before = dirContents(t, fs, dir)
				}
				d, err := Open(dir, &Options{FS: fs})
				if tc.want == nil {
					if err != nil {
						t.Fatalf("os %v: Open: %v", osFS, err)
					}
					if err := d.Put([]byte("k"), []byte("v"), nil); err != nil {
						t.Fatal(err)
					}
					d.Close()
					d, err = Open(dir, &Options{FS: fs})
					if err != nil {
						t.Fatalf("os %v: reopen: %v", osFS, err)
					}
					if err := checkGet(d, []byte("k"), kvModel{"k": "v"}); err != nil {
						t.Error(err)
					}
					d.Close()
					return
				}
				if err == nil {
					d.Close()
					t.Fatalf("os %v: Open succeeded; want an error wrapping %v", osFS, tc.want)
				}
				if !errors.Is(err, tc.want) {
					t.Errorf("os %v: Open: %v; want an error wrapping %v", osFS, err, tc.want)
				}
				if tc.files == nil {
					return
				}
				if diff := diffContents(before, dirContents(t, fs, dir)); diff != "" {
					t.Errorf("os %v: Open changed the directory it refused: %s", osFS, diff)
				}
				// The names it found are in the error.
				for name := range tc.files {
					if _, _, ok := manifest.ParseFilename(name); ok && name != "LOCK" && !strings.Contains(err.Error(), name) && len(tc.files) <= 5 {
						t.Errorf("os %v: the error does not name %s: %v", osFS, name, err)
					}
				}
			}
		})
	}
}

// emptyManifest returns the bytes of the manifest a new DB starts with: one
// snapshot edit recording no table.
func emptyManifest(t *testing.T) string {
	t.Helper()
	fs := vfs.NewMem()
	d, err := Open("db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for name, contents := range dirContents(t, fs, "db") {
		if typ, _, _ := manifest.ParseFilename(name); typ == manifest.FileTypeManifest {
			return contents
		}
	}
	t.Fatal("a new DB has no manifest")
	return ""
}

// TestOpenExistenceOptions checks ErrorIfNotExists, ErrorIfExists and
// ReadOnly against a missing directory and an existing DB.
func TestOpenExistenceOptions(t *testing.T) {
	fs := vfs.NewMem()
	for _, opts := range []Options{{ErrorIfNotExists: true}, {ReadOnly: true}} {
		opts.FS = fs
		_, err := Open("missing", &opts)
		if !errors.Is(err, ErrDBDoesNotExist) || !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("Open of a missing directory with %+v: %v; want ErrDBDoesNotExist and fs.ErrNotExist", opts, err)
		}
		if _, err := fs.Stat("missing"); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("Open with %+v created the directory", opts)
		}
	}
	makeDB(t, fs, "db", 10)
	before := dirContents(t, fs, "db")
	_, err := Open("db", &Options{FS: fs, ErrorIfExists: true})
	if !errors.Is(err, ErrDBAlreadyExists) || !errors.Is(err, iofs.ErrExist) {
		t.Errorf("Open of a DB with ErrorIfExists: %v; want ErrDBAlreadyExists and fs.ErrExist", err)
	}
	if diff := diffContents(before, dirContents(t, fs, "db")); diff != "" {
		t.Errorf("the refused Open changed the DB: %s", diff)
	}
	d, err := Open("db", &Options{FS: fs, ErrorIfNotExists: true})
	if err != nil {
		t.Fatalf("Open of a DB with ErrorIfNotExists: %v", err)
	}
	d.Close()
	d, err = Open("new", &Options{FS: fs, ErrorIfExists: true})
	if err != nil {
		t.Fatalf("Open of a missing directory with ErrorIfExists: %v", err)
	}
	d.Close()
}

// TestIsDBFileName checks IsDBFileName against the names bloomkv writes
// (manifest.MakeFilename, the oracle) and near misses it must not claim.
func TestIsDBFileName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"CURRENT", true},
		{"LOCK", true},
		{"MANIFEST-000001", true},
		{"000007.log", true},
		{"000123.sst", true},
		{"1234567.sst", true},
		{"000009.tmp", true},
		{"000000.sst", false},  // file number 0 is never used
		{"0000007.log", false}, // not canonical: a leading zero past six digits
		{"00007.log", false},   // five digits
		{"000007.LOG", false},  // case matters
		{"MANIFEST-1", false},  // too short
		{"current", false},     // case matters
		{"000007.sst.bak", false},
		{"OPTIONS-000005", false},
		{"", false},
	} {
		if got := IsDBFileName(tc.name); got != tc.want {
			t.Errorf("IsDBFileName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, typ := range []manifest.FileType{manifest.FileTypeWAL, manifest.FileTypeTable, manifest.FileTypeManifest, manifest.FileTypeTemp} {
		for _, num := range []uint64{1, 999_999, 1_000_000, 1 << 40} {
			if name := manifest.MakeFilename(typ, num); !IsDBFileName(name) {
				t.Errorf("IsDBFileName(%q) = false for a name bloomkv writes", name)
			}
		}
	}
}

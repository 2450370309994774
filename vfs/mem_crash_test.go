package vfs

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// tree returns every entry below the root of fsys: a file as path → contents,
// a directory as path + "/" → "".
func tree(t testing.TB, fsys FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		names, err := fsys.List(dir)
		if err != nil {
			t.Fatalf("List(%q): %v", dir, err)
		}
		for _, name := range names {
			p, r := fsys.PathJoin(dir, name), rel+name
			fi, err := fsys.Stat(p)
			if err != nil {
				t.Fatalf("Stat(%q): %v", p, err)
			}
			if fi.IsDir() {
				out[r+"/"] = ""
				walk(p, r+"/")
				continue
			}
			data, err := readFile(fsys, p)
			if err != nil {
				t.Fatalf("read %q: %v", p, err)
			}
			out[r] = data
		}
	}
	walk("/", "")
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCrashModel(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, m *MemFS)
		want  map[string]string
	}{{
		name: "synced file in synced dir survives",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "data", true)
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{"f": "data"},
	}, {
		name: "data written without sync is lost",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "data", false)
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{"f": ""},
	}, {
		name: "tail written after the last sync is lost",
		setup: func(t *testing.T, m *MemFS) {
			f, err := m.Create("f")
			must(t, err)
			f.Write([]byte("abc"))
			must(t, f.Sync())
			f.Write([]byte("def"))
			must(t, f.Close())
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{"f": "abc"},
	}, {
		name: "file created without syncdir disappears, synced or not",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "data", true)
		},
		want: map[string]string{},
	}, {
		name: "entries made after the last syncdir are undone",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "a", "A", true)
			must(t, m.SyncDir("/"))
			writeFile(t, m, "b", "B", true)
		},
		want: map[string]string{"a": "A"},
	}, {
		name: "rename without syncdir reverts",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "a", "A", true)
			must(t, m.SyncDir("/"))
			must(t, m.Rename("a", "b"))
		},
		want: map[string]string{"a": "A"},
	}, {
		name: "rename over a file without syncdir brings back the replaced file",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "CURRENT", "old", true)
			writeFile(t, m, "tmp", "new", true)
			must(t, m.SyncDir("/"))
			must(t, m.Rename("tmp", "CURRENT"))
		},
		want: map[string]string{"CURRENT": "old", "tmp": "new"},
	}, {
		name: "rename followed by syncdir survives",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "CURRENT", "old", true)
			writeFile(t, m, "tmp", "new", true)
			must(t, m.SyncDir("/"))
			must(t, m.Rename("tmp", "CURRENT"))
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{"CURRENT": "new"},
	}, {
		name: "remove without syncdir reverts",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "data", true)
			must(t, m.SyncDir("/"))
			must(t, m.Remove("f"))
		},
		want: map[string]string{"f": "data"},
	}, {
		name: "remove followed by syncdir survives",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "data", true)
			must(t, m.SyncDir("/"))
			must(t, m.Remove("f"))
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{},
	}, {
		name: "removed file synced through an open handle comes back with that data",
		setup: func(t *testing.T, m *MemFS) {
			f, err := m.Create("f")
			must(t, err)
			f.Write([]byte("x"))
			must(t, f.Sync())
			must(t, m.SyncDir("/"))
			must(t, m.Remove("f"))
			f.Write([]byte("y"))
			must(t, f.Sync())
			must(t, f.Close())
		},
		want: map[string]string{"f": "xy"},
	}, {
		name: "truncation without sync reverts",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "old contents", true)
			must(t, m.SyncDir("/"))
			writeFile(t, m, "f", "new", false)
		},
		want: map[string]string{"f": "old contents"},
	}, {
		name: "truncation with sync survives",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "old contents", true)
			must(t, m.SyncDir("/"))
			writeFile(t, m, "f", "new", true)
		},
		want: map[string]string{"f": "new"},
	}, {
		name: "overwrite below the synced length after a second create",
		setup: func(t *testing.T, m *MemFS) {
			// Two handles: the second Create truncates, the first then
			// writes at its old offset, past the end (a zero-filled gap).
			a, err := m.Create("f")
			must(t, err)
			a.Write([]byte("abcd"))
			must(t, a.Sync())
			must(t, m.SyncDir("/"))
			b, err := m.Create("f")
			must(t, err)
			b.Write([]byte("XY"))
			a.Write([]byte("ef"))
			must(t, a.Sync())
			a.Close()
			b.Close()
		},
		want: map[string]string{"f": "XY\x00\x00ef"},
	}, {
		name: "unsynced overwrite below the synced length is undone",
		setup: func(t *testing.T, m *MemFS) {
			// b's offset runs ahead of a's after a truncates, so a then
			// writes over bytes b has synced.
			b, err := m.Create("f")
			must(t, err)
			b.Write([]byte("XY"))
			a, err := m.Create("f")
			must(t, err)
			b.Write([]byte("ZZ"))
			must(t, b.Sync())
			must(t, m.SyncDir("/"))
			a.Write([]byte("ab"))
			if got, _ := readFile(m, "f"); got != "abZZ" {
				t.Fatalf("before the crash f = %q, want %q", got, "abZZ")
			}
		},
		want: map[string]string{"f": "\x00\x00ZZ"},
	}, {
		name: "sync through any handle syncs the file",
		setup: func(t *testing.T, m *MemFS) {
			w, err := m.Create("f")
			must(t, err)
			w.Write([]byte("abc"))
			r, err := m.Open("f")
			must(t, err)
			must(t, r.Sync())
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{"f": "abc"},
	}, {
		name: "sync of a directory handle is syncdir",
		setup: func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "data", true)
			d, err := m.Open("/")
			must(t, err)
			must(t, d.Sync())
			must(t, d.Close())
		},
		want: map[string]string{"f": "data"},
	}, {
		name: "directory not synced in its parent takes its synced contents along",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("db/sub"))
			writeFile(t, m, "db/f", "data", true)
			must(t, m.SyncDir("db"))
			must(t, m.SyncDir("db/sub"))
		},
		want: map[string]string{},
	}, {
		name: "directory synced in its parent but not itself comes back empty",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("db"))
			must(t, m.SyncDir("/"))
			writeFile(t, m, "db/f", "data", true)
		},
		want: map[string]string{"db/": ""},
	}, {
		name: "whole chain synced",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("db"))
			must(t, m.SyncDir("/"))
			writeFile(t, m, "db/f", "data", true)
			must(t, m.SyncDir("db"))
		},
		want: map[string]string{"db/": "", "db/f": "data"},
	}, {
		name: "cross-directory rename with only the destination synced keeps both names",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("a"))
			must(t, m.MkdirAll("b"))
			must(t, m.SyncDir("/"))
			writeFile(t, m, "a/f", "data", true)
			must(t, m.SyncDir("a"))
			must(t, m.Rename("a/f", "b/f"))
			must(t, m.SyncDir("b"))
		},
		want: map[string]string{"a/": "", "a/f": "data", "b/": "", "b/f": "data"},
	}, {
		name: "cross-directory rename with only the source synced loses the file",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("a"))
			must(t, m.MkdirAll("b"))
			must(t, m.SyncDir("/"))
			writeFile(t, m, "a/f", "data", true)
			must(t, m.SyncDir("a"))
			must(t, m.Rename("a/f", "b/f"))
			must(t, m.SyncDir("a"))
		},
		want: map[string]string{"a/": "", "b/": ""},
	}, {
		name: "removed directory comes back with its synced entries",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("d"))
			writeFile(t, m, "d/f", "data", true)
			must(t, m.SyncDir("d"))
			must(t, m.SyncDir("/"))
			must(t, m.Remove("d/f"))
			must(t, m.Remove("d"))
		},
		want: map[string]string{"d/": "", "d/f": "data"},
	}, {
		name: "directory re-created after a synced removal is a new, empty one",
		setup: func(t *testing.T, m *MemFS) {
			must(t, m.MkdirAll("d"))
			writeFile(t, m, "d/f", "data", true)
			must(t, m.SyncDir("d"))
			must(t, m.SyncDir("/"))
			must(t, m.Remove("d/f"))
			must(t, m.Remove("d"))
			must(t, m.SyncDir("/"))
			must(t, m.MkdirAll("d"))
			must(t, m.SyncDir("/"))
		},
		want: map[string]string{"d/": ""},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMem()
			tt.setup(t, m)
			before := tree(t, m)
			c := m.CrashClone(CrashOptions{})
			if got := tree(t, c); !maps.Equal(got, tt.want) {
				t.Errorf("after crash: got %q, want %q", got, tt.want)
			}
			if got := tree(t, m); !maps.Equal(got, before) {
				t.Errorf("CrashClone changed the original: got %q, want %q", got, before)
			}
			// INVARIANT: everything in a clone is durable.
			again := c.CrashClone(CrashOptions{TornWrites: true, Seed: 1})
			if got, want := tree(t, again), tree(t, c); !maps.Equal(got, want) {
				t.Errorf("second crash: got %q, want %q", got, want)
			}
		})
	}
}

// TestCrashModelSubtleties checks what a tree of names cannot show.
func TestCrashModelSubtleties(t *testing.T) {
	t.Run("two names of one file stay one file", func(t *testing.T) {
		m := NewMem()
		must(t, m.MkdirAll("a"))
		must(t, m.MkdirAll("b"))
		must(t, m.SyncDir("/"))
		writeFile(t, m, "a/f", "data", true)
		must(t, m.SyncDir("a"))
		must(t, m.Rename("a/f", "b/f"))
		must(t, m.SyncDir("b"))
		c := m.CrashClone(CrashOptions{})
		f, err := c.Create("a/f")
		must(t, err)
		f.Write([]byte("changed"))
		f.Close()
		if got, err := readFile(c, "b/f"); err != nil || got != "changed" {
			t.Fatalf("b/f = %q, %v; want the contents written through a/f", got, err)
		}
	})
	t.Run("handles on the original never reach the clone", func(t *testing.T) {
		m := NewMem()
		f, err := m.Create("f")
		must(t, err)
		f.Write([]byte("abc"))
		must(t, f.Sync())
		must(t, m.SyncDir("/"))
		c := m.CrashClone(CrashOptions{})
		f.Write([]byte("def"))
		must(t, f.Sync())
		if got, _ := readFile(c, "f"); got != "abc" {
			t.Fatalf("clone has %q, want %q", got, "abc")
		}
		if got, _ := readFile(m, "f"); got != "abcdef" {
			t.Fatalf("original has %q, want %q", got, "abcdef")
		}
	})
	t.Run("crash releases locks", func(t *testing.T) {
		m := NewMem()
		l, err := m.Lock("LOCK")
		must(t, err)
		defer l.Close()
		c := m.CrashClone(CrashOptions{})
		l2, err := c.Lock("LOCK")
		if err != nil {
			t.Fatalf("Lock after crash: %v", err)
		}
		l2.Close()
		if _, err := m.Lock("LOCK"); errClass(err) != "locked" {
			t.Fatalf("original lock: got %v, want ErrLocked", err)
		}
	})
}

func TestCrashTornWrites(t *testing.T) {
	const synced, tail = "0123456789", "abcdefghij"
	m := NewMem()
	f, err := m.Create("wal")
	must(t, err)
	f.Write([]byte(synced))
	must(t, f.Sync())
	f.Write([]byte(tail[:4]))
	f.Write([]byte(tail[4:]))
	writeFile(t, m, "never-synced", "xyz", false)
	writeFile(t, m, "truncated", "old", true)
	must(t, m.SyncDir("/"))
	writeFile(t, m, "truncated", "newer", false) // not an extension of "old"

	t.Run("off keeps exactly the synced data", func(t *testing.T) {
		for seed := uint64(0); seed < 20; seed++ {
			got := tree(t, m.CrashClone(CrashOptions{Seed: seed}))
			want := map[string]string{"wal": synced, "never-synced": "", "truncated": "old"}
			if !maps.Equal(got, want) {
				t.Fatalf("seed %d: got %q, want %q", seed, got, want)
			}
		}
	})
	t.Run("on keeps a prefix of the unsynced tail", func(t *testing.T) {
		seen := map[int]bool{}
		for seed := uint64(0); seed < 200; seed++ {
			opts := CrashOptions{TornWrites: true, Seed: seed}
			got := tree(t, m.CrashClone(opts))
			wal := got["wal"]
			if !strings.HasPrefix(wal, synced) || !strings.HasPrefix(synced+tail, wal) {
				t.Fatalf("seed %d: wal = %q, want %q plus a prefix of %q", seed, wal, synced, tail)
			}
			seen[len(wal)-len(synced)] = true
			if ns := got["never-synced"]; !strings.HasPrefix("xyz", ns) {
				t.Fatalf("seed %d: never-synced = %q, want a prefix of %q", seed, ns, "xyz")
			}
			if got["truncated"] != "old" {
				t.Fatalf("seed %d: truncated = %q, want the synced %q", seed, got["truncated"], "old")
			}
			if again := tree(t, m.CrashClone(opts)); !maps.Equal(got, again) {
				t.Fatalf("seed %d: two crashes differ: %q and %q", seed, got, again)
			}
		}
		// Every kept length from none of the tail to all of it is possible,
		// and 200 seeds reach each of the 11 (the draws are seeded, so this
		// cannot flake): a crash that always kept all or none fails here.
		for k := 0; k <= len(tail); k++ {
			if !seen[k] {
				t.Errorf("no seed kept %d bytes of the tail (seen %v)", k, seen)
			}
		}
	})
	if got, _ := readFile(m, "wal"); got != synced+tail {
		t.Fatalf("original wal = %q, want %q", got, synced+tail)
	}
}

func TestMemRenameDirectoryUnsupported(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("a"))
	err := m.Rename("a", "b")
	if errClass(err) != "unsupported" {
		t.Fatalf("Rename of a directory: got %v, want errors.ErrUnsupported", err)
	}
	if names, _ := m.List("/"); fmt.Sprint(names) != "[a]" {
		t.Fatalf("List after failed rename: %v", names)
	}
}

func TestMemNames(t *testing.T) {
	m := NewMem()
	writeFile(t, m, "/a", "1", false)
	for _, name := range []string{"a", "/a", "./a", "/../a", "//a"} {
		if got, err := readFile(m, name); err != nil || got != "1" {
			t.Errorf("read %q = %q, %v; want the file /a", name, got, err)
		}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"create empty name", func() error { _, err := m.Create(""); return err }(), "notexist"},
		{"open empty name", func() error { _, err := m.Open(""); return err }(), "notexist"},
		{"mkdirall empty name", m.MkdirAll(""), "notexist"},
		{"create root", func() error { _, err := m.Create("/"); return err }(), "EISDIR"},
		{"remove root", m.Remove("/"), "EBUSY"},
		{"rename root", m.Rename("/", "b"), "EBUSY"},
		{"rename onto root", m.Rename("a", "/"), "EBUSY"},
		{"lock a directory", func() error { _, err := m.Lock("/"); return err }(), "EISDIR"},
		{"rename onto itself", m.Rename("a", "/a"), "ok"},
	}
	for _, tt := range tests {
		if got := errClass(tt.err); got != tt.want {
			t.Errorf("%s: got %v (%s), want %s", tt.name, tt.err, got, tt.want)
		}
	}
	if got, _ := readFile(m, "a"); got != "1" {
		t.Errorf("after the failed operations a = %q, want %q", got, "1")
	}
}

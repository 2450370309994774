package vfs

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestConformance runs one script of operations against the OS and against a
// MemFS. Each step states its expected outcome by hand, and the OS checks
// those expectations: a step whose expectation is wrong fails on the OS, so
// MemFS is held to what a real file system does, not to what we believe.
func TestConformance(t *testing.T) {
	type step struct {
		name string
		do   func(fsys FS, p func(string) string) string
		want string
	}
	outcome := func(err error) string { return errClass(err) }
	read := func(fsys FS, name string) string {
		s, err := readFile(fsys, name)
		if err != nil {
			return errClass(err)
		}
		return fmt.Sprintf("%q", s)
	}
	steps := []step{
		{"mkdirall", func(fsys FS, p func(string) string) string { return outcome(fsys.MkdirAll(p("d/e"))) }, "ok"},
		{"mkdirall existing", func(fsys FS, p func(string) string) string { return outcome(fsys.MkdirAll(p("d"))) }, "ok"},
		{"create and write", func(fsys FS, p func(string) string) string {
			f, err := fsys.Create(p("d/a"))
			if err != nil {
				return outcome(err)
			}
			if _, err := io.WriteString(f, "hello"); err != nil {
				return outcome(err)
			}
			return outcome(f.Close())
		}, "ok"},
		{"read back", func(fsys FS, p func(string) string) string { return read(fsys, p("d/a")) }, `"hello"`},
		{"open missing", func(fsys FS, p func(string) string) string { return read(fsys, p("d/missing")) }, "notexist"},
		{"create in missing dir", func(fsys FS, p func(string) string) string {
			_, err := fsys.Create(p("nodir/x"))
			return outcome(err)
		}, "notexist"},
		{"create under a file", func(fsys FS, p func(string) string) string {
			_, err := fsys.Create(p("d/a/x"))
			return outcome(err)
		}, "ENOTDIR"},
		{"create a directory", func(fsys FS, p func(string) string) string {
			_, err := fsys.Create(p("d"))
			return outcome(err)
		}, "EISDIR"},
		{"stat file", func(fsys FS, p func(string) string) string {
			fi, err := fsys.Stat(p("d/a"))
			if err != nil {
				return outcome(err)
			}
			return fmt.Sprintf("%s %d %v %v", fi.Name(), fi.Size(), fi.IsDir(), fi.Mode().IsRegular())
		}, "a 5 false true"},
		{"stat dir", func(fsys FS, p func(string) string) string {
			fi, err := fsys.Stat(p("d/e"))
			if err != nil {
				return outcome(err)
			}
			return fmt.Sprintf("%s %v %v", fi.Name(), fi.IsDir(), fi.Mode().IsDir())
		}, "e true true"},
		{"stat missing", func(fsys FS, p func(string) string) string {
			_, err := fsys.Stat(p("d/missing"))
			return outcome(err)
		}, "notexist"},
		{"list", func(fsys FS, p func(string) string) string {
			names, err := fsys.List(p("d"))
			if err != nil {
				return outcome(err)
			}
			return strings.Join(names, ",")
		}, "a,e"},
		{"list a file", func(fsys FS, p func(string) string) string {
			_, err := fsys.List(p("d/a"))
			return outcome(err)
		}, "ENOTDIR"},
		{"list missing", func(fsys FS, p func(string) string) string {
			_, err := fsys.List(p("nodir"))
			return outcome(err)
		}, "notexist"},
		{"rename", func(fsys FS, p func(string) string) string { return outcome(fsys.Rename(p("d/a"), p("d/b"))) }, "ok"},
		{"old name gone", func(fsys FS, p func(string) string) string { return read(fsys, p("d/a")) }, "notexist"},
		{"new name", func(fsys FS, p func(string) string) string { return read(fsys, p("d/b")) }, `"hello"`},
		{"rename missing", func(fsys FS, p func(string) string) string { return outcome(fsys.Rename(p("d/a"), p("d/z"))) }, "notexist"},
		{"rename over a file", func(fsys FS, p func(string) string) string {
			writeFile(t, fsys, p("d/c"), "old", false)
			if err := fsys.Rename(p("d/b"), p("d/c")); err != nil {
				return outcome(err)
			}
			names, _ := fsys.List(p("d"))
			return read(fsys, p("d/c")) + " " + strings.Join(names, ",")
		}, `"hello" c,e`},
		{"rename a file over a directory", func(fsys FS, p func(string) string) string {
			return outcome(fsys.Rename(p("d/c"), p("d/e")))
		}, "EEXIST"},
		{"rename into missing dir", func(fsys FS, p func(string) string) string {
			return outcome(fsys.Rename(p("d/c"), p("nodir/c")))
		}, "notexist"},
		{"create truncates", func(fsys FS, p func(string) string) string {
			f, err := fsys.Create(p("d/c"))
			if err != nil {
				return outcome(err)
			}
			f.Close()
			return read(fsys, p("d/c"))
		}, `""`},
		{"read and write share an offset", func(fsys FS, p func(string) string) string {
			f, err := fsys.Create(p("d/c"))
			if err != nil {
				return outcome(err)
			}
			defer f.Close()
			io.WriteString(f, "abc")
			n, err := f.Read(make([]byte, 3))
			return fmt.Sprintf("%d %s", n, outcome(err))
		}, "0 EOF"},
		{"readat", func(fsys FS, p func(string) string) string {
			f, err := fsys.Open(p("d/c"))
			if err != nil {
				return outcome(err)
			}
			defer f.Close()
			var out []string
			for _, off := range []int64{0, 1, 3, 10} {
				buf := make([]byte, 2)
				n, err := f.ReadAt(buf, off)
				out = append(out, fmt.Sprintf("%q/%s", buf[:n], outcome(err)))
			}
			_, err = f.ReadAt(make([]byte, 1), -1)
			out = append(out, outcome(err))
			return strings.Join(out, " ")
		}, `"ab"/ok "bc"/ok ""/EOF ""/EOF other`},
		{"write read-only", func(fsys FS, p func(string) string) string {
			f, err := fsys.Open(p("d/c"))
			if err != nil {
				return outcome(err)
			}
			defer f.Close()
			_, err = f.Write([]byte("x"))
			return outcome(err) + " " + read(fsys, p("d/c"))
		}, `EBADF "abc"`},
		{"use after close", func(fsys FS, p func(string) string) string {
			f, err := fsys.Open(p("d/c"))
			if err != nil {
				return outcome(err)
			}
			f.Close()
			_, rerr := f.Read(make([]byte, 1))
			_, aerr := f.ReadAt(make([]byte, 1), 0)
			_, serr := f.Stat()
			return strings.Join([]string{outcome(rerr), outcome(aerr), outcome(f.Sync()), outcome(serr), outcome(f.Close())}, " ")
		}, "closed closed closed closed closed"},
		{"open a directory and read", func(fsys FS, p func(string) string) string {
			f, err := fsys.Open(p("d"))
			if err != nil {
				return outcome(err)
			}
			defer f.Close()
			_, err = f.Read(make([]byte, 1))
			_, werr := f.Write([]byte("x"))
			return outcome(err) + " " + outcome(werr) + " " + outcome(f.Sync())
		}, "EISDIR EBADF ok"},
		{"removed file stays readable", func(fsys FS, p func(string) string) string {
			f, err := fsys.Open(p("d/c"))
			if err != nil {
				return outcome(err)
			}
			defer f.Close()
			if err := fsys.Remove(p("d/c")); err != nil {
				return outcome(err)
			}
			b, err := io.ReadAll(f)
			return fmt.Sprintf("%q %s %s", b, outcome(err), read(fsys, p("d/c")))
		}, `"abc" ok notexist`},
		{"remove missing", func(fsys FS, p func(string) string) string { return outcome(fsys.Remove(p("d/c"))) }, "notexist"},
		{"remove non-empty dir", func(fsys FS, p func(string) string) string {
			writeFile(t, fsys, p("d/e/f"), "", false)
			return outcome(fsys.Remove(p("d/e")))
		}, "ENOTEMPTY"},
		{"remove empty dir", func(fsys FS, p func(string) string) string {
			fsys.Remove(p("d/e/f"))
			return outcome(fsys.Remove(p("d/e")))
		}, "ok"},
		{"mkdirall through a file", func(fsys FS, p func(string) string) string {
			writeFile(t, fsys, p("d/g"), "", false)
			return outcome(fsys.MkdirAll(p("d/g/h")))
		}, "ENOTDIR"},
		{"syncdir", func(fsys FS, p func(string) string) string { return outcome(fsys.SyncDir(p("d"))) }, "ok"},
		{"syncdir missing", func(fsys FS, p func(string) string) string { return outcome(fsys.SyncDir(p("nodir"))) }, "notexist"},
		{"syncdir a file", func(fsys FS, p func(string) string) string { return outcome(fsys.SyncDir(p("d/g"))) }, "ENOTDIR"},
		{"sync and stat through a handle", func(fsys FS, p func(string) string) string {
			f, err := fsys.Create(p("d/s"))
			if err != nil {
				return outcome(err)
			}
			defer f.Close()
			io.WriteString(f, "12345678")
			fi, err := f.Stat()
			if err != nil {
				return outcome(err)
			}
			return fmt.Sprintf("%s %s %d", outcome(f.Sync()), fi.Name(), fi.Size())
		}, "ok s 8"},
		{"path helpers", func(fsys FS, p func(string) string) string {
			j := fsys.PathJoin("x", "y", "z.sst")
			return j + " " + fsys.PathBase(j) + " " + fsys.PathDir(j)
		}, "x/y/z.sst z.sst x/y"},
	}

	for _, impl := range []struct {
		name string
		fsys FS
		root string
	}{
		{"os", Default, t.TempDir()},
		{"mem", NewMem(), "/"},
		{"mem-subdir", NewMem(), "/srv/db"},
		// The wrappers must not change behaviour when they inject nothing.
		{"counting-mem", NewCounting(NewMem(), nil), "/"},
		{"injecting-counting-os", NewInjecting(NewCounting(Default, nil), nil), t.TempDir()},
	} {
		t.Run(impl.name, func(t *testing.T) {
			if err := impl.fsys.MkdirAll(impl.root); err != nil {
				t.Fatal(err)
			}
			p := func(rel string) string { return impl.fsys.PathJoin(impl.root, rel) }
			for _, s := range steps {
				if got := s.do(impl.fsys, p); got != s.want {
					t.Errorf("%s: got %s, want %s", s.name, got, s.want)
				}
			}
		})
	}
}

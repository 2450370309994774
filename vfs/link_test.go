package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestLink runs one sequence of links on every FS that makes them and
// checks each step's result, by error class, the same on all: the OS's
// link(2) is the reference MemFS must match.
func TestLink(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) (FS, string)
	}{
		{"os", func(t *testing.T) (FS, string) { return NewOS(), t.TempDir() }},
		{"mem", func(t *testing.T) (FS, string) { return NewMem(), "/d" }},
		{"counting", func(t *testing.T) (FS, string) { return NewCounting(NewMem(), nil), "/d" }},
		{"injecting", func(t *testing.T) (FS, string) { return NewInjecting(NewMem(), nil), "/d" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, dir := tc.fs(t)
			if err := fs.MkdirAll(fs.PathJoin(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			a, b := fs.PathJoin(dir, "a"), fs.PathJoin(dir, "b")
			f, err := fs.Create(a)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			io.WriteString(f, "one,")
			read := func(name string) string {
				r, err := fs.Open(name)
				if err != nil {
					return errClass(err)
				}
				defer r.Close()
				data, _ := io.ReadAll(r)
				return string(data)
			}
			for i, step := range []struct {
				got, want string
			}{
				{errClass(Link(fs, a, b)), "ok"},
				{read(b), "one,"},
				{func() string { io.WriteString(f, "two"); return read(b) }(), "one,two"}, // one file, two names
				{errClass(Link(fs, a, b)), "EEXIST"},
				{errClass(Link(fs, fs.PathJoin(dir, "missing"), fs.PathJoin(dir, "c"))), "notexist"},
				{errClass(Link(fs, a, fs.PathJoin(dir, "nodir", "c"))), "notexist"},
				{fmt.Sprint(errors.Is(Link(fs, fs.PathJoin(dir, "sub"), fs.PathJoin(dir, "c")), syscall.EPERM)), "true"}, // a directory
				{errClass(Link(fs, a, fs.PathJoin(dir, "sub", "a"))), "ok"},
				{errClass(fs.Remove(a)), "ok"},
				{read(b), "one,two"},
				{read(fs.PathJoin(dir, "sub", "a")), "one,two"},
			} {
				if step.got != step.want {
					t.Errorf("step %d: %q, want %q", i, step.got, step.want)
				}
			}
		})
	}
}

// TestLinkCrash checks a MemFS link's durability: its name needs SyncDir
// of its directory, and it holds what the file synced, under both names.
func TestLinkCrash(t *testing.T) {
	m := NewMem()
	f, _ := m.Create("a")
	io.WriteString(f, "synced")
	f.Sync()
	m.SyncDir("/")
	if err := m.Link("a", "b"); err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, ",not")
	show := func(fs *MemFS) string {
		names, _ := fs.List("/")
		out := fmt.Sprint(names)
		for _, name := range names {
			r, _ := fs.Open(name)
			data, _ := io.ReadAll(r)
			out += fmt.Sprintf(" %s=%q", name, data)
		}
		return out
	}
	if got, want := show(m.CrashClone(CrashOptions{})), `[a] a="synced"`; got != want {
		t.Errorf("crash before SyncDir: %s, want %s", got, want)
	}
	m.SyncDir("/")
	if got, want := show(m.CrashClone(CrashOptions{})), `[a b] a="synced" b="synced"`; got != want {
		t.Errorf("crash after SyncDir: %s, want %s", got, want)
	}
}

// TestLinkUnsupported checks which failures say that the file system
// cannot link (so a caller copies instead), and that Link on an FS without
// Linker is one, while the Injecting's own failures of OpLink are not.
func TestLinkUnsupported(t *testing.T) {
	type plainFS struct{ FS } // hides Link
	err := Link(plainFS{NewMem()}, "a", "b")
	var le *os.LinkError
	if !errors.As(err, &le) || !LinkUnsupported(err) {
		t.Errorf("Link on an FS without Linker = %v; want an unsupported *os.LinkError", err)
	}
	inj := NewInjecting(NewMem(), func(op Op) bool { return op.Kind == OpLink })
	err = inj.Link("a", "b")
	if !errors.Is(err, ErrInjected) || LinkUnsupported(err) {
		t.Errorf("an injected link failure = %v; want ErrInjected, not unsupported", err)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&os.LinkError{Op: "link", Err: syscall.EXDEV}, true},
		{&os.LinkError{Op: "link", Err: syscall.EPERM}, true},
		{&os.LinkError{Op: "link", Err: syscall.ENOTSUP}, true},
		{&os.LinkError{Op: "link", Err: syscall.EMLINK}, true},
		{&os.LinkError{Op: "link", Err: syscall.EEXIST}, false},
		{&os.LinkError{Op: "link", Err: syscall.ENOENT}, false},
		{&os.LinkError{Op: "link", Err: syscall.ENOSPC}, false},
	} {
		if got := LinkUnsupported(tc.err); got != tc.want {
			t.Errorf("LinkUnsupported(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

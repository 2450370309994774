package vfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lockChildEnv, when set in the environment, turns the test binary into the
// child of TestLockAcrossProcesses: it tries to lock the named file once and
// reports the outcome in its exit status.
const lockChildEnv = "BLOOMKV_VFS_LOCK_CHILD"

// Exit statuses of the lock child.
const (
	childLocked  = 0 // took the lock
	childRefused = 3 // ErrLocked
	childFailed  = 4 // any other error
)

func TestMain(m *testing.M) {
	if name := os.Getenv(lockChildEnv); name != "" {
		os.Exit(lockChild(name))
	}
	os.Exit(m.Run())
}

// lockChild locks name, or, given "shared:name", takes a shared lock on it.
func lockChild(name string) int {
	lock := Default.Lock
	if n, ok := strings.CutPrefix(name, "shared:"); ok {
		name, lock = n, Default.LockShared
	}
	l, err := lock(name)
	switch {
	case errors.Is(err, ErrLocked):
		return childRefused
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return childFailed
	}
	l.Close()
	return childLocked
}

func TestLock(t *testing.T) {
	for _, impl := range []struct {
		name string
		fsys FS
		dir  string
	}{
		{"os", Default, t.TempDir()},
		{"mem", NewMem(), "/"},
	} {
		t.Run(impl.name, func(t *testing.T) {
			fsys := impl.fsys
			name := fsys.PathJoin(impl.dir, "LOCK")
			first, err := fsys.Lock(name)
			if err != nil {
				t.Fatalf("first Lock: %v", err)
			}
			if _, err := fsys.Stat(name); err != nil {
				t.Errorf("Lock did not create the file: %v", err)
			}
			second, err := fsys.Lock(name)
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("second Lock while held: got %v, want ErrLocked", err)
			}
			if second != nil {
				t.Fatalf("second Lock returned a closer along with its error")
			}
			if err := first.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := first.Close(); errClass(err) != "closed" {
				t.Errorf("second Close: got %v, want fs.ErrClosed", err)
			}
			third, err := fsys.Lock(name)
			if err != nil {
				t.Fatalf("Lock after release: %v", err)
			}
			defer third.Close()

			other, err := fsys.Lock(fsys.PathJoin(impl.dir, "OTHER"))
			if err != nil {
				t.Fatalf("Lock of another file: %v", err)
			}
			other.Close()

			if _, err := fsys.Lock(impl.dir); err == nil || errors.Is(err, ErrLocked) {
				t.Errorf("Lock of a directory: got %v, want an error other than ErrLocked", err)
			}
			if _, err := fsys.Lock(fsys.PathJoin(impl.dir, "missing", "LOCK")); errClass(err) != "notexist" {
				t.Errorf("Lock in a missing directory: got %v, want fs.ErrNotExist", err)
			}
		})
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	name := filepath.Join(t.TempDir(), "LOCK")
	child := func(prefix ...string) int {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), lockChildEnv+"="+strings.Join(prefix, "")+name)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running the child: %v", err)
		}
		if code := cmd.ProcessState.ExitCode(); code != childLocked && code != childRefused {
			t.Fatalf("child failed (exit %d): %s", code, out)
		}
		return cmd.ProcessState.ExitCode()
	}

	l, err := Default.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := child(); got != childRefused {
		t.Errorf("child while the parent holds the lock: exit %d, want %d (refused)", got, childRefused)
	}
	if got := child("shared:"); got != childRefused {
		t.Errorf("shared child while the parent holds the lock: exit %d, want %d (refused)", got, childRefused)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := child(); got != childLocked {
		t.Errorf("child after the parent released the lock: exit %d, want %d (locked)", got, childLocked)
	}

	// Shared locks across processes: they coexist, and exclude Lock.
	s, err := Default.LockShared(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := child("shared:"); got != childLocked {
		t.Errorf("shared child while the parent holds a shared lock: exit %d, want %d (locked)", got, childLocked)
	}
	if got := child(); got != childRefused {
		t.Errorf("child while the parent holds a shared lock: exit %d, want %d (refused)", got, childRefused)
	}
}

// TestLockShared checks LockShared against Lock on each implementation: shared
// locks coexist, exclude Lock and are excluded by it, create nothing, and
// release on Close.
func TestLockShared(t *testing.T) {
	for _, impl := range []struct {
		name string
		fsys FS
		dir  string
	}{
		{"os", Default, t.TempDir()},
		{"mem", NewMem(), "/"},
	} {
		t.Run(impl.name, func(t *testing.T) {
			fsys := impl.fsys
			name := fsys.PathJoin(impl.dir, "LOCK")
			if _, err := fsys.LockShared(name); errClass(err) != "notexist" {
				t.Fatalf("LockShared of a missing file: got %v, want fs.ErrNotExist", err)
			}
			if _, err := fsys.Stat(name); errClass(err) != "notexist" {
				t.Fatalf("LockShared of a missing file created it: Stat: %v", err)
			}
			ex, err := fsys.Lock(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.LockShared(name); !errors.Is(err, ErrLocked) {
				t.Fatalf("LockShared while Lock's lock is held: got %v, want ErrLocked", err)
			}
			if err := ex.Close(); err != nil {
				t.Fatal(err)
			}
			a, err := fsys.LockShared(name)
			if err != nil {
				t.Fatalf("first LockShared: %v", err)
			}
			b, err := fsys.LockShared(name)
			if err != nil {
				t.Fatalf("second LockShared while the first is held: %v", err)
			}
			if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
				t.Fatalf("Lock while two shared locks are held: got %v, want ErrLocked", err)
			}
			a.Close()
			if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
				t.Fatalf("Lock while one shared lock is held: got %v, want ErrLocked", err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); errClass(err) != "closed" {
				t.Errorf("second Close: got %v, want fs.ErrClosed", err)
			}
			ex, err = fsys.Lock(name)
			if err != nil {
				t.Fatalf("Lock after every shared lock is released: %v", err)
			}
			ex.Close()
		})
	}
}

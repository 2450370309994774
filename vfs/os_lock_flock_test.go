//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package vfs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLockCloseWithDescriptorCopy locks a file, duplicates the lock's
// descriptor — the copy a child process forked by another goroutine holds
// until it execs — and closes the lock: a Lock right after succeeds, as it
// does with no copy. Closing the descriptor alone left the lock held, and
// a DB reopened at once found its directory locked.
func TestLockCloseWithDescriptorCopy(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := filepath.Join(t.TempDir(), "LOCK")
		if l, err := Default.Lock(name); err != nil { // creates it
			t.Fatal(err)
		} else if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		lock := Default.Lock
		if shared {
			lock = Default.LockShared
		}
		l, err := lock(name)
		if err != nil {
			t.Fatal(err)
		}
		dup, err := syscall.Dup(int(l.(lockFile).f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Default.Lock(name); !errors.Is(err, ErrLocked) {
			t.Fatalf("shared %v: Lock while held: %v, want ErrLocked", shared, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := Default.Lock(name)
		if err != nil {
			t.Errorf("shared %v: Lock after Close, with a copy of the descriptor open: %v", shared, err)
		} else {
			l2.Close()
		}
		syscall.Close(dup)
	}
}

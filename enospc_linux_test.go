package bloomkv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOutOfSpace runs the DB on a real, small file system — a 6 MiB tmpfs
// the test mounts (it needs root, as CI has; it fails, never skips,
// without) — and fills it with durable writes until the disk is full. It
// checks that the failing write's error wraps ENOSPC, that every
// acknowledged write reads back during the shortage, that writes resume by
// themselves, without a reopen, once space is freed, and that a reopen
// finds every acknowledged write: none lost, none applied twice.
func TestOutOfSpace(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=6m"); err != nil {
		t.Fatalf("mounting a tmpfs at %s (run as root): %v", mnt, err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })

	// Ballast: space the test frees later. What is left, 4 MiB, is less
	// than the 3,000 keys of 1 KiB the fill writes and rewrites need.
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "db")
	var log bgErrorLog
	opts := &Options{MemtableSize: 256 << 10, TargetFileSize: 256 << 10, Compression: NoCompression, EventListener: log.listener()}
	d, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.Close() }()

	m := kvModel{}
	value := func(i, round int) []byte { return fmt.Appendf(make([]byte, 0, 1100), "%d.%d|%01000d", round, i, i) }
	put := func(i, round int) error {
		k := fmt.Sprintf("k%05d", i)
		v := value(i, round)
		err := d.Put([]byte(k), v, nil)
		if err == nil {
			m[k] = string(v)
		}
		return err
	}
	// Fill: 1 KiB values, durable, with overwrites, until a write fails.
	var fillErr error
	n := 0
	for ; n < 100_000; n++ {
		if fillErr = put(n%3000, n/3000); fillErr != nil {
			break
		}
	}
	if fillErr == nil {
		t.Fatalf("%d writes of 1 KiB fit in 4 MiB", n)
	}
	if !errors.Is(fillErr, syscall.ENOSPC) {
		t.Fatalf("the write that failed after %d: %v; want an error wrapping ENOSPC", n, fillErr)
	}
	t.Logf("disk full after %d writes: %v", n, fillErr)

	// During the shortage: reads work; writes fail with ENOSPC — or, where
	// the DB freed space of its own (a retired WAL, a compaction's inputs),
	// succeed, and count as acknowledged. A filler file takes what is left
	// before each try, so that the disk stays full.
	if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
		t.Fatalf("reads during the shortage: %v %s", err, diffModels(got, m))
	}
	var fillers []string
	failed := 0
	for i := range 20 {
		filler := filepath.Join(mnt, fmt.Sprintf("filler%d", i))
		fillDisk(t, filler)
		fillers = append(fillers, filler)
		switch err := put(i, 1000); {
		case err == nil:
		case errors.Is(err, syscall.ENOSPC):
			failed++
		default:
			t.Fatalf("a write during the shortage: %v; want success or ENOSPC", err)
		}
	}
	if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
		t.Fatalf("reads during the shortage: %v %s", err, diffModels(got, m))
	}
	t.Logf("%d of 20 writes on a full disk failed with ENOSPC", failed)
	if failed == 0 {
		t.Fatal("no write failed on a full disk")
	}

	// Space freed: writes resume without a reopen (no Resume either: a
	// full disk is retried by itself).
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	for _, filler := range fillers {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for err := put(0, 2000); err != nil; err = put(0, 2000) {
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume within 10 s of freeing space: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The disk is still nearly full: a compaction's outputs, written before
	// its inputs go, may run it out of space again for a moment. A write
	// that fails then fails with ENOSPC, and a later try goes through.
	for i := 1; i < 200; i++ {
		for err := put(i, 2000); err != nil; err = put(i, 2000) {
			if !errors.Is(err, syscall.ENOSPC) || time.Now().After(deadline) {
				t.Fatalf("write %d after space was freed: %v", i, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
		t.Fatalf("after the recovery: %v %s", err, diffModels(got, m))
	}
	log.mu.Lock()
	sawENOSPC := false
	for _, e := range log.errors {
		sawENOSPC = sawENOSPC || errors.Is(e.Err, syscall.ENOSPC)
	}
	recovered := len(log.recovered)
	log.mu.Unlock()
	if !sawENOSPC || recovered == 0 {
		t.Errorf("events: ENOSPC reported %v, %d recoveries; want both", sawENOSPC, recovered)
	}

	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	d, err = Open(dir, &Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
		t.Fatalf("after reopen: %v %s", err, diffModels(got, m))
	}
}

// fillDisk writes the file name until its file system is full.
func fillDisk(t *testing.T, name string) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

package vfs

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentUse runs writers, readers, lockers and a crash-taker at once
// through Injecting over Counting over MemFS, then checks every counter
// against the exact number of operations the goroutines issued. Run it under
// -race.
func TestConcurrentUse(t *testing.T) {
	const (
		writers    = 4
		iterations = 50
		opsPerIter = 14 // create, 3 writes, sync, close, open, 2 readats, read, close, rename, list, stat
		syncDirs   = 100
		lockers    = 2
		lockTries  = 100
	)
	mem := NewMem()
	counting := NewCounting(mem, nil)
	inj := NewInjecting(counting, nil)

	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iterations {
				if err := writerIteration(inj, g, i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range syncDirs {
			if err := inj.SyncDir("/"); err != nil {
				t.Error(err)
				return
			}
			// Synced data is all of a file or none of it: Sync follows the
			// last of the three writes.
			c := mem.CrashClone(CrashOptions{})
			names, _ := c.List("/")
			for _, name := range names {
				if fi, err := c.Stat(name); err == nil && !fi.IsDir() && fi.Size() != 0 && fi.Size() != 30 {
					t.Errorf("crash clone has %s with %d bytes, want 0 or 30", name, fi.Size())
				}
			}
		}
	}()
	for range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lockTries {
				l, err := inj.Lock("LOCK")
				if errors.Is(err, ErrLocked) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				l.Close()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	const n = writers * iterations
	if got, want := inj.Ops(), int64(n*opsPerIter+syncDirs+lockers*lockTries); got != want {
		t.Errorf("Ops() = %d, want %d", got, want)
	}
	want := Counts{Creates: n, Opens: n, Reads: n, ReadAts: 2 * n, BytesRead: 25 * n, Writes: 3 * n, BytesWritten: 30 * n, Syncs: n}
	if got := counting.Kind(KindWAL); got != want {
		t.Errorf("wal counts = %+v, want %+v", got, want)
	}
	names, err := mem.List("/")
	must(t, err)
	if len(names) != n+1 { // the tables and LOCK
		t.Fatalf("%d entries, want %d", len(names), n+1)
	}
	for g := range writers {
		for i := range iterations {
			name := fmt.Sprintf("%d-%03d.sst", g, i)
			if got, err := readFile(mem, name); err != nil || got != payload(g, i) {
				t.Fatalf("%s = %q, %v; want %q", name, got, err, payload(g, i))
			}
		}
	}
	l, err := mem.Lock("LOCK")
	if err != nil {
		t.Fatalf("LOCK still held after every locker released it: %v", err)
	}
	l.Close()
}

// payload is the 30 bytes writer g writes in iteration i.
func payload(g, i int) string {
	return fmt.Sprintf("%-30s", fmt.Sprintf("writer %d iteration %d", g, i))
}

func writerIteration(fsys FS, g, i int) error {
	log := fmt.Sprintf("%d-%03d.log", g, i)
	data := payload(g, i)
	f, err := fsys.Create(log)
	if err != nil {
		return err
	}
	for _, chunk := range []string{data[:10], data[10:20], data[20:]} {
		if _, err := f.Write([]byte(chunk)); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	r, err := fsys.Open(log)
	if err != nil {
		return err
	}
	buf := make([]byte, 10)
	for _, off := range []int64{0, 20} {
		if n, err := r.ReadAt(buf, off); err != nil || string(buf[:n]) != data[off:off+10] {
			return fmt.Errorf("ReadAt(%s, %d) = %q, %v", log, off, buf[:n], err)
		}
	}
	if n, err := r.Read(buf[:5]); err != nil || string(buf[:n]) != data[:5] {
		return fmt.Errorf("Read(%s) = %q, %v", log, buf[:n], err)
	}
	if err := r.Close(); err != nil {
		return err
	}
	table := strings.TrimSuffix(log, ".log") + ".sst"
	if err := fsys.Rename(log, table); err != nil {
		return err
	}
	if _, err := fsys.List("/"); err != nil {
		return err
	}
	_, err = fsys.Stat(table)
	return err
}

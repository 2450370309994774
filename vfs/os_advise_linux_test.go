//go:build linux && (amd64 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x || mips64 || mips64le)

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/bloomkv/bloomkv/internal/procstat"
)

// TestAdviseRandom reads two adjacent pages from the middle of a file whose
// pages were dropped from the page cache, and counts the pages the reads
// brought in (mincore): with the kernel's read-ahead, which the second,
// sequential read starts, more; after AdviseRandom, the two asked for. The oracle is the kernel's own record of what it
// read, so the test fails if the advice is not applied.
func TestAdviseRandom(t *testing.T) {
	holdPageCache(t)
	page := os.Getpagesize()
	const pages = 1024
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, pages*page), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		advise     bool
		minP, maxP int // resident pages after the read
	}{
		{"default read-ahead", false, 3, pages},
		{"AdviseRandom", true, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewOS().Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd := int(f.(osFile).Fd())
			dropPages(t, fd, pages*page)
			if c.advise {
				if err := f.(RandomAdviser).AdviseRandom(); err != nil {
					t.Fatal(err)
				}
			}
			for p := pages / 2; p < pages/2+2; p++ {
				if _, err := f.ReadAt(make([]byte, page), int64(p*page)); err != nil {
					t.Fatal(err)
				}
			}
			if got := residentPages(t, fd, pages*page); got < c.minP || got > c.maxP {
				t.Errorf("two adjacent pages read: %d pages resident, want [%d, %d]", got, c.minP, c.maxP)
			}
		})
	}
	f, err := NewOS().Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := f.(RandomAdviser).AdviseRandom(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("AdviseRandom of a closed file: %v, want an error wrapping fs.ErrClosed", err)
	}
	cf, err := NewCounting(NewOS(), nil).Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	if _, ok := cf.(RandomAdviser); !ok {
		t.Error("a Counting file does not pass AdviseRandom through")
	} else if err := AdviseRandom(cf); err != nil {
		t.Errorf("AdviseRandom through Counting: %v", err)
	}
}

// holdPageCache keeps every process's DropPageCache off until the test
// ends (procstat.HoldPageCache): the tests count a file's resident pages,
// which another package's cold test, dropping the whole cache, would take.
func holdPageCache(t *testing.T) {
	t.Helper()
	release, err := procstat.HoldPageCache()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// dropPages writes the file's pages back and drops them from the page
// cache (POSIX_FADV_DONTNEED), and checks that none is left.
func dropPages(t *testing.T, fd, size int) {
	t.Helper()
	if err := syscall.Fsync(fd); err != nil {
		t.Fatal(err)
	}
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, uintptr(fd), 0, 0, 4, 0, 0); e != 0 {
		t.Fatal(e)
	}
	if got := residentPages(t, fd, size); got != 0 {
		t.Fatalf("%d pages resident after POSIX_FADV_DONTNEED; the test needs 0", got)
	}
}

// residentPages counts the file's pages in the page cache.
func residentPages(t *testing.T, fd, size int) int {
	t.Helper()
	m, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	vec := make([]byte, (size+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestPrefetch drops a file's pages from the page cache, advises random
// reads (so that nothing reads ahead of what is asked), and asks for four
// pages from the middle: the kernel's record (mincore) must show those
// four, and no other, resident once the read it started in the background
// completes — without a read of the caller's. Counting and Injecting files
// pass it through; a closed file's is an error.
func TestPrefetch(t *testing.T) {
	holdPageCache(t)
	page := os.Getpagesize()
	const pages = 1024
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, pages*page), 0o644); err != nil {
		t.Fatal(err)
	}
	never := func(Op) bool { return false }
	for _, fsys := range []FS{NewOS(), NewCounting(NewOS(), nil), NewInjecting(NewOS(), never)} {
		f, err := fsys.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		of, ok := f.(osFile)
		if !ok { // a wrapper: the OS file's descriptor from an open of its own
			g, err := NewOS().Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			of = g.(osFile)
		}
		fd := int(of.Fd())
		dropPages(t, fd, pages*page)
		if err := AdviseRandom(f); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(Prefetcher); !ok {
			t.Fatalf("%T has no Prefetch", f)
		}
		if err := Prefetch(f, int64(pages/2*page), int64(4*page)); err != nil {
			t.Fatalf("%T: Prefetch: %v", f, err)
		}
		// The read it starts completes in the background: wait for it.
		got := residentPages(t, fd, pages*page)
		for deadline := time.Now().Add(5 * time.Second); got < 4 && time.Now().Before(deadline); got = residentPages(t, fd, pages*page) {
			time.Sleep(time.Millisecond)
		}
		if got != 4 {
			t.Errorf("%T: four pages asked for: %d pages resident, want 4", f, got)
		}
		f.Close()
	}
	f, err := NewOS().Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := Prefetch(f, 0, int64(page)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Prefetch of a closed file: %v, want an error wrapping fs.ErrClosed", err)
	}
}

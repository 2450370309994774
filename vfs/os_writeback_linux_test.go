//go:build linux && (amd64 || arm64 || loong64 || riscv64 || s390x || mips64 || mips64le)

package vfs

import (
	"os"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestStartWriteback writes a file through a WritebackFile on a disk (a
// temporary directory, or the package's if that is a tmpfs, whose pages
// are never written back) and asks the kernel, with
// cachestat(2), for the dirty pages of the chunks whose writeback it
// started: they must become clean without a Sync. The system writes dirty
// pages back by itself only after 30 seconds (vm.dirty_expire_centisecs)
// or under memory pressure, so a StartWriteback that does nothing leaves
// them dirty past the test's wait. The file is the OS's, and the OS's
// through Counting and Injecting, which must pass the advice on.
func TestStartWriteback(t *testing.T) {
	holdPageCache(t) // a DropPageCache syncs every file first
	cases := []struct {
		name string
		fs   FS
	}{
		{"OS", NewOS()},
		{"Counting", NewCounting(NewOS(), nil)},
		{"Injecting", NewInjecting(NewOS(), nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := diskDir(t)
			f, err := c.fs.Create(dir + "/f")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			const chunk, chunks = 1 << 20, 8
			w := &WritebackFile{File: f, Chunk: chunk}
			buf := make([]byte, 64<<10)
			for i := range buf {
				buf[i] = byte(i)
			}
			for range chunk * chunks / len(buf) {
				if _, err := w.Write(buf); err != nil {
					t.Fatal(err)
				}
			}
			// A second descriptor of the same file, for cachestat: the
			// wrappers do not expose theirs.
			g, err := os.Open(dir + "/f")
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			deadline := time.Now().Add(20 * time.Second)
			for {
				dirty, err := cachestatDirty(g.Fd(), 0, chunk*chunks)
				if err != nil {
					t.Fatal(err)
				}
				if dirty == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of the %d pages whose writeback was started are still dirty or under writeback after 20 s", dirty, chunk*chunks/os.Getpagesize())
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// diskDir returns a temporary directory on a file system that writes its
// pages back: t.TempDir, unless that is a tmpfs, then one in the package's
// directory.
func diskDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	const tmpfsMagic = 0x01021994
	if st.Type != tmpfsMagic {
		return dir
	}
	dir, err := os.MkdirTemp(".", ".writeback-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// cachestatDirty returns the pages of [off, off+n) of the file fd that
// are dirty or under writeback (cachestat(2), Linux 6.5 and later).
func cachestatDirty(fd uintptr, off, n uint64) (uint64, error) {
	const sysCachestat = 451 // the same on every platform
	rng := struct{ off, len uint64 }{off, n}
	var cs struct{ cache, dirty, writeback, evicted, recentlyEvicted uint64 }
	if _, _, e := syscall.Syscall6(sysCachestat, fd, uintptr(unsafe.Pointer(&rng)), uintptr(unsafe.Pointer(&cs)), 0, 0, 0); e != 0 {
		return 0, os.NewSyscallError("cachestat", e)
	}
	return cs.dirty + cs.writeback, nil
}

//go:build linux && (amd64 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x || mips64 || mips64le)

package vfs

import (
	"io/fs"
	"syscall"
)

// fadvRandom and fadvWillNeed are POSIX_FADV_RANDOM and
// POSIX_FADV_WILLNEED.
const (
	fadvRandom   = 1
	fadvWillNeed = 3
)

// AdviseRandom turns off the kernel's read-ahead for f's open file
// (RandomAdviser). The raw system call takes the offset and length in
// single registers on 64-bit platforms only, hence the build constraint.
func (f osFile) AdviseRandom() error { return f.fadvise(0, 0, fadvRandom) }

// Prefetch starts reading [off, off+n) of f into the page cache
// (Prefetcher).
func (f osFile) Prefetch(off, n int64) error { return f.fadvise(off, n, fadvWillNeed) }

// fadvise gives f's open file the advice for [off, off+n) (n 0: to the end).
func (f osFile) fadvise(off, n int64, advice uintptr) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_FADVISE64, fd, uintptr(off), uintptr(n), advice, 0, 0)
	})
	if err != nil {
		return &fs.PathError{Op: "fadvise", Path: f.Name(), Err: fs.ErrClosed}
	}
	if errno != 0 {
		return &fs.PathError{Op: "fadvise", Path: f.Name(), Err: errno}
	}
	return nil
}

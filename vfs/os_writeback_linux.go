//go:build linux && (amd64 || arm64 || loong64 || riscv64 || s390x || mips64 || mips64le)

package vfs

import "syscall"

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start the writeback of the
// range's dirty pages not under writeback already, and do not wait.
const syncFileRangeWrite = 2

// StartWriteback starts writing [off, off+n) of f's written pages to the
// device (WritebackStarter). The 64-bit platforms of AdviseRandom but
// ppc64, whose system call (sync_file_range2) takes its arguments in
// another order: there the OS file has no StartWriteback.
func (f osFile) StartWriteback(off, n int64) error {
	return f.rawCall("sync_file_range", syscall.SYS_SYNC_FILE_RANGE, uintptr(off), uintptr(n), syncFileRangeWrite)
}

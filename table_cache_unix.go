//go:build unix

package bloomkv

import "syscall"

// processFileLimit returns the process's soft RLIMIT_NOFILE, or 0 if it
// cannot be read.
func processFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}

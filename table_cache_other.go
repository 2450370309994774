//go:build !unix

package bloomkv

// processFileLimit returns 0: no RLIMIT_NOFILE to honour here.
func processFileLimit() uint64 { return 0 }

//go:build unix

package procstat

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes of the blocks allocated to a file.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}

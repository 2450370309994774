//go:build !unix

package procstat

import "io/fs"

// allocated returns the file's length: no block count here.
func allocated(info fs.FileInfo) int64 { return info.Size() }

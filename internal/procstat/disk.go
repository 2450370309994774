package procstat

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// DiskBytes returns the bytes the files under dir take on disk: the blocks
// allocated to them (st_blocks, on Unix), so that a sparse or preallocated
// file counts what it holds, not its length; the lengths elsewhere. A file
// removed between the listing of its directory and its size (a database
// deleting an obsolete file meanwhile) takes nothing.
func DiskBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		total += allocated(info)
		return nil
	})
	return total, err
}

package bloomkv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// BenchmarkApplyEditDB measures DB.applyEditLocked — the manifest's
// append, the new version's build and install, the old one's release —
// of an edit that takes one table out of its level and puts it back, in
// trees of 100 to 10,000 tables: what every flush and compaction pays
// besides its tables, which should not grow with the tree beyond a copy
// of the slices of the level it changes.
func BenchmarkApplyEditDB(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			// Tables of about 1 KiB: 10 entries of 100 bytes each.
			opts := &Options{FS: vfs.NewMem(), TargetFileSize: 1 << 10, BaseLevelSize: 1 << 10, MemtableSize: 4 << 20,
				L0CompactionTrigger: noCompaction, L0SlowdownTrigger: noCompaction + 1, L0StopTrigger: noCompaction + 2}
			d, err := Open("/db", opts)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			value := bytes.Repeat([]byte("v"), 80)
			for i := range 10 * n {
				if err := d.Put(fmt.Appendf(nil, "key%012d", i), value, NoSync); err != nil {
					b.Fatal(err)
				}
			}
			if err := d.Compact(nil, nil); err != nil {
				b.Fatal(err)
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			var files []manifest.NewFile
			for level, f := range d.mu.current.Files() {
				files = append(files, manifest.NewFile{Level: level, Meta: f})
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f := files[i%len(files)]
				e := &manifest.VersionEdit{DeletedFiles: []manifest.DeletedFile{{Level: f.Level, FileNum: f.Meta.FileNum}}, NewFiles: []manifest.NewFile{f}}
				if err := d.applyEditLocked(e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(files)), "tables")
		})
	}
}

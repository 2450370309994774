package bloomkv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestTopLevelCompression fills small trees in random and in sequential
// order, with the default TopLevelCompression (none) and with snappy, and
// checks each live table's compression against its own file's properties
// and against where it lives: L0 tables have TopLevelCompression; the
// last level's, Compression, however the data got there — a sequential
// load moves tables down unchanged, and must not carry uncompressed ones
// to the bottom; every other table one of the two. Every key reads back.
func TestTopLevelCompression(t *testing.T) {
	const keys = 6000
	for _, order := range []string{"random", "sequential"} {
		for _, top := range []Compression{DefaultCompression, SnappyCompression} {
			t.Run(fmt.Sprintf("%s/top=%v", order, top), func(t *testing.T) {
				opts := &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, BaseLevelSize: 64 << 10, LevelMultiplier: 4,
					TargetFileSize: 64 << 10, Compression: SnappyCompression, TopLevelCompression: top}
				d, err := Open("db", opts)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				perm := rand.New(rand.NewPCG(3, 3)).Perm(keys)
				value := func(n int) []byte { return bytes.Repeat(fmt.Appendf(nil, "v%07d", n), 12) }
				for i := range keys {
					n := i
					if order == "random" {
						n = perm[i]
					}
					if err := d.Put(key(n), value(n), NoSync); err != nil {
						t.Fatal(err)
					}
				}
				d.waitForCompactions(t)
				wantTop := top
				if wantTop == DefaultCompression {
					wantTop = NoCompression
				}

				tables, err := d.Tables()
				if err != nil {
					t.Fatal(err)
				}
				d.mu.Lock()
				props := map[uint64]Compression{}
				for _, level := range d.mu.current.tables {
					for _, tb := range level {
						props[tb.meta.FileNum] = tb.reader.Properties().Compression
					}
				}
				d.mu.Unlock()
				levels := map[int]bool{}
				for _, tb := range tables {
					levels[tb.Level] = true
					if got := props[tb.FileNum]; tb.Compression != got {
						t.Errorf("L%d %06d: the manifest says %v, its file %v", tb.Level, tb.FileNum, tb.Compression, got)
					}
					switch {
					case tb.Level == 0 && tb.Compression != wantTop:
						t.Errorf("L0 %06d: %v, want TopLevelCompression %v", tb.FileNum, tb.Compression, wantTop)
					case tb.Level == manifest.NumLevels-1 && tb.Compression != SnappyCompression:
						t.Errorf("L%d %06d: %v, want Compression snappy", tb.Level, tb.FileNum, tb.Compression)
					case tb.Compression != wantTop && tb.Compression != SnappyCompression:
						t.Errorf("L%d %06d: %v, neither compression", tb.Level, tb.FileNum, tb.Compression)
					}
				}
				if !levels[manifest.NumLevels-1] {
					t.Fatalf("the tree has levels %v: it needs the last level to test", levels)
				}
				if m := d.Metrics(); m.BaseLevel >= manifest.NumLevels-1 {
					t.Fatalf("the base level is the last: the fill never compacted into a base level above it\n%s", m)
				}
				for n := range keys {
					got, err := d.Get(key(n))
					if err != nil || !bytes.Equal(got, value(n)) {
						t.Fatalf("Get(%s) = %.16q, %v", key(n), got, err)
					}
				}
			})
		}
	}
}

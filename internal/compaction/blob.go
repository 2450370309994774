package compaction

import (
	"cmp"
	"slices"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Dead values in blob files are reclaimed as RocksDB's integrated BlobDB
// reclaims them: a compaction that meets a handle into a blob file whose
// dead share has reached Options.BlobDeadShare reads the value and writes
// it to a blob file of its own, and the table it writes references that
// one instead (Compaction.RelocateBlobs, runner.writeBlob). Once no table
// references the old file it leaves the version, and the DB deletes it
// when no reader needs it. A file whose tables no compaction is due to
// take — the deepest level's, in a DB that has stopped writing — gets
// one of its own: when nothing else is due, the picker rewrites a table
// that references it into its own level (pickBlobRewrite).
//
// Pebble instead rewrites the blob file itself, its live values into a
// new file under the same blob file ID, and the manifest remaps the ID;
// its handles name a block and an index within it, so that they survive
// the rewrite. That spares rewriting the tables, but needs the
// indirection, and the rewrite has to read every handle of the file's
// tables to learn which values are live — it keeps per-table bitmaps for
// that. Here the tables are small (keys and handles, the values elsewhere),
// so rewriting the few that reference a file is cheap, the relocation is
// the ordinary compaction path (its keep rule, crash safety and manifest
// edit), and a handle names a file and an offset, nothing more.

// relocatable returns the blob files of v whose dead share has reached
// o.BlobDeadShare; nil if none, or if reclaiming is off.
func relocatable(v *manifest.Version, o *Options) map[uint64]bool {
	if o.BlobDeadShare <= 0 {
		return nil
	}
	var m map[uint64]bool
	for _, b := range v.Blobs {
		if b.DeadShare() >= o.BlobDeadShare {
			if m == nil {
				m = map[uint64]bool{}
			}
			m[b.FileNum] = true
		}
	}
	return m
}

// pickBlobRewrite returns a rewrite of one table of L1 or deeper into its
// own level that relocates the live values of the blob files whose dead
// share has reached o.BlobDeadShare, the file with the largest dead share
// first, among tables no running compaction takes; nil if there is none.
// L0's tables are left to the L0 compactions, which come soon: an L0
// rewrite would hold up the next one.
func pickBlobRewrite(v *manifest.Version, o *Options, running []*Compaction, busy map[uint64]bool) *Compaction {
	reloc := relocatable(v, o)
	if len(reloc) == 0 {
		return nil
	}
	var files []manifest.BlobFile
	for _, b := range v.Blobs {
		if reloc[b.FileNum] {
			files = append(files, b)
		}
	}
	slices.SortStableFunc(files, func(a, b manifest.BlobFile) int { return cmp.Compare(b.DeadShare(), a.DeadShare()) })
	for _, b := range files {
		for level := 1; level < manifest.NumLevels; level++ {
			for _, f := range v.Levels[level] {
				if busy[f.FileNum] || !references(f, b.FileNum) {
					continue
				}
				c := &Compaction{Level: level, OutputLevel: level, BlobRewrite: true}
				c.Inputs[0] = []*manifest.FileMetadata{f}
				c.Smallest, c.Largest = keyRange(c.Inputs[0])
				c.Bottommost = true
				for below := level + 1; below < manifest.NumLevels; below++ {
					if len(v.Overlapping(below, c.Smallest, c.Largest)) > 0 {
						c.Bottommost = false
						break
					}
				}
				if !conflictsAny(c, running, busy) {
					c.complete(v, o)
					return c
				}
			}
		}
	}
	return nil
}

// references reports whether table f holds handles into blob file num.
func references(f *manifest.FileMetadata, num uint64) bool {
	_, found := slices.BinarySearchFunc(f.BlobRefs, num, func(r manifest.BlobRef, n uint64) int { return cmp.Compare(r.FileNum, n) })
	return found
}

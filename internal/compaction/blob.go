package compaction

import (
	"cmp"
	"iter"
	"slices"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

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
	for level, f := range rewriteCandidates(v, o) {
		if busy[f.FileNum] {
			continue
		}
		c := newRewrite(v, level, f)
		c.BlobRewrite = true
		if !conflictsAny(c, running, busy) {
			c.complete(v, o)
			return c
		}
	}
	return nil
}

// newRewrite returns a compaction of table f of level into its own level,
// to be completed: a rewrite, never a trivial move (IsTrivialMove).
func newRewrite(v *manifest.Version, level int, f *manifest.FileMetadata) *Compaction {
	c := &Compaction{Level: level, OutputLevel: level}
	c.Inputs[0] = []*manifest.FileMetadata{f}
	c.Smallest, c.Largest = keyRange(c.Inputs[0])
	c.Bottommost = bottommost(v, level, c.Smallest, c.Largest)
	return c
}

// BlobRewriteDue reports whether a table of v is due a rewrite to
// relocate the values of blob files past o.BlobDeadShare (see
// pickBlobRewrite), running or not.
func BlobRewriteDue(v *manifest.Version, o *Options) bool {
	for range rewriteCandidates(v, o) {
		return true
	}
	return false
}

// rewriteCandidates yields, with their levels, the tables of L1 and
// deeper that reference a blob file of v whose dead share has reached
// o.BlobDeadShare: the files' tables by the files' dead shares, largest
// first, each file's tables level by level.
func rewriteCandidates(v *manifest.Version, o *Options) iter.Seq2[int, *manifest.FileMetadata] {
	return func(yield func(int, *manifest.FileMetadata) bool) {
		reloc := relocatable(v, o)
		if len(reloc) == 0 {
			return
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
					if references(f, b.FileNum) && !yield(level, f) {
						return
					}
				}
			}
		}
	}
}

// references reports whether table f holds handles into blob file num.
func references(f *manifest.FileMetadata, num uint64) bool {
	_, found := slices.BinarySearchFunc(f.BlobRefs, num, func(r manifest.BlobRef, n uint64) int { return cmp.Compare(r.FileNum, n) })
	return found
}

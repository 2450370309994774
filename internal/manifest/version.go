package manifest

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
)

// NumLevels is the number of levels of the tree, L0 to L6.
const NumLevels = 7

// Version is the set of tables that make up the tree at one moment. A Version
// is immutable once built (by a Builder), and so safe for concurrent use:
// readers hold one for as long as they read, and the files it names must not
// be deleted until no reader holds it — a reference count the DB keeps, not
// this package.
//
// L0 tables are flushed memtables and may overlap. They are ordered newest
// first: by LargestSeqNum descending, ties broken by FileNum descending (a
// later file was created later), so that a point read that stops at the first
// version it finds stops at the newest. L1 and below are sorted by key range
// and a user key is in at most one table of a level, so that a read needs at
// most one table per level, found by binary search.
type Version struct {
	// Levels[i] are the tables of level i in the order above. Read only:
	// the slices may be shared with other versions.
	Levels [NumLevels][]*FileMetadata
	// Blobs are the blob files the tables reference, in file-number
	// order, each with the bytes they reference (see blobBuilder's
	// invariant). Read only.
	Blobs []BlobFile
	// index is the tables by file number, for the next version's Builder;
	// nil for a version not built by one.
	index *fileIndex
}

// NumFiles returns the number of tables in level.
func (v *Version) NumFiles(level int) int { return len(v.Levels[level]) }

// LevelSize returns the total size in bytes of the tables in level.
func (v *Version) LevelSize(level int) uint64 {
	var n uint64
	for _, f := range v.Levels[level] {
		n += f.Size
	}
	return n
}

// LevelDataSize returns the bytes of the data of level's tables: their
// files and the values in blob files their handles reference. The tree's
// shape follows it, so that separated values count where they belong: a
// level of small tables holding handles to much data is a large level,
// whose stale versions compactions must drop for their values' space to
// come back.
func (v *Version) LevelDataSize(level int) uint64 {
	var n uint64
	for _, f := range v.Levels[level] {
		n += f.Size
		for _, r := range f.BlobRefs {
			n += r.Bytes
		}
	}
	return n
}

// Files yields every table with its level, L0 first, each level in its order.
func (v *Version) Files() iter.Seq2[int, *FileMetadata] {
	return func(yield func(int, *FileMetadata) bool) {
		for level, files := range v.Levels {
			for _, f := range files {
				if !yield(level, f) {
					return
				}
			}
		}
	}
}

// FileNums yields the file number of every table in the version. A table file
// whose number no live version yields is obsolete. (Blob files are in
// Blobs.)
func (v *Version) FileNums() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for _, f := range v.Files() {
			if !yield(f.FileNum) {
				return
			}
		}
	}
}

// Overlapping returns the tables of level whose key range intersects the
// user-key range [lo, hi], both inclusive, in the level's order. For L1 and
// below the result is a subslice of the level: read only. For L0 it does not
// widen the range by the tables it finds; a compaction that must take every
// L0 table overlapping its inputs does that itself.
func (v *Version) Overlapping(level int, lo, hi []byte) []*FileMetadata {
	files := v.Levels[level]
	if level == 0 {
		var out []*FileMetadata
		for _, f := range files {
			if f.Overlaps(lo, hi) {
				out = append(out, f)
			}
		}
		return out
	}
	// The level is sorted and disjoint, so both bounds are sorted too: the
	// overlapping tables are the run from the first that ends at or after
	// lo to the last that starts at or before hi.
	i := sort.Search(len(files), func(i int) bool { return bytes.Compare(files[i].Largest.UserKey, lo) >= 0 })
	j := i + sort.Search(len(files)-i, func(k int) bool { return bytes.Compare(files[i+k].Smallest.UserKey, hi) > 0 })
	return files[i:j:j]
}

// String lists the version's tables level by level, for tests and tools.
func (v *Version) String() string {
	var sb strings.Builder
	for level, files := range v.Levels {
		if len(files) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "L%d:\n", level)
		for _, f := range files {
			fmt.Fprintf(&sb, "  %s\n", f)
		}
	}
	return sb.String()
}

// CompareInLevel orders two tables of level as the level orders them: L0
// newest first, the deeper levels by smallest key.
func CompareInLevel(level int, a, b *FileMetadata) int {
	if level == 0 {
		return l0Less(a, b)
	}
	return bySmallest(a, b)
}

// l0Less orders L0 newest first: LargestSeqNum descending, then FileNum
// descending.
func l0Less(a, b *FileMetadata) int {
	switch {
	case a.LargestSeqNum != b.LargestSeqNum:
		if a.LargestSeqNum > b.LargestSeqNum {
			return -1
		}
		return 1
	case a.FileNum > b.FileNum:
		return -1
	case a.FileNum < b.FileNum:
		return 1
	}
	return 0
}

// CheckInvariants verifies the ordering invariants of every level (see the
// package doc), each table's Validate, and that no file number appears
// twice. Builder.Finish makes the same checks of the levels it changes; this
// checks a whole version, for the tests of this package, of compaction and
// of the DB.
func (v *Version) CheckInvariants() error {
	seen := make(map[uint64]int)
	for level, files := range v.Levels {
		for _, f := range files {
			if prev, ok := seen[f.FileNum]; ok {
				return fmt.Errorf("manifest: table %06d is in L%d and L%d", f.FileNum, prev, level)
			}
			seen[f.FileNum] = level
		}
		if err := checkLevel(level, files); err != nil {
			return err
		}
	}
	if err := v.checkIndex(seen); err != nil {
		return err
	}
	return v.checkBlobs()
}

// checkIndex verifies fileIndex's invariant: the index lists exactly the
// tables of levels, each with its level and metadata.
func (v *Version) checkIndex(levels map[uint64]int) error {
	if v.index == nil {
		return nil
	}
	n := 0
	var err error
	v.index.mu.Lock()
	defer v.index.mu.Unlock()
	v.index.tree.Ascend(func(loc fileLoc) bool {
		n++
		level, ok := levels[loc.num]
		switch {
		case !ok:
			err = fmt.Errorf("manifest: the index lists table %06d, which no level holds", loc.num)
		case level != loc.level:
			err = fmt.Errorf("manifest: the index lists table %06d in L%d, but it is in L%d", loc.num, loc.level, level)
		case !slices.Contains(v.Levels[level], loc.meta):
			err = fmt.Errorf("manifest: the index's metadata of table %06d is not L%d's", loc.num, level)
		}
		return err == nil
	})
	if err == nil && n != len(levels) {
		err = fmt.Errorf("manifest: the index lists %d tables, the levels %d", n, len(levels))
	}
	return err
}

// checkLevel verifies the invariants of one level.
func checkLevel(level int, files []*FileMetadata) error {
	for _, f := range files {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("manifest: L%d: %w", level, err)
		}
	}
	if level == 0 {
		for i := 1; i < len(files); i++ {
			if l0Less(files[i-1], files[i]) >= 0 {
				return fmt.Errorf("manifest: L0 out of order: %s before %s (want largest seqnum, then file number, descending)",
					files[i-1], files[i])
			}
		}
		// A read stops at the first L0 table holding the key, so of two
		// tables that share keys the one first in order must hold only
		// newer versions. Flushes guarantee it; L0 is small, so checking
		// every pair is cheap.
		for i, newer := range files {
			for _, older := range files[i+1:] {
				if newer.Overlaps(older.Smallest.UserKey, older.Largest.UserKey) && newer.SmallestSeqNum <= older.LargestSeqNum {
					return fmt.Errorf("manifest: L0 tables %06d (seqnums %d-%d) and %06d (seqnums %d-%d) share keys and interleave seqnums",
						newer.FileNum, newer.SmallestSeqNum, newer.LargestSeqNum, older.FileNum, older.SmallestSeqNum, older.LargestSeqNum)
				}
			}
		}
		return nil
	}
	for i := 1; i < len(files); i++ {
		// Strict on user keys: versions of one user key in two tables of
		// a level would make the one table a point read's binary search
		// finds the wrong answer.
		if bytes.Compare(files[i-1].Largest.UserKey, files[i].Smallest.UserKey) >= 0 {
			return fmt.Errorf("manifest: L%d tables overlap or are out of order: %s before %s", level, files[i-1], files[i])
		}
	}
	return nil
}

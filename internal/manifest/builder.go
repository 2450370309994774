package manifest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/google/btree"
)

// Builder applies a sequence of edits to a base version and builds the
// result. Each Apply checks its edit against the tables as the edits before
// it left them; Finish checks the level invariants once, at the end, so that
// replaying a long manifest costs one sort, not one per edit.
//
// What a Builder does costs what the edits change, not what the base
// holds: it finds tables through the base's index (a B-tree by file
// number, cloned copy-on-write), and Finish shares every level the edits
// left alone with the base, and splices the others, checking the order
// only where a table entered. Only the slices of the levels that changed
// are copied.
//
// After Apply or Finish returns an error the Builder is in an unspecified
// state and must be discarded.
type Builder struct {
	base *Version
	// baseFiles is the base's tables by file number (its index, or one
	// built from its Levels for a version built without a Builder); read
	// only. changes are the tables edits added (gone false) or deleted
	// (gone true) since: the version being built is baseFiles with
	// changes applied, which Finish makes its index.
	baseFiles *btree.BTreeG[fileLoc]
	changes   map[uint64]fileChange
	// added and deleted are the changes to each level of base: a table of
	// base is kept unless deleted; added tables are spliced in.
	added   [NumLevels]map[uint64]*FileMetadata
	deleted [NumLevels]map[uint64]*FileMetadata
	blobs   blobBuilder
}

// fileChange is a table an edit added, or one it deleted (gone).
type fileChange struct {
	loc  fileLoc
	gone bool
}

// NewBuilder returns a Builder starting from base; nil means the empty
// version.
func NewBuilder(base *Version) *Builder {
	if base == nil {
		base = &Version{}
	}
	b := &Builder{base: base, changes: make(map[uint64]fileChange), blobs: blobBuilder{base: base}}
	if base.index == nil {
		b.baseFiles = base.cloneIndex()
	}
	return b
}

// lookup returns where table num is in the version being built.
func (b *Builder) lookup(num uint64) (fileLoc, bool) {
	if c, ok := b.changes[num]; ok {
		return c.loc, !c.gone
	}
	return b.inBase(num)
}

// inBase returns where table num is in the base version.
func (b *Builder) inBase(num uint64) (fileLoc, bool) {
	if b.baseFiles != nil {
		return b.baseFiles.Get(fileLoc{num: num})
	}
	return b.base.index.get(num)
}

// Apply applies the table changes of edit: its blob files are added, its
// deleted files removed, then its new files added (each a deep copy, so
// the edit can be reused), and the live bytes of the blob files follow
// the tables' references. A
// deleted file must be in the version, at the level the edit says; a new file
// must not be in it already, and must pass FileMetadata.Validate.
// The counters of edit are not the Builder's business; see State.Apply.
func (b *Builder) Apply(edit *VersionEdit) error {
	for _, m := range edit.NewBlobFiles {
		if err := b.blobs.add(m); err != nil {
			return err
		}
	}
	for _, d := range edit.DeletedFiles {
		if d.Level < 0 || d.Level >= NumLevels {
			return fmt.Errorf("manifest: edit deletes table %06d from L%d, which does not exist", d.FileNum, d.Level)
		}
		loc, ok := b.lookup(d.FileNum)
		if !ok {
			return fmt.Errorf("manifest: edit deletes table %06d from L%d, but no level holds it", d.FileNum, d.Level)
		}
		if loc.level != d.Level {
			return fmt.Errorf("manifest: edit deletes table %06d from L%d, but it is in L%d", d.FileNum, d.Level, loc.level)
		}
		if err := b.blobs.ref(loc.meta, -1); err != nil {
			return err
		}
		if _, ok := b.added[loc.level][d.FileNum]; ok {
			// Added by an earlier edit: gone as if never added, so that
			// replaying a long manifest keeps only the live tables.
			delete(b.added[loc.level], d.FileNum)
			if _, ok := b.inBase(d.FileNum); ok {
				b.changes[d.FileNum] = fileChange{loc: loc, gone: true} // moved, then deleted
			} else {
				delete(b.changes, d.FileNum)
			}
		} else {
			if b.deleted[loc.level] == nil {
				b.deleted[loc.level] = make(map[uint64]*FileMetadata)
			}
			b.deleted[loc.level][d.FileNum] = loc.meta
			b.changes[d.FileNum] = fileChange{loc: loc, gone: true}
		}
	}
	for _, n := range edit.NewFiles {
		if n.Meta == nil {
			return fmt.Errorf("manifest: edit adds a table to L%d without metadata", n.Level)
		}
		if n.Level < 0 || n.Level >= NumLevels {
			return fmt.Errorf("manifest: edit adds table %06d to L%d, which does not exist", n.Meta.FileNum, n.Level)
		}
		if err := n.Meta.Validate(); err != nil {
			return fmt.Errorf("manifest: edit adds to L%d an %w", n.Level, err)
		}
		if loc, ok := b.lookup(n.Meta.FileNum); ok {
			return fmt.Errorf("manifest: edit adds table %06d to L%d, but it is already in L%d", n.Meta.FileNum, n.Level, loc.level)
		}
		if err := b.blobs.ref(n.Meta, 1); err != nil {
			return err
		}
		if b.added[n.Level] == nil {
			b.added[n.Level] = make(map[uint64]*FileMetadata)
		}
		c := n.Meta.Clone()
		b.added[n.Level][c.FileNum] = c
		b.changes[c.FileNum] = fileChange{loc: fileLoc{num: c.FileNum, level: n.Level, meta: c}}
	}
	return nil
}

// Finish builds the version and checks the invariants of every level that
// changed. Unchanged levels share their slices with the base version. Blob
// files no table references are left out.
func (b *Builder) Finish() (*Version, error) {
	v := &Version{Blobs: b.blobs.finish()}
	changed := false
	for level := range NumLevels {
		old := b.base.Levels[level]
		if len(b.added[level]) == 0 && len(b.deleted[level]) == 0 {
			v.Levels[level] = old
			continue
		}
		changed = true
		var files []*FileMetadata
		var err error
		if level == 0 {
			files, err = b.finishL0(old)
		} else {
			files, err = b.splice(level, old)
		}
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			files = nil
		}
		v.Levels[level] = files
	}
	switch {
	case !changed && b.base.index != nil:
		v.index = b.base.index
	case !changed:
		v.index = &fileIndex{tree: b.baseFiles.Clone()}
	default:
		v.index = &fileIndex{tree: b.index()}
	}
	return v, nil
}

// index returns the version's index: the base's, cloned, with the
// changes applied, in file-number order (a B-tree takes an ascending run
// of insertions fastest).
func (b *Builder) index() *btree.BTreeG[fileLoc] {
	var t *btree.BTreeG[fileLoc]
	if b.baseFiles != nil {
		t = b.baseFiles.Clone() // the Builder's own, which later lookups read
	} else {
		t = b.base.index.clone()
	}
	for _, num := range slices.Sorted(maps.Keys(b.changes)) {
		if c := b.changes[num]; c.gone {
			t.Delete(c.loc)
		} else {
			t.ReplaceOrInsert(c.loc)
		}
	}
	return t
}

// finishL0 returns L0 with the changes: rebuilt and checked whole, as L0
// is a few tables and its check compares every pair.
func (b *Builder) finishL0(old []*FileMetadata) ([]*FileMetadata, error) {
	files := make([]*FileMetadata, 0, len(old)+len(b.added[0])-len(b.deleted[0]))
	for _, f := range old {
		if b.deleted[0][f.FileNum] == nil {
			files = append(files, f)
		}
	}
	files = slices.AppendSeq(files, maps.Values(b.added[0]))
	slices.SortFunc(files, l0Less)
	if err := checkLevel(0, files); err != nil {
		return nil, err
	}
	return files, nil
}

// splice returns level (L1 or deeper) of the base, old, with the changes:
// the deleted tables found by binary search, the added ones sorted and
// merged in, and the order checked on both sides of each added table. A
// deletion cannot break the order of the tables it leaves, whose key
// ranges ascend already, so those are not checked again: the cost is a
// copy of the level and a search per change.
func (b *Builder) splice(level int, old []*FileMetadata) ([]*FileMetadata, error) {
	dels := make([]int, 0, len(b.deleted[level]))
	for num, m := range b.deleted[level] {
		i, ok := slices.BinarySearchFunc(old, m, bySmallest)
		if !ok || old[i] != m {
			return nil, fmt.Errorf("manifest: L%d does not hold table %06d where its index says", level, num)
		}
		dels = append(dels, i)
	}
	slices.Sort(dels)
	adds := slices.SortedFunc(maps.Values(b.added[level]), bySmallest)

	files := make([]*FileMetadata, 0, len(old)-len(dels)+len(adds))
	// copyOld appends old[lo:hi] but the deleted tables.
	copyOld := func(lo, hi int) {
		for len(dels) > 0 && dels[0] < hi {
			files = append(files, old[lo:dels[0]]...)
			lo, dels = dels[0]+1, dels[1:]
		}
		files = append(files, old[lo:hi]...)
	}
	at := make([]int, len(adds)) // where each added table is in files
	next := 0
	for k, a := range adds {
		i, _ := slices.BinarySearchFunc(old, a, bySmallest)
		i = max(i, next)
		copyOld(next, i)
		next = i
		at[k] = len(files)
		files = append(files, a)
	}
	copyOld(next, len(old))
	for _, i := range at {
		for _, j := range [2]int{i - 1, i + 1} {
			if j < 0 || j+1 > len(files) {
				continue
			}
			lo, hi := files[min(i, j)], files[max(i, j)]
			// Strict on user keys: versions of one user key in two tables of
			// a level would make the one table a point read's binary search
			// finds the wrong answer.
			if bytes.Compare(lo.Largest.UserKey, hi.Smallest.UserKey) >= 0 {
				return nil, fmt.Errorf("manifest: L%d tables overlap or are out of order: %s before %s", level, lo, hi)
			}
		}
	}
	return files, nil
}

// bySmallest orders the tables of a level below L0: by smallest key.
func bySmallest(x, y *FileMetadata) int { return base.CompareInternal(x.Smallest, y.Smallest) }

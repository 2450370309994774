package manifest

import (
	"fmt"
	"maps"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
)

// Builder applies a sequence of edits to a base version and builds the
// result. Each Apply checks its edit against the tables as the edits before
// it left them; Finish checks the level invariants once, at the end, so that
// replaying a long manifest costs one sort, not one per edit.
//
// After Apply or Finish returns an error the Builder is in an unspecified
// state and must be discarded.
type Builder struct {
	base *Version
	// level holds the level of every table of the version being built.
	level map[uint64]int
	// added and deleted are the changes to each level of base: a table of
	// base is kept unless deleted; added tables are appended.
	added   [NumLevels]map[uint64]*FileMetadata
	deleted [NumLevels]map[uint64]bool
	// meta holds the metadata of every table of the version being built,
	// for the blob references of those an edit deletes.
	meta  map[uint64]*FileMetadata
	blobs blobBuilder
}

// NewBuilder returns a Builder starting from base; nil means the empty
// version.
func NewBuilder(base *Version) *Builder {
	if base == nil {
		base = &Version{}
	}
	b := &Builder{base: base, level: make(map[uint64]int), meta: make(map[uint64]*FileMetadata), blobs: newBlobBuilder(base)}
	for level, f := range base.Files() {
		b.level[f.FileNum] = level
		b.meta[f.FileNum] = f
	}
	return b
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
		level, ok := b.level[d.FileNum]
		if !ok {
			return fmt.Errorf("manifest: edit deletes table %06d from L%d, but no level holds it", d.FileNum, d.Level)
		}
		if level != d.Level {
			return fmt.Errorf("manifest: edit deletes table %06d from L%d, but it is in L%d", d.FileNum, d.Level, level)
		}
		delete(b.level, d.FileNum)
		if err := b.blobs.ref(b.meta[d.FileNum], -1); err != nil {
			return err
		}
		delete(b.meta, d.FileNum)
		if _, ok := b.added[level][d.FileNum]; ok {
			delete(b.added[level], d.FileNum)
		} else {
			if b.deleted[level] == nil {
				b.deleted[level] = make(map[uint64]bool)
			}
			b.deleted[level][d.FileNum] = true
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
		if level, ok := b.level[n.Meta.FileNum]; ok {
			return fmt.Errorf("manifest: edit adds table %06d to L%d, but it is already in L%d", n.Meta.FileNum, n.Level, level)
		}
		if err := b.blobs.ref(n.Meta, 1); err != nil {
			return err
		}
		b.level[n.Meta.FileNum] = n.Level
		if b.added[n.Level] == nil {
			b.added[n.Level] = make(map[uint64]*FileMetadata)
		}
		c := n.Meta.Clone()
		b.added[n.Level][n.Meta.FileNum] = c
		b.meta[c.FileNum] = c
	}
	return nil
}

// Finish builds the version and checks the invariants of every level that
// changed. Unchanged levels share their slices with the base version. Blob
// files no table references are left out.
func (b *Builder) Finish() (*Version, error) {
	v := &Version{Blobs: b.blobs.finish()}
	for level := range NumLevels {
		old := b.base.Levels[level]
		if len(b.added[level]) == 0 && len(b.deleted[level]) == 0 {
			v.Levels[level] = old
			continue
		}
		files := make([]*FileMetadata, 0, len(old)+len(b.added[level])-len(b.deleted[level]))
		for _, f := range old {
			if !b.deleted[level][f.FileNum] {
				files = append(files, f)
			}
		}
		files = slices.AppendSeq(files, maps.Values(b.added[level]))
		if level == 0 {
			slices.SortFunc(files, l0Less)
		} else {
			slices.SortFunc(files, func(x, y *FileMetadata) int { return base.CompareInternal(x.Smallest, y.Smallest) })
		}
		if err := checkLevel(level, files); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			files = nil
		}
		v.Levels[level] = files
	}
	return v, nil
}

package manifest

import (
	"sync"

	"github.com/google/btree"
)

// fileLoc is where a table of a version is: its level and metadata, keyed
// by file number in a fileIndex.
type fileLoc struct {
	num   uint64
	level int
	meta  *FileMetadata
}

func fileLocLess(a, b fileLoc) bool { return a.num < b.num }

// indexDegree is the degree of a fileIndex's B-tree: nodes of up to 63
// entries, so that a tree of 100,000 tables is three levels deep and an
// edit copies a few nodes of a few hundred bytes.
const indexDegree = 32

// fileIndex is a version's tables by file number: how a Builder finds the
// level and metadata of a table an edit deletes, and whether a table it
// adds is in the version already, without a pass over the version.
//
// INVARIANT: tree holds exactly the tables of the version's Levels, each
// at its level, and is never modified once the version is built: a
// Builder modifies a clone (copy-on-write, so that the clone costs
// nothing and a change copies only the nodes on its path).
type fileIndex struct {
	// mu serializes the uses of tree: a Clone writes its copy-on-write
	// context, and two Builders may start from one version at once.
	mu   sync.Mutex
	tree *btree.BTreeG[fileLoc]
}

// clone returns a copy of x that the caller may modify: a lazy clone.
func (x *fileIndex) clone() *btree.BTreeG[fileLoc] {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tree.Clone()
}

// get returns the table numbered num.
func (x *fileIndex) get(num uint64) (fileLoc, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tree.Get(fileLoc{num: num})
}

// cloneIndex returns a copy of v's index that the caller may modify: a
// lazy clone of the index a Builder made, or, for a version built some
// other way (a literal, as tests and tools make), one built from Levels.
func (v *Version) cloneIndex() *btree.BTreeG[fileLoc] {
	if v.index != nil {
		return v.index.clone()
	}
	t := btree.NewG(indexDegree, fileLocLess)
	for level, f := range v.Files() {
		t.ReplaceOrInsert(fileLoc{num: f.FileNum, level: level, meta: f})
	}
	return t
}

package vfs

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
)

// CrashOptions choose how much of what was not made durable a crash keeps.
// The zero value keeps nothing beyond the durability contract.
type CrashOptions struct {
	// TornWrites, if set, lets each file keep a prefix of its unsynced tail,
	// as a disk that wrote back some cached pages before power failed does: a
	// file whose contents extend its durable contents comes back as the
	// durable contents followed by the first k bytes of the extension, k drawn
	// uniformly from 0 to the extension's length inclusive. It is how a test
	// produces a torn log tail.
	TornWrites bool

	// Seed drives the draws TornWrites makes. The same file system state,
	// options and seed always give the same crash.
	Seed uint64
}

// CrashClone returns the file system a crash at this instant would leave
// behind, leaving m itself untouched (handles open on m keep working on m and
// never affect the clone). The model:
//
//   - The root directory survives. A directory's entries are those it had at
//     its last SyncDir (or directory File.Sync); entries created, removed or
//     renamed since are undone. So a file created in a directory never
//     synced is gone, a removed file comes back, and a renamed file is back
//     under its old name — with whatever file the new name held before, if
//     any. A directory that is gone takes everything below it along, synced
//     or not.
//   - A rename between two directories is two entry changes, one per
//     directory, each durable with its own directory's SyncDir; if only the
//     destination was synced, the file comes back under both names, as two
//     links to one file.
//   - A surviving file holds its contents as of its last File.Sync through
//     any handle (empty if never synced); writes and truncations since are
//     undone, except for the torn tail CrashOptions.TornWrites may keep.
//   - Locks are released, as they are when a process dies.
//
// INVARIANT: everything in the clone is durable, so crashing a clone again
// gives an identical file system.
func (m *MemFS) CrashClone(opts CrashOptions) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := crasher{
		opts:  opts,
		rng:   rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
		files: map[*memNode]*memNode{},
	}
	return &MemFS{root: c.dir(m.root)}
}

// crasher builds a post-crash tree. It visits entries in name order, so that
// its random draws, and therefore the clone, depend only on state and seed.
type crasher struct {
	opts CrashOptions
	rng  *rand.Rand
	// files maps a surviving file to its clone, so that two surviving names
	// of one file stay links to one file.
	files map[*memNode]*memNode
}

func (c *crasher) dir(d *memNode) *memNode {
	out := newMemDir()
	for _, name := range slices.Sorted(maps.Keys(d.syncedChildren)) {
		child := d.syncedChildren[name]
		if child.isDir {
			out.children[name] = c.dir(child)
		} else {
			out.children[name] = c.file(child)
		}
	}
	out.syncedChildren = maps.Clone(out.children)
	return out
}

func (c *crasher) file(f *memNode) *memNode {
	if clone, ok := c.files[f]; ok {
		return clone
	}
	keep := f.synced
	if tail := len(f.data) - len(f.synced); c.opts.TornWrites && tail > 0 && bytes.HasPrefix(f.data, f.synced) {
		keep = f.data[:len(f.synced)+c.rng.IntN(tail+1)]
	}
	data := bytes.Clone(keep)
	clone := &memNode{data: data, synced: data, syncedShared: true}
	c.files[f] = clone
	return clone
}

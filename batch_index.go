package bloomkv

import (
	"bytes"
	"errors"
	"sort"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/google/btree"
)

// An indexed batch is a Batch that can be read: Get and NewIter see its
// own writes, range deletions included, over the DB as of a snapshot —
// one the batch takes when DB.NewIndexedBatch makes it, or the Snapshot
// that made it.
//
// As in Pebble, the batch's writes are versions of their keys like any
// other, with sequence numbers of their own: write i of the batch is
// batchSeqBit|i, above every sequence number the DB hands out, so that in
// base.CompareInternal order the batch's versions of a key come before
// the DB's, and a later write of the batch before an earlier one. Reads
// then need nothing of their own: the batch is one more place, newest of
// all, of the point lookup (DB.lookup's order) and one more child, the
// first, of the Iterator's merge, whose range tombstones delete what they
// cover below them as a memtable's do. The Iterator's visibility rule
// takes the batch's sequence numbers as visible at every read sequence
// number (iterState.hidden).
//
// INVARIANT: the DB's sequence numbers stay below batchSeqBit (2^55: a
// million writes a second for a thousand years), so a batch's versions
// are newer than every version of the DB.

// batchSeqBit marks the sequence numbers of an indexed batch's writes.
const batchSeqBit base.SeqNum = 1 << 55

// ErrNotIndexed is returned by the reads of a Batch that is not indexed:
// only DB.NewIndexedBatch and Snapshot.NewIndexedBatch make batches that
// can be read.
var ErrNotIndexed = errors.New("bloomkv: batch not indexed")

// batchItem is one point write of an indexed batch: its key as a version
// (the user key and value alias the batch's bytes).
type batchItem struct {
	key   base.InternalKey
	value []byte
}

func lessBatchItem(a, b batchItem) bool { return base.CompareInternal(a.key, b.key) < 0 }

// batchIndex orders an indexed batch's writes for its reads: the point
// writes in a B-tree in internal-key order, the range deletions as
// written, each fragmented list and sorted copy built when first read
// after a write and kept until the next.
//
// INVARIANT: sorted, when not nil, holds every item of tree in order
// (tree is made by the first read after a write);
// rangeDels, when not nil, is the fragmentation of every tombstone. A
// write sets both to nil. An Iterator keeps the ones it was made with:
// they are never changed, only replaced.
type batchIndex struct {
	tree      *btree.BTreeG[batchItem]
	tombs     []rangedel.Tombstone
	sorted    []batchItem
	rangeDels rangedel.List

	// n writes of the batch, its bytes up to off, are indexed.
	n   uint32
	off int

	// snap is the point in the DB's history the batch reads at; owned
	// if the batch took it, to be closed by Batch.Close.
	snap  *Snapshot
	owned bool
}

// NewIndexedBatch returns an empty batch that can be read: its Get and
// NewIter see its own writes over the DB as it is now, through a
// snapshot the batch takes; Close the batch to release it. Apply commits
// it as any batch.
func (d *DB) NewIndexedBatch() (*Batch, error) {
	s, err := d.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return newIndexedBatch(s, true), nil
}

// NewIndexedBatch returns an empty batch that can be read: its Get and
// NewIter see its own writes over the DB as the snapshot does. The batch
// reads through s, which must stay open while it does.
func (s *Snapshot) NewIndexedBatch() (*Batch, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return newIndexedBatch(s, false), nil
}

func newIndexedBatch(s *Snapshot, owned bool) *Batch {
	b := new(Batch)
	b.initIndexed(new(batchIndex), s, owned)
	return b
}

// initIndexed makes b, empty, an indexed batch with index x reading at s.
func (b *Batch) initIndexed(x *batchIndex, s *Snapshot, owned bool) {
	*x = batchIndex{snap: s, owned: owned}
	b.index = x
}

// batchFreeList is the node free list the indexes' B-trees share (it is
// safe for concurrent use), so that a new index allocates none of its own.
var batchFreeList = btree.NewFreeListG[batchItem](btree.DefaultFreeListSize)

// Close releases the snapshot an indexed batch from DB.NewIndexedBatch
// took; its reads return ErrClosed afterwards. The batch can still be
// applied. Closing a plain batch does nothing.
func (b *Batch) Close() error {
	if b.index == nil || !b.index.owned {
		return nil
	}
	return b.index.snap.Close()
}

// Get returns the value of key as the batch reads it: its own newest
// write of key if it has one (ErrNotFound for a Delete), or
// ErrNotFound if one of its range deletions newer than its writes of key
// covers it, and else the DB's value as of the batch's snapshot; merge
// operands of the batch are folded over what is below them. It
// returns ErrNotIndexed for a batch that is not indexed.
func (b *Batch) Get(key []byte) ([]byte, error) {
	if b.index == nil {
		return nil, ErrNotIndexed
	}
	if err := b.index.snap.check(); err != nil {
		return nil, err
	}
	return b.indexed().getOver(b.index.snap, key, nil)
}

// NewIter returns an iterator over the batch's writes merged over the DB
// as of the batch's snapshot: the batch is the newest source of the
// Iterator's merge. It sees the batch as it is now: writes added to the
// batch later are not shown. Close it before the batch is Reset. It
// returns ErrNotIndexed for a batch that is not indexed.
func (b *Batch) NewIter(opts *IterOptions) (*Iterator, error) {
	if b.index == nil {
		return nil, ErrNotIndexed
	}
	s := b.index.snap
	if err := s.check(); err != nil {
		return nil, err
	}
	var o IterOptions
	if opts != nil {
		o = *opts
	}
	rs, seq, err := s.db.acquireReadStateAt(s.seq)
	if err != nil {
		return nil, err
	}
	return s.db.iterOver(rs, seq, o, false, b.indexed().view()), nil
}

// indexed returns the batch's index with every write of the batch in
// it: those since the last read are indexed now.
func (b *Batch) indexed() *batchIndex {
	x := b.index
	if x.n == b.count {
		return x
	}
	if x.tree == nil {
		x.tree = btree.NewWithFreeListG(8, lessBatchItem, batchFreeList)
	}
	p := b.data[max(x.off, batchrepr.HeaderLen):]
	for ; x.n < b.count; x.n++ {
		kind, key, value, rest, err := batchrepr.DecodeEntry(p)
		if err != nil {
			panic("bloomkv: a batch's own entry does not decode: " + err.Error())
		}
		x.add(kind, key, value, x.n)
		p = rest
	}
	x.off = len(b.data) - len(p)
	return x
}

// add indexes write number i of the batch.
func (x *batchIndex) add(kind base.Kind, key, value []byte, i uint32) {
	seq := batchSeqBit | base.SeqNum(i)
	if kind == base.KindRangeDelete {
		x.tombs = append(x.tombs, rangedel.Tombstone{Start: key, End: value, Seq: seq})
		x.rangeDels = nil
		return
	}
	kind, value = uncommittedTTL(kind, value)
	x.tree.ReplaceOrInsert(batchItem{key: base.MakeInternalKey(key, seq, kind), value: value})
	x.sorted = nil
}

func (x *batchIndex) reset() {
	if x.tree != nil {
		x.tree.Clear(false)
	}
	x.tombs, x.sorted, x.rangeDels = nil, nil, nil
	x.n, x.off = 0, 0
}

// fragmented returns the batch's range deletions, fragmented.
func (x *batchIndex) fragmented() rangedel.List {
	if x.rangeDels == nil && len(x.tombs) > 0 {
		x.rangeDels = rangedel.Build(x.tombs)
	}
	return x.rangeDels
}

// get returns the batch's answer for key at seq, as memtablesGet does a
// memtable's: its newest write of key at or below seq, with its seqnum,
// or a deletion (base.KindDelete) if a range deletion of the batch newer
// than that covers key; found is false if the batch says nothing of key
// there. base.SeqNumMax reads all the batch.
func (x *batchIndex) get(key []byte, seq base.SeqNum) (value []byte, kind base.Kind, vseq base.SeqNum, found bool) {
	if x.tree == nil {
		return nil, 0, 0, false // nothing written yet
	}
	x.tree.AscendGreaterOrEqual(batchItem{key: base.MakeInternalKey(key, seq, base.KindMax)}, func(it batchItem) bool {
		if bytes.Equal(it.key.UserKey, key) {
			value, kind, vseq, found = it.value, it.key.Kind(), it.key.SeqNum(), true
		}
		return false
	})
	if hit := rangeDelAt(x.fragmented(), key, seq); hit.seq > vseq {
		return nil, base.KindDelete, vseq, true
	}
	return value, kind, vseq, found
}

// batchView is an indexed batch as an Iterator reads it: its point
// writes in order and its range deletions, as they were when the
// Iterator was made.
type batchView struct {
	items     []batchItem
	rangeDels rangedel.List
}

// view returns the batch as it is now, for an Iterator.
func (x *batchIndex) view() *batchView {
	if x.sorted == nil && x.tree != nil {
		x.sorted = make([]batchItem, 0, x.tree.Len())
		x.tree.Ascend(func(it batchItem) bool {
			x.sorted = append(x.sorted, it)
			return true
		})
	}
	return &batchView{items: x.sorted, rangeDels: x.fragmented()}
}

// batchIter is an iterator.Iterator over a batchView's point writes.
type batchIter struct {
	items []batchItem
	pos   int // len(items) or -1: not at an entry
}

func (b *batchIter) at(i int) bool {
	b.pos = i
	return i >= 0 && i < len(b.items)
}

func (b *batchIter) First() bool { return b.at(0) }
func (b *batchIter) Last() bool  { return b.at(len(b.items) - 1) }
func (b *batchIter) Next() bool  { return b.at(b.pos + 1) }
func (b *batchIter) Prev() bool  { return b.at(b.pos - 1) }

func (b *batchIter) SeekGE(userKey []byte) bool {
	return b.at(sort.Search(len(b.items), func(i int) bool { return bytes.Compare(b.items[i].key.UserKey, userKey) >= 0 }))
}

func (b *batchIter) SeekLT(userKey []byte) bool {
	return b.at(sort.Search(len(b.items), func(i int) bool { return bytes.Compare(b.items[i].key.UserKey, userKey) >= 0 }) - 1)
}

func (b *batchIter) Key() base.InternalKey { return b.items[b.pos].key }
func (b *batchIter) Value() []byte         { return b.items[b.pos].value }
func (b *batchIter) Error() error          { return nil }
func (b *batchIter) Close() error          { b.items = nil; return nil }

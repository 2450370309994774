package sstable

import (
	"bytes"
	"math"
	"sort"
	"unsafe"

	"github.com/bloomkv/bloomkv/internal/base"
)

// blockIndex is the decoded index block, kept for the table's life: per
// data block, its last key and where the block lies in the file. It is
// pointer-free memory of exactly its size (pinned: off the Go heap in the
// DB; only wraps, which a table needs past 4 GiB, is on the heap), so that
// it costs the garbage collector nothing to scan, and it is
// laid out to take little, since a DB holds one per table for every table:
//
//   - The last keys' common prefix is held once. Sorted keys share the
//     prefix their first and last share, so a table of a narrow key range
//     (every table below L0) keeps per block only the bytes that differ
//     and the trailer: of 16-byte keys at 10M keys, about 13 of the 24 an
//     encoded key takes (5 of its user key's 16, and its 8-byte trailer).
//   - Per block, two 4-byte words: where its key's rest ends in keys, and
//     the low half of the offset just past its stored bytes and trailer;
//     in an aligned table also 2 bytes for the padding before it (less
//     than a page). A table of 4 GiB or more of data blocks lists the
//     blocks where the ends' high half grows, in wraps.
//
// The top level of a partitioned index (partitionIndex) is one too, whose
// blocks are the index partitions, from start.
//
// INVARIANT: block i's last key is prefix followed by
// keys[keyEnds[i-1]:keyEnds[i]] (from 0 for i = 0); its stored bytes and
// trailer span [blockEnd(i-1)+pad(i), blockEnd(i)) (from start for i = 0),
// where blockEnd(i) is blockEnds[i] plus 2³² times the number of entries
// of wraps that are ≤ i, and pad(i) is pads[i], or 0 when pads is nil.
// Data blocks follow one another from offset 0, each after the padding
// alignedStart puts before it, so an end and a padding are all a handle
// needs.
type blockIndex struct {
	prefix    []byte   // every last key's first bytes, within its user key
	keys      []byte   // the rest of each block's last key, concatenated
	keyEnds   []uint32 // per block, the end of its key's rest in keys
	blockEnds []uint32 // per block, the low 32 bits of its end offset
	pads      []uint16 // per block, the padding before it; nil: none
	wraps     []int    // ascending, repeated per multiple of 4 GiB passed; nil below 4 GiB
	start     uint64   // where block 0 starts: 0 for data blocks
}

// indexBuilder collects the index's entries, in order, into a blockIndex
// whose memory pin provides, sized exactly from the counts of a first pass
// over the entries.
type indexBuilder struct {
	x    blockIndex
	next uint64 // the previous block's end
}

// newIndexBuilder returns a builder for n blocks whose keys have the given
// common prefix, of keyBytes bytes in all (the prefix counted once per
// key), and whose padding, if padded, is not all zero.
func newIndexBuilder(pin func(int) []byte, n int, prefix []byte, keyBytes uint64, padded bool) *indexBuilder {
	p := len(prefix)
	keys := pin(p + int(keyBytes) - n*p)
	size := 8 * n // keyEnds and blockEnds
	if padded {
		size += 2 * n
	}
	ends := pin(size)
	b := &indexBuilder{x: blockIndex{
		prefix:    append(keys[:0], prefix...),
		keys:      keys[p:p:len(keys)],
		keyEnds:   viewAs[uint32](ends, 0, n),
		blockEnds: viewAs[uint32](ends, 4*n, n),
	}}
	if padded {
		b.x.pads = viewAs[uint16](ends, 8*n, n)
	}
	return b
}

// viewAs returns n values of type T stored in b from offset off, as an
// empty slice of capacity n: b is pointer-free memory aligned for T there.
func viewAs[T uint16 | uint32 | uint64](b []byte, off, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[off])), n)[:0]
}

// add appends the entry of the next block: its last key, which has the
// builder's prefix, and its handle, which starts at or after the previous
// block's end.
func (b *indexBuilder) add(key []byte, h BlockHandle) {
	x := &b.x
	x.keys = append(x.keys, key[len(x.prefix):]...)
	x.keyEnds = append(x.keyEnds, uint32(len(x.keys)))
	end := h.Offset + h.Length + blockTrailerLen
	for hi := b.next >> 32; hi < end>>32; hi++ {
		x.wraps = append(x.wraps, len(x.blockEnds))
	}
	x.blockEnds = append(x.blockEnds, uint32(end))
	if x.pads != nil {
		// INVARIANT: the padding is less than a page (alignedStart).
		x.pads = append(x.pads, uint16(h.Offset-b.next))
	}
	b.next = end
}

// size is the bytes x pins: what newIndexBuilder took.
func (x *blockIndex) size() int {
	return len(x.prefix) + len(x.keys) + 4*len(x.keyEnds) + 4*len(x.blockEnds) + 2*len(x.pads)
}

// numBlocks is the number of data blocks.
func (x *blockIndex) numBlocks() int { return len(x.keyEnds) }

// keyRest returns block i's last key without the prefix: it aliases the
// index and is capped, so that an append cannot overwrite the next key; it
// must not be modified.
func (x *blockIndex) keyRest(i int) []byte {
	var lo uint32
	if i > 0 {
		lo = x.keyEnds[i-1]
	}
	hi := x.keyEnds[i]
	return x.keys[lo:hi:hi]
}

// appendKey appends block i's last key, an encoded internal key, to dst.
func (x *blockIndex) appendKey(dst []byte, i int) []byte {
	return append(append(dst, x.prefix...), x.keyRest(i)...)
}

// blockEnd returns the offset just past block i's trailer.
func (x *blockIndex) blockEnd(i int) uint64 {
	end := uint64(x.blockEnds[i])
	if x.wraps != nil {
		end += uint64(sort.SearchInts(x.wraps, i+1)) << 32
	}
	return end
}

// handle returns the handle of data block i.
func (x *blockIndex) handle(i int) BlockHandle {
	off := x.start
	if i > 0 {
		off = x.blockEnd(i - 1)
	}
	if x.pads != nil {
		off += uint64(x.pads[i])
	}
	return BlockHandle{Offset: off, Length: x.blockEnd(i) - off - blockTrailerLen}
}

// search returns the first data block whose last key is ≥ target, an
// encoded internal key: the only block that can hold target's first entry
// ≥ it. It returns numBlocks when every key of the table is < target.
//
// A target whose user key lacks the prefix sorts before every key or after
// every key, by how it differs from the prefix. One that has it compares
// with each key as their rests do: the same bytes follow the same prefix,
// and the prefix lies within both user keys, so the trailers compare
// alike.
func (x *blockIndex) search(target []byte) int {
	p := len(x.prefix)
	if p > 0 {
		t, _ := base.DecodeInternalKey(target)
		head := t.UserKey[:min(p, len(t.UserKey))]
		switch c := bytes.Compare(head, x.prefix); {
		case c > 0:
			return x.numBlocks()
		case c < 0: // or a shorter head: a prefix of the prefix
			return 0
		}
	}
	rest := target[p:]
	return sort.Search(x.numBlocks(), func(i int) bool {
		return base.CompareEncoded(x.keyRest(i), rest) >= 0
	})
}

// compare compares block i's last key with target, an encoded internal
// key, as base.CompareEncoded would: as search does.
func (x *blockIndex) compare(i int, target []byte) int {
	p := len(x.prefix)
	if p > 0 {
		t, _ := base.DecodeInternalKey(target)
		if c := bytes.Compare(x.prefix, t.UserKey[:min(p, len(t.UserKey))]); c != 0 {
			return c
		}
	}
	return base.CompareEncoded(x.keyRest(i), target[p:])
}

// userKeyIs reports whether block i's last key has user key uk.
func (x *blockIndex) userKeyIs(i int, uk []byte) bool {
	rest, p := x.keyRest(i), len(x.prefix)
	u := len(rest) - base.TrailerLen // the user key's bytes past the prefix
	return u >= 0 && p+u == len(uk) && bytes.Equal(x.prefix, uk[:p]) && bytes.Equal(rest[:u], uk[p:])
}

// indexKeys are an index's keys as a first pass over its entries counts
// them, for newIndexBuilder: their number and bytes, the first and the
// last.
type indexKeys struct {
	n           int
	bytes       uint64
	first, last []byte
}

// add counts the next key; it reports false, counting nothing, when the
// key does not sort after the last.
func (k *indexKeys) add(key []byte) bool {
	if k.n > 0 && base.CompareEncoded(k.last, key) >= 0 {
		return false
	}
	if k.n == 0 {
		k.first = bytes.Clone(key)
	}
	k.last = append(k.last[:0], key...)
	k.bytes += uint64(len(key))
	k.n++
	return true
}

// maxIndexKeyBytes bounds the bytes of an index's key rests, which keyEnds
// counts in 32 bits.
const maxIndexKeyBytes = math.MaxUint32

package bloom

import "encoding/binary"

// A Blocked filter can be kept outside memory and read a block at a time:
// every probe of an item falls in the one block BlockOf names, so that
// block alone answers for the item. AppendBlocks writes the blocks for
// such storage — a table's file, whose pages a reader fetches only when it
// asks — and BlockMayContainHash answers from one of them as
// MayContainHash answers from the whole filter.

// NumBlocks returns the number of the filter's 64-byte blocks.
func (f *Blocked) NumBlocks() uint64 { return f.numBlocks }

// AppendBlocks appends the filter's blocks from to to (exclusive) to dst,
// each as its eight 64-bit words, little-endian, and returns the extended
// slice. It panics if from > to or to > NumBlocks(), as slicing would.
func (f *Blocked) AppendBlocks(dst []byte, from, to uint64) []byte {
	for _, w := range f.blocks[from*blockWords : to*blockWords] {
		dst = binary.LittleEndian.AppendUint64(dst, w)
	}
	return dst
}

// BlockOf returns the index of the block that holds every probe of the
// item whose Hash is h, in a Blocked filter of numBlocks blocks (> 0).
func BlockOf(h, numBlocks uint64) uint64 { return reduce(h, numBlocks) }

// BlockMayContainHash is MayContainHash answered from one block: block is
// block BlockOf(h, n) of a Blocked filter of n blocks, as AppendBlocks
// wrote it, and probes the filter's Probes. It reports false only if the
// filter rules out the item whose Hash is h.
func BlockMayContainHash(block *[64]byte, h uint64, probes int) bool {
	var blk [blockWords]uint64
	for i := range blk {
		blk[i] = binary.LittleEndian.Uint64(block[8*i:])
	}
	g := remix(h)
	p := probeSeq{bits: g, seed: g}
	var missing uint64
	for range probes {
		bit := p.next()
		missing |= ^blk[bit/64] & (1 << (bit % 64))
	}
	return missing == 0
}

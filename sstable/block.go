package sstable

import (
	"encoding/binary"
	"errors"

	"github.com/bloomkv/bloomkv/internal/bytealg"
)

// blockWriter builds one block: prefix-compressed entries followed by the
// restart array. See the package doc for the layout.
type blockWriter struct {
	restartInterval int
	buf             []byte
	restarts        []uint32
	sinceRestart    int
	lastKey         []byte
	entries         int
}

func (w *blockWriter) add(key, value []byte) { w.addShared(key, value, w.shared(key)) }

// shared is how many leading bytes key shares with the previous entry's
// key, as the next entry stores it: -1 when the entry starts a restart
// point (and so shares nothing).
func (w *blockWriter) shared(key []byte) int {
	if w.sinceRestart >= w.restartInterval || w.entries == 0 {
		return -1
	}
	return bytealg.CommonPrefix(key, w.lastKey)
}

// sizeWith is the length the block would have, finished, with the entry
// of key and value added, shared being w.shared(key).
func (w *blockWriter) sizeWith(key, value []byte, shared int) int {
	n := w.size()
	if shared < 0 {
		n += 4 // a new restart point
		shared = 0
	}
	return n + uvarintLen(uint64(shared)) + uvarintLen(uint64(len(key)-shared)) +
		uvarintLen(uint64(len(value))) + len(key) - shared + len(value)
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// addShared is add with shared = w.shared(key) computed already.
func (w *blockWriter) addShared(key, value []byte, shared int) {
	if shared < 0 {
		w.restarts = append(w.restarts, uint32(len(w.buf)))
		w.sinceRestart = 0
		shared = 0
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(key)-shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
	w.buf = append(w.buf, key[shared:]...)
	w.buf = append(w.buf, value...)
	w.lastKey = append(w.lastKey[:0], key...)
	w.sinceRestart++
	w.entries++
}

// size is the length the block will have once finished.
func (w *blockWriter) size() int { return len(w.buf) + 4*len(w.restarts) + 4 }

// finish appends the restart array and returns the block. The slice is the
// writer's buffer: it is valid until the next reset.
func (w *blockWriter) finish() []byte {
	if w.entries == 0 { // an empty block still has one restart
		w.restarts = append(w.restarts, 0)
	}
	for _, r := range w.restarts {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, r)
	}
	return binary.LittleEndian.AppendUint32(w.buf, uint32(len(w.restarts)))
}

func (w *blockWriter) reset() {
	w.buf, w.restarts = w.buf[:0], w.restarts[:0]
	w.sinceRestart, w.entries = 0, 0
	w.lastKey = w.lastKey[:0]
}

// errBlock reports a block whose entries or restart array do not decode.
// The table reader wraps it with the file and the block's offset.
var errBlock = errors.New("malformed block")

// blockIter walks the entries of one decoded block. Every length read from
// the block is checked against the block's bounds before use, so a damaged
// block yields errBlock, never a panic or an out-of-bounds key.
//
// INVARIANT: when valid, key is the full key of the entry at offset, and
// next is the offset of the entry after it.
type blockIter struct {
	cmp         func(a, b []byte) int
	data        []byte // the entries, without the restart array
	restarts    []byte // numRestarts little-endian uint32 offsets
	numRestarts int
	offset      int // current entry; len(data) when past the end
	next        int
	key, value  []byte
	valid       bool
	err         error
}

// init points the iterator at block; it reports errBlock if the restart
// array does not fit.
func (it *blockIter) init(block []byte, cmp func(a, b []byte) int) error {
	*it = blockIter{cmp: cmp, key: it.key[:0]}
	if len(block) < 4 {
		return errBlock
	}
	n := binary.LittleEndian.Uint32(block[len(block)-4:])
	if n == 0 || uint64(n) > uint64(len(block)-4)/4 {
		return errBlock
	}
	end := len(block) - 4 - 4*int(n)
	it.data, it.restarts, it.numRestarts = block[:end], block[end:len(block)-4], int(n)
	for i := range it.numRestarts {
		if int(it.restart(i)) > end {
			return errBlock
		}
	}
	return nil
}

func (it *blockIter) restart(i int) uint32 {
	return binary.LittleEndian.Uint32(it.restarts[4*i:])
}

// decodeAt decodes the entry at off, extending it.key from the previous
// entry's key. It sets valid, or err on a malformed entry.
func (it *blockIter) decodeAt(off int) bool {
	it.offset, it.valid = off, false
	if off >= len(it.data) {
		return false
	}
	p := it.data[off:]
	shared, n1 := binary.Uvarint(p)
	unshared, n2 := uvarintAt(p, n1)
	valueLen, n3 := uvarintAt(p, n1+n2)
	if n1 <= 0 || n2 <= 0 || n3 <= 0 {
		return it.fail()
	}
	p = p[n1+n2+n3:]
	if shared > uint64(len(it.key)) || unshared > uint64(len(p)) || valueLen > uint64(len(p))-unshared {
		return it.fail()
	}
	it.key = append(it.key[:shared], p[:unshared]...)
	it.value = p[unshared : unshared+valueLen : unshared+valueLen]
	it.next = off + n1 + n2 + n3 + int(unshared+valueLen)
	it.valid = true
	return true
}

func uvarintAt(p []byte, at int) (uint64, int) {
	if at <= 0 || at > len(p) {
		return 0, -1
	}
	return binary.Uvarint(p[at:])
}

func (it *blockIter) fail() bool {
	it.valid, it.err = false, errBlock
	return false
}

// seekRestart positions the iterator at restart point i, whose entry must
// share no prefix with the one before.
func (it *blockIter) seekRestart(i int) bool {
	it.key = it.key[:0]
	return it.decodeAt(int(it.restart(i)))
}

func (it *blockIter) first() bool { return it.seekRestart(0) }

func (it *blockIter) nextEntry() bool {
	if !it.valid {
		return false
	}
	return it.decodeAt(it.next)
}

// seekGE positions the iterator at the first entry with key ≥ target.
func (it *blockIter) seekGE(target []byte) bool {
	// Binary search the restart points for the last one whose key is
	// < target; the answer is at or after it.
	lo, hi := 0, it.numRestarts-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if !it.seekRestart(mid) {
			return false
		}
		if it.cmp(it.key, target) < 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for ok := it.seekRestart(lo); ok; ok = it.nextEntry() {
		if it.cmp(it.key, target) >= 0 {
			return true
		}
	}
	return false
}

// last positions the iterator at the block's last entry.
func (it *blockIter) last() bool {
	if !it.seekRestart(it.numRestarts - 1) {
		return false
	}
	for it.next < len(it.data) {
		if !it.decodeAt(it.next) {
			return false
		}
	}
	return true
}

// prev positions the iterator at the entry before the current one: back to
// the restart point before it, then forward until the entry that precedes.
func (it *blockIter) prev() bool {
	if !it.valid {
		return false
	}
	target := it.offset
	i := it.numRestarts - 1
	for i > 0 && int(it.restart(i)) >= target {
		i--
	}
	if int(it.restart(i)) >= target { // at the first entry
		it.valid = false
		return false
	}
	if !it.seekRestart(i) {
		return false
	}
	for it.next < target {
		if !it.decodeAt(it.next) {
			return false
		}
	}
	return it.valid
}

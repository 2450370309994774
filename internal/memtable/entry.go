package memtable

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/bloomkv/bloomkv/internal/base"
)

// entry is the tree item: one version of one user key. It is stored by value
// in the tree's nodes, so it is kept to 40 bytes: a pointer to the user key
// and value, back to back in the arena, their lengths, the trailer, and a
// copy of the key's first 16 bytes, so that comparisons rarely have to
// follow the pointer (a cache miss into the arena, often off the Go heap).
//
// Sixteen bytes rather than eight because keys commonly share their first
// eight: zero-padded numbers, "user:" or table prefixes. Keys of up to 16
// bytes are then ordered without touching the arena at all.
type entry struct {
	kv      *byte  // user key ‖ value, n bytes; never modified after Add
	n       uint32 // len(user key) + len(value)
	klen    uint32
	prefix  [2]uint64 // keyPrefix of the user key
	trailer base.Trailer
}

// prefixLen is how many leading bytes of a key entry.prefix holds.
const prefixLen = 16

// keyPrefix is the first 16 bytes of k as two big-endian words, zero-padded.
// Unequal prefixes order their keys as bytes.Compare does: at the first
// byte where the padded prefixes differ, either both keys have real bytes,
// or the shorter key has run out and is a prefix of the longer one, whose
// byte there is non-zero.
func keyPrefix(k []byte) [2]uint64 {
	if len(k) >= prefixLen {
		return [2]uint64{binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])}
	}
	var b [prefixLen]byte
	copy(b[:], k)
	return [2]uint64{binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[8:])}
}

func makeEntry(kv []byte, klen int, t base.Trailer) entry {
	return entry{kv: unsafe.SliceData(kv), n: uint32(len(kv)), klen: uint32(klen), prefix: keyPrefix(kv[:klen]), trailer: t}
}

func (e entry) bytes() []byte { return unsafe.Slice(e.kv, e.n) }

func (e entry) userKey() []byte { return e.bytes()[:e.klen:e.klen] }

func (e entry) value() []byte { return e.bytes()[e.klen:e.n:e.n] }

func (e entry) internalKey() base.InternalKey {
	return base.InternalKey{UserKey: e.userKey(), Trailer: e.trailer}
}

// searchKey is a probe for the tree, not a stored entry: userKey is not
// copied, so it must not outlive the call that builds it.
func searchKey(userKey []byte, t base.Trailer) entry {
	return makeEntry(userKey, len(userKey), t)
}

// compare is base.CompareInternal on entries, without building InternalKeys
// on the hot path of every tree descent.
func compare(a, b entry) int {
	if c := compareWord(a.prefix[0], b.prefix[0]); c != 0 {
		return c
	}
	if c := compareWord(a.prefix[1], b.prefix[1]); c != 0 {
		return c
	}
	// Equal padded prefixes: if either key fits in them, the keys differ
	// at most by trailing zero bytes, and the shorter one sorts first.
	var c int
	if a.klen <= prefixLen || b.klen <= prefixLen {
		c = compareWord(uint64(a.klen), uint64(b.klen))
	} else {
		c = bytes.Compare(a.userKey()[prefixLen:], b.userKey()[prefixLen:])
	}
	if c != 0 {
		return c
	}
	switch {
	case a.trailer > b.trailer:
		return -1
	case a.trailer < b.trailer:
		return 1
	}
	return 0
}

func compareWord(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func less(a, b entry) bool { return compare(a, b) < 0 }

package memtable

import (
	"bytes"
	"encoding/binary"

	"github.com/bloomkv/bloomkv/internal/base"
)

// entry is the tree item: one version of one user key. It is stored by value
// in the tree's nodes (48 bytes), so it holds a single slice — user key and
// value back to back in the arena — rather than two, plus a copy of the key's
// first bytes so that comparisons rarely have to follow that slice.
type entry struct {
	kv      []byte // user key ‖ value; never modified after Add
	prefix  uint64 // keyPrefix of the user key
	klen    uint32 // length of the user key prefix of kv
	trailer base.Trailer
}

// keyPrefix is the first 8 bytes of k, big-endian, zero-padded. Unequal
// prefixes order their keys as bytes.Compare does, so most comparisons in a
// tree descent are settled inside the node without touching the arena.
func keyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

func (e entry) userKey() []byte { return e.kv[:e.klen:e.klen] }

func (e entry) value() []byte { return e.kv[e.klen:] }

func (e entry) internalKey() base.InternalKey {
	return base.InternalKey{UserKey: e.userKey(), Trailer: e.trailer}
}

// searchKey is a probe for the tree, not a stored entry: userKey is not
// copied, so it must not outlive the call that builds it.
func searchKey(userKey []byte, t base.Trailer) entry {
	return entry{kv: userKey, prefix: keyPrefix(userKey), klen: uint32(len(userKey)), trailer: t}
}

// compare is base.CompareInternal on entries, without building InternalKeys
// on the hot path of every tree descent.
func compare(a, b entry) int {
	if a.prefix != b.prefix {
		if a.prefix < b.prefix {
			return -1
		}
		return 1
	}
	if c := bytes.Compare(a.userKey(), b.userKey()); c != 0 {
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

func less(a, b entry) bool { return compare(a, b) < 0 }

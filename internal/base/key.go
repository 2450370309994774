package base

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// SeqNum is a sequence number: every write gets the next one, and a read at S
// sees the newest version of each key with a sequence number ≤ S.
type SeqNum uint64

// SeqNumMax is the largest sequence number a trailer can hold (56 bits). A
// read at SeqNumMax sees every version.
const SeqNumMax SeqNum = 1<<56 - 1

// Kind says what an internal key records.
type Kind uint8

// The kinds of internal key. Their values are part of the on-disk formats.
const (
	// KindDelete is a tombstone: the key is deleted as of this version.
	KindDelete Kind = 0
	// KindSet sets the key to the entry's value.
	KindSet Kind = 1

	// KindRangeDelete is a range tombstone: in a batch, the entry's key is
	// the range's start and its value the end; in a table's bounds, a key
	// of the range-deletion block (see package rangedel). It is never an
	// entry of a memtable's tree or a table's data blocks.
	KindRangeDelete Kind = 2
	// KindSetBlob sets the key to a value kept in a blob file: the entry's
	// value is the value's handle (package blob), not the value. Only
	// tables hold it — a flush writes it for a value it separates, a
	// compaction copies it or, relocating the value, writes a new one; a
	// batch or memtable never does.
	KindSetBlob Kind = 3
	// KindMerge is a merge operand: the entry's value is an operand that
	// reads and compactions fold, with the DB's merger, over the key's
	// older versions (see the root package's merge.go). It is always
	// stored inline, never separated to a blob file.
	KindMerge Kind = 4

	// KindSetTTL sets the key to a value that expires: the entry's value
	// is the expiry (8 bytes, see expiry.go) followed by the value.
	KindSetTTL Kind = 5
	// KindSetBlobTTL is KindSetTTL with its value kept in a blob file:
	// the entry's value is the expiry followed by the value's handle. Like
	// KindSetBlob, only tables hold it.
	KindSetBlobTTL Kind = 6

	// KindMax is the largest kind of a stored version. A seek key for
	// (user key, S) uses it so that it sorts before every version of the
	// key at sequence number S.
	KindMax = KindSetBlobTTL
)

// IsSet reports whether k sets its key to a value, inline (KindSet) or
// separated (KindSetBlob).
func (k Kind) IsSet() bool { return k == KindSet || k == KindSetBlob }

func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "DEL"
	case KindSet:
		return "SET"
	case KindRangeDelete:
		return "RANGEDEL"
	case KindSetBlob:
		return "SETBLOB"
	case KindMerge:
		return "MERGE"
	case KindSetTTL:
		return "SETTTL"
	case KindSetBlobTTL:
		return "SETBLOBTTL"
	}
	return fmt.Sprintf("KIND(%d)", uint8(k))
}

// TrailerLen is the length of the trailer that ends every encoded internal key.
const TrailerLen = 8

// Trailer is seqnum<<8 | kind, the last 8 bytes of an encoded internal key.
type Trailer uint64

// MakeTrailer packs a sequence number and a kind.
func MakeTrailer(seq SeqNum, kind Kind) Trailer { return Trailer(seq)<<8 | Trailer(kind) }

// SeqNum returns the sequence number packed in t.
func (t Trailer) SeqNum() SeqNum { return SeqNum(t >> 8) }

// Kind returns the kind packed in t.
func (t Trailer) Kind() Kind { return Kind(t & 0xff) }

// InternalKey is a decoded internal key. UserKey aliases the buffer it was
// decoded from.
type InternalKey struct {
	UserKey []byte
	Trailer Trailer
}

// MakeInternalKey returns the internal key for a version of userKey.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return InternalKey{UserKey: userKey, Trailer: MakeTrailer(seq, kind)}
}

// SeqNum returns the key's sequence number.
func (k InternalKey) SeqNum() SeqNum { return k.Trailer.SeqNum() }

// Kind returns the key's kind.
func (k InternalKey) Kind() Kind { return k.Trailer.Kind() }

// EncodedLen is the length of the key's encoding.
func (k InternalKey) EncodedLen() int { return len(k.UserKey) + TrailerLen }

// Append appends the encoding of k to dst and returns the extended slice.
func (k InternalKey) Append(dst []byte) []byte {
	dst = append(dst, k.UserKey...)
	return binary.LittleEndian.AppendUint64(dst, uint64(k.Trailer))
}

// String renders the key for tests and tools, e.g. "apple#42,SET".
func (k InternalKey) String() string {
	return fmt.Sprintf("%q#%d,%s", k.UserKey, k.SeqNum(), k.Kind())
}

// DecodeInternalKey splits an encoded internal key. It reports false when
// encoded is shorter than a trailer. The returned UserKey aliases encoded.
func DecodeInternalKey(encoded []byte) (InternalKey, bool) {
	n := len(encoded) - TrailerLen
	if n < 0 {
		return InternalKey{}, false
	}
	return InternalKey{
		UserKey: encoded[:n:n],
		Trailer: Trailer(binary.LittleEndian.Uint64(encoded[n:])),
	}, true
}

// CompareInternal orders internal keys: user key ascending, then trailer
// descending (newest version first).
func CompareInternal(a, b InternalKey) int {
	if c := bytes.Compare(a.UserKey, b.UserKey); c != 0 {
		return c
	}
	switch {
	case a.Trailer > b.Trailer:
		return -1
	case a.Trailer < b.Trailer:
		return 1
	}
	return 0
}

// CompareEncoded orders two encoded internal keys as CompareInternal orders
// their decodings. Both must be at least TrailerLen long.
func CompareEncoded(a, b []byte) int {
	ka, _ := DecodeInternalKey(a)
	kb, _ := DecodeInternalKey(b)
	return CompareInternal(ka, kb)
}

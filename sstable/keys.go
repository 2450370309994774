package sstable

import (
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// The types a table's API speaks in, named here so that code outside this
// module — an ingest tool, a table inspector — can write and read tables
// with this package alone. Each is the engine's own type under another
// name, not a copy: values pass between them unchanged.

// InternalKey is a key as a table stores it: a user key and its trailer, a
// sequence number and a kind. Tables are sorted by user key ascending, then
// sequence number descending: the newest version of a key comes first.
type InternalKey = base.InternalKey

// SeqNum is a write's sequence number; a read at S sees the newest version
// at or below S.
type SeqNum = base.SeqNum

// Trailer is an internal key's sequence number and kind packed in one
// uint64 (InternalKey.Trailer).
type Trailer = base.Trailer

// SeqNumMax is the largest sequence number: a read at it sees the newest
// version of every key.
const SeqNumMax = base.SeqNumMax

// Kind says what a version is: a value (KindSet), a value's handle in a
// blob file (KindSetBlob: the entry's value is the handle, which the DB
// resolves), either of them with an expiry (KindSetTTL, KindSetBlobTTL:
// the entry's value starts with it, see ExpiryLen), a merge operand
// (KindMerge: the DB folds it over the older versions) or a tombstone
// (KindDelete).
type Kind = base.Kind

// The kinds a table holds. KindRangeDelete marks a table bound that a
// range tombstone set (Properties.Smallest and Largest); the tombstones
// themselves are RangeTombstones, in a block of their own.
const (
	KindDelete      = base.KindDelete
	KindSet         = base.KindSet
	KindRangeDelete = base.KindRangeDelete
	KindSetBlob     = base.KindSetBlob
	KindMerge       = base.KindMerge
	KindSetTTL      = base.KindSetTTL
	KindSetBlobTTL  = base.KindSetBlobTTL
)

// ExpiryLen is the length of the expiry that starts the value of an entry
// of KindSetTTL or KindSetBlobTTL: the instant the version expires, in
// nanoseconds since the Unix epoch, int64 little-endian. AppendExpiry
// writes it.
const ExpiryLen = base.ExpiryLen

// AppendExpiry appends the encoding of expiry, an instant in Unix
// nanoseconds, to dst: the start of a KindSetTTL entry's value, the value
// proper following it.
func AppendExpiry(dst []byte, expiry int64) []byte { return base.AppendExpiry(dst, expiry) }

// RangeTombstones are range deletions fragmented: non-overlapping key
// ranges [Start, End) in order, each with the seqnums, newest first, of
// the tombstones covering it. A version of a key in a fragment's range is
// deleted for a read at S if one of the fragment's seqnums ≤ S is above the
// version's (Cover answers that).
type RangeTombstones = rangedel.List

// RangeTombstoneFragment is one fragment of RangeTombstones.
type RangeTombstoneFragment = rangedel.Fragment

// RangeTombstone is one range deletion as written: [Start, End) at Seq.
// FragmentRangeTombstones makes RangeTombstones of any set of them;
// RangeTombstones.Tombstones lists them back.
type RangeTombstone = rangedel.Tombstone

// FragmentRangeTombstones cuts range deletions, overlapping in any way,
// into the fragments a table stores (Writer.SetRangeDels): where they
// overlap, a fragment carries every covering seqnum. Empty ranges are left
// out. The result aliases the deletions' keys.
func FragmentRangeTombstones(ts []RangeTombstone) RangeTombstones { return rangedel.Build(ts) }

// MakeInternalKey returns the internal key of userKey at seq, of kind.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return base.MakeInternalKey(userKey, seq, kind)
}

// ErrCorruption is wrapped by every error that reports a damaged table; the
// error names the file and the offset.
var ErrCorruption = base.ErrCorruption

// CacheKey and CacheHandle are what a BlockCache stores blocks under and
// hands them out through.
type (
	CacheKey    = cache.Key
	CacheHandle = cache.Handle
)

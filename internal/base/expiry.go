package base

import (
	"encoding/binary"
	"math"
)

// ExpiryLen is the length of the expiry that starts the value of a
// KindSetTTL or KindSetBlobTTL entry: the instant the version expires, in
// nanoseconds since the Unix epoch (UTC), a signed 64-bit integer,
// little-endian. The value proper — the user's value, or a blob handle —
// follows it.
//
//	+------------------------+-----------------------------+
//	| expiry (8, int64 LE)   | value (KindSetTTL) or       |
//	| Unix nanoseconds       | blob handle (KindSetBlobTTL)|
//	+------------------------+-----------------------------+
//
// A version with expiry E is visible to a read whose clock reads T < E and
// to no read with T ≥ E: from E on it is, for every read, a tombstone.
const ExpiryLen = 8

// NeverExpires is the expiry of a version whose time-to-live runs past
// what an int64 of nanoseconds can count (the year 2262).
const NeverExpires = math.MaxInt64

// HasExpiry reports whether entries of kind k start their value with an
// expiry.
func (k Kind) HasExpiry() bool { return k == KindSetTTL || k == KindSetBlobTTL }

// WithoutExpiry returns the kind a version of kind k, whose value starts
// with an expiry, is once that expiry is stripped: KindSet or KindSetBlob.
// Other kinds are returned as they are.
func (k Kind) WithoutExpiry() Kind {
	switch k {
	case KindSetTTL:
		return KindSet
	case KindSetBlobTTL:
		return KindSetBlob
	}
	return k
}

// AppendExpiry appends the encoding of expiry to dst.
func AppendExpiry(dst []byte, expiry int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(expiry))
}

// SplitExpiry splits the value of a KindSetTTL or KindSetBlobTTL entry
// into its expiry and the rest. ok is false for a value shorter than
// ExpiryLen, which no writer makes: a damaged entry.
func SplitExpiry(v []byte) (expiry int64, rest []byte, ok bool) {
	if len(v) < ExpiryLen {
		return 0, nil, false
	}
	return int64(binary.LittleEndian.Uint64(v)), v[ExpiryLen:], true
}

// ExpiryAfter returns the expiry of a version written at now (Unix
// nanoseconds) to live for ttl nanoseconds, ttl > 0: now+ttl, or
// NeverExpires where that overflows.
func ExpiryAfter(now, ttl int64) int64 {
	if now > NeverExpires-ttl {
		return NeverExpires
	}
	return now + ttl
}

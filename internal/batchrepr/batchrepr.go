// Package batchrepr is the byte layout of a batch: the payload of every WAL
// record, written by bloomkv.Batch and read back by recovery and by
// `bloomkv inspect`.
//
//	+-------------------+-----------------+-----------+-----------+-----
//	| seqnum (8, LE)    | count (4, LE)   | entry 1   | entry 2   | ...
//	+-------------------+-----------------+-----------+-----------+-----
//	entry: kind (1) | key length (uvarint) | key | [value length (uvarint) | value]
//
//	kind: 0 KindDelete, 1 KindSet, 2 KindRangeDelete, 4 KindMerge, 5 KindSetTTL
//	      (the values of package base; 3, KindSetBlob, is never in a batch)
//
// Entry i has sequence number seqnum + i. KindSet entries carry a value,
// KindMerge entries (Merge) the merge operand in the value's place,
// KindRangeDelete entries (DeleteRange) the range's end in the value's
// place: the key is its start, inclusive, the value its end, exclusive;
// KindDelete entries carry none. KindSetTTL entries (Batch.SetWithTTL)
// carry a value that starts with the version's expiry, 8 bytes, then the
// value proper; the value length counts both:
//
//	KindSetTTL entry: 5 | key length | key | value length (8 + n) | expiry (8) | value (n)
//
// In a WAL record the expiry is the instant the version expires, in
// nanoseconds since the Unix epoch, int64 little-endian (base.ExpiryLen);
// in a batch not yet committed it is the time-to-live, in nanoseconds, that
// the commit turns into that instant (see bloomkv's ttl.go). Records
// written before KindSetTTL existed hold none and decode as before.
//
// INVARIANT: Decode accepts exactly what the encoder writes: a count that
// matches the entries, known kinds, lengths within the record, range
// deletions whose start sorts before their end, nothing left over;
// anything else is an error, so a damaged record is never half applied.
package batchrepr

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
)

// HeaderLen is the length of the seqnum and count that start a batch.
const HeaderLen = 12

// Entry is one decoded write. Key and Value alias the record.
type Entry struct {
	Seq        base.SeqNum
	Kind       base.Kind
	Key, Value []byte
}

// AppendEntry appends one write to a batch's bytes, which must already
// hold a header, and returns them.
func AppendEntry(dst []byte, kind base.Kind, key, value []byte) []byte {
	dst = append(dst, byte(kind))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	if hasValue(kind) {
		dst = binary.AppendUvarint(dst, uint64(len(value)))
		dst = append(dst, value...)
	}
	return dst
}

// AppendTTLEntry appends a KindSetTTL write of value under key with
// expiry (a time-to-live before the commit, an instant after) to a
// batch's bytes and returns them, with the offset of the expiry in them,
// where the commit overwrites it (SetExpiry).
func AppendTTLEntry(dst []byte, key []byte, expiry int64, value []byte) ([]byte, int) {
	dst = append(dst, byte(base.KindSetTTL))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(base.ExpiryLen+len(value)))
	off := len(dst)
	dst = base.AppendExpiry(dst, expiry)
	return append(dst, value...), off
}

// SetExpiry overwrites the expiry at offset off of a batch's bytes, as
// AppendTTLEntry returned it.
func SetExpiry(b []byte, off int, expiry int64) {
	binary.LittleEndian.PutUint64(b[off:], uint64(expiry))
}

// SetCount writes the number of entries into the header.
func SetCount(b []byte, count uint32) { binary.LittleEndian.PutUint32(b[8:], count) }

// SetSeqNum writes the first entry's sequence number into the header.
func SetSeqNum(b []byte, seq base.SeqNum) { binary.LittleEndian.PutUint64(b, uint64(seq)) }

// Header returns the first sequence number and the entry count, or an
// error for a record shorter than a header.
func Header(data []byte) (base.SeqNum, uint32, error) {
	if len(data) < HeaderLen {
		return 0, 0, fmt.Errorf("batch record of %d bytes is shorter than its header", len(data))
	}
	return base.SeqNum(binary.LittleEndian.Uint64(data)), binary.LittleEndian.Uint32(data[8:]), nil
}

// Decode calls fn for every write of an encoded batch, in order, and
// returns an error (without file or offset: the caller adds them) for a
// record that is not a well-formed batch. fn may have been called for the
// entries before the damage; callers that must not half-apply a batch
// decode it twice or collect first.
func Decode(data []byte, fn func(Entry)) error {
	seq, count, err := Header(data)
	if err != nil {
		return err
	}
	if seq > base.SeqNumMax-base.SeqNum(count) {
		return fmt.Errorf("batch seqnum %d + count %d overflows", seq, count)
	}
	p := data[HeaderLen:]
	for i := range count {
		if len(p) == 0 {
			return fmt.Errorf("batch ends after %d of %d entries", i, count)
		}
		e := Entry{Seq: seq + base.SeqNum(i)}
		if e.Kind, e.Key, e.Value, p, err = DecodeEntry(p); err != nil {
			return fmt.Errorf("batch entry %d: %w", i, err)
		}
		fn(e)
	}
	if len(p) != 0 {
		return fmt.Errorf("batch has %d bytes after its %d entries", len(p), count)
	}
	return nil
}

// DecodeEntry decodes the entry that starts p, as AppendEntry wrote it,
// and returns the bytes after it; key and value alias p. It returns an
// error for an entry that is not well formed (see the package's
// INVARIANT).
func DecodeEntry(p []byte) (kind base.Kind, key, value, rest []byte, err error) {
	if len(p) == 0 {
		return 0, nil, nil, nil, fmt.Errorf("no entry")
	}
	kind = base.Kind(p[0])
	if kind != base.KindSet && kind != base.KindDelete && kind != base.KindRangeDelete && kind != base.KindMerge && kind != base.KindSetTTL {
		return 0, nil, nil, nil, fmt.Errorf("unknown kind %d", p[0])
	}
	var ok bool
	if key, p, ok = lengthPrefixed(p[1:]); !ok {
		return 0, nil, nil, nil, fmt.Errorf("bad key length")
	}
	if hasValue(kind) {
		if value, p, ok = lengthPrefixed(p); !ok {
			return 0, nil, nil, nil, fmt.Errorf("bad value length")
		}
	}
	if kind == base.KindSetTTL && len(value) < base.ExpiryLen {
		return 0, nil, nil, nil, fmt.Errorf("value of %d bytes is shorter than its expiry (%d)", len(value), base.ExpiryLen)
	}
	if kind == base.KindRangeDelete && bytes.Compare(key, value) >= 0 {
		return 0, nil, nil, nil, fmt.Errorf("empty range deletion [%q, %q)", key, value)
	}
	return kind, key, value, p, nil
}

// hasValue reports whether entries of kind carry a second byte string: a
// Set's value (a KindSetTTL's with its expiry), a merge operand, a range
// deletion's end key.
func hasValue(kind base.Kind) bool {
	return kind == base.KindSet || kind == base.KindRangeDelete || kind == base.KindMerge || kind == base.KindSetTTL
}

// lengthPrefixed splits a uvarint-length-prefixed byte string off p.
func lengthPrefixed(p []byte) (s, rest []byte, ok bool) {
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)-w) {
		return nil, nil, false
	}
	return p[w : w+int(n) : w+int(n)], p[w+int(n):], true
}

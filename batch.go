package bloomkv

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
)

// Batch is a set of writes applied atomically by DB.Apply: after a crash
// either all of them are there or none. A Batch is not safe for concurrent
// use, and must not be changed while Apply runs.
//
// The batch's bytes are exactly the WAL record that commits it:
//
//	+-------------------+-----------------+-----------+-----------+-----
//	| seqnum (8, LE)    | count (4, LE)   | entry 1   | entry 2   | ...
//	+-------------------+-----------------+-----------+-----------+-----
//	entry: kind (1) | key length (uvarint) | key | [value length (uvarint) | value]
//
// The commit pipeline writes the first entry's sequence number into the
// header; entry i gets seqnum + i. Only KindSet entries carry a value.
type Batch struct {
	data  []byte
	count uint32
}

const batchHeaderLen = 12

// NewBatch returns an empty batch.
func NewBatch() *Batch { return &Batch{} }

// Set adds a write of value under key. It returns an *ArgumentError, and
// adds nothing, for a key or value over its limit.
func (b *Batch) Set(key, value []byte) error {
	if err := checkKeyValue(key, value); err != nil {
		return err
	}
	return b.add(base.KindSet, key, value)
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) error {
	if err := checkKeyValue(key, nil); err != nil {
		return err
	}
	return b.add(base.KindDelete, key, nil)
}

func checkKeyValue(key, value []byte) error {
	if len(key) > MaxKeySize {
		return argError("key", "%d bytes, more than MaxKeySize (%d)", len(key), MaxKeySize)
	}
	if len(value) > MaxValueSize {
		return argError("value", "%d bytes, more than MaxValueSize (%d)", len(value), MaxValueSize)
	}
	return nil
}

func (b *Batch) add(kind base.Kind, key, value []byte) error {
	size := 1 + 2*binary.MaxVarintLen32 + len(key) + len(value)
	if b.Size()+size > MaxBatchSize {
		return argError("batch", "would grow past MaxBatchSize (%d bytes)", MaxBatchSize)
	}
	if len(b.data) == 0 {
		b.data = make([]byte, batchHeaderLen, batchHeaderLen+size)
	}
	b.data = append(b.data, byte(kind))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	if kind == base.KindSet {
		b.data = binary.AppendUvarint(b.data, uint64(len(value)))
		b.data = append(b.data, value...)
	}
	b.count++
	binary.LittleEndian.PutUint32(b.data[8:], b.count)
	return nil
}

// Len returns the number of writes in the batch.
func (b *Batch) Len() int { return int(b.count) }

// Size returns the batch's encoded size in bytes.
func (b *Batch) Size() int { return max(len(b.data), batchHeaderLen) }

// Reset empties the batch, keeping its memory for reuse.
func (b *Batch) Reset() { b.data, b.count = b.data[:0], 0 }

// setSeqNum stamps the sequence number of the batch's first write.
func (b *Batch) setSeqNum(seq base.SeqNum) { binary.LittleEndian.PutUint64(b.data, uint64(seq)) }

// batchEntry is one decoded write.
type batchEntry struct {
	seq        base.SeqNum
	kind       base.Kind
	key, value []byte
}

// decodeBatch calls fn for every write of an encoded batch, in order. It
// returns an error (wrapping nothing; the caller adds file and offset) for
// a record that is not a well-formed batch.
func decodeBatch(data []byte, fn func(e batchEntry)) error {
	if len(data) < batchHeaderLen {
		return fmt.Errorf("batch record of %d bytes is shorter than its header", len(data))
	}
	seq := base.SeqNum(binary.LittleEndian.Uint64(data))
	count := binary.LittleEndian.Uint32(data[8:])
	if seq > base.SeqNumMax-base.SeqNum(count) {
		return fmt.Errorf("batch seqnum %d + count %d overflows", seq, count)
	}
	p := data[batchHeaderLen:]
	for i := range count {
		if len(p) == 0 {
			return fmt.Errorf("batch ends after %d of %d entries", i, count)
		}
		e := batchEntry{seq: seq + base.SeqNum(i), kind: base.Kind(p[0])}
		if e.kind != base.KindSet && e.kind != base.KindDelete {
			return fmt.Errorf("batch entry %d has unknown kind %d", i, p[0])
		}
		var ok bool
		if e.key, p, ok = lengthPrefixed(p[1:]); !ok {
			return fmt.Errorf("batch entry %d: bad key length", i)
		}
		if e.kind == base.KindSet {
			if e.value, p, ok = lengthPrefixed(p); !ok {
				return fmt.Errorf("batch entry %d: bad value length", i)
			}
		}
		fn(e)
	}
	if len(p) != 0 {
		return fmt.Errorf("batch has %d bytes after its %d entries", len(p), count)
	}
	return nil
}

// lengthPrefixed splits a uvarint-length-prefixed byte string off p.
func lengthPrefixed(p []byte) (s, rest []byte, ok bool) {
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)-w) {
		return nil, nil, false
	}
	return p[w : w+int(n) : w+int(n)], p[w+int(n):], true
}

package bloomkv

import (
	"bytes"
	"encoding/binary"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
)

// Batch is a set of writes applied atomically by DB.Apply: after a crash
// either all of them are there or none. A Batch is not safe for concurrent
// use, and must not be changed while Apply runs.
//
// The batch's bytes are exactly the WAL record that commits it, in the
// layout of package internal/batchrepr; the commit pipeline writes the
// first entry's sequence number into the header.
//
// A Batch made by DB.NewIndexedBatch or Snapshot.NewIndexedBatch can also
// be read: see batch_index.go.
type Batch struct {
	data  []byte
	count uint32
	// merges counts the batch's merge operands, which Apply checks
	// against the DB's merger (checkMerges).
	merges uint32
	// index, for an indexed batch only, orders the batch's writes for its
	// reads; nil for a plain batch. A write is indexed by the first read
	// after it (Batch.indexed), so writes cost an indexed batch no more
	// than a plain one, and a batch never read is never indexed.
	index *batchIndex
	// ttls are the batch's KindSetTTL writes, whose expiry each commit
	// stamps (see ttl.go).
	ttls []pendingTTL
}

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

// DeleteRange adds a deletion of every key in [start, end): start
// inclusive, end exclusive. It is one record however many keys the range
// holds, a range tombstone that hides the older versions of every key in
// it from every read that sees it. It returns an *ArgumentError, and adds
// nothing, for a key over MaxKeySize or an empty range (start ≥ end).
func (b *Batch) DeleteRange(start, end []byte) error {
	if err := checkRange(start, end); err != nil {
		return err
	}
	return b.add(base.KindRangeDelete, start, end)
}

// checkRange checks DeleteRange's arguments.
func checkRange(start, end []byte) error {
	if len(start) > MaxKeySize {
		return argError("start", "%d bytes, more than MaxKeySize (%d)", len(start), MaxKeySize)
	}
	if len(end) > MaxKeySize {
		return argError("end", "%d bytes, more than MaxKeySize (%d)", len(end), MaxKeySize)
	}
	if bytes.Compare(start, end) >= 0 {
		return argError("end", "%q does not sort after start %q: the range [start, end) is empty", end, start)
	}
	return nil
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

// maxEntryOverhead is the most an entry's encoding adds to its key and
// value: its kind and two lengths.
const maxEntryOverhead = 1 + 2*binary.MaxVarintLen32

func (b *Batch) add(kind base.Kind, key, value []byte) error {
	if err := b.room(len(key) + len(value)); err != nil {
		return err
	}
	b.data = batchrepr.AppendEntry(b.data, kind, key, value)
	b.added()
	return nil
}

// room checks that an entry of n bytes of key and value keeps the batch
// within MaxBatchSize, and gives the batch its header if it has none yet.
func (b *Batch) room(n int) error {
	if b.Size()+maxEntryOverhead+n > MaxBatchSize {
		return argError("batch", "would grow past MaxBatchSize (%d bytes)", MaxBatchSize)
	}
	if len(b.data) == 0 {
		b.data = append(b.data[:0], make([]byte, batchrepr.HeaderLen)...)
	}
	return nil
}

// added counts the entry just appended.
func (b *Batch) added() {
	b.count++
	batchrepr.SetCount(b.data, b.count)
}

// Len returns the number of records in the batch: each Set, SetWithTTL,
// Delete, DeleteRange and Merge counts one.
func (b *Batch) Len() int { return int(b.count) }

// Empty reports whether the batch holds no record.
func (b *Batch) Empty() bool { return b.count == 0 }

// Size returns the batch's encoded size in bytes.
func (b *Batch) Size() int { return max(len(b.data), batchrepr.HeaderLen) }

// Reset empties the batch, keeping its memory for reuse. A batch must not
// be reset while Apply runs on it, nor while an Iterator of it is open.
// An indexed batch stays indexed, reading where it read.
func (b *Batch) Reset() {
	b.data, b.count, b.merges, b.ttls = b.data[:0], 0, 0, b.ttls[:0]
	if b.index != nil {
		b.index.reset()
	}
}

// setSeqNum stamps the sequence number of the batch's first write.
func (b *Batch) setSeqNum(seq base.SeqNum) { batchrepr.SetSeqNum(b.data, seq) }

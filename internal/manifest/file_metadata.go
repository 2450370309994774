package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
)

// FileMetadata describes one table of the tree: enough to decide, without
// opening it, whether a read or a compaction needs it. A FileMetadata that is
// part of a Version is immutable and owns its keys; versions share it.
type FileMetadata struct {
	// FileNum is the table's file number: its name is MakeFilename(
	// FileTypeTable, FileNum). File numbers start at 1.
	FileNum uint64
	// Size is the table file's length in bytes.
	Size uint64
	// Smallest and Largest are the table's first and last internal keys, in
	// internal-key order. Their user keys bound the table's key range,
	// inclusively.
	Smallest, Largest base.InternalKey
	// SmallestSeqNum and LargestSeqNum bound the sequence numbers of the
	// table's entries. L0 is ordered by them, since its tables overlap.
	SmallestSeqNum, LargestSeqNum base.SeqNum
	// FilterBitsPerKey is the bits per key the table's filter spends; 0
	// means no filter. FilterFamily (sstable.FilterFamily's values: 0 none,
	// 1 Bloom, 2 fuse) and FilterParam (the family's parameter: bits per
	// key for Bloom, fingerprint bits for fuse) say what was built. They
	// are recorded for the picker (does a table's filter suit the level it
	// would move to?) and for display (Metrics, tools) only: the table's
	// properties tell the reader how to decode its filter.
	FilterBitsPerKey float64
	FilterFamily     uint8
	FilterParam      float64
	// Entries is the number of the table's entries, 0 if unknown (a
	// table recorded before entries were). The filter allocation turns
	// level sizes into key counts with it.
	Entries uint64
	// Compression is the compression of the table's data blocks, as
	// sstable.Compression's values (1 none, 2 snappy, 3 zstd), 0 if
	// unknown (a table recorded before compressions were). Like the
	// filter it is for the picker (does the table suit the level it
	// would move to?) and for display: each block says how to decode it.
	Compression uint8
	// BlobRefs are the bytes of values in blob files the table's entries
	// of kind KindSetBlob reference, per blob file, in file-number order;
	// none for a table of inline values only. A table's references are
	// fixed when it is written; a Version's blob files and their live
	// bytes are the sums of its tables'.
	BlobRefs []BlobRef
	// GlobalSeqNum, if not 0, marks a table the DB ingested (DB.Ingest):
	// a file written outside the DB, which it never rewrites, whose every
	// entry reads at this sequence number whatever the file's entries
	// carry (sstable.ReaderOptions.GlobalSeqNum). SmallestSeqNum and
	// LargestSeqNum are then both GlobalSeqNum, and the table has no blob
	// references. A compaction's outputs of it are ordinary tables; a
	// trivial move keeps it.
	GlobalSeqNum base.SeqNum
}

// FilterBitsPerKey returns the bits per key the filters of files spend
// together: the sum of each table's filter bits (its FilterBitsPerKey
// times its Entries) over the sum of their Entries, so that a level of
// many large tables and a few small ones, whose small filters spend many
// bits on each of their few keys, shows what it spends on each of its keys.
// Tables recorded without their entries (Entries 0) weigh nothing; 0 when
// every table is such a table, or files is empty.
func FilterBitsPerKey(files []*FileMetadata) float64 {
	var bits float64
	var entries uint64
	for _, m := range files {
		bits += m.FilterBitsPerKey * float64(m.Entries)
		entries += m.Entries
	}
	if entries == 0 {
		return 0
	}
	return bits / float64(entries)
}

// familyBloom is sstable.BloomFamily's value.
const familyBloom = 1

// Filter returns the family and parameter of the table's filter. A table
// recorded without them (FilterFamily 0, as every table was before
// families) has a Bloom filter of FilterBitsPerKey bits per key, or none.
func (m *FileMetadata) Filter() (family uint8, param float64) {
	if m.FilterFamily == 0 && m.FilterBitsPerKey > 0 {
		return familyBloom, m.FilterBitsPerKey
	}
	return m.FilterFamily, m.FilterParam
}

// Clone returns a deep copy of m, keys included, so that the copy shares no
// memory with buffers the caller may reuse.
func (m *FileMetadata) Clone() *FileMetadata {
	c := *m
	c.BlobRefs = slices.Clone(m.BlobRefs)
	c.Smallest.UserKey = bytes.Clone(m.Smallest.UserKey)
	c.Largest.UserKey = bytes.Clone(m.Largest.UserKey)
	if c.Smallest.UserKey == nil {
		c.Smallest.UserKey = []byte{}
	}
	if c.Largest.UserKey == nil {
		c.Largest.UserKey = []byte{}
	}
	return &c
}

// ContainsUserKey reports whether userKey is within the table's key range,
// so that the table may hold a version of it.
func (m *FileMetadata) ContainsUserKey(userKey []byte) bool {
	return bytes.Compare(m.Smallest.UserKey, userKey) <= 0 && bytes.Compare(userKey, m.Largest.UserKey) <= 0
}

// Overlaps reports whether the table's key range intersects the user-key
// range [lo, hi], both bounds inclusive. lo must not exceed hi.
func (m *FileMetadata) Overlaps(lo, hi []byte) bool {
	return bytes.Compare(m.Largest.UserKey, lo) >= 0 && bytes.Compare(m.Smallest.UserKey, hi) <= 0
}

// String renders m for tests and tools, e.g.
// "000012:[a#5,SET-z#3,DEL] seqs 3-5 size 1024 bits/key 10".
func (m *FileMetadata) String() string {
	return fmt.Sprintf("%06d:[%s-%s] seqs %d-%d size %d bits/key %g",
		m.FileNum, m.Smallest, m.Largest, m.SmallestSeqNum, m.LargestSeqNum, m.Size, m.FilterBitsPerKey)
}

// errInvalidFile is wrapped by Validate's errors.
var errInvalidFile = errors.New("invalid table metadata")

// Validate checks what must hold of any table, wherever it sits: a file
// number, bounds in order, sequence numbers that fit a trailer and contain
// those of the bounds, and a filter size that is a size.
func (m *FileMetadata) Validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w %06d: %s", errInvalidFile, m.FileNum, fmt.Sprintf(format, args...))
	}
	switch {
	case m.FileNum == 0:
		return fail("file number 0")
	case base.CompareInternal(m.Smallest, m.Largest) > 0:
		return fail("smallest key %s sorts after largest key %s", m.Smallest, m.Largest)
	case m.SmallestSeqNum > m.LargestSeqNum:
		return fail("smallest seqnum %d above largest seqnum %d", m.SmallestSeqNum, m.LargestSeqNum)
	case m.LargestSeqNum > base.SeqNumMax:
		return fail("largest seqnum %d above the maximum %d", m.LargestSeqNum, base.SeqNumMax)
	case !m.seqInRange(m.Smallest.SeqNum()) || !m.seqInRange(m.Largest.SeqNum()):
		// The bounds are entries of the table, so their seqnums are too.
		return fail("bound seqnums %d and %d outside the seqnum range %d-%d",
			m.Smallest.SeqNum(), m.Largest.SeqNum(), m.SmallestSeqNum, m.LargestSeqNum)
	case math.IsNaN(m.FilterBitsPerKey) || math.IsInf(m.FilterBitsPerKey, 0) || m.FilterBitsPerKey < 0:
		return fail("filter bits per key %v", m.FilterBitsPerKey)
	case math.IsNaN(m.FilterParam) || math.IsInf(m.FilterParam, 0) || m.FilterParam < 0:
		return fail("filter parameter %v", m.FilterParam)
	case m.GlobalSeqNum != 0 && (m.SmallestSeqNum != m.GlobalSeqNum || m.LargestSeqNum != m.GlobalSeqNum):
		return fail("ingested at seqnum %d with the seqnum range %d-%d", m.GlobalSeqNum, m.SmallestSeqNum, m.LargestSeqNum)
	case m.GlobalSeqNum != 0 && len(m.BlobRefs) > 0:
		return fail("ingested with blob references")
	}
	return validateRefs(m)
}

func (m *FileMetadata) seqInRange(s base.SeqNum) bool {
	return m.SmallestSeqNum <= s && s <= m.LargestSeqNum
}

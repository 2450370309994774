package compaction

import (
	"io"

	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
)

// Env connects Run to the DB's files: the DB opens the input tables, and
// creates, numbers, syncs and, on failure, removes the output files. Run
// only streams entries between them.
type Env struct {
	// Open returns an iterator over every entry of an input table, every
	// version and tombstone included (*sstable.Iterator is one). Run
	// opens the tables of L0 together and those of a deeper level one at
	// a time, through an iterator.LevelIter, and closes each when done
	// with it. It walks them forward only: First, then Next.
	Open func(f *manifest.FileMetadata) (iterator.Iterator, error)
	// RangeDels returns the range tombstones of an input table
	// (sstable.Reader.RangeDels), which Run reads before it merges. Nil
	// means the inputs have none.
	RangeDels func(f *manifest.FileMetadata) (rangedel.List, error)
	// Create creates the file of a new output table, with a new file
	// number.
	Create func() (*Output, error)
	// ReadBlob appends to dst the value h locates, checked (a merge's
	// base); ReadBlobStored appends it as its file stores it, and its
	// compression, for a relocation to copy as stored; CreateBlob creates
	// a new blob file, with a new file number, to which Run relocates the
	// values of Compaction.RelocateBlobs (one per Run, when it has one to
	// relocate). Nil when no compaction relocates.
	ReadBlob       func(dst []byte, h blob.Handle) ([]byte, error)
	ReadBlobStored func(dst []byte, h blob.Handle) ([]byte, compress.Codec, error)
	CreateBlob     func() (*Output, error)
}

// Output is a file the DB created for one output table.
type Output struct {
	// FileNum is the table's file number.
	FileNum uint64
	// W receives the table's bytes. Run's writes are buffered (64 KiB);
	// W needs none of its own.
	W io.Writer
	// Finish makes the complete table durable: sync and close the file.
	// Run calls it once, after the table's last byte. (The directory entry
	// is the DB's to sync, once, before it installs the outputs.) May be
	// nil, for tables that need nothing more, like those in memory.
	Finish func() error
	// Abort discards the file: close it if still open, and remove it.
	// When Run fails it aborts every output it created, finished or not,
	// so the DB has nothing to clean up. May be nil.
	Abort func()
}

// Stats describe what a compaction did.
type Stats struct {
	InputTables, OutputTables int
	// BytesRead is the size of the input tables, each read once in full;
	// BytesWritten the size of the output tables.
	BytesRead, BytesWritten uint64
	// EntriesIn and EntriesOut count entries, tombstones included.
	EntriesIn, EntriesOut uint64
	// ShadowedDropped counts versions no read point could see: each had a
	// newer version in its snapshot stripe.
	ShadowedDropped uint64
	// TombstonesDropped counts tombstones dropped at the bottom because
	// there was nothing left for them to hide.
	TombstonesDropped uint64
	// ExpiredDropped counts versions whose time-to-live had ended at the
	// start of Run (Options.Clock): each was dropped as a tombstone at its
	// place is — written as one where a tombstone there would be kept
	// (then counted in EntriesOut too), dropped where it would be (then
	// counted in TombstonesDropped too) — and its value went.
	ExpiredDropped uint64
	// RangeDeletedDropped counts versions dropped because a range
	// tombstone in their snapshot stripe deletes them.
	RangeDeletedDropped uint64
	// RangeDelsIn counts the inputs' range tombstones (one per fragment
	// and seqnum, after merging), RangeDelsDropped those no read point
	// needs any longer: shadowed in their stripe by a newer one, or, at the
	// bottom, older than every snapshot. RangeDelsOut counts those written,
	// a tombstone cut at an output table's boundary counting once per
	// table.
	RangeDelsIn, RangeDelsDropped, RangeDelsOut uint64
	// BlobFile is the blob file Run wrote the relocated values to, nil
	// for none; the DB adds it with the output tables, which reference it.
	// BlobValuesRelocated counts the values, BlobBytesWritten its size.
	BlobFile            *manifest.BlobFileMetadata
	BlobValuesRelocated uint64
	BlobBytesWritten    uint64
	// MergesFolded counts the merge operands folded into a value or into
	// one operand (see mergeRun).
	MergesFolded uint64
}

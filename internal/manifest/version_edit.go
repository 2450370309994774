package manifest

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomkv/bloomkv/internal/base"
)

// VersionEdit is one change to the tree's metadata: tables added and removed,
// and new values of the manifest's counters. The manifest is a log of them;
// the package doc gives their encoding.
//
// The counter fields are optional: zero means "unchanged". The counters never
// go back and start at zero, so an edit never needs to record a zero.
type VersionEdit struct {
	// LogNumber, if set, is the number of the oldest WAL still needed:
	// every WAL numbered below it has been flushed to tables and is
	// obsolete.
	LogNumber uint64
	// NextFileNumber, if set, is the next file number to allocate: every
	// file number in use (tables, WALs, manifests) is below it.
	NextFileNumber uint64
	// LastSeqNum, if set, is the largest sequence number written so far.
	LastSeqNum base.SeqNum
	// DeletedFiles are tables removed from the tree.
	DeletedFiles []DeletedFile
	// NewFiles are tables added to the tree. Applying an edit removes its
	// deleted files before it adds its new ones, so that one edit can move a
	// table between levels.
	NewFiles []NewFile
	// NewBlobFiles are blob files an edit adds, before its tables, which
	// reference them. A blob file leaves the version by itself once no
	// table references it (see Builder), so no edit deletes one.
	NewBlobFiles []*BlobFileMetadata
	// MergerName, if not empty, records the name of the DB's merge
	// operator (bloomkv.Merger), set once: the DB opens only with it.
	MergerName string
}

// DeletedFile names a table an edit removes, and the level it is in.
type DeletedFile struct {
	Level   int
	FileNum uint64
}

// NewFile is a table an edit adds, and the level it goes to.
type NewFile struct {
	Level int
	Meta  *FileMetadata
}

// Field tags of an encoded edit; see the package doc. Their values are part of
// the manifest format. 0 is reserved, so zeroed bytes never decode as a field.
const (
	tagLogNumber      = 1
	tagNextFileNumber = 2
	tagLastSeqNum     = 3
	tagDeletedFile    = 4
	tagNewFile        = 5
	tagNewFileFilter  = 6  // a NewFile with its filter's family and parameter, and its entries
	tagNewFileBlocks  = 7  // a NewFileFilter with its data blocks' compression
	tagNewFileBlobs   = 8  // a NewFileBlocks with its blob references
	tagNewBlobFile    = 9  // a blob file
	tagMergerName     = 10 // the merge operator's name
	tagNewFileIngest  = 11 // a NewFileBlocks with its global seqnum: an ingested table
)

// maxMergerName bounds a recorded merger name, so that a damaged length
// is refused rather than believed.
const maxMergerName = 1 << 10

// LastTag is the newest field tag of an encoded edit that this package
// reads and writes; it reads every tag from 1 up to it and refuses a
// manifest with a tag above it.
const LastTag = tagNewFileIngest

// Encode appends the encoding of e to dst and returns the extended slice.
// Counters that are zero are left out; deleted files come before new files,
// each list in its order in e.
func (e *VersionEdit) Encode(dst []byte) []byte {
	if e.LogNumber != 0 {
		dst = binary.AppendUvarint(dst, tagLogNumber)
		dst = binary.AppendUvarint(dst, e.LogNumber)
	}
	if e.NextFileNumber != 0 {
		dst = binary.AppendUvarint(dst, tagNextFileNumber)
		dst = binary.AppendUvarint(dst, e.NextFileNumber)
	}
	if e.LastSeqNum != 0 {
		dst = binary.AppendUvarint(dst, tagLastSeqNum)
		dst = binary.AppendUvarint(dst, uint64(e.LastSeqNum))
	}
	if e.MergerName != "" {
		dst = binary.AppendUvarint(dst, tagMergerName)
		dst = binary.AppendUvarint(dst, uint64(len(e.MergerName)))
		dst = append(dst, e.MergerName...)
	}
	for _, d := range e.DeletedFiles {
		dst = binary.AppendUvarint(dst, tagDeletedFile)
		dst = binary.AppendUvarint(dst, uint64(d.Level))
		dst = binary.AppendUvarint(dst, d.FileNum)
	}
	for _, b := range e.NewBlobFiles {
		dst = binary.AppendUvarint(dst, tagNewBlobFile)
		dst = binary.AppendUvarint(dst, b.FileNum)
		dst = binary.AppendUvarint(dst, b.Size)
		dst = binary.AppendUvarint(dst, b.Values)
		dst = binary.AppendUvarint(dst, b.ValueBytes)
	}
	for _, n := range e.NewFiles {
		m := n.Meta
		tag := uint64(tagNewFile)
		switch {
		case m.GlobalSeqNum != 0:
			tag = tagNewFileIngest
		case len(m.BlobRefs) > 0:
			tag = tagNewFileBlobs
		case m.Compression != 0:
			tag = tagNewFileBlocks
		case m.FilterFamily != 0 || m.Entries != 0:
			tag = tagNewFileFilter
		}
		dst = binary.AppendUvarint(dst, tag)
		dst = binary.AppendUvarint(dst, uint64(n.Level))
		dst = binary.AppendUvarint(dst, m.FileNum)
		dst = binary.AppendUvarint(dst, m.Size)
		dst = binary.AppendUvarint(dst, uint64(m.Smallest.EncodedLen()))
		dst = m.Smallest.Append(dst)
		dst = binary.AppendUvarint(dst, uint64(m.Largest.EncodedLen()))
		dst = m.Largest.Append(dst)
		dst = binary.AppendUvarint(dst, uint64(m.SmallestSeqNum))
		dst = binary.AppendUvarint(dst, uint64(m.LargestSeqNum))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(m.FilterBitsPerKey))
		if tag != tagNewFile {
			dst = append(dst, m.FilterFamily)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(m.FilterParam))
			dst = binary.AppendUvarint(dst, m.Entries)
		}
		if tag >= tagNewFileBlocks {
			dst = append(dst, m.Compression)
		}
		if tag == tagNewFileIngest {
			dst = binary.AppendUvarint(dst, uint64(m.GlobalSeqNum))
		}
		if tag == tagNewFileBlobs {
			dst = binary.AppendUvarint(dst, uint64(len(m.BlobRefs)))
			for _, r := range m.BlobRefs {
				dst = binary.AppendUvarint(dst, r.FileNum)
				dst = binary.AppendUvarint(dst, r.Bytes)
			}
		}
	}
	return dst
}

// EditError is the error Decode returns: why the bytes are not an edit. It
// wraps base.ErrCorruption, since an edit that does not decode is damaged
// data, but says nothing of where the edit was: the manifest reader reports
// it as a base.CorruptionError with the file and the record's offset.
type EditError struct {
	Reason string
}

func (e *EditError) Error() string { return "bloomkv: corruption: bad version edit: " + e.Reason }

// Unwrap makes errors.Is(err, base.ErrCorruption) true.
func (e *EditError) Unwrap() error { return base.ErrCorruption }

func editErrorf(format string, args ...any) error {
	return &EditError{Reason: fmt.Sprintf(format, args...)}
}

// Decode parses an encoded edit. It never panics and never reads past b. It
// accepts fields in any order, and rejects with an *EditError (wrapping
// base.ErrCorruption) a truncated field, a reserved or unknown tag, a
// counter given twice or as zero, a level out of range and a table that
// fails Validate. The edit shares no memory with b.
func Decode(b []byte) (VersionEdit, error) {
	d := decoder{b: b, n: len(b)}
	var e VersionEdit
	var seen [tagLastSeqNum + 1]bool
	for len(d.b) > 0 && d.err == nil {
		fieldOff := d.off()
		tag := d.uvarint("tag")
		if d.err != nil {
			break
		}
		if tag >= tagLogNumber && tag <= tagLastSeqNum {
			// A counter given twice would make the edit's meaning depend
			// on an order Encode never produces.
			if seen[tag] {
				return VersionEdit{}, editErrorf("tag %d repeated at byte %d", tag, fieldOff)
			}
			seen[tag] = true
		}
		switch tag {
		case tagLogNumber:
			e.LogNumber = d.nonzero("log number")
		case tagNextFileNumber:
			e.NextFileNumber = d.nonzero("next file number")
		case tagLastSeqNum:
			e.LastSeqNum = base.SeqNum(d.nonzero("last seqnum"))
		case tagDeletedFile:
			level := d.level()
			num := d.uvarint("deleted file number")
			if d.err == nil && num == 0 {
				d.fail("deleted file number 0")
			}
			if d.err == nil {
				e.DeletedFiles = append(e.DeletedFiles, DeletedFile{Level: level, FileNum: num})
			}
		case tagNewFile, tagNewFileFilter, tagNewFileBlocks, tagNewFileBlobs, tagNewFileIngest:
			if n, ok := d.newFile(tag); ok {
				e.NewFiles = append(e.NewFiles, n)
			}
		case tagNewBlobFile:
			b := &BlobFileMetadata{
				FileNum:    d.nonzero("blob file number"),
				Size:       d.uvarint("blob file size"),
				Values:     d.uvarint("blob file values"),
				ValueBytes: d.uvarint("blob file value bytes"),
			}
			if d.err == nil {
				e.NewBlobFiles = append(e.NewBlobFiles, b)
			}
		case tagMergerName:
			if e.MergerName != "" {
				return VersionEdit{}, editErrorf("tag %d repeated at byte %d", tag, fieldOff)
			}
			n := d.uvarint("merger name length")
			if d.err == nil && (n == 0 || n > maxMergerName) {
				d.fail("merger name length %d not in [1, %d]", n, maxMergerName)
			}
			e.MergerName = string(d.bytes("merger name", int(n)))
		case 0:
			return VersionEdit{}, editErrorf("reserved tag 0 at byte %d", fieldOff)
		default:
			// A tag this version does not know may change the meaning of
			// the edit; skipping it could silently lose a table.
			return VersionEdit{}, editErrorf("unknown tag %d at byte %d", tag, fieldOff)
		}
	}
	if d.err != nil {
		return VersionEdit{}, d.err
	}
	return e, nil
}

// decoder reads the fields of one encoded edit. The first failure sticks in
// err, and every later read returns zero values, so field sequences need not
// check after each read.
type decoder struct {
	b   []byte // the input not yet read
	n   int    // length of the whole input, to report offsets
	err error
}

// off is the offset in the input of the next byte to read.
func (d *decoder) off() int { return d.n - len(d.b) }

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = editErrorf("%s at byte %d", fmt.Sprintf(format, args...), d.off())
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		if n == 0 {
			d.fail("%s truncated", what)
		} else {
			d.fail("%s overflows 64 bits", what)
		}
		return 0
	}
	d.b = d.b[n:]
	return v
}

// nonzero reads a counter. Encode leaves zero counters out, so an explicit
// zero is not something it wrote.
func (d *decoder) nonzero(what string) uint64 {
	v := d.uvarint(what)
	if d.err == nil && v == 0 {
		d.fail("%s is an explicit zero", what)
	}
	return v
}

func (d *decoder) level() int {
	v := d.uvarint("level")
	if d.err == nil && v >= NumLevels {
		d.fail("level %d out of range [0, %d)", v, NumLevels)
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(what string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.fail("%s needs %d bytes, %d left", what, n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) internalKey(what string) base.InternalKey {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return base.InternalKey{}
	}
	if n < base.TrailerLen || n > uint64(len(d.b)) {
		d.fail("%s length %d not in [%d, %d]", what, n, base.TrailerLen, len(d.b))
		return base.InternalKey{}
	}
	k, _ := base.DecodeInternalKey(d.bytes(what, int(n)))
	k.UserKey = append([]byte{}, k.UserKey...) // own it, and never nil
	return k
}

// newFile decodes the body of a NewFile field with tag (tagNewFile,
// tagNewFileFilter, tagNewFileBlocks, tagNewFileBlobs or
// tagNewFileIngest): the tags after tagNewFile add the filter's family and
// parameter and the entries, then the compression, then the blob
// references (tagNewFileBlobs) or the global seqnum (tagNewFileIngest).
func (d *decoder) newFile(tag uint64) (NewFile, bool) {
	start := d.off()
	level := d.level()
	m := &FileMetadata{}
	m.FileNum = d.uvarint("file number")
	m.Size = d.uvarint("file size")
	m.Smallest = d.internalKey("smallest key")
	m.Largest = d.internalKey("largest key")
	m.SmallestSeqNum = base.SeqNum(d.uvarint("smallest seqnum"))
	m.LargestSeqNum = base.SeqNum(d.uvarint("largest seqnum"))
	if bits := d.bytes("filter bits per key", 8); bits != nil {
		m.FilterBitsPerKey = math.Float64frombits(binary.LittleEndian.Uint64(bits))
	}
	if tag != tagNewFile {
		if family := d.bytes("filter family", 1); family != nil {
			m.FilterFamily = family[0]
		}
		if param := d.bytes("filter parameter", 8); param != nil {
			m.FilterParam = math.Float64frombits(binary.LittleEndian.Uint64(param))
		}
		m.Entries = d.uvarint("entries")
		if d.err == nil && m.FilterFamily == 0 && m.FilterBitsPerKey != 0 {
			d.fail("filter family 0 (none) with %v bits per key", m.FilterBitsPerKey)
		}
	}
	if tag >= tagNewFileBlocks {
		if c := d.bytes("compression", 1); c != nil {
			m.Compression = c[0]
		}
		if d.err == nil && m.Compression == 0 {
			d.fail("compression 0 (unknown) in a field that records it")
		}
	}
	if tag == tagNewFileIngest {
		m.GlobalSeqNum = base.SeqNum(d.nonzero("global seqnum"))
	}
	if tag == tagNewFileBlobs {
		n := d.uvarint("blob references")
		if d.err == nil && (n == 0 || n > uint64(len(d.b))/2) {
			d.fail("%d blob references", n) // each takes two bytes at least
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			m.BlobRefs = append(m.BlobRefs, BlobRef{FileNum: d.uvarint("blob file number"), Bytes: d.uvarint("blob bytes")})
		}
	}
	if d.err != nil {
		return NewFile{}, false
	}
	if err := m.Validate(); err != nil {
		d.err = editErrorf("new file at byte %d: %v", start, err)
		return NewFile{}, false
	}
	return NewFile{Level: level, Meta: m}, true
}

package manifest

import (
	"fmt"
	"slices"
	"sort"
)

// BlobRef says how many bytes of values of one blob file a table's entries
// reference: the sum of the lengths of its handles into that file.
type BlobRef struct {
	FileNum uint64
	Bytes   uint64
}

// BlobFileMetadata describes a blob file (package blob): its number, its
// length, and how many values of how many bytes it holds. Like a table's
// metadata it is immutable once in a Version.
type BlobFileMetadata struct {
	FileNum    uint64
	Size       uint64
	Values     uint64
	ValueBytes uint64
}

// BlobFile is a blob file of a Version and the bytes of its values the
// version's tables still reference. The rest of its ValueBytes are dead:
// values overwritten or deleted whose handles compactions have dropped.
type BlobFile struct {
	*BlobFileMetadata
	LiveBytes uint64
}

// DeadBytes is the bytes of the file's values no table references.
func (b BlobFile) DeadBytes() uint64 { return b.ValueBytes - b.LiveBytes }

// DeadShare is DeadBytes as a share of the file's value bytes, in [0, 1].
func (b BlobFile) DeadShare() float64 {
	if b.ValueBytes == 0 {
		return 0
	}
	return float64(b.DeadBytes()) / float64(b.ValueBytes)
}

// BlobFile returns the blob file numbered num of the version.
func (v *Version) BlobFile(num uint64) (BlobFile, bool) {
	i := sort.Search(len(v.Blobs), func(i int) bool { return v.Blobs[i].FileNum >= num })
	if i < len(v.Blobs) && v.Blobs[i].FileNum == num {
		return v.Blobs[i], true
	}
	return BlobFile{}, false
}

// validateRefs checks a table's blob references: in file-number order, no
// file twice, no zero.
func validateRefs(m *FileMetadata) error {
	for i, r := range m.BlobRefs {
		if r.FileNum == 0 || r.Bytes == 0 {
			return fmt.Errorf("%w %06d: blob reference %+v with a zero", errInvalidFile, m.FileNum, r)
		}
		if i > 0 && m.BlobRefs[i-1].FileNum >= r.FileNum {
			return fmt.Errorf("%w %06d: blob references out of order", errInvalidFile, m.FileNum)
		}
	}
	return nil
}

// blobBuilder follows the blob files of a version being built: the files
// known, and the bytes of each the tables reference.
//
// INVARIANT: a Version's Blobs are exactly the blob files its tables
// reference, each with LiveBytes the sum of its tables' references: a blob
// file no table references any more leaves the version (Finish), and its
// file is obsolete once no version a reader holds lists it.
//
// It copies the base's blob files only once an edit adds one or a table
// that references one comes or goes; until then finish returns the base's.
type blobBuilder struct {
	base  *Version
	files map[uint64]*BlobFileMetadata // nil until an edit touches them
	live  map[uint64]uint64
}

// init copies the base's blob files, on the first change to them.
func (b *blobBuilder) init() {
	if b.files != nil {
		return
	}
	b.files, b.live = map[uint64]*BlobFileMetadata{}, map[uint64]uint64{}
	for _, f := range b.base.Blobs {
		b.files[f.FileNum] = f.BlobFileMetadata
		b.live[f.FileNum] = f.LiveBytes
	}
}

func (b *blobBuilder) add(m *BlobFileMetadata) error {
	if m.FileNum == 0 {
		return fmt.Errorf("manifest: edit adds blob file 0")
	}
	b.init()
	if _, ok := b.files[m.FileNum]; ok {
		return fmt.Errorf("manifest: edit adds blob file %06d, which the version has", m.FileNum)
	}
	c := *m
	b.files[m.FileNum] = &c
	return nil
}

// ref adds (sign 1) or removes (sign -1) the references of table m.
func (b *blobBuilder) ref(m *FileMetadata, sign int) error {
	if len(m.BlobRefs) > 0 {
		b.init()
	}
	for _, r := range m.BlobRefs {
		f, ok := b.files[r.FileNum]
		if !ok {
			return fmt.Errorf("manifest: table %06d references blob file %06d, which the version does not have", m.FileNum, r.FileNum)
		}
		live := b.live[r.FileNum]
		if sign > 0 {
			if r.Bytes > f.ValueBytes-live {
				return fmt.Errorf("manifest: blob file %06d referenced for more than its %d value bytes", r.FileNum, f.ValueBytes)
			}
			b.live[r.FileNum] = live + r.Bytes
		} else {
			if r.Bytes > live {
				return fmt.Errorf("manifest: table %06d's reference to blob file %06d exceeds its live bytes", m.FileNum, r.FileNum)
			}
			b.live[r.FileNum] = live - r.Bytes
		}
	}
	return nil
}

// finish returns the version's blob files: those referenced, in file-number
// order.
func (b *blobBuilder) finish() []BlobFile {
	if b.files == nil {
		return b.base.Blobs
	}
	var out []BlobFile
	for num, f := range b.files {
		if live := b.live[num]; live > 0 {
			out = append(out, BlobFile{BlobFileMetadata: f, LiveBytes: live})
		}
	}
	slices.SortFunc(out, func(x, y BlobFile) int {
		switch {
		case x.FileNum < y.FileNum:
			return -1
		case x.FileNum > y.FileNum:
			return 1
		}
		return 0
	})
	return out
}

// checkBlobs verifies the invariant above over a whole version.
func (v *Version) checkBlobs() error {
	live := map[uint64]uint64{}
	for _, f := range v.Files() {
		if err := validateRefs(f); err != nil {
			return err
		}
		for _, r := range f.BlobRefs {
			live[r.FileNum] += r.Bytes
		}
	}
	for i, b := range v.Blobs {
		if i > 0 && v.Blobs[i-1].FileNum >= b.FileNum {
			return fmt.Errorf("manifest: blob files out of order at %06d", b.FileNum)
		}
		if live[b.FileNum] != b.LiveBytes || b.LiveBytes == 0 || b.LiveBytes > b.ValueBytes {
			return fmt.Errorf("manifest: blob file %06d has %d live bytes of %d, its tables reference %d",
				b.FileNum, b.LiveBytes, b.ValueBytes, live[b.FileNum])
		}
		delete(live, b.FileNum)
	}
	for num := range live {
		return fmt.Errorf("manifest: a table references blob file %06d, which the version does not have", num)
	}
	return nil
}

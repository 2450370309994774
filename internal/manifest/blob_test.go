package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// withRefs returns m with blob references (file, bytes) pairs and the
// fields a table's record of them carries.
func withRefs(m *FileMetadata, refs ...BlobRef) *FileMetadata {
	m.FilterFamily, m.FilterParam, m.Entries, m.Compression = 1, 10, 4, 2
	m.BlobRefs = refs
	return m
}

func TestBlobEditRoundTrip(t *testing.T) {
	e := VersionEdit{
		NextFileNumber: 20,
		NewBlobFiles:   []*BlobFileMetadata{{FileNum: 5, Size: 1200, Values: 10, ValueBytes: 1000}},
		NewFiles: []NewFile{
			{Level: 0, Meta: withRefs(meta(6, "a", "k", 1, 9), BlobRef{3, 70}, BlobRef{5, 600})},
			{Level: 1, Meta: meta(7, "m", "z", 1, 2)},
		},
	}
	enc := e.Encode(nil)
	got, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("Decode(Encode(e)) = %+v, want %+v", got, e)
	}
	for n := 1; n < len(enc); n++ {
		if d, err := Decode(enc[:n]); err == nil && reflect.DeepEqual(d, e) {
			t.Fatalf("a %d-byte prefix decodes as the whole edit", n)
		} else if err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("prefix %d: %v, want corruption", n, err)
		}
	}
	for _, bad := range []*FileMetadata{
		withRefs(meta(6, "a", "k", 1, 9), BlobRef{5, 1}, BlobRef{3, 1}),
		withRefs(meta(6, "a", "k", 1, 9), BlobRef{5, 0}),
	} {
		enc := (&VersionEdit{NewFiles: []NewFile{{Meta: bad}}}).Encode(nil)
		if _, err := Decode(enc); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("refs %v: Decode = %v, want corruption", bad.BlobRefs, err)
		}
	}
}

// TestBlobLiveBytes follows a blob file through the edits of a flush, a
// compaction that keeps part of its references, a trivial move and the
// compaction that drops the last: its live bytes are the sum of its
// tables' references, and it leaves the version with the last of them.
func TestBlobLiveBytes(t *testing.T) {
	blob := &BlobFileMetadata{FileNum: 5, Size: 1200, Values: 10, ValueBytes: 1000}
	steps := []struct {
		edit VersionEdit
		live uint64 // 0: the blob file is gone
	}{
		{VersionEdit{NewBlobFiles: []*BlobFileMetadata{blob}, NewFiles: []NewFile{
			{Level: 0, Meta: withRefs(meta(6, "a", "k", 1, 9), BlobRef{5, 600})},
			{Level: 0, Meta: withRefs(meta(7, "l", "z", 10, 12), BlobRef{5, 400})},
		}}, 1000},
		{VersionEdit{DeletedFiles: []DeletedFile{{0, 6}}, NewFiles: []NewFile{
			{Level: 1, Meta: withRefs(meta(8, "a", "k", 1, 9), BlobRef{5, 250})},
		}}, 650},
		{VersionEdit{DeletedFiles: []DeletedFile{{1, 8}}, NewFiles: []NewFile{
			{Level: 2, Meta: withRefs(meta(8, "a", "k", 1, 9), BlobRef{5, 250})},
		}}, 650},
		{VersionEdit{DeletedFiles: []DeletedFile{{0, 7}}}, 250},
		{VersionEdit{DeletedFiles: []DeletedFile{{2, 8}}, NewFiles: []NewFile{
			{Level: 2, Meta: meta(9, "a", "k", 1, 9)},
		}}, 0},
	}
	v := &Version{}
	for i, s := range steps {
		b := NewBuilder(v)
		if err := b.Apply(&s.edit); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var err error
		if v, err = b.Finish(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if err := v.CheckInvariants(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, ok := v.BlobFile(5)
		if s.live == 0 {
			if ok || len(v.Blobs) != 0 {
				t.Fatalf("step %d: blob file still in the version: %+v", i, v.Blobs)
			}
			continue
		}
		if !ok || got.LiveBytes != s.live || got.DeadBytes() != 1000-s.live {
			t.Fatalf("step %d: blob file %+v, want %d live bytes", i, got, s.live)
		}
	}
}

func TestBlobEditsRejected(t *testing.T) {
	blob := &BlobFileMetadata{FileNum: 5, ValueBytes: 100}
	for _, tc := range []struct {
		name string
		edit VersionEdit
		want string
	}{
		{"unknown blob file", VersionEdit{NewFiles: []NewFile{{Level: 1, Meta: withRefs(meta(6, "a", "b", 1, 1), BlobRef{5, 1})}}}, "does not have"},
		{"more than its bytes", VersionEdit{NewBlobFiles: []*BlobFileMetadata{blob}, NewFiles: []NewFile{
			{Level: 1, Meta: withRefs(meta(6, "a", "b", 1, 1), BlobRef{5, 60})},
			{Level: 1, Meta: withRefs(meta(7, "c", "d", 1, 1), BlobRef{5, 60})},
		}}, "more than its"},
		{"blob file twice", VersionEdit{NewBlobFiles: []*BlobFileMetadata{blob, blob}}, "which the version has"},
	} {
		err := NewBuilder(nil).Apply(&tc.edit)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Apply = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	s, err := State{NextFileNumber: 5}.Apply(&VersionEdit{NewBlobFiles: []*BlobFileMetadata{blob}})
	if err == nil {
		t.Fatalf("a blob file numbered at the next file number applied: %+v", s)
	}
}

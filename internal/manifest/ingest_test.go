package manifest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// ingested returns a table ingested at seqnum g, as DB.Ingest records it.
func ingested(num uint64, lo, hi string, g base.SeqNum) *FileMetadata {
	m := meta(num, lo, hi, g, g)
	m.FilterFamily, m.FilterParam, m.Entries, m.Compression = 1, 10, 7, 2
	m.GlobalSeqNum = g
	return m
}

// TestIngestedFileRoundTrip encodes an ingested table (tag 11) beside an
// ordinary one: it decodes to the same edit, its byte layout is the
// package doc's (a NewFileBlocks body, then the global seqnum), and every
// proper prefix is refused.
func TestIngestedFileRoundTrip(t *testing.T) {
	e := VersionEdit{NextFileNumber: 30, NewFiles: []NewFile{
		{Level: 6, Meta: ingested(21, "a", "z", 300)},
		{Level: 0, Meta: meta(22, "b", "c", 1, 9)},
	}}
	enc := e.Encode(nil)
	got, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("Decode(Encode(e)) = %+v, want %+v", got, e)
	}
	// The layout: the field of the ingested table is the NewFileBlocks
	// field of the same table without its global seqnum, retagged, with
	// the seqnum (300: 0xac 0x02) after it.
	plain := *e.NewFiles[0].Meta
	plain.GlobalSeqNum = 0
	blocks := (&VersionEdit{NewFiles: []NewFile{{Level: 6, Meta: &plain}}}).Encode(nil)
	single := (&VersionEdit{NewFiles: e.NewFiles[:1]}).Encode(nil)
	if blocks[0] != tagNewFileBlocks || single[0] != tagNewFileIngest {
		t.Fatalf("tags %d and %d, want %d and %d", blocks[0], single[0], tagNewFileBlocks, tagNewFileIngest)
	}
	if want := append(append([]byte{tagNewFileIngest}, blocks[1:]...), 0xac, 0x02); !reflect.DeepEqual(single, want) {
		t.Fatalf("ingested field % x, want % x", single, want)
	}
	for n := 1; n < len(single); n++ {
		if _, err := Decode(single[:n]); !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("a %d-byte prefix: %v, want corruption", n, err)
		}
	}
}

// TestIngestedFileRejected: Validate refuses an ingested table whose
// seqnum range is not its global seqnum, or that references blob files,
// and Decode refuses a global seqnum of zero.
func TestIngestedFileRejected(t *testing.T) {
	wide := ingested(5, "a", "b", 10)
	wide.SmallestSeqNum = 9
	blobs := ingested(6, "a", "b", 10)
	blobs.BlobRefs = []BlobRef{{FileNum: 2, Bytes: 1}}
	for _, m := range []*FileMetadata{wide, blobs} {
		if err := m.Validate(); err == nil {
			t.Errorf("Validate(%v) = nil", m)
		}
	}
	zero := (&VersionEdit{NewFiles: []NewFile{{Level: 1, Meta: ingested(7, "a", "b", 10)}}}).Encode(nil)
	zero[len(zero)-1] = 0 // the global seqnum, one byte
	if _, err := Decode(zero); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("global seqnum 0: %v, want corruption", err)
	}
}

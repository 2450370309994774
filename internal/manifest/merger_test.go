package manifest

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestMergerName checks the MergerName field: it round-trips, a snapshot
// edit carries it, a state keeps it once set and refuses another, and
// Decode refuses it empty, oversized, truncated or twice.
func TestMergerName(t *testing.T) {
	e := &VersionEdit{LogNumber: 2, NextFileNumber: 3, MergerName: "bloomkv.int64add"}
	got, err := Decode(e.Encode(nil))
	if err != nil || got.MergerName != e.MergerName || got.LogNumber != 2 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	s, err := State{}.Apply(e)
	if err != nil || s.MergerName != e.MergerName {
		t.Fatalf("Apply: %+v, %v", s, err)
	}
	if s.SnapshotEdit().MergerName != e.MergerName {
		t.Error("the snapshot edit dropped the merger")
	}
	if s2, err := s.Apply(&VersionEdit{LogNumber: 2}); err != nil || s2.MergerName != e.MergerName {
		t.Errorf("an edit without a name changed it: %q, %v", s2.MergerName, err)
	}
	if _, err := s.Apply(&VersionEdit{MergerName: "other"}); err == nil || !strings.Contains(err.Error(), `records merger "other", but the DB's is "bloomkv.int64add"`) {
		t.Errorf("another name: %v", err)
	}

	field := func(n uint64, name string) []byte {
		b := binary.AppendUvarint(nil, tagMergerName)
		b = binary.AppendUvarint(b, n)
		return append(b, name...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", field(0, "")},
		{"oversized", field(maxMergerName+1, strings.Repeat("m", maxMergerName+1))},
		{"truncated", field(5, "abc")},
		{"twice", append(field(1, "a"), field(1, "a")...)},
	} {
		if _, err := Decode(tc.b); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Decode = %v, want corruption", tc.name, err)
		}
	}
}

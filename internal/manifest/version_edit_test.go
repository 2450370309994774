package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

func TestEditRoundTrip(t *testing.T) {
	bigKey := bytes.Repeat([]byte("x"), 70000)
	cases := []struct {
		name string
		edit VersionEdit
	}{
		{"empty", VersionEdit{}},
		{"counters", VersionEdit{LogNumber: 7, NextFileNumber: 9, LastSeqNum: 1234}},
		{"max counters", VersionEdit{LogNumber: math.MaxUint64, NextFileNumber: math.MaxUint64, LastSeqNum: base.SeqNumMax}},
		{"deleted files", VersionEdit{DeletedFiles: []DeletedFile{{0, 1}, {6, math.MaxUint64}, {3, 3}}}},
		{"new file", VersionEdit{NewFiles: []NewFile{{Level: 2, Meta: meta(5, "a", "z", 3, 9)}}}},
		{"empty user keys", VersionEdit{NewFiles: []NewFile{{Level: 0, Meta: meta(5, "", "", 0, 0)}}}},
		{"big key", VersionEdit{NewFiles: []NewFile{{Level: 6, Meta: &FileMetadata{
			FileNum: 1, Smallest: base.MakeInternalKey(bigKey, 1, base.KindSet), Largest: base.MakeInternalKey(bigKey, 1, base.KindDelete),
			SmallestSeqNum: 1, LargestSeqNum: 1, FilterBitsPerKey: 1.4426950408889634,
		}}}}},
		{"move", VersionEdit{
			LastSeqNum:   5,
			DeletedFiles: []DeletedFile{{1, 4}},
			NewFiles:     []NewFile{{Level: 2, Meta: meta(4, "b", "c", 1, 5)}, {Level: 2, Meta: meta(6, "d", "e", 1, 2)}},
		}},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		cases = append(cases, struct {
			name string
			edit VersionEdit
		}{"random", randEdit(rng)})
	}
	for _, tc := range cases {
		enc := tc.edit.Encode([]byte("prefix"))
		if string(enc[:6]) != "prefix" {
			t.Fatalf("%s: Encode clobbered dst", tc.name)
		}
		got, err := Decode(enc[6:])
		if err != nil {
			t.Fatalf("%s: Decode: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, tc.edit) {
			t.Fatalf("%s: round trip\n got %+v\nwant %+v", tc.name, got, tc.edit)
		}
		// The decoded edit must not alias its input.
		clear(enc)
		if !reflect.DeepEqual(got, tc.edit) {
			t.Fatalf("%s: decoded edit aliases the encoding", tc.name)
		}
	}
}

// fields encodes e one field at a time, in Encode's order, and returns the
// encoding and the edit each prefix of whole fields decodes to.
func fieldPrefixes(e VersionEdit) (ends []int, edits []VersionEdit) {
	var cur VersionEdit
	add := func() {
		ends = append(ends, len(cur.Encode(nil)))
		c := cur
		c.DeletedFiles = append([]DeletedFile(nil), cur.DeletedFiles...)
		c.NewFiles = append([]NewFile(nil), cur.NewFiles...)
		edits = append(edits, c)
	}
	add()
	if e.LogNumber != 0 {
		cur.LogNumber = e.LogNumber
		add()
	}
	if e.NextFileNumber != 0 {
		cur.NextFileNumber = e.NextFileNumber
		add()
	}
	if e.LastSeqNum != 0 {
		cur.LastSeqNum = e.LastSeqNum
		add()
	}
	for _, d := range e.DeletedFiles {
		cur.DeletedFiles = append(cur.DeletedFiles, d)
		add()
	}
	for _, n := range e.NewFiles {
		cur.NewFiles = append(cur.NewFiles, n)
		add()
	}
	return ends, edits
}

// TestDecodeTruncated cuts encodings at every byte: a cut between fields
// decodes to the fields before it (an edit has no terminator; the record
// around it gives its length), a cut inside a field is corruption.
func TestDecodeTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for range 200 {
		e := randEdit(rng)
		enc := e.Encode(nil)
		ends, prefixes := fieldPrefixes(e)
		next := 0
		for cut := 0; cut <= len(enc); cut++ {
			got, err := Decode(enc[:cut:cut])
			if next < len(ends) && cut == ends[next] {
				if err != nil || !reflect.DeepEqual(got, prefixes[next]) {
					t.Fatalf("cut at field boundary %d of %x: got %+v, %v; want %+v", cut, enc, got, err, prefixes[next])
				}
				next++
				continue
			}
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("cut at %d inside a field of %x: got %+v, %v; want corruption", cut, enc, got, err)
			}
		}
	}
}

// TestDecodeBitFlips flips every bit of some encodings. The record CRC
// catches flips in a manifest; Decode must only never panic, and whatever
// it accepts must be a well-formed edit.
func TestDecodeBitFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 30 {
		e := randEdit(rng)
		enc := e.Encode(nil)
		for i := range len(enc) * 8 {
			b := bytes.Clone(enc)
			b[i/8] ^= 1 << (i % 8)
			checkDecode(t, b)
		}
	}
}

// checkDecode is the property FuzzDecodeEdit checks: Decode fails with
// corruption, or returns an edit that re-encodes to an encoding no longer
// than its input, decoding to the same edit.
func checkDecode(t *testing.T, b []byte) {
	t.Helper()
	e, err := Decode(b)
	if err != nil {
		var ee *EditError
		if !errors.Is(err, base.ErrCorruption) || !errors.As(err, &ee) {
			t.Fatalf("Decode(%x): error %v is not an EditError wrapping ErrCorruption", b, err)
		}
		return
	}
	enc := e.Encode(nil)
	if len(enc) > len(b) {
		t.Fatalf("Decode(%x) = %+v, which encodes longer: %x", b, e, enc)
	}
	again, err := Decode(enc)
	if err != nil || !reflect.DeepEqual(again, e) {
		t.Fatalf("Decode(%x) = %+v, re-encoded as %x, decodes to %+v, %v", b, e, enc, again, err)
	}
	for _, n := range e.NewFiles {
		if err := n.Meta.Validate(); err != nil {
			t.Fatalf("Decode(%x) accepted an invalid table: %v", b, err)
		}
	}
}

// uv concatenates uvarints, for hand-built encodings.
func uv(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// newFileBody encodes a NewFile field from its parts.
func newFileBody(level, num uint64, smallest, largest []byte, minSeq, maxSeq uint64, bits float64) []byte {
	b := uv(tagNewFile, level, num, 100, uint64(len(smallest)))
	b = append(b, smallest...)
	b = append(b, uv(uint64(len(largest)))...)
	b = append(b, largest...)
	b = append(b, uv(minSeq, maxSeq)...)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(bits))
}

// filterBody is a tag-6 new file: newFileBody's fields, then the filter's
// family and parameter.
func filterBody(family byte, param float64) []byte {
	k := func(uk string) []byte { return ikey(uk, 1, base.KindSet).Append(nil) }
	b := newFileBody(0, 1, k("a"), k("b"), 1, 1, 10)
	b[0] = tagNewFileFilter
	b = append(b, family)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(param))
	return append(b, uv(1000)...)
}

// blocksBody is a tag-7 new file: filterBody's fields, then the data
// blocks' compression.
func blocksBody(compression byte) []byte {
	b := filterBody(2, 8)
	b[0] = tagNewFileBlocks
	return append(b, compression)
}

// TestFilterOfRecord checks FileMetadata.Filter: a record of before
// families (tag 5) with a filter holds a Bloom filter of its bits per key.
func TestFilterOfRecord(t *testing.T) {
	for _, tc := range []struct {
		m      FileMetadata
		family uint8
		param  float64
	}{
		{FileMetadata{}, 0, 0},
		{FileMetadata{FilterBitsPerKey: 9.8}, 1, 9.8},
		{FileMetadata{FilterBitsPerKey: 9.04, FilterFamily: 2, FilterParam: 8}, 2, 8},
		{FileMetadata{FilterBitsPerKey: 10.1, FilterFamily: 1, FilterParam: 10}, 1, 10},
	} {
		if f, p := tc.m.Filter(); f != tc.family || p != tc.param {
			t.Errorf("%+v: Filter() = %d, %v; want %d, %v", tc.m, f, p, tc.family, tc.param)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	k := func(uk string, seq uint64) []byte { return ikey(uk, base.SeqNum(seq), base.KindSet).Append(nil) }
	cases := []struct {
		name string
		in   []byte
	}{
		{"tag 0", uv(0)},
		{"zero bytes", make([]byte, 8)},
		{"unknown tag", uv(8, 1)},
		{"huge tag", uv(1 << 40)},
		{"tag overflows", bytes.Repeat([]byte{0xff}, 11)},
		{"truncated tag", []byte{0x80}},
		{"repeated log number", uv(tagLogNumber, 1, tagLogNumber, 2)},
		{"repeated next file", uv(tagNextFileNumber, 1, tagNextFileNumber, 1)},
		{"repeated last seq", uv(tagLastSeqNum, 5, tagLastSeqNum, 5)},
		{"explicit zero log number", uv(tagLogNumber, 0)},
		{"explicit zero next file", uv(tagNextFileNumber, 0)},
		{"explicit zero last seq", uv(tagLastSeqNum, 0)},
		{"value overflows", append(uv(tagLogNumber), bytes.Repeat([]byte{0xff}, 10)...)},
		{"deleted level 7", uv(tagDeletedFile, 7, 1)},
		{"deleted file 0", uv(tagDeletedFile, 1, 0)},
		{"deleted truncated", uv(tagDeletedFile, 1)},
		{"new file level 7", newFileBody(7, 1, k("a", 1), k("b", 1), 1, 1, 10)},
		{"new file number 0", newFileBody(0, 0, k("a", 1), k("b", 1), 1, 1, 10)},
		{"key shorter than a trailer", newFileBody(0, 1, []byte("1234567"), k("b", 1), 1, 1, 10)},
		{"key length past the end", append(uv(tagNewFile, 0, 1, 100, 1<<40), k("a", 1)...)},
		{"key length overflows int", append(uv(tagNewFile, 0, 1, 100, math.MaxUint64), k("a", 1)...)},
		{"smallest after largest", newFileBody(0, 1, k("b", 1), k("a", 1), 1, 1, 10)},
		{"seqnums reversed", newFileBody(0, 1, k("a", 1), k("b", 1), 2, 1, 10)},
		{"bound seqnum out of range", newFileBody(0, 1, k("a", 9), k("b", 1), 1, 5, 10)},
		{"seqnum above max", newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1<<56, 10)},
		{"NaN bits per key", newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1, math.NaN())},
		{"infinite bits per key", newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1, math.Inf(1))},
		{"negative bits per key", newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1, -1)},
		{"bits per key truncated", newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1, 10)[:20]},
		{"trailing garbage", append(uv(tagLogNumber, 3), 0)},
		{"no filter family, with bits per key", filterBody(0, 8)},
		{"filter family truncated", filterBody(2, 8)[:len(newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1, 10))]},
		{"filter parameter truncated", filterBody(2, 8)[:len(filterBody(2, 8))-3]},
		{"entries truncated", filterBody(2, 8)[:len(filterBody(2, 8))-1]},
		{"NaN filter parameter", filterBody(2, math.NaN())},
		{"negative filter parameter", filterBody(2, -8)},
		{"compression truncated", blocksBody(2)[:len(blocksBody(2))-1]},
		{"compression 0 where it is recorded", blocksBody(0)},
	}
	for _, tc := range cases {
		e, err := Decode(tc.in)
		if !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Decode(%x) = %+v, %v; want corruption", tc.name, tc.in, e, err)
		}
	}
	// The hand-built encodings themselves are right: valid ones decode.
	if _, err := Decode(newFileBody(0, 1, k("a", 1), k("b", 1), 1, 1, 10)); err != nil {
		t.Fatalf("valid hand-built new file: %v", err)
	}
	if e, err := Decode(filterBody(2, 8)); err != nil || e.NewFiles[0].Meta.FilterFamily != 2 || e.NewFiles[0].Meta.FilterParam != 8 || e.NewFiles[0].Meta.Entries != 1000 {
		t.Fatalf("valid hand-built new file with its filter: %+v, %v", e, err)
	}
	if e, err := Decode(blocksBody(2)); err != nil || e.NewFiles[0].Meta.Compression != 2 || e.NewFiles[0].Meta.Entries != 1000 {
		t.Fatalf("valid hand-built new file with its compression: %+v, %v", e, err)
	}
}

// FuzzDecodeEdit checks that Decode never panics and that what it accepts
// is a well-formed edit that round-trips (checkDecode). Its seeds run in
// the ordinary test suite.
func FuzzDecodeEdit(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 4))
	for range 20 {
		e := randEdit(rng)
		f.Add(e.Encode(nil))
	}
	f.Add([]byte{})
	f.Add(uv(tagLogNumber, 1, tagLogNumber, 1))
	f.Add(uv(tagDeletedFile, 7, 1))
	f.Add(append(uv(tagNewFile, 0, 1, 100, 1<<40), 'a'))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
	})
}

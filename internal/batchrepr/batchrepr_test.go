package batchrepr

import (
	"bytes"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

func encode(seq base.SeqNum, entries []Entry) []byte {
	b := make([]byte, HeaderLen)
	for _, e := range entries {
		b = AppendEntry(b, e.Kind, e.Key, e.Value)
	}
	SetCount(b, uint32(len(entries)))
	SetSeqNum(b, seq)
	return b
}

func TestRoundTrip(t *testing.T) {
	want := []Entry{
		{Seq: 7, Kind: base.KindSet, Key: []byte("a"), Value: []byte("1")},
		{Seq: 8, Kind: base.KindDelete, Key: []byte("b")},
		{Seq: 9, Kind: base.KindSet, Key: []byte{}, Value: bytes.Repeat([]byte{0xff}, 300)},
		{Seq: 10, Kind: base.KindRangeDelete, Key: []byte("c"), Value: []byte("f")},
	}
	data := encode(7, want)
	var got []Entry
	if err := Decode(data, func(e Entry) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	eq := func(a, b Entry) bool {
		return a.Seq == b.Seq && a.Kind == b.Kind && bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value)
	}
	if !slices.EqualFunc(got, want, eq) {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
	if seq, n, err := Header(data); seq != 7 || n != 4 || err != nil {
		t.Fatalf("Header = %d, %d, %v", seq, n, err)
	}
}

// TestMalformed checks that every truncation and a wrong count or kind is
// an error: a batch decodes whole or not at all.
func TestMalformed(t *testing.T) {
	data := encode(1, []Entry{{Kind: base.KindSet, Key: []byte("key"), Value: []byte("value")}, {Kind: base.KindDelete, Key: []byte("k2")}})
	for n := range len(data) {
		if err := Decode(data[:n], func(Entry) {}); err == nil {
			t.Fatalf("a batch cut to %d of %d bytes decoded", n, len(data))
		}
	}
	for _, damage := range []func([]byte){
		func(b []byte) { SetCount(b, 3) },
		func(b []byte) { SetCount(b, 1) },
		func(b []byte) { b[HeaderLen] = 9 },
		func(b []byte) { SetSeqNum(b, base.SeqNumMax) },
	} {
		b := bytes.Clone(data)
		damage(b)
		if err := Decode(b, func(Entry) {}); err == nil {
			t.Fatalf("a damaged batch decoded: %x", b)
		}
	}
}

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

// TestTTLEntry checks the layout of a KindSetTTL entry byte by byte, as
// the package doc draws it, that SetExpiry rewrites its expiry in place,
// and that an entry whose value is shorter than an expiry is an error.
func TestTTLEntry(t *testing.T) {
	b, off := AppendTTLEntry(make([]byte, HeaderLen), []byte("ky"), 0x0102030405060708, []byte("val"))
	SetCount(b, 1)
	want := []byte{5, 2, 'k', 'y', 11, 8, 7, 6, 5, 4, 3, 2, 1, 'v', 'a', 'l'}
	if !bytes.Equal(b[HeaderLen:], want) || off != HeaderLen+5 {
		t.Fatalf("entry % x (expiry at %d), want % x (at %d)", b[HeaderLen:], off, want, HeaderLen+5)
	}
	SetExpiry(b, off, -2)
	var got []Entry
	if err := Decode(b, func(e Entry) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	expiry, value, ok := base.SplitExpiry(got[0].Value)
	if len(got) != 1 || got[0].Kind != base.KindSetTTL || string(got[0].Key) != "ky" || !ok || expiry != -2 || string(value) != "val" {
		t.Fatalf("decoded %+v: expiry %d, value %q", got, expiry, value)
	}
	short := AppendEntry(make([]byte, HeaderLen), base.KindSetTTL, []byte("k"), make([]byte, base.ExpiryLen-1))
	SetCount(short, 1)
	if err := Decode(short, func(Entry) {}); err == nil {
		t.Fatal("a KindSetTTL entry of a 7-byte value decoded")
	}
}

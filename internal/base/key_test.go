package base

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTrailerRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		seq  SeqNum
		kind Kind
	}{
		{0, KindDelete}, {0, KindSet}, {1, KindSet}, {SeqNumMax, KindDelete}, {SeqNumMax, KindSet}, {12345, KindSet},
	} {
		tr := MakeTrailer(tc.seq, tc.kind)
		if tr.SeqNum() != tc.seq || tr.Kind() != tc.kind {
			t.Errorf("MakeTrailer(%d, %v) decodes as (%d, %v)", tc.seq, tc.kind, tr.SeqNum(), tr.Kind())
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, uk := range [][]byte{nil, {}, []byte("a"), bytes.Repeat([]byte{0xff}, 100)} {
		k := MakeInternalKey(uk, 77, KindSet)
		enc := k.Append([]byte("prefix"))[len("prefix"):]
		if len(enc) != k.EncodedLen() {
			t.Fatalf("encoded length %d, want %d", len(enc), k.EncodedLen())
		}
		got, ok := DecodeInternalKey(enc)
		if !ok || !bytes.Equal(got.UserKey, uk) || got.Trailer != k.Trailer {
			t.Fatalf("decode(%v) = %v, %v", k, got, ok)
		}
	}
	if _, ok := DecodeInternalKey(make([]byte, TrailerLen-1)); ok {
		t.Fatal("decoded a key shorter than a trailer")
	}
}

// TestOrder checks the comparer against the definition applied to a sorted
// list built independently: user keys ascending, then seqnum descending, then
// kind descending.
func TestOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var keys []InternalKey
	for range 2000 {
		uk := make([]byte, rng.IntN(3))
		for i := range uk {
			uk[i] = byte('a' + rng.IntN(3))
		}
		keys = append(keys, MakeInternalKey(uk, SeqNum(rng.IntN(5)), Kind(rng.IntN(2))))
	}
	oracle := func(a, b InternalKey) int {
		if c := bytes.Compare(a.UserKey, b.UserKey); c != 0 {
			return c
		}
		if a.SeqNum() != b.SeqNum() {
			if a.SeqNum() > b.SeqNum() {
				return -1
			}
			return 1
		}
		return int(b.Kind()) - int(a.Kind())
	}
	for i := 0; i+1 < len(keys); i++ {
		a, b := keys[i], keys[i+1]
		if sign(CompareInternal(a, b)) != sign(oracle(a, b)) {
			t.Fatalf("CompareInternal(%v, %v) = %d, oracle %d", a, b, CompareInternal(a, b), oracle(a, b))
		}
		if sign(CompareEncoded(a.Append(nil), b.Append(nil))) != sign(oracle(a, b)) {
			t.Fatalf("CompareEncoded disagrees with the oracle on %v, %v", a, b)
		}
	}
	slices.SortFunc(keys, CompareInternal)
	if !slices.IsSortedFunc(keys, oracle) {
		t.Fatal("keys sorted by CompareInternal are not in oracle order")
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestCorruptionError(t *testing.T) {
	err := Corruptf("000001.log", 32768, "bad checksum %#x", 0xdead)
	if !errors.Is(err, ErrCorruption) {
		t.Fatal("CorruptionError does not wrap ErrCorruption")
	}
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != "000001.log" || ce.Offset != 32768 {
		t.Fatalf("errors.As gave %+v", ce)
	}
	want := "bloomkv: corruption in 000001.log at offset 32768: bad checksum 0xdead"
	if err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err.Error(), want)
	}
}

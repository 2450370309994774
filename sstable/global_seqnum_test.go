package sstable

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestGlobalSeqNum reads a table written at seqnum 0 (its range tombstone
// at 1) as an ingested one, at ReaderOptions.GlobalSeqNum 40: every
// seqnum it shows is 40, a read below 40 finds nothing, and a read at or
// above it finds what the table holds, as the same table written at
// seqnum 40 would.
func TestGlobalSeqNum(t *testing.T) {
	const g = 40
	build := func(seq SeqNum) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, WriterOptions{Filter: Bloom(10)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			kind := KindSet
			if i%10 == 9 {
				kind = KindDelete
			}
			if err := w.Add(MakeInternalKey(fmt.Appendf(nil, "k%03d", i), seq, kind), fmt.Appendf(nil, "v%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.SetRangeDels(FragmentRangeTombstones([]RangeTombstone{{Start: []byte("k100"), End: []byte("k200"), Seq: max(seq, 1)}})); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	open := func(data []byte, g SeqNum) (*Reader, error) {
		return Open(bytes.NewReader(data), int64(len(data)), ReaderOptions{FileName: "t.sst", GlobalSeqNum: g})
	}
	ingested, err := open(build(0), g)
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := open(build(g), 0) // the same table written at g
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ingested.Properties(), oracle.Properties(); got.SmallestSeqNum != want.SmallestSeqNum || got.LargestSeqNum != want.LargestSeqNum ||
		got.Smallest.Trailer != want.Smallest.Trailer || got.Largest.Trailer != want.Largest.Trailer {
		t.Errorf("properties: seqnums %d-%d bounds %s %s, want %d-%d %s %s", got.SmallestSeqNum, got.LargestSeqNum, got.Smallest, got.Largest,
			want.SmallestSeqNum, want.LargestSeqNum, want.Smallest, want.Largest)
	}
	if got, want := fmt.Sprint(ingested.RangeDels()), fmt.Sprint(oracle.RangeDels()); got != want {
		t.Errorf("range tombstones %s, want %s", got, want)
	}
	a, b := ingested.NewIterator(), oracle.NewIterator()
	for okA, okB := a.First(), b.First(); okA || okB; okA, okB = a.Next(), b.Next() {
		if okA != okB || base.CompareInternal(a.Key(), b.Key()) != 0 || a.Key().Trailer != b.Key().Trailer || !bytes.Equal(a.Value(), b.Value()) {
			t.Fatalf("iterator at %s=%q, want %s=%q", a.Key(), a.Value(), b.Key(), b.Value())
		}
	}
	for _, seq := range []SeqNum{0, g - 1, g, g + 1, SeqNumMax} {
		for _, key := range []string{"k000", "k009", "k050", "k099", "k150"} {
			for _, covered := range []SeqNum{0, g - 1, g} {
				k := MakeLookupKey([]byte(key), seq)
				k.Covered = covered
				var sa, sb LookupStats
				va, ka, fa, err := ingested.Get(k, &sa)
				if err != nil {
					t.Fatal(err)
				}
				vb, kb, fb, _ := oracle.Get(k, &sb)
				if !bytes.Equal(va, vb) || ka != kb || fa != fb || sa.FoundSeq != sb.FoundSeq || sa.KeyPresent != sb.KeyPresent {
					t.Errorf("Get(%s@%d covered %d) = %q %v %v seq %d present %v, want %q %v %v seq %d present %v",
						key, seq, covered, va, ka, fa, sa.FoundSeq, sa.KeyPresent, vb, kb, fb, sb.FoundSeq, sb.KeyPresent)
				}
			}
		}
	}
}

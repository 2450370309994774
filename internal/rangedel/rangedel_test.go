package rangedel

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// bruteCover is the oracle: the newest seqnum ≤ seq of a tombstone of ts
// covering key, straight from the definition.
func bruteCover(ts []Tombstone, key []byte, seq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for _, t := range ts {
		if bytes.Compare(t.Start, key) <= 0 && bytes.Compare(key, t.End) < 0 && t.Seq <= seq {
			best = max(best, t.Seq)
		}
	}
	return best
}

// probeKeys are the keys the tests ask about: every key of the alphabet,
// and those between them, where fragment bounds can go wrong.
func probeKeys(alphabet int) [][]byte {
	var keys [][]byte
	keys = append(keys, []byte{})
	for i := range alphabet + 1 {
		k := []byte{byte('a' + i)}
		keys = append(keys, k, append(k, 0), append(k, 'x'))
	}
	return keys
}

func randomTombstones(rng *rand.Rand, n, alphabet int) []Tombstone {
	ts := make([]Tombstone, n)
	for i := range ts {
		a, b := rng.IntN(alphabet), rng.IntN(alphabet)
		start, end := []byte{byte('a' + a)}, []byte{byte('a' + b)}
		if rng.IntN(4) == 0 {
			end = append(end, 0) // ends of the form x‖0x00, as truncation makes
		}
		ts[i] = Tombstone{Start: start, End: end, Seq: base.SeqNum(1 + rng.IntN(3*n))}
	}
	return ts
}

func TestFragmentMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = 8
	keys := probeKeys(alphabet)
	for trial := range 500 {
		ts := randomTombstones(rng, rng.IntN(12), alphabet)
		l := Build(ts)
		if err := l.Check(); err != nil {
			t.Fatalf("trial %d: %v: %v", trial, l, err)
		}
		for i := 1; i < len(l); i++ {
			if bytes.Equal(l[i-1].End, l[i].Start) && equalSeqs(l[i-1].Seqs, l[i].Seqs) {
				t.Fatalf("trial %d: adjacent fragments with equal seqnums not joined: %v", trial, l)
			}
		}
		decoded, err := Decode(l.Encode(nil))
		if err != nil {
			t.Fatalf("trial %d: decode: %v", trial, err)
		}
		if decoded.String() != l.String() {
			t.Fatalf("trial %d: round trip %v → %v", trial, l, decoded)
		}
		lo, hi := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
		if bytes.Compare(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		trunc := l.Truncate(lo, hi)
		if err := trunc.Check(); err != nil {
			t.Fatalf("trial %d: truncate: %v", trial, err)
		}
		other := randomTombstones(rng, rng.IntN(5), alphabet)
		merged := Merge(l, Build(other))
		all := append(append([]Tombstone(nil), ts...), other...)
		for _, k := range keys {
			for seq := base.SeqNum(0); seq <= base.SeqNum(3*len(ts)+1); seq++ {
				if got, want := l.Cover(k, seq), bruteCover(ts, k, seq); got != want {
					t.Fatalf("trial %d: %v: Cover(%q, %d) = %d, want %d (tombstones %v)", trial, l, k, seq, got, want, ts)
				}
				want := bruteCover(ts, k, seq)
				if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
					want = 0
				}
				if got := trunc.Cover(k, seq); got != want {
					t.Fatalf("trial %d: %v truncated to [%q, %q) = %v: Cover(%q, %d) = %d, want %d", trial, l, lo, hi, trunc, k, seq, got, want)
				}
				if got, want := merged.Cover(k, seq), bruteCover(all, k, seq); got != want {
					t.Fatalf("trial %d: merged Cover(%q, %d) = %d, want %d", trial, k, seq, got, want)
				}
			}
		}
	}
}

func equalSeqs(a, b []base.SeqNum) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFragmentExamples(t *testing.T) {
	tests := []struct {
		name string
		in   []Tombstone
		want string
	}{
		{"none", nil, ""},
		{"empty range dropped", []Tombstone{{Start: []byte("b"), End: []byte("b"), Seq: 1}}, ""},
		{"one", []Tombstone{{Start: []byte("a"), End: []byte("c"), Seq: 5}}, `["a", "c")@5`},
		{"overlap", []Tombstone{
			{Start: []byte("a"), End: []byte("c"), Seq: 5},
			{Start: []byte("b"), End: []byte("d"), Seq: 7},
		}, `["a", "b")@5 ["b", "c")@7,5 ["c", "d")@7`},
		{"nested", []Tombstone{
			{Start: []byte("a"), End: []byte("z"), Seq: 2},
			{Start: []byte("m"), End: []byte("n"), Seq: 9},
		}, `["a", "m")@2 ["m", "n")@9,2 ["n", "z")@2`},
		{"adjacent same seq joined", []Tombstone{
			{Start: []byte("a"), End: []byte("b"), Seq: 3},
			{Start: []byte("b"), End: []byte("c"), Seq: 3},
		}, `["a", "c")@3`},
		{"disjoint", []Tombstone{
			{Start: []byte("x"), End: []byte("y"), Seq: 1},
			{Start: []byte("a"), End: []byte("b"), Seq: 2},
		}, `["a", "b")@2 ["x", "y")@1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Build(tt.in).String(); got != tt.want {
				t.Errorf("Build = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	l := Build([]Tombstone{
		{Start: []byte("apple"), End: []byte("banana"), Seq: 12},
		{Start: []byte("b"), End: []byte("cherry"), Seq: 40},
	})
	enc := l.Encode(nil)
	// Truncations and trailing bytes are always caught.
	for n := range len(enc) {
		if _, err := Decode(enc[:n]); err == nil {
			t.Errorf("Decode of the first %d of %d bytes succeeded", n, len(enc))
		}
	}
	if _, err := Decode(append(enc, 0)); err == nil {
		t.Error("Decode with a trailing byte succeeded")
	}
	// Structurally invalid lists, validly encoded, are rejected.
	bad := []List{
		{{Start: []byte("b"), End: []byte("a"), Seqs: []base.SeqNum{1}}},
		{{Start: []byte("a"), End: []byte("c"), Seqs: []base.SeqNum{1}}, {Start: []byte("b"), End: []byte("d"), Seqs: []base.SeqNum{2}}},
		{{Start: []byte("a"), End: []byte("b"), Seqs: nil}},
		{{Start: []byte("a"), End: []byte("b"), Seqs: []base.SeqNum{2, 3}}},
		{{Start: []byte("a"), End: []byte("b"), Seqs: []base.SeqNum{0}}},
		{{Start: []byte("a"), End: []byte("b"), Seqs: []base.SeqNum{base.SeqNumMax + 1}}},
	}
	for i, b := range bad {
		if _, err := Decode(b.Encode(nil)); err == nil {
			t.Errorf("bad list %d (%v) decoded", i, b)
		}
	}
}

func TestLastCovered(t *testing.T) {
	tests := []struct{ end, want string }{
		{"b", "b"},
		{"b\x00", "b"},
		{"\x00", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := LastCovered([]byte(tt.end)); string(got) != tt.want {
			t.Errorf("LastCovered(%q) = %q, want %q", tt.end, got, tt.want)
		}
	}
	if got := Successor([]byte("k")); string(got) != "k\x00" {
		t.Errorf("Successor = %q", got)
	}
}

// TestAddMatchesBuild checks Add against Build, the oracle: adding the
// tombstones one at a time gives, after each, exactly the List Build makes
// of those added so far, and never changes the List it was given (a reader
// may hold it).
func TestAddMatchesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 500 {
		ts := randomTombstones(rng, 1+rng.IntN(12), 8)
		var l List
		for k, tomb := range ts {
			before := cloneList(l)
			next := l.Add(tomb)
			if !equalLists(l, before) {
				t.Fatalf("trial %d: Add of %v changed the list it was given:\n%v\nnow\n%v", trial, tomb, before, l)
			}
			if want := Build(ts[:k+1]); !equalLists(next, want) {
				t.Fatalf("trial %d: %v.Add(%v) =\n%v\nBuild gives\n%v", trial, l, tomb, next, want)
			}
			l = next
		}
	}
}

func cloneList(l List) List {
	out := make(List, len(l))
	for i, f := range l {
		out[i] = Fragment{Start: bytes.Clone(f.Start), End: bytes.Clone(f.End), Seqs: append([]base.SeqNum(nil), f.Seqs...)}
	}
	return out
}

func equalLists(a, b List) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Start, b[i].Start) || !bytes.Equal(a[i].End, b[i].End) || !slices.Equal(a[i].Seqs, b[i].Seqs) {
			return false
		}
	}
	return true
}

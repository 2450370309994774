package manifest

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

func TestCheckInvariants(t *testing.T) {
	type lv = [NumLevels][]*FileMetadata
	cases := []struct {
		name    string
		levels  lv
		wantErr string // substring; "" means valid
	}{
		{"empty", lv{}, ""},
		{"L0 newest first", lv{0: {meta(3, "a", "z", 21, 30), meta(2, "a", "z", 11, 20), meta(1, "a", "z", 1, 10)}}, ""},
		{"L0 seqnum tie broken by file number", lv{0: {meta(5, "a", "b", 7, 7), meta(4, "c", "d", 7, 7)}}, ""},
		{"L0 disjoint keys may interleave seqnums", lv{0: {meta(2, "a", "b", 1, 20), meta(1, "c", "d", 5, 10)}}, ""},
		{"L0 oldest first", lv{0: {meta(1, "a", "z", 1, 10), meta(2, "a", "z", 11, 20)}}, "L0 out of order"},
		{"L0 tie in wrong file order", lv{0: {meta(4, "a", "b", 7, 7), meta(5, "c", "d", 7, 7)}}, "L0 out of order"},
		{"L0 overlapping keys interleave seqnums", lv{0: {meta(2, "a", "m", 5, 20), meta(1, "k", "z", 1, 10)}}, "interleave seqnums"},
		{"L0 overlapping keys share a seqnum", lv{0: {meta(2, "a", "m", 10, 20), meta(1, "m", "z", 1, 10)}}, "interleave seqnums"},
		{"L1 sorted and disjoint", lv{1: {meta(1, "a", "c", 1, 1), meta(2, "d", "f", 1, 1), meta(3, "g", "g", 1, 1)}}, ""},
		{"L1 overlapping", lv{1: {meta(1, "a", "d", 1, 1), meta(2, "c", "f", 1, 1)}}, "overlap or are out of order"},
		{"L1 out of order", lv{1: {meta(2, "d", "f", 1, 1), meta(1, "a", "c", 1, 1)}}, "overlap or are out of order"},
		{"L3 user key spans two tables", lv{3: {meta(1, "a", "c", 1, 5), meta(2, "c", "f", 1, 4)}}, "overlap or are out of order"},
		{"table in two levels", lv{1: {meta(1, "a", "c", 1, 1)}, 2: {meta(1, "a", "c", 1, 1)}}, "is in L1 and L2"},
		{"table twice in a level", lv{0: {meta(1, "a", "c", 1, 1), meta(1, "a", "c", 1, 1)}}, "is in L0 and L0"},
		{"invalid table", lv{4: {meta(0, "a", "c", 1, 1)}}, "file number 0"},
		{"bounds reversed", lv{2: {meta(1, "c", "a", 1, 1)}}, "sorts after largest key"},
	}
	for _, tc := range cases {
		v := &Version{Levels: tc.levels}
		err := v.CheckInvariants()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}

// randLevel returns a sorted, disjoint level of tables over random bounds,
// with gaps, single-key tables and tables sharing no key.
func randLevel(rng *rand.Rand, firstNum uint64) []*FileMetadata {
	var out []*FileMetadata
	for k := 0; k < slots; {
		k += rng.IntN(4)
		if k >= slots {
			break
		}
		hi := min(slots-1, k+rng.IntN(4))
		out = append(out, meta(firstNum+uint64(len(out)), slotKey(k), slotKey(hi), 1, 1))
		k = hi + 1
	}
	return out
}

func TestOverlapping(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for iter := range 200 {
		v := &Version{}
		v.Levels[1] = randLevel(rng, 1000)
		for i := range rng.IntN(6) {
			lo := rng.IntN(slots)
			v.Levels[0] = append(v.Levels[0], meta(uint64(100-i), slotKey(lo), slotKey(min(slots-1, lo+rng.IntN(20))), base.SeqNum(100-i), base.SeqNum(100-i)))
		}
		if err := v.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		// Probe keys between and at slots, including before the first
		// and after the last.
		probe := func() []byte {
			k := []byte(slotKey(rng.IntN(slots + 2)))
			if rng.IntN(2) == 0 {
				k = append(k, 'x')
			}
			if rng.IntN(20) == 0 {
				k = []byte{}
			}
			return k
		}
		for range 50 {
			lo, hi := probe(), probe()
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			for _, level := range []int{0, 1, 2} {
				var want []*FileMetadata
				for _, f := range v.Levels[level] {
					if bytes.Compare(f.Largest.UserKey, lo) >= 0 && bytes.Compare(f.Smallest.UserKey, hi) <= 0 {
						want = append(want, f)
					}
				}
				if got := v.Overlapping(level, lo, hi); !slices.Equal(got, want) {
					t.Fatalf("iter %d: Overlapping(L%d, %q, %q) = %v, want %v", iter, level, lo, hi, got, want)
				}
			}
		}
	}
}

func TestVersionAccessors(t *testing.T) {
	v := &Version{}
	v.Levels[0] = []*FileMetadata{meta(9, "a", "b", 5, 6), meta(8, "a", "b", 1, 4)}
	v.Levels[3] = []*FileMetadata{meta(3, "a", "b", 1, 1), meta(4, "c", "d", 1, 1)}
	if v.NumFiles(0) != 2 || v.NumFiles(1) != 0 || v.NumFiles(3) != 2 {
		t.Fatal("NumFiles wrong")
	}
	if v.LevelSize(0) != 1700 || v.LevelSize(3) != 700 || v.LevelSize(6) != 0 {
		t.Fatalf("LevelSize = %d, %d", v.LevelSize(0), v.LevelSize(3))
	}
	if got := slices.Collect(v.FileNums()); !slices.Equal(got, []uint64{9, 8, 3, 4}) {
		t.Fatalf("FileNums = %v", got)
	}
	var levels []int
	for level := range v.Files() {
		levels = append(levels, level)
		if len(levels) == 3 {
			break // early exit must be honored
		}
	}
	if !slices.Equal(levels, []int{0, 0, 3}) {
		t.Fatalf("Files levels = %v", levels)
	}
	for range v.FileNums() {
		break
	}
	want := "L0:\n  000009:[\"a\"#6,SET-\"b\"#5,DEL] seqs 5-6 size 900 bits/key 10\n"
	if s := v.String(); !strings.HasPrefix(s, want) || !strings.Contains(s, "L3:\n") {
		t.Fatalf("String() = %q", s)
	}
}

func TestFileMetadataRanges(t *testing.T) {
	f := meta(1, "b", "d", 1, 1)
	for _, tc := range []struct {
		lo, hi   string
		overlaps bool
	}{
		{"a", "a", false}, {"a", "b", true}, {"b", "b", true}, {"c", "c", true},
		{"d", "z", true}, {"d\x00", "z", false}, {"", "a", false}, {"a", "z", true},
	} {
		if got := f.Overlaps([]byte(tc.lo), []byte(tc.hi)); got != tc.overlaps {
			t.Errorf("Overlaps(%q, %q) = %v", tc.lo, tc.hi, got)
		}
		if tc.lo == tc.hi {
			if got := f.ContainsUserKey([]byte(tc.lo)); got != tc.overlaps {
				t.Errorf("ContainsUserKey(%q) = %v", tc.lo, got)
			}
		}
	}
	c := f.Clone()
	c.Smallest.UserKey[0] = 'x'
	if string(f.Smallest.UserKey) != "b" {
		t.Fatal("Clone shares key memory")
	}
}

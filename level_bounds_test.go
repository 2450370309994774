package bloomkv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// boundsLevel returns n tables of disjoint ranges of keys made by key,
// each holding ten, with gaps between them.
func boundsLevel(n int, key func(i int) []byte) []*manifest.FileMetadata {
	files := make([]*manifest.FileMetadata, n)
	for i := range files {
		files[i] = &manifest.FileMetadata{
			FileNum:  uint64(i + 1),
			Smallest: base.MakeInternalKey(key(20*i), 1, base.KindSet),
			Largest:  base.MakeInternalKey(key(20*i+10), 1, base.KindSet),
		}
	}
	return files
}

// searchFiles is the oracle: the binary search of the FileMetadata slice
// that levelBounds replaces.
func searchFiles(files []*manifest.FileMetadata, userKey []byte) int {
	i := sort.Search(len(files), func(i int) bool { return bytes.Compare(files[i].Largest.UserKey, userKey) >= 0 })
	if i < len(files) && files[i].ContainsUserKey(userKey) {
		return i
	}
	return -1
}

// TestLevelBounds checks levelBounds.find against searchFiles for keys in,
// between, before and after the tables' ranges, under key shapes that
// exercise the shared prefix: decimal numbers of a fixed width (a long
// prefix), keys of varied length that are prefixes of one another, keys
// with no shared prefix, one table, and none.
func TestLevelBounds(t *testing.T) {
	shapes := []struct {
		name   string
		tables int
		key    func(i int) []byte
	}{
		{"decimal16", 300, func(i int) []byte { return fmt.Appendf(nil, "%016d", i) }},
		{"prefixes", 40, func(i int) []byte { return bytes.Repeat([]byte{'a'}, i+1) }},
		{"zeros", 40, func(i int) []byte { return append([]byte("p"), make([]byte, i)...) }},
		{"binary", 200, func(i int) []byte { return []byte{byte(i >> 8), byte(i), 0xff} }},
		{"one", 1, func(i int) []byte { return fmt.Appendf(nil, "k%d", i) }},
		{"none", 0, func(i int) []byte { return nil }},
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			files := boundsLevel(s.tables, s.key)
			b := newLevelBounds(files)
			probes := [][]byte{nil, {}, {0}, {0xff, 0xff, 0xff, 0xff}, []byte("0"), []byte("zzzz")}
			for i := -2; i < 20*s.tables+12; i++ {
				if i >= 0 {
					probes = append(probes, s.key(i))
				}
				k := s.key(max(i, 0))
				probes = append(probes, append(bytes.Clone(k), 0), k[:len(k)/2], k[:rng.IntN(len(k)+1)])
			}
			for _, p := range probes {
				if got, want := b.find(p), searchFiles(files, p); got != want {
					t.Fatalf("find(%q) = %d, want %d", p, got, want)
				}
			}
		})
	}
}

// BenchmarkFindTable compares levelBounds.find with the search of the
// FileMetadata slice it replaced, in a level of 470 tables (a 10M-key L6)
// of 16-byte decimal keys, for keys in random tables.
func BenchmarkFindTable(b *testing.B) {
	key := func(i int) []byte { return fmt.Appendf(nil, "%016d", i) }
	files := boundsLevel(470, key)
	bounds := newLevelBounds(files)
	rng := rand.New(rand.NewPCG(4, 4))
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = key(rng.IntN(20 * len(files)))
	}
	b.Run("FileMetadata", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			searchFiles(files, keys[i%len(keys)])
		}
	})
	b.Run("levelBounds", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			bounds.find(keys[i%len(keys)])
		}
	})
}

// TestSpliceLevelBounds checks spliceLevelBounds against newLevelBounds
// of the same level: random levels, edits that delete and add tables
// anywhere — the first and the last too, which may change the prefix —
// under key shapes with a long shared prefix and with none.
func TestSpliceLevelBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 2))
	shapes := map[string]func(i int) []byte{
		"decimal": func(i int) []byte { return fmt.Appendf(nil, "user%012d", i) },
		"varied":  func(i int) []byte { return fmt.Appendf(nil, "%d", i) },
	}
	for name, key := range shapes {
		spliced, rebuilt := 0, 0
		for trial := range 2000 {
			slots := boundsLevel(60, key)
			var old []*manifest.FileMetadata
			for _, f := range slots {
				if rng.IntN(2) == 0 {
					old = append(old, f)
				}
			}
			ob := newLevelBounds(old)
			// The new level: old's tables but those dropped, and slots
			// added where the old level has none, in order, with the
			// runs the walk of installVersionLocked would find.
			var files []*manifest.FileMetadata
			var runs []levelRun
			j := 0
			for _, f := range slots {
				inOld := j < len(old) && old[j] == f
				switch {
				case inOld && rng.IntN(8) != 0:
					if n := len(runs); n > 0 && runs[n-1].old >= 0 && runs[n-1].old+runs[n-1].n == j {
						runs[n-1].n++
					} else {
						runs = append(runs, levelRun{old: j, n: 1})
					}
					files = append(files, f)
				case !inOld && rng.IntN(8) == 0:
					runs = append(runs, levelRun{old: -1, n: 1})
					files = append(files, f)
				}
				if inOld {
					j++
				}
			}
			got, want := spliceLevelBounds(&ob, len(old), files, runs), newLevelBounds(files)
			if !bytes.Equal(got.prefix, want.prefix) || !slices.Equal(got.words, want.words) || !bytes.Equal(got.keys, want.keys) || !slices.Equal(got.ends, want.ends) {
				t.Fatalf("%s trial %d: spliced bounds %+v, rebuilt %+v", name, trial, got, want)
			}
			if len(old) > 0 && len(files) > 0 && bytes.Equal(want.prefix, ob.prefix) {
				spliced++
			} else {
				rebuilt++
			}
		}
		if spliced < 1000 {
			t.Errorf("%s: %d of 2000 trials kept the prefix and spliced: too few to test the splice", name, spliced)
		}
		t.Logf("%s: %d spliced, %d rebuilt", name, spliced, rebuilt)
	}
}

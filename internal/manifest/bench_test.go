package manifest

import (
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/vfs"
)

// benchTree returns the state of a tree of n tables of 16-byte keys spread
// over L1 to L6 as a leveled tree spreads them, ten times as many in each
// level as in the one above, the deepest taking the rest; each table holds
// the keys of one slot of its level's key space.
func benchTree(n int) State {
	counts := [NumLevels]int{}
	rest := n
	for level := NumLevels - 1; level > 1 && rest > 0; level-- {
		counts[level] = rest - rest/10
		rest -= counts[level]
	}
	counts[1] += rest
	e := &VersionEdit{}
	num := uint64(1)
	for level, c := range counts {
		for i := range c {
			e.NewFiles = append(e.NewFiles, NewFile{Level: level, Meta: benchMeta(num, i)})
			num++
		}
	}
	e.NextFileNumber, e.LastSeqNum = num, 1<<20
	s, err := State{}.Apply(e)
	if err != nil {
		panic(err)
	}
	return s
}

// benchMeta is table num holding the keys of slot i of its level.
func benchMeta(num uint64, i int) *FileMetadata {
	lo, hi := fmt.Sprintf("%016d", 2*i), fmt.Sprintf("%016d", 2*i+1)
	return &FileMetadata{FileNum: num, Size: 2 << 20, Entries: 20000, FilterBitsPerKey: 10, FilterFamily: 1, FilterParam: 10,
		Smallest: base.MakeInternalKey([]byte(lo), 5, base.KindSet), Largest: base.MakeInternalKey([]byte(hi), 1, base.KindSet),
		SmallestSeqNum: 1, LargestSeqNum: 5}
}

// churnEdit returns the edit of a compaction in s's deepest level: the
// table of slot i replaced by a new one of the same keys.
func churnEdit(s State, i int) *VersionEdit {
	files := s.Version.Levels[NumLevels-1]
	old := files[i%len(files)]
	var slot int
	fmt.Sscanf(string(old.Smallest.UserKey), "%d", &slot)
	return &VersionEdit{
		DeletedFiles:   []DeletedFile{{Level: NumLevels - 1, FileNum: old.FileNum}},
		NewFiles:       []NewFile{{Level: NumLevels - 1, Meta: benchMeta(s.NextFileNumber, slot/2)}},
		NextFileNumber: s.NextFileNumber + 1,
	}
}

// BenchmarkApplyEdit measures State.Apply, which every manifest Append
// makes, of one compaction's edit (a table of the deepest level replaced)
// to trees of 100 to 100,000 tables: its cost should not grow with the
// tree beyond a search of a level.
func BenchmarkApplyEdit(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			s := benchTree(n)
			const batch = 16
			var edits []*VersionEdit
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if len(edits) == 0 {
					b.StopTimer()
					stride := len(s.Version.Levels[NumLevels-1]) / batch
					for j := range batch {
						// Distinct slots, so that no two edits of a
						// batch replace one table.
						e := churnEdit(s, i+j*stride)
						e.NextFileNumber += uint64(j)
						e.NewFiles[0].Meta.FileNum += uint64(j)
						edits = append(edits, e)
					}
					b.StartTimer()
				}
				next, err := s.Apply(edits[0])
				if err != nil {
					b.Fatal(err)
				}
				s, edits = next, edits[1:]
			}
		})
	}
}

// BenchmarkRecover measures Recover, an Open's manifest replay, of a
// manifest of a tree of tables tables and then edits compactions' edits.
func BenchmarkRecover(b *testing.B) {
	for _, c := range []struct{ tables, edits int }{{1000, 10000}, {10000, 10000}, {10000, 100000}} {
		b.Run(fmt.Sprintf("tables=%d/edits=%d", c.tables, c.edits), func(b *testing.B) {
			fs := vfs.NewMem()
			if err := fs.MkdirAll("/db"); err != nil {
				b.Fatal(err)
			}
			s := benchTree(c.tables)
			num := s.NextFileNumber
			s.NextFileNumber++ // the manifest's own
			l, err := Create(fs, "/db", num, s.SnapshotEdit())
			if err != nil {
				b.Fatal(err)
			}
			// The edits are written as Append would, without its checks,
			// which would make the setup cost what is measured.
			deepest := s.Version.Levels[NumLevels-1]
			nums := make([]uint64, len(deepest))
			for i, f := range deepest {
				nums[i] = f.FileNum
			}
			next := s.NextFileNumber
			for i := range c.edits {
				slot := i * 7919 % len(nums)
				e := &VersionEdit{
					DeletedFiles:   []DeletedFile{{Level: NumLevels - 1, FileNum: nums[slot]}},
					NewFiles:       []NewFile{{Level: NumLevels - 1, Meta: benchMeta(next, slot)}},
					NextFileNumber: next + 1,
				}
				nums[slot] = next
				next++
				if _, err := l.w.WriteRecord(e.Encode(nil)); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.w.Sync(); err != nil {
				b.Fatal(err)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec, err := Recover(fs, "/db")
				if err != nil {
					b.Fatal(err)
				}
				if rec.Edits != c.edits+1 {
					b.Fatalf("recovered %d edits, want %d", rec.Edits, c.edits+1)
				}
			}
		})
	}
}

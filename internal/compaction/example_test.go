package compaction_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// Four flushes bring L0 to its trigger; Pick chooses a compaction of L0
// into the base level — L6, while nothing is below L0, so that the first
// compaction writes the bottom of the tree — Run merges the tables (held in
// memory here, where a DB has files), and Edit says how to install the
// result.
func Example() {
	files := map[uint64]*bytes.Buffer{}
	flush := func(num uint64, seq base.SeqNum, deleteBanana bool) *manifest.FileMetadata {
		files[num] = new(bytes.Buffer)
		w, _ := sstable.NewWriter(files[num], sstable.WriterOptions{Filter: sstable.Bloom(10)})
		w.Add(base.MakeInternalKey([]byte("apple"), seq, base.KindSet), []byte(fmt.Sprint("red ", seq)))
		if deleteBanana {
			w.Add(base.MakeInternalKey([]byte("banana"), seq+1, base.KindDelete), nil)
		} else {
			w.Add(base.MakeInternalKey([]byte("banana"), seq+1, base.KindSet), []byte("yellow"))
		}
		p, _ := w.Finish()
		return compaction.TableMetadata(num, uint64(files[num].Len()), &p)
	}
	v := &manifest.Version{}
	for num := uint64(4); num >= 1; num-- { // L0 is newest first
		v.Levels[0] = append(v.Levels[0], flush(num, base.SeqNum(10*num), num == 4))
	}

	// A DB resolves these from its bloomkv.Options (here its defaults);
	// the package takes them complete.
	opts := &compaction.Options{
		L0CompactionTrigger: 4,
		BaseLevelSize:       16 << 20,
		LevelMultiplier:     10,
		TargetFileSize:      2 << 20,
		BitsPerKey:          10,

		MaxConcurrentCompactions: 2,
	}
	c := compaction.Pick(v, opts, nil)
	fmt.Println(c)

	nextNum := uint64(5)
	env := compaction.Env{
		Open: func(f *manifest.FileMetadata) (iterator.Iterator, error) {
			r, err := sstable.Open(bytes.NewReader(files[f.FileNum].Bytes()), int64(files[f.FileNum].Len()), sstable.ReaderOptions{FileNum: f.FileNum})
			if err != nil {
				return nil, err
			}
			return r.NewIterator(), nil
		},
		Create: func() (*compaction.Output, error) {
			num := nextNum
			nextNum++
			files[num] = new(bytes.Buffer)
			return &compaction.Output{FileNum: num, W: files[num], Finish: func() error { return nil }}, nil
		},
	}
	outputs, stats, err := compaction.Run(context.Background(), c, env, nil, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("in %d, out %d, shadowed %d, tombstones dropped %d\n", stats.EntriesIn, stats.EntriesOut, stats.ShadowedDropped, stats.TombstonesDropped)
	for _, f := range outputs {
		fmt.Println(f.FileNum, f.Smallest, f.Largest)
	}
	edit := c.Edit(outputs)
	fmt.Printf("%d deleted from L0, %d added to L%d\n", len(edit.DeletedFiles), len(edit.NewFiles), c.OutputLevel)
	// Output:
	// L0→L6 score 1.00 ["apple", "banana"] inputs 000004 000003 000002 000001 bottommost filter bloom 10 bits/key
	// in 8, out 1, shadowed 6, tombstones dropped 1
	// 5 "apple"#40,SET "apple"#40,SET
	// 4 deleted from L0, 1 added to L6
}

package bloomkv

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/bytealg"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestPartitionedIndexesPinLess fills two DBs alike but for
// IndexPartitionSize — none, and 256 bytes — compacts each into the same
// tables, and checks Metrics.IndexMemory against the formula, from each
// table's layout: an unpartitioned index pins its data blocks' last keys
// (their common user-key prefix once) and 8 bytes per block, 10 when its
// blocks are aligned; a partitioned one the same over its partitions'
// last keys, and 12 bytes per partition and 4. The partitioned tree pins
// less, by the difference the formula gives, and its tables' memory
// (Metrics.Memory.Tables) is less too; every key reads back from both.
func TestPartitionedIndexesPinLess(t *testing.T) {
	const n = 20_000
	key := func(i int) []byte { return fmt.Appendf(nil, "key%013d", i) }
	type tree struct {
		m            Metrics
		whole, top   int // the formula's, over the tables
		partitions   int
		layoutBlocks int
	}
	trees := map[int]tree{}
	for _, size := range []int{-1, 256} {
		d, err := Open("/db", &Options{FS: vfs.NewMem(), MemtableSize: 8 << 20, TargetFileSize: 512 << 10, IndexPartitionSize: size})
		if err != nil {
			t.Fatal(err)
		}
		value := make([]byte, 100)
		for i := range n {
			copy(value, key(i))
			if err := d.Put(key(i), value, NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
		var tr tree
		d.mu.Lock()
		for _, tables := range d.mu.current.tables {
			for _, tb := range tables {
				l, err := tb.reader.Layout()
				if err != nil {
					d.mu.Unlock()
					t.Fatal(err)
				}
				var blockKeys, partKeys [][]byte
				for _, b := range l.Data {
					blockKeys = append(blockKeys, b.LastKey.Append(nil))
				}
				for _, p := range l.IndexPartitions {
					partKeys = append(partKeys, p.LastKey.Append(nil))
				}
				tr.whole += pinnedIndexFormula(blockKeys, l.Padding > 0)
				if len(partKeys) > 0 {
					tr.top += pinnedIndexFormula(partKeys, false) + 12*len(partKeys) + 4
				} else {
					tr.top += pinnedIndexFormula(blockKeys, l.Padding > 0)
				}
				tr.partitions += len(partKeys)
				tr.layoutBlocks += len(l.Data)
			}
		}
		d.mu.Unlock()
		for i := 0; i < n; i += 97 {
			v, err := d.Get(key(i))
			if err != nil || string(v[:len(key(i))]) != string(key(i)) {
				t.Fatalf("IndexPartitionSize %d: Get(%s) = %q, %v", size, key(i), v, err)
			}
		}
		tr.m = d.Metrics()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		trees[size] = tr
	}
	plain, part := trees[-1], trees[256]
	switch {
	case plain.partitions != 0 || part.partitions < 10*part.m.Levels[NumLevels-1].Tables:
		t.Fatalf("partitions: %d unpartitioned, %d in %d bottom tables: want none, and ten or more a table", plain.partitions, part.partitions, part.m.Levels[NumLevels-1].Tables)
	case plain.layoutBlocks != part.layoutBlocks || plain.whole != part.whole:
		t.Fatalf("the trees differ: %d and %d data blocks, whole indexes of %d and %d bytes", plain.layoutBlocks, part.layoutBlocks, plain.whole, part.whole)
	case plain.m.IndexMemory != uint64(plain.whole):
		t.Fatalf("unpartitioned: IndexMemory %d, the formula says %d", plain.m.IndexMemory, plain.whole)
	case part.m.IndexMemory != uint64(part.top):
		t.Fatalf("partitioned: IndexMemory %d, the formula says %d (whole: %d)", part.m.IndexMemory, part.top, part.whole)
	case plain.m.Memory.Tables <= part.m.Memory.Tables:
		t.Fatalf("tables' memory %d unpartitioned, %d partitioned: want less", plain.m.Memory.Tables, part.m.Memory.Tables)
	}
	t.Logf("%d data blocks, %d partitions: indexes pin %d bytes whole, %d partitioned (%.1f%%); tables' memory %d against %d",
		part.layoutBlocks, part.partitions, plain.m.IndexMemory, part.m.IndexMemory, 100*float64(part.m.IndexMemory)/float64(plain.m.IndexMemory), plain.m.Memory.Tables, part.m.Memory.Tables)
}

// pinnedIndexFormula is the bytes an index over blocks with these last
// keys (encoded internal keys) pins: their common user-key prefix once and
// their rests, and 8 bytes per block, 10 with padding between blocks.
func pinnedIndexFormula(keys [][]byte, padded bool) int {
	first, _ := base.DecodeInternalKey(keys[0])
	last, _ := base.DecodeInternalKey(keys[len(keys)-1])
	p := bytealg.CommonPrefix(first.UserKey, last.UserKey)
	perBlock := 8
	if padded {
		perBlock = 10
	}
	total := p
	for _, k := range keys {
		total += len(k) - p + perBlock
	}
	return total
}

// TestExplainIndexPartition checks Explain's record of the index partition
// a lookup reads in a table whose index is partitioned: the first lookup
// reads it from the file (the bytes of its block and trailer, as the
// table's layout gives them), the second finds it in the block cache, and
// in the trace's text the index column says so; a table whose index is
// whole says "memory".
func TestExplainIndexPartition(t *testing.T) {
	for _, size := range []int{1, -1} {
		db, err := Open("/db", &Options{FS: vfs.NewMem(), BlockSize: 256, IndexPartitionSize: size})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for i := range 500 {
			if err := db.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "value %d", i), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		key := []byte("k0321")
		var trace [2]*Trace
		for i := range trace {
			if trace[i], err = db.Explain(key); err != nil || !trace[i].Found {
				t.Fatalf("IndexPartitionSize %d: Explain(%s): %v, found %v", size, key, err, trace[i] != nil && trace[i].Found)
			}
		}
		db.mu.Lock()
		tb := db.mu.current.tables[0][0]
		db.mu.Unlock()
		l, err := tb.reader.Layout()
		if err != nil {
			t.Fatal(err)
		}
		step := func(tr *Trace) TraceStep { return tr.Steps[len(tr.Steps)-1] }
		first, second := step(trace[0]), step(trace[1])
		if size < 0 {
			if len(l.IndexPartitions) != 0 || first.IndexFromFile+first.IndexFromCache != 0 || !strings.Contains(trace[0].String(), "memory") {
				t.Fatalf("a whole index: %d partitions, step %+v, trace\n%s", len(l.IndexPartitions), first, trace[0])
			}
			continue
		}
		// The partition the key's block is in: the first whose last key
		// is at or after the key.
		var part int64
		for _, p := range l.IndexPartitions {
			if string(p.LastKey.UserKey) >= string(key) {
				part = int64(p.Length + 5)
				break
			}
		}
		if first.IndexFromFile != 1 || first.IndexFromCache != 0 || first.IndexBytesRead != part || second.IndexFromFile != 0 || second.IndexFromCache != 1 {
			t.Fatalf("partitioned: steps %+v then %+v; want the partition (%d bytes) from the file, then from the cache", first, second, part)
		}
		for i, want := range []string{fmt.Sprintf("file, %d B", part), "cache"} {
			if !strings.Contains(trace[i].String(), want) {
				t.Fatalf("trace %d lacks %q:\n%s", i, want, trace[i])
			}
		}
	}
}

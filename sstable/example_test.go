package sstable_test

import (
	"bytes"
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
	"github.com/bloomkv/bloomkv/sstable"
)

// Write a small table, then look up a present and an absent key; the absent
// one is answered by the filter without reading a data block.
func Example() {
	var file bytes.Buffer
	w, _ := sstable.NewWriter(&file, sstable.WriterOptions{Filter: sstable.Bloom(10), Compression: sstable.SnappyCompression})
	for i, fruit := range []string{"apple", "banana", "cherry"} {
		w.Add(base.MakeInternalKey([]byte(fruit), base.SeqNum(i+1), base.KindSet), []byte("ripe "+fruit))
	}
	props, _ := w.Finish()
	fmt.Println("entries:", props.Entries, "probes:", props.FilterProbes)

	r, err := sstable.Open(bytes.NewReader(file.Bytes()), int64(file.Len()),
		sstable.ReaderOptions{FileName: "000001.sst", FileNum: 1, Cache: cache.New(1 << 20)})
	if err != nil {
		panic(err)
	}
	for _, key := range []string{"banana", "durian"} {
		var stats sstable.LookupStats
		value, _, found, _ := r.Get(sstable.MakeLookupKey([]byte(key), base.SeqNumMax), &stats)
		fmt.Printf("%s: found=%v value=%q filter negative=%v blocks read=%d\n",
			key, found, value, stats.FilterNegative, stats.BlocksRead)
	}
	// Output:
	// entries: 3 probes: 7
	// banana: found=true value="ripe banana" filter negative=false blocks read=1
	// durian: found=false value="" filter negative=true blocks read=0
}

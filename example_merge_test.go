package bloomkv_test

import (
	"fmt"

	"github.com/bloomkv/bloomkv"
)

// A counter kept by merges: each increment is one blind write, and a read
// sums the increments over the value below them (a Put, here).
func ExampleInt64AddMerger() {
	db, done := openExampleDBWith(&bloomkv.Options{Merger: bloomkv.Int64AddMerger()})
	defer done()

	key := []byte("page/home/visits")
	for _, n := range []int64{1, 1, 5} {
		if err := db.Merge(key, bloomkv.EncodeInt64(n), nil); err != nil {
			panic(err)
		}
	}
	v, _ := db.Get(key)
	sum, _ := bloomkv.DecodeInt64(v)
	fmt.Println("visits:", sum)

	// A Put sets the base; the merges after it add to it.
	db.Put(key, bloomkv.EncodeInt64(100), nil)
	db.Merge(key, bloomkv.EncodeInt64(-1), nil)
	v, _ = db.Get(key)
	sum, _ = bloomkv.DecodeInt64(v)
	fmt.Println("after a reset to 100 and -1:", sum)

	// An operand that is not an integer is refused at the write.
	err := db.Merge(key, []byte("one"), nil)
	fmt.Println(err)
	// Output:
	// visits: 7
	// after a reset to 100 and -1: 99
	// bloomkv: invalid operand: 3 bytes, not an 8-byte integer (EncodeInt64), for key "page/home/visits" (merger "bloomkv.int64add")
}

// A log kept by merges: each entry is appended, in the batch that writes
// it, and a flush and a compaction fold them into one value.
func ExampleAppendMerger() {
	db, done := openExampleDBWith(&bloomkv.Options{Merger: bloomkv.AppendMerger()})
	defer done()

	b := bloomkv.NewBatch()
	b.Merge([]byte("log"), []byte("started;"))
	b.Merge([]byte("log"), []byte("loaded;"))
	if err := db.Apply(b, nil); err != nil {
		panic(err)
	}
	db.Merge([]byte("log"), []byte("served;"), nil)
	if err := db.Compact(nil, []byte{0xff}); err != nil {
		panic(err)
	}
	v, _ := db.Get([]byte("log"))
	fmt.Printf("%s\n", v)
	m := db.Metrics()
	fmt.Println("operands folded by the compaction:", m.MergesFoldedByCompactions)
	// Output:
	// started;loaded;served;
	// operands folded by the compaction: 3
}

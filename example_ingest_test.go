package bloomkv_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/sstable"
)

// A loader builds tables of sorted keys with package sstable, each with its
// filter, and adds them in one step: the keys read as one write newer than
// every write before, and a snapshot taken before sees none of them.
func ExampleDB_Ingest() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(filepath.Join(dir, "db"), nil)
	defer db.Close()
	db.Put([]byte("price/apple"), []byte("old"), nil)
	before, _ := db.NewSnapshot()
	defer before.Close()

	// One table per run of sorted keys; any seqnum will do, the DB assigns one.
	path := filepath.Join(dir, "prices.sst")
	f, _ := os.Create(path)
	w, _ := sstable.NewWriter(f, sstable.WriterOptions{Filter: sstable.Bloom(10), Compression: sstable.SnappyCompression})
	for _, kv := range [][2]string{{"price/apple", "3"}, {"price/kiwi", "5"}, {"price/plum", "4"}} {
		w.Add(sstable.MakeInternalKey([]byte(kv[0]), 0, sstable.KindSet), []byte(kv[1]))
	}
	w.Finish()
	f.Sync()
	f.Close()

	if err := db.Ingest([]string{path}); err != nil {
		panic(err)
	}
	apple, _ := db.Get([]byte("price/apple"))
	old, _ := before.Get([]byte("price/apple"))
	_, err := before.Get([]byte("price/kiwi"))
	fmt.Printf("apple %s (before: %s), kiwi before: %v\n", apple, old, err)
	// The table overlapped the memtable, which Ingest flushed first: the
	// older apple is in an L0 table below the ingested one.
	tables, _ := db.Tables()
	for _, t := range tables {
		fmt.Printf("L%d %s..%s ingested=%v\n", t.Level, t.Smallest, t.Largest, t.Ingested)
	}
	// Output:
	// apple 3 (before: old), kiwi before: bloomkv: not found
	// L0 price/apple..price/plum ingested=true
	// L0 price/apple..price/apple ingested=false
}

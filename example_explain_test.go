package bloomkv_test

import (
	"fmt"
	"os"

	"github.com/bloomkv/bloomkv"
)

// Explain shows the path of one lookup: here the newer table's filter rules
// the key out without a read, and one data block of the older table is read.
func ExampleDB_Explain() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	for i := range 100 { // two tables: even keys, then odd keys
		db.Put(fmt.Appendf(nil, "key%03d", i*2), []byte("even"), bloomkv.NoSync)
	}
	db.Flush()
	for i := range 100 {
		db.Put(fmt.Appendf(nil, "key%03d", i*2+1), []byte("odd"), bloomkv.NoSync)
	}
	db.Flush()

	trace, err := db.Explain([]byte("key042"))
	if err != nil {
		panic(err)
	}
	fmt.Print(trace)
	fmt.Printf("value %q\n", trace.Value)
	// Output:
	// lookup "key042" at seqnum 200
	// #  place          key range             in range  filter  index   data block      result
	// 1  memtable                                                                       not here
	// 2  L0/000007.sst  "key001" .. "key199"  yes       absent                          skipped
	// 3  L0/000005.sst  "key000" .. "key198"  yes       maybe   memory  file, 1.65 KiB  found
	// summary: 1 table skipped by its filter, 1 block read (1.65 KiB), found in L0/000005.sst
	// value "even"
}

package bloomkv_test

import (
	"fmt"
	"os"

	"github.com/bloomkv/bloomkv"
)

// ExplainMultiGet shows how a batch was read: here two keys of one data
// block share its read, a third key's block is read beside it in the same
// round, and a missing key costs no read, its table's filter ruling it out.
func ExampleDB_ExplainMultiGet() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, &bloomkv.Options{BlockSize: 512})
	defer db.Close()

	for i := range 200 {
		db.Put(fmt.Appendf(nil, "key%03d", i), []byte("value"), bloomkv.NoSync)
	}
	db.Flush()

	keys := [][]byte{[]byte("key010"), []byte("key011"), []byte("key150"), []byte("key100x")}
	trace, err := db.ExplainMultiGet(keys)
	if err != nil {
		panic(err)
	}
	fmt.Print(trace)
	// Output:
	// multiget of 4 keys at seqnum 200
	// round  keys  blocks  shared  cache  file  at once  bytes     answered
	// 1      3     2       1       0      2     2        1.02 KiB  3
	// key 1 of 4: lookup "key010" at seqnum 200
	// round  shared by  #  place          key range             in range  filter  index   data block   result
	//                   1  memtable                                                                    not here
	// 1      2 keys     2  L0/000005.sst  "key000" .. "key199"  yes       maybe   memory  file, 522 B  found
	// summary: 1 block read (522 B), found in L0/000005.sst
	// key 2 of 4: lookup "key011" at seqnum 200
	// round  shared by  #  place          key range             in range  filter  index   data block  result
	//                   1  memtable                                                                   not here
	// 1      2 keys     2  L0/000005.sst  "key000" .. "key199"  yes       maybe   memory  shared      found
	// summary: a block another key of the batch read, found in L0/000005.sst
	// key 3 of 4: lookup "key150" at seqnum 200
	// round  shared by  #  place          key range             in range  filter  index   data block   result
	//                   1  memtable                                                                    not here
	// 1      1 key      2  L0/000005.sst  "key000" .. "key199"  yes       maybe   memory  file, 523 B  found
	// summary: 1 block read (523 B), found in L0/000005.sst
	// key 4 of 4: lookup "key100x" at seqnum 200
	// round  shared by  #  place          key range             in range  filter  index  data block  result
	//                   1  memtable                                                                  not here
	// 1                 2  L0/000005.sst  "key000" .. "key199"  yes       absent                     skipped
	// summary: 1 table skipped by its filter, no block read, not found
	// summary: 4 keys, 3 found, 1 not found; 1 round, 2 blocks for 3 table probes (1 read saved by sharing), 2 read from files (1.02 KiB), at most 2 at once; 1 table skipped by its filter
}

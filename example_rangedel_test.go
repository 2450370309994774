package bloomkv_test

import (
	"fmt"
	"os"

	"github.com/bloomkv/bloomkv"
)

// DeleteRange removes a whole key range with one write: here every key of
// one user, whatever their number.
func ExampleDB_DeleteRange() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	for _, k := range []string{"user/17/a", "user/17/b", "user/18/a"} {
		db.Put([]byte(k), []byte("v"), nil)
	}
	// [user/17/, user/170): '/' + 1 is '0', so the range is every key with
	// the prefix "user/17/".
	if err := db.DeleteRange([]byte("user/17/"), []byte("user/170"), nil); err != nil {
		panic(err)
	}
	db.Scan(nil, nil, func(k, v []byte) error {
		fmt.Println(string(k))
		return nil
	})
	fmt.Println(db.DeleteRange([]byte("b"), []byte("a"), nil))
	// Output:
	// user/18/a
	// bloomkv: invalid end: "a" does not sort after start "b": the range [start, end) is empty
}

// A batch counts its records and can be reused after Reset.
func ExampleBatch_Len() {
	b := bloomkv.NewBatch()
	fmt.Println(b.Len(), b.Empty())
	b.Set([]byte("a"), []byte("1"))
	b.Delete([]byte("b"))
	b.DeleteRange([]byte("c"), []byte("f"))
	fmt.Println(b.Len(), b.Empty())
	b.Reset()
	fmt.Println(b.Len(), b.Empty())
	// Output:
	// 0 true
	// 3 false
	// 0 true
}

// Explain names the range tombstone that deleted a key, and shows that the
// lookup read no data block: the newer table's tombstones are in memory,
// asked before its filter (which, holding other keys, rules the key out),
// and the older table, whose versions are older than the tombstone, is not
// consulted at all.
func ExampleDB_Explain_rangeDeletion() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	for i := range 100 {
		db.Put(fmt.Appendf(nil, "key%03d", i), []byte("v"), bloomkv.NoSync)
	}
	db.Flush()
	db.DeleteRange([]byte("key020"), []byte("key060"), bloomkv.NoSync)
	db.Put([]byte("other"), []byte("v"), bloomkv.NoSync)
	db.Flush()

	trace, err := db.Explain([]byte("key042"))
	if err != nil {
		panic(err)
	}
	fmt.Print(trace)
	// Output:
	// lookup "key042" at seqnum 102
	// #  place          key range            in range  filter  index  data block  result
	// 1  memtable                                                                 not here
	// 2  L0/000007.sst  "key020" .. "other"  yes       absent                     covered by range tombstone ["key020", "key060") @101
	// summary: 1 table skipped by its filter, no block read, covered by range tombstone ["key020", "key060") @101 in L0/000007.sst
}

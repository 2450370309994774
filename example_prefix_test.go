package bloomkv_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/bloomkv/bloomkv"
)

// userPrefix is a prefix extractor: a key's prefix runs up to and
// including its first '/' (the whole key if it has none), so that
// "alice/" holds every key of alice.
var userPrefix = &bloomkv.PrefixExtractor{Name: "user/", Split: func(key []byte) int {
	if i := bytes.IndexByte(key, '/'); i >= 0 {
		return i + 1
	}
	return len(key)
}}

// SeekPrefixGE walks the keys of one prefix: Next stops at the prefix's
// end. The tables whose filters rule the prefix out are not read.
func ExampleIterator_SeekPrefixGE() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, &bloomkv.Options{Prefix: userPrefix})
	defer db.Close()

	for _, k := range []string{"alice/age", "alice/name", "bob/age", "bob/name", "carol/age"} {
		db.Put([]byte(k), []byte("v"), bloomkv.NoSync)
	}
	it, _ := db.NewIter(nil)
	for ok := it.SeekPrefixGE([]byte("bob/")); ok; ok = it.Next() {
		fmt.Printf("%s\n", it.Key())
	}
	if err := it.Close(); err != nil {
		panic(err)
	}
	// Output:
	// bob/age
	// bob/name
}

// ExplainPrefix shows what a prefix seek read. Every table's key range
// holds "bob/": for bob's keys, the filters of the two tables without them
// rule the prefix out, and one table is sought; for a prefix no table
// holds, none is.
func ExampleDB_ExplainPrefix() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, &bloomkv.Options{Prefix: userPrefix})
	defer db.Close()

	for _, user := range []string{"alice", "bob", "carol"} { // a table each
		for i := range 50 {
			db.Put(fmt.Appendf(nil, "%s/%02d", user, i), []byte("v"), bloomkv.NoSync)
		}
		db.Put([]byte("admin/00"), []byte("v"), bloomkv.NoSync) // so that every table's range
		db.Put([]byte("zed/00"), []byte("v"), bloomkv.NoSync)   // holds "bob/"
		db.Flush()
	}
	db.Put([]byte("dave/00"), []byte("v"), bloomkv.NoSync) // the memtable
	for _, key := range []string{"bob/10", "bo/"} {
		trace, err := db.ExplainPrefix([]byte(key))
		if err != nil {
			panic(err)
		}
		fmt.Print(trace)
	}
	// Output:
	// prefix seek "bob/10" (prefix "bob/") at seqnum 157
	// #  place          key range               in range  prefix filter  result
	// 1  memtable                                                        sought
	// 2  L0/000009.sst  "admin/00" .. "zed/00"  yes       absent         skipped
	// 3  L0/000007.sst  "admin/00" .. "zed/00"  yes       maybe          sought
	// 4  L0/000005.sst  "admin/00" .. "zed/00"  yes       absent         skipped
	// summary: 2 tables skipped by their filters, 1 table sought, 40 keys found
	// prefix seek "bo/" (prefix "bo/") at seqnum 157
	// #  place          key range               in range  prefix filter  result
	// 1  memtable                                                        sought
	// 2  L0/000009.sst  "admin/00" .. "zed/00"  yes       absent         skipped
	// 3  L0/000007.sst  "admin/00" .. "zed/00"  yes       absent         skipped
	// 4  L0/000005.sst  "admin/00" .. "zed/00"  yes       absent         skipped
	// summary: 3 tables skipped by their filters, no table sought, no key with the prefix
}

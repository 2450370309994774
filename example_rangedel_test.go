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

package bloomkv_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/bloomkv/bloomkv"
)

func tempDir() string {
	dir, err := os.MkdirTemp("", "bloomkv-example-")
	if err != nil {
		panic(err)
	}
	return dir
}

func Example() {
	dir := tempDir()
	defer os.RemoveAll(dir)

	db, err := bloomkv.Open(dir, nil) // nil options: the defaults
	if err != nil {
		panic(err)
	}
	defer db.Close()

	if err := db.Put([]byte("greeting"), []byte("hello, world"), nil); err != nil { // nil: durable
		panic(err)
	}
	value, err := db.Get([]byte("greeting"))
	fmt.Printf("%s %v\n", value, err)

	_, err = db.Get([]byte("missing"))
	fmt.Println(errors.Is(err, bloomkv.ErrNotFound))
	// Output:
	// hello, world <nil>
	// true
}

// A batch moves money between two accounts: both writes happen, or, after a
// crash, neither.
func ExampleBatch() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	b := bloomkv.NewBatch()
	b.Set([]byte("account/alice"), []byte("70"))
	b.Set([]byte("account/bob"), []byte("130"))
	b.Delete([]byte("pending/transfer-17"))
	if err := db.Apply(b, nil); err != nil {
		panic(err)
	}
	alice, _ := db.Get([]byte("account/alice"))
	bob, _ := db.Get([]byte("account/bob"))
	fmt.Printf("alice %s, bob %s\n", alice, bob)
	// Output: alice 70, bob 130
}

func ExampleDB_NewIter() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()
	for _, fruit := range []string{"cherry", "apple", "banana", "date"} {
		db.Put([]byte("fruit/"+fruit), []byte(fruit), bloomkv.NoSync)
	}
	db.Put([]byte("vegetable/leek"), []byte("leek"), bloomkv.NoSync)

	// Every key with the prefix "fruit/": [fruit/, fruit0).
	it, err := db.NewIter(&bloomkv.IterOptions{LowerBound: []byte("fruit/"), UpperBound: []byte("fruit0")})
	if err != nil {
		panic(err)
	}
	for key, value := range it.All() {
		fmt.Printf("%s=%s\n", key, value)
	}
	if err := it.Close(); err != nil {
		panic(err)
	}
	// Output:
	// fruit/apple=apple
	// fruit/banana=banana
	// fruit/cherry=cherry
	// fruit/date=date
}

func ExampleDB_MultiGet() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	db.Put([]byte("apple"), []byte("red"), nil)
	db.Put([]byte("kiwi"), []byte(""), nil)
	values, err := db.MultiGet([][]byte{[]byte("kiwi"), []byte("fig"), []byte("apple")})
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range values {
		fmt.Printf("%q found=%v\n", v, v != nil)
	}
	// Output:
	// "" found=true
	// "" found=false
	// "red" found=true
}

func ExampleDB_NewSnapshot() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	db.Put([]byte("config"), []byte("v1"), nil)
	snap, _ := db.NewSnapshot()
	defer snap.Close()
	db.Put([]byte("config"), []byte("v2"), nil)

	then, _ := snap.Get([]byte("config"))
	now, _ := db.Get([]byte("config"))
	fmt.Printf("snapshot sees %s, the DB %s\n", then, now)
	// Output: snapshot sees v1, the DB v2
}

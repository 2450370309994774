package bloomkv_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/bloomkv/bloomkv"
)

// openExampleDB opens a DB in a new temporary directory; done closes it
// and removes the directory.
func openExampleDB() (db *bloomkv.DB, done func()) { return openExampleDBWith(nil) }

// openExampleDBWith is openExampleDB with options opts.
func openExampleDBWith(opts *bloomkv.Options) (db *bloomkv.DB, done func()) {
	dir := tempDir()
	db, err := bloomkv.Open(dir, opts)
	if err != nil {
		panic(err)
	}
	return db, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}

// A transfer between two accounts in DB.Update, run again on
// ErrConflict, and a read of both balances at one point in time in
// DB.View.
func ExampleDB_Update() {
	db, done := openExampleDB()
	defer done()
	db.Put([]byte("acct/alice"), []byte("100"), nil)
	db.Put([]byte("acct/bob"), []byte("50"), nil)

	balance := func(txn *bloomkv.Transaction, who string) int {
		v, err := txn.Get([]byte("acct/" + who))
		if err != nil {
			panic(err)
		}
		n, _ := strconv.Atoi(string(v))
		return n
	}
	transfer := func(from, to string, amount int) error {
		for {
			err := db.Update(func(txn *bloomkv.Transaction) error {
				a, b := balance(txn, from), balance(txn, to)
				if a < amount {
					return fmt.Errorf("%s has %d, less than %d", from, a, amount)
				}
				txn.Set([]byte("acct/"+from), strconv.AppendInt(nil, int64(a-amount), 10))
				return txn.Set([]byte("acct/"+to), strconv.AppendInt(nil, int64(b+amount), 10))
			})
			if !errors.Is(err, bloomkv.ErrConflict) {
				return err // nil: committed
			}
			// Another commit wrote a balance this one read: run it again.
		}
	}
	fmt.Println(transfer("alice", "bob", 30))
	fmt.Println(transfer("bob", "alice", 500))

	db.View(func(txn *bloomkv.Transaction) error {
		fmt.Println(balance(txn, "alice"), balance(txn, "bob"))
		return nil
	})
	// Output:
	// <nil>
	// bob has 80, less than 500
	// 70 80
}

// An indexed batch reads its own writes over the DB before Apply.
func ExampleDB_NewIndexedBatch() {
	db, done := openExampleDB()
	defer done()
	db.Put([]byte("a"), []byte("1"), nil)
	db.Put([]byte("b"), []byte("2"), nil)

	b, err := db.NewIndexedBatch()
	if err != nil {
		panic(err)
	}
	defer b.Close()
	b.Set([]byte("c"), []byte("3"))
	b.DeleteRange([]byte("a"), []byte("b"))
	it, _ := b.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s ", it.Key(), it.Value())
	}
	it.Close()
	_, err = db.Get([]byte("c"))
	fmt.Println("| in the DB before Apply:", err)
	db.Apply(b, nil)
	v, _ := db.Get([]byte("c"))
	fmt.Printf("after Apply: %s\n", v)
	// Output:
	// b=2 c=3 | in the DB before Apply: bloomkv: not found
	// after Apply: 3
}

package memtable_test

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

func Example() {
	mt := memtable.New(4 << 20)
	mt.Add(1, base.KindSet, []byte("apple"), []byte("red"))
	mt.Add(2, base.KindSet, []byte("banana"), []byte("yellow"))
	mt.Add(3, base.KindSet, []byte("apple"), []byte("green"))
	mt.Add(4, base.KindDelete, []byte("banana"), nil)

	// A read at sequence number 2 does not see the writes made after it.
	v, _, _, _ := mt.Get([]byte("apple"), 2)
	fmt.Printf("apple@2 = %s\n", v)
	// At 4, banana's newest version is a tombstone: the DB answers not found.
	if _, kind, seq, found := mt.Get([]byte("banana"), 4); found && kind == base.KindDelete {
		fmt.Printf("banana@4 deleted at %d\n", seq)
	}

	// Iterators yield every version, newest first within a key.
	it := mt.NewIter()
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%v = %q\n", it.Key(), it.Value())
	}
	// Output:
	// apple@2 = red
	// banana@4 deleted at 4
	// "apple"#3,SET = "green"
	// "apple"#1,SET = "red"
	// "banana"#4,DEL = ""
	// "banana"#2,SET = "yellow"
}

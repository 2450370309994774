package bloomkv_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bloomkv/bloomkv"
)

// A checkpoint is a backup taken while the DB keeps running: it opens as a
// DB of its own, holding the writes made before it and none after.
func ExampleDB_Checkpoint() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(filepath.Join(dir, "db"), nil)
	defer db.Close()

	db.Put([]byte("stock/apples"), []byte("12"), nil)
	if err := db.Checkpoint(filepath.Join(dir, "backup"), nil); err != nil {
		panic(err)
	}
	db.Put([]byte("stock/apples"), []byte("11"), nil) // after the checkpoint

	backup, err := bloomkv.Open(filepath.Join(dir, "backup"), &bloomkv.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	defer backup.Close()
	then, _ := backup.Get([]byte("stock/apples"))
	now, _ := db.Get([]byte("stock/apples"))
	fmt.Printf("backup %s, db %s\n", then, now)

	// The target must be new or empty: a second checkpoint there is refused.
	err = db.Checkpoint(filepath.Join(dir, "backup"), nil)
	fmt.Println(err != nil)
	// Output:
	// backup 12, db 11
	// true
}

// EstimateDiskUsage tells how much of the disk a key range takes, from the
// tables' indexes, without reading them.
func ExampleDB_EstimateDiskUsage() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()

	value := make([]byte, 1000)
	for i := range 2000 {
		for j := range value {
			value[j] = byte(i * (j + 7) >> 3) // values that compress little
		}
		prefix := "logs/"
		if i%2 == 1 {
			prefix = "users/"
		}
		db.Put(fmt.Appendf(nil, "%s%05d", prefix, i), value, bloomkv.NoSync)
	}
	db.Flush() // the memtable's writes are not on disk in tables yet

	logs, _ := db.EstimateDiskUsage([]byte("logs/"), []byte("logs0"))
	all, _ := db.EstimateDiskUsage(nil, nil)
	fmt.Printf("logs/ take about %d%% of the tables\n", (100*logs/all+5)/10*10)
	// Output:
	// logs/ take about 50% of the tables
}

// SetBounds reuses one iterator for several ranges of one point in time.
func ExampleIterator_SetBounds() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()
	for _, k := range []string{"fruit/apple", "fruit/fig", "veg/kale", "veg/leek"} {
		db.Put([]byte(k), nil, bloomkv.NoSync)
	}

	it, _ := db.NewIter(&bloomkv.IterOptions{LowerBound: []byte("fruit/"), UpperBound: []byte("fruit0")})
	defer it.Close()
	for k := range it.All() {
		fmt.Printf("%s ", k)
	}
	it.SetBounds([]byte("veg/"), []byte("veg0")) // unpositioned: All starts at First
	for k := range it.All() {
		fmt.Printf("%s ", k)
	}
	fmt.Println()
	// Output:
	// fruit/apple fruit/fig veg/kale veg/leek
}

// A clone is a second, independent position in the same point in time: it
// sees none of the writes made after the iterator it was cloned from.
func ExampleIterator_Clone() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()
	db.Put([]byte("a"), []byte("1"), nil)
	db.Put([]byte("b"), []byte("2"), nil)

	it, _ := db.NewIter(nil)
	db.Put([]byte("c"), []byte("3"), nil) // after the iterator: unseen
	clone, err := it.Clone()
	if err != nil {
		panic(err)
	}
	it.Close() // the clone lives on by itself
	defer clone.Close()

	for ok := clone.Last(); ok; ok = clone.Prev() {
		fmt.Printf("%s=%s ", clone.Key(), clone.Value())
	}
	fmt.Println()
	// Output:
	// b=2 a=1
}

package bloomkv_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bloomkv/bloomkv"
)

// A read-only Open looks at a DB without changing a byte of its directory,
// beside other read-only opens; writes return ErrReadOnly.
func ExampleOptions_readOnly() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	db.Put([]byte("greeting"), []byte("hello"), nil)
	db.Close()

	ro := &bloomkv.Options{ReadOnly: true}
	a, err := bloomkv.Open(dir, ro)
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := bloomkv.Open(dir, ro) // read-only opens coexist
	if err != nil {
		panic(err)
	}
	defer b.Close()
	v, _ := b.Get([]byte("greeting")) // replayed from the WAL, in memory
	fmt.Printf("%s\n", v)
	fmt.Println(errors.Is(a.Put([]byte("k"), []byte("v"), nil), bloomkv.ErrReadOnly))
	_, err = bloomkv.Open(dir, nil) // a writer must wait for the readers
	fmt.Println(errors.Is(err, bloomkv.ErrLocked))
	// Output:
	// hello
	// true
	// true
}

// ErrorIfNotExists opens a DB only if one is there: a mistyped directory
// is an error, not a new, empty DB.
func ExampleOptions_errorIfNotExists() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	_, err := bloomkv.Open(filepath.Join(dir, "typo"), &bloomkv.Options{ErrorIfNotExists: true})
	fmt.Println(errors.Is(err, bloomkv.ErrDBDoesNotExist))
	// Output: true
}

// An EventListener sees the background work: here, the flush of the
// memtable and the table it wrote.
func ExampleEventListener() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	listener := &bloomkv.EventListener{
		FlushEnd: func(info bloomkv.FlushInfo) {
			fmt.Printf("flushed to table %06d, %v\n", info.Output.FileNum, info.Err)
		},
		BackgroundError: func(info bloomkv.BackgroundErrorInfo) {
			fmt.Printf("%s failed: %v (retry in %v)\n", info.Op, info.Err, info.RetryIn)
		},
	}
	db, err := bloomkv.Open(dir, &bloomkv.Options{EventListener: listener})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.Put([]byte("k"), []byte("v"), nil)
	db.Flush()
	// Output: flushed to table 000005, <nil>
}

// Scan visits a range in key order; an error — a failed read, or the
// callback's own — stops it and is returned.
func ExampleDB_Scan() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, _ := bloomkv.Open(dir, nil)
	defer db.Close()
	for _, k := range []string{"apple", "banana", "cherry", "date"} {
		db.Put([]byte(k), []byte(strings.ToUpper(k)), nil)
	}
	err := db.Scan([]byte("b"), []byte("d"), func(key, value []byte) error {
		fmt.Printf("%s=%s\n", key, value)
		return nil
	})
	fmt.Println(err)

	errStop := errors.New("seen enough")
	err = db.Scan(nil, nil, func(key, value []byte) error { return errStop })
	fmt.Println(errors.Is(err, errStop))
	// Output:
	// banana=BANANA
	// cherry=CHERRY
	// <nil>
	// true
}

// LevelFilters fixes each level's filter: here binary fuse filters, wider
// in the small upper levels (`bloomkv tree` shows each table's). With
// FilterAllocation: BestAllocation instead, the DB chooses them within
// BitsPerKey's memory.
func ExampleOptions_levelFilters() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	opts := &bloomkv.Options{LevelFilters: []bloomkv.FilterSpec{bloomkv.Fuse(16), bloomkv.Fuse(12), bloomkv.Fuse(8)}}
	db, err := bloomkv.Open(dir, opts)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	for i := range 20_000 {
		db.Put(fmt.Appendf(nil, "key%06d", i), []byte("v"), bloomkv.NoSync)
	}
	db.Flush() // an L0 table: Fuse(16)
	_, err = db.Get([]byte("key000042"))
	fmt.Println(err, db.Metrics().Levels[0].Tables)
	_, err = db.Get([]byte("absent"))
	fmt.Println(errors.Is(err, bloomkv.ErrNotFound))
	// Output:
	// <nil> 1
	// true
}

// Under DynamicLevelSizing, the default, a small tree's L0 compacts
// straight into L6, where a large tree keeps most of its data; under
// StaticLevelSizing it compacts into L1, and the data climbs down one level
// at a time as the levels above fill.
func ExampleOptions_levelSizing() {
	for _, sizing := range []bloomkv.LevelSizing{bloomkv.DynamicLevelSizing, bloomkv.StaticLevelSizing} {
		dir := tempDir()
		db, err := bloomkv.Open(dir, &bloomkv.Options{LevelSizing: sizing})
		if err != nil {
			panic(err)
		}
		for i := range 1000 {
			db.Put(fmt.Appendf(nil, "key%04d", i), []byte("value"), bloomkv.NoSync)
		}
		db.Compact(nil, nil)
		m := db.Metrics()
		for level, l := range m.Levels {
			if l.Tables > 0 {
				fmt.Printf("%v: base level L%d, the data in L%d\n", sizing, m.BaseLevel, level)
			}
		}
		db.Close()
		os.RemoveAll(dir)
	}
	// Output:
	// dynamic: base level L6, the data in L6
	// static: base level L1, the data in L1
}

// MemoryLimit is one number for what the DB holds in memory, which it
// divides: the memtables a quarter, the compactions a reserve, the
// tables' filters and indexes half of the rest (the filters planned
// within it as the tree grows), the block cache what the tables and the
// Go heap's growth leave of the rest.
func ExampleOptions_memoryLimit() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, err := bloomkv.Open(dir, &bloomkv.Options{MemoryLimit: 64 << 20, MaxConcurrentCompactions: 2})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	b := db.Metrics().MemoryBudget
	rest := b.Limit - b.MemtablesShare - b.Compactions
	fmt.Printf("limit %d MiB: memtables %.2f MiB, compactions %.1f MiB, tables %.2f MiB, block cache up to %.2f MiB\n",
		b.Limit>>20, float64(b.MemtablesShare)/(1<<20), float64(b.Compactions)/(1<<20), float64(b.PinnedShare)/(1<<20), float64(rest)/(1<<20))
	// Output: limit 64 MiB: memtables 15.50 MiB, compactions 2.5 MiB, tables 23.00 MiB, block cache up to 46.00 MiB
}

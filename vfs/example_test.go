package vfs_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/bloomkv/bloomkv/vfs"
)

// A crash forgets what was not made durable: the file's data needs
// File.Sync, and its name needs SyncDir of its directory.
func ExampleNewMem() {
	fs := vfs.NewMem()
	f, _ := fs.Create("000001.log")
	io.WriteString(f, "synced,")
	f.Sync()
	io.WriteString(f, "not synced")
	f.Close()

	show := func(when string, fs vfs.FS) {
		names, _ := fs.List("/")
		fmt.Printf("%s: %q", when, names)
		if b, err := fs.Open("000001.log"); err == nil {
			data, _ := io.ReadAll(b)
			fmt.Printf(" holding %q", data)
		}
		fmt.Println()
	}
	show("before any crash", fs)
	show("crash before SyncDir", fs.CrashClone(vfs.CrashOptions{}))
	fs.SyncDir("/")
	show("crash after SyncDir", fs.CrashClone(vfs.CrashOptions{}))
	// Output:
	// before any crash: ["000001.log"] holding "synced,not synced"
	// crash before SyncDir: []
	// crash after SyncDir: ["000001.log"] holding "synced,"
}

// A torn crash keeps a seeded, random prefix of each file's unsynced tail.
func ExampleMemFS_CrashClone() {
	fs := vfs.NewMem()
	f, _ := fs.Create("000001.log")
	io.WriteString(f, "durable|")
	f.Sync()
	io.WriteString(f, "maybe")
	fs.SyncDir("/")

	for seed := range uint64(4) {
		crashed := fs.CrashClone(vfs.CrashOptions{TornWrites: true, Seed: seed})
		r, _ := crashed.Open("000001.log")
		data, _ := io.ReadAll(r)
		fmt.Printf("seed %d: %q\n", seed, data)
	}
	// Output:
	// seed 0: "durable|ma"
	// seed 1: "durable|maybe"
	// seed 2: "durable|maybe"
	// seed 3: "durable|mayb"
}

// The loop a failure test runs: fail operation 0, then 1, then 2, … until the
// workload runs to completion without meeting the injected failure.
func ExampleNewInjecting() {
	writeDurably := func(fs vfs.FS) error {
		f, err := fs.Create("CURRENT")
		if err != nil {
			return err
		}
		if _, err := io.WriteString(f, "MANIFEST-000001\n"); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return fs.SyncDir("/")
	}
	for i := int64(0); ; i++ {
		fs := vfs.NewInjecting(vfs.NewMem(), vfs.FailAt(i))
		err := writeDurably(fs)
		if fs.Injected() == 0 {
			fmt.Printf("completed after trying a failure at each of %d operations\n", i)
			break
		}
		fmt.Println(errors.Is(err, vfs.ErrInjected), err)
	}
	// Output:
	// true vfs: injected error: op 0: create CURRENT
	// true vfs: injected error: op 1: write CURRENT
	// true vfs: injected error: op 2: sync CURRENT
	// true vfs: injected error: op 3: close CURRENT
	// true vfs: injected error: op 4: syncdir /
	// completed after trying a failure at each of 5 operations
}

// Counting shows which kinds of file a piece of code read.
func ExampleNewCounting() {
	mem := vfs.NewMem()
	fs := vfs.NewCounting(mem, nil)
	f, _ := fs.Create("000007.sst")
	io.WriteString(f, "block")
	f.Close()

	fs.Reset()
	r, _ := fs.Open("000007.sst")
	r.ReadAt(make([]byte, 5), 0)
	r.Close()
	table := fs.Kind(vfs.KindTable)
	fmt.Printf("table reads: %d calls, %d bytes; wal reads: %d\n",
		table.ReadCalls(), table.BytesRead, fs.Kind(vfs.KindWAL).ReadCalls())
	// Output:
	// table reads: 1 calls, 5 bytes; wal reads: 0
}

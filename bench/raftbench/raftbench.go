// Package raftbench compares raft's log storage on bloomkv (package
// github.com/bloomkv/bloomkv/raftstore) with raft-boltdb v2, the bbolt store
// Consul, Nomad and Vault use, on the same machine: BenchmarkStoreLogs
// stores batches of raft entries through each store's StoreLogs, every batch
// synced (bloomkv: one batch, one fsync; bbolt: one transaction commit), for
// batches of 1 and 64 entries of 256 bytes of data. Run, from the bench
// directory:
//
//	go test -run='^$' -bench=StoreLogs -count=6 ./raftbench | tee raft.txt
//	benchstat -col /store raft.txt
//
// TestSameAsBoltDB checks the two stores against each other: the same calls
// leave the same entries and bounds in both.
package raftbench

import (
	"fmt"
	"path/filepath"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/bloomkv/bloomkv/raftstore"
)

// Store is one store under comparison.
type Store struct {
	Name string
	raft.LogStore
	Close func() error
}

// OpenStores opens a bloomkv Store and a raft-boltdb BoltStore under dir, each
// with its defaults (both sync every write).
func OpenStores(dir string) ([]Store, error) {
	kv, err := raftstore.Open(filepath.Join(dir, "bloomkv"), nil)
	if err != nil {
		return nil, err
	}
	bolt, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		_ = kv.Close()
		return nil, err
	}
	return []Store{
		{Name: "bloomkv", LogStore: kv, Close: kv.Close},
		{Name: "boltdb", LogStore: bolt, Close: bolt.Close},
	}, nil
}

// Entries returns n entries from index first on, of term 1 and dataSize
// bytes of data each (the data names the index).
func Entries(first uint64, n, dataSize int) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		data := make([]byte, dataSize)
		copy(data, fmt.Sprintf("entry %d ", first+uint64(i)))
		logs[i] = &raft.Log{Index: first + uint64(i), Term: 1, Type: raft.LogCommand, Data: data}
	}
	return logs
}

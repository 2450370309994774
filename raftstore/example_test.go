package raftstore_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv/raftstore"
)

// Example runs a one-node raft cluster on a Store and an FSM, applies a
// command through raft and reads the replicated state.
func Example() {
	dir, err := os.MkdirTemp("", "raftstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := raftstore.Open(filepath.Join(dir, "raft"), nil) // the log and the stable keys
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fsm, err := raftstore.OpenFSM(filepath.Join(dir, "state"), nil) // the replicated state
	if err != nil {
		log.Fatal(err)
	}
	defer fsm.Close()
	snapshots, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	addr, transport := raft.NewInmemTransport("node1")

	config := raft.DefaultConfig()
	config.LocalID = "node1"
	config.HeartbeatTimeout = 100 * time.Millisecond // a one-node cluster elects itself sooner
	config.ElectionTimeout = 100 * time.Millisecond
	config.LeaderLeaseTimeout = 100 * time.Millisecond
	config.LogOutput = io.Discard
	r, err := raft.NewRaft(config, fsm, store, store, snapshots, transport)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Shutdown()
	bootstrap := raft.Configuration{Servers: []raft.Server{{ID: config.LocalID, Address: addr}}}
	if err := r.BootstrapCluster(bootstrap).Error(); err != nil {
		log.Fatal(err)
	}
	<-r.LeaderCh() // true once this node leads

	// One command: two sets and a delete, applied atomically on every node.
	cmd := raftstore.AppendSet(nil, []byte("greeting"), []byte("hello, raft"))
	cmd = raftstore.AppendSet(cmd, []byte("draft"), []byte("x"))
	cmd = raftstore.AppendDelete(cmd, []byte("draft"))
	f := r.Apply(cmd, time.Second)
	if err := f.Error(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("response:", f.Response()) // nil, or an error wrapping ErrBadCommand

	value, err := fsm.Get([]byte("greeting"))
	fmt.Printf("%s %v\n", value, err)
	_, err = fsm.Get([]byte("draft"))
	fmt.Println(err)
	// Output:
	// response: <nil>
	// hello, raft <nil>
	// bloomkv: not found
}

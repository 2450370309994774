package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/bloomkv/bloomkv/raftstore/client"
	"github.com/bloomkv/bloomkv/raftstore/node"
)

// Example starts a one-node cluster in this process (bloomkv-node runs the
// same) and uses it through the client: a put, a compare-and-set that
// holds and one that does not, a linearizable read and a scan.
func Example() {
	dir, err := os.MkdirTemp("", "bloomkv-client-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	n, err := node.Start(node.Config{
		ID: "n1", Dir: dir, HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0",
		ElectionTimeout: 200 * time.Millisecond,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		RaftLogOutput:   io.Discard,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()

	c, err := client.New([]string{n.HTTPAddr()}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Put(ctx, "greeting", []byte("hello")); err != nil { // retried until the node leads
		log.Fatal(err)
	}
	ok, err := c.CAS(ctx, "greeting", []byte("hello"), []byte("bye"))
	fmt.Println("cas hello→bye:", ok, err)
	ok, err = c.CAS(ctx, "greeting", []byte("hello"), []byte("again"))
	fmt.Println("cas hello→again:", ok, err)
	v, err := c.Get(ctx, "greeting")
	fmt.Printf("get: %s %v\n", v, err)
	if err := c.Batch(ctx, client.Op{Key: "a", Value: []byte("1")}, client.Op{Key: "b", Value: []byte("2")}); err != nil {
		log.Fatal(err)
	}
	kvs, more, err := c.Scan(ctx, "a", "c", 10)
	for _, kv := range kvs {
		fmt.Printf("scan: %s=%s\n", kv.Key, kv.Value)
	}
	fmt.Println("more:", more, err)
	// Output:
	// cas hello→bye: true <nil>
	// cas hello→again: false <nil>
	// get: bye <nil>
	// scan: a=1
	// scan: b=2
	// more: false <nil>
}

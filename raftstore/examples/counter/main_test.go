package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/raftstore/client"
	"github.com/bloomkv/bloomkv/raftstore/node"
)

// TestCount runs the workers against a node in this process: the counter
// ends at exactly the increments made, twice over (the second run starts
// from the first's value).
func TestCount(t *testing.T) {
	n, err := node.Start(node.Config{
		ID: "n1", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0",
		ElectionTimeout: 200 * time.Millisecond,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		RaftLogOutput:   io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	c, err := client.New([]string{n.HTTPAddr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for run, want := range []int{4 * 25, 2 * 4 * 25} {
		got, err := count(context.Background(), c, "counter", 4, 25)
		if err != nil || got != want {
			t.Fatalf("run %d: %d, %v; want %d", run+1, got, err, want)
		}
	}
}

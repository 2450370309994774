// Command bloomkv-node runs one node of a replicated bloomkv cluster:
// bloomkv under hashicorp/raft (package raftstore), with the HTTP API of
// package node on one address and raft's TCP transport on another.
//
// Three nodes on one machine, each a cluster member from the start:
//
//	peers=n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003
//	for i in 1 2 3; do
//	  bloomkv-node -id n$i -dir data/n$i -http 127.0.0.1:800$i -raft 127.0.0.1:700$i -bootstrap $peers &
//	done
//
// A fourth joins a running cluster through any of its nodes:
//
//	bloomkv-node -id n4 -dir data/n4 -http 127.0.0.1:8004 -raft 127.0.0.1:7004 -join 127.0.0.1:8001
//
// Without -bootstrap or -join, a node with no state starts a cluster of its
// own. SIGTERM or SIGINT shuts it down gracefully (see node.Node.Close).
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/bloomkv/bloomkv/raftstore/node"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("bloomkv-node", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg node.Config
	var bootstrap, join string
	fs.StringVar(&cfg.ID, "id", "", "the node's raft server ID (required)")
	fs.StringVar(&cfg.Dir, "dir", "", "the node's data directory (required)")
	fs.StringVar(&cfg.HTTPAddr, "http", "127.0.0.1:8001", "the HTTP API's listen address")
	fs.StringVar(&cfg.RaftAddr, "raft", "127.0.0.1:7001", "raft's TCP transport's listen address")
	fs.StringVar(&cfg.HTTPAdvertise, "http-advertise", "", "the HTTP address others reach this node at (default: -http)")
	fs.StringVar(&cfg.RaftAdvertise, "raft-advertise", "", "the raft address others reach this node at (default: -raft)")
	fs.StringVar(&bootstrap, "bootstrap", "", "a new cluster's servers, `id=raftaddr,...` (the same on each), used when the node has no state")
	fs.StringVar(&join, "join", "", "HTTP addresses of a running cluster's nodes, `addr,...`, to join when the node has no state")
	fs.DurationVar(&cfg.ElectionTimeout, "election-timeout", time.Second, "raft's heartbeat and election timeout")
	fs.Uint64Var(&cfg.SnapshotThreshold, "snapshot-threshold", 8192, "log entries between snapshots")
	fs.Int64Var(&cfg.MaxBodySize, "max-body", 4<<20, "the largest request body, in bytes")
	quiet := fs.Bool("quiet", false, "log the node's warnings and errors only (raft logs only those anyway)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bloomkv-node: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if bootstrap != "" {
		cfg.Bootstrap = map[string]string{}
		for _, kv := range strings.Split(bootstrap, ",") {
			id, addr, ok := strings.Cut(kv, "=")
			if !ok || id == "" || addr == "" {
				fmt.Fprintf(stderr, "bloomkv-node: -bootstrap: %q is not id=raftaddr\n", kv)
				return 2
			}
			cfg.Bootstrap[id] = addr
		}
		if _, ok := cfg.Bootstrap[cfg.ID]; !ok && cfg.ID != "" {
			fmt.Fprintf(stderr, "bloomkv-node: -bootstrap does not list this node's -id %q\n", cfg.ID)
			return 2
		}
	}
	if join != "" {
		cfg.Join = strings.Split(join, ",")
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.RaftLogOutput = stderr
	n, err := node.Start(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "bloomkv-node: %v\n", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		cfg.Logger.Info("shutting down", "signal", s.String())
	case err := <-n.Err():
		cfg.Logger.Error("HTTP server stopped", "err", err)
	}
	if err := n.Close(); err != nil {
		fmt.Fprintf(stderr, "bloomkv-node: shutdown: %v\n", err)
		return 1
	}
	return 0
}

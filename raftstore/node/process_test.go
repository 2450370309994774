//go:build linux

package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/raftstore/client"
	"github.com/bloomkv/bloomkv/raftstore/internal/proctest"
)

// childEnv, when set to a childConfig in JSON, makes the test binary run as
// that node instead of running the tests.
const childEnv = "BLOOMKV_NODE_CHILD"

// childConfig is what a node process of the tests is started with.
type childConfig struct {
	ID, Dir, HTTPAddr, RaftAddr string
	Bootstrap                   map[string]string
	// Via maps another node's raft address to the proxy this node dials it
	// through.
	Via         map[string]string
	UnsafeReads bool
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(runChild(cfg))
	}
	os.Exit(m.Run())
}

// runChild runs one node until SIGTERM or until its stdin closes; it says
// "ready" on stdout once it serves.
func runChild(js string) int {
	var cc childConfig
	if err := json.Unmarshal([]byte(js), &cc); err != nil {
		fmt.Println("fatal", err)
		return 2
	}
	unsafeLocalReads = cc.UnsafeReads
	n, err := Start(Config{
		ID: cc.ID, Dir: cc.Dir, HTTPAddr: cc.HTTPAddr, RaftAddr: cc.RaftAddr, Bootstrap: cc.Bootstrap,
		ElectionTimeout:   300 * time.Millisecond,
		SnapshotThreshold: 64,
		ApplyTimeout:      2 * time.Second,
		Dial: func(addr string, timeout time.Duration) (net.Conn, error) {
			if via, ok := cc.Via[addr]; ok {
				addr = via
			}
			return net.DialTimeout("tcp", addr, timeout)
		},
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		RaftLogOutput: io.Discard,
	})
	if err != nil {
		fmt.Println("fatal", err)
		return 2
	}
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop <- syscall.SIGTERM
	}()
	<-stop
	if err := n.Close(); err != nil {
		fmt.Println("fatal", err)
		return 1
	}
	return 0
}

// procNode is a node process of a test cluster.
type procNode struct {
	cfg childConfig
	cmd *exec.Cmd
	in  io.WriteCloser
}

// procCluster is three node processes on loopback, each raft link (one per
// ordered pair of nodes) through a proxy of its own.
type procCluster struct {
	t       *testing.T
	nodes   []*procNode
	proxies map[[2]int]*proxy // [from, to]
}

func startProcCluster(t *testing.T, unsafeReads bool) *procCluster {
	c := &procCluster{t: t, proxies: map[[2]int]*proxy{}}
	boot := map[string]string{}
	for i := range 3 {
		cfg := childConfig{ID: fmt.Sprintf("n%d", i), Dir: t.TempDir(), HTTPAddr: proctest.FreeAddr(t), RaftAddr: proctest.FreeAddr(t),
			Bootstrap: boot, Via: map[string]string{}, UnsafeReads: unsafeReads}
		boot[cfg.ID] = cfg.RaftAddr
		c.nodes = append(c.nodes, &procNode{cfg: cfg})
	}
	for i, a := range c.nodes {
		for j, b := range c.nodes {
			if i != j {
				p := newProxy(t, b.cfg.RaftAddr)
				c.proxies[[2]int{i, j}] = p
				a.cfg.Via[b.cfg.RaftAddr] = p.addr()
			}
		}
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.kill(i)
		}
	})
	for i := range c.nodes {
		c.start(i)
	}
	return c
}

func (c *procCluster) httpAddrs() []string {
	var a []string
	for _, n := range c.nodes {
		a = append(a, n.cfg.HTTPAddr)
	}
	return a
}

// start starts node i's process and waits until it serves.
func (c *procCluster) start(i int) {
	t := c.t
	n := c.nodes[i]
	js, err := json.Marshal(n.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd, in, out, err := proctest.Start(childEnv + "=" + string(js))
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("node %s did not start: %q %v", n.cfg.ID, line, err)
	}
	n.cmd, n.in = cmd, in
}

// kill SIGKILLs node i and waits for it.
func (c *procCluster) kill(i int) {
	n := c.nodes[i]
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
	n.cmd = nil
}

// isolate cuts node i's raft links to and from every other node, or
// restores them.
func (c *procCluster) isolate(i int, cut bool) {
	for k, p := range c.proxies {
		if k[0] == i || k[1] == i {
			p.setBlocked(cut)
		}
	}
}

// leader returns the index of the node that says it leads and its term,
// waiting for an election, or -1 if none is elected in time.
func (c *procCluster) leader(cl *client.Client, timeout time.Duration) (int, uint64) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := cl.Status(ctx, n.cfg.HTTPAddr)
			cancel()
			if err == nil && st.State == "Leader" {
				return i, st.Term
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1, 0
}

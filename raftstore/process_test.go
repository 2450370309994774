//go:build linux

package raftstore

// The cluster of TestRaftCluster with each node a process of its own (this
// test binary, re-executed by TestMain), talking over loopback TCP, killed
// with SIGKILL at random moments — the leader mostly, in the middle of the
// client's writes — and restarted on its directory; then all three at once.
// Every write the leader acknowledged must be in every node's state at the
// end, and the states equal.
//
// Long form (minutes of leader kills), from the raftstore module's
// directory, as make raft-reliability runs it:
//
//	go test -count=1 -run TestRaftProcessKills -raft.kills=300 .

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv/raftstore/internal/proctest"
)

var (
	raftKills = flag.Int("raft.kills", 4, "SIGKILLs of a node TestRaftProcessKills runs")
	raftSeed  = flag.Uint64("raft.seed", 1, "seed of TestRaftProcessKills's choices of victim and delay")
)

// nodeEnv, when set to "INDEX,DIR,ADDR0,ADDR1,ADDR2", makes the test binary
// run as that node of the cluster instead of running the tests.
const nodeEnv = "BLOOMKV_RAFT_NODE"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(nodeEnv); cfg != "" {
		os.Exit(runNode(cfg))
	}
	os.Exit(m.Run())
}

// runNode runs one node until its stdin closes (or it is killed), answering
// one request line on stdin with one line on stdout:
//
//	put SEQ KEY VALUE | del SEQ KEY   →  ack SEQ | notleader SEQ | err SEQ MESSAGE
//	status                            →  status STATE APPLIED
//	barrier                           →  barrier APPLIED | err barrier MESSAGE
//	dump                              →  kv KEY VALUE ... end
//
// APPLIED is the FSM's AppliedIndex: the last entry its state holds. raft's
// own AppliedIndex is the last entry sent to the FSM's apply channel, which
// a follower's FSM may still be applying when a dump reads its state.
func runNode(cfg string) int {
	fail := func(err error) int { fmt.Printf("fatal %v\n", err); return 2 }
	parts := strings.Split(cfg, ",")
	if len(parts) != 5 {
		return fail(fmt.Errorf("bad %s %q", nodeEnv, cfg))
	}
	index, _ := strconv.Atoi(parts[0])
	dir, addrs := parts[1], parts[2:]
	id := raft.ServerID("node" + parts[0])
	store, err := Open(filepath.Join(dir, "raft"), nil)
	if err != nil {
		return fail(err)
	}
	fsm, err := OpenFSM(filepath.Join(dir, "state"), nil)
	if err != nil {
		return fail(err)
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		return fail(err)
	}
	tcpAddr, err := net.ResolveTCPAddr("tcp", addrs[index])
	if err != nil {
		return fail(err)
	}
	trans, err := raft.NewTCPTransport(addrs[index], tcpAddr, 3, 2*time.Second, io.Discard)
	if err != nil {
		return fail(err)
	}
	conf := testConfig(id)
	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return fail(err)
	}
	r, err := raft.NewRaft(conf, fsm, store, store, snaps, trans)
	if err != nil {
		return fail(err)
	}
	if !existing && index == 0 {
		var servers []raft.Server
		for i, a := range addrs {
			servers = append(servers, raft.Server{ID: raft.ServerID(fmt.Sprintf("node%d", i)), Address: raft.ServerAddress(a)})
		}
		if err := r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
			return fail(err)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	reply := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		_ = out.Flush()
	}
	reply("ready")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) >= 3 && (f[0] == "put" && len(f) == 4 || f[0] == "del"):
			cmd := AppendDelete(nil, []byte(f[2]))
			if f[0] == "put" {
				cmd = AppendSet(nil, []byte(f[2]), []byte(f[3]))
			}
			if r.State() != raft.Leader {
				reply("notleader %s", f[1])
				continue
			}
			fut := r.Apply(cmd, 5*time.Second)
			switch err := fut.Error(); {
			case err == nil && fut.Response() == nil:
				reply("ack %s", f[1])
			case errors.Is(err, raft.ErrNotLeader):
				reply("notleader %s", f[1])
			case err == nil:
				reply("err %s response %v", f[1], fut.Response())
			default:
				reply("err %s %v", f[1], err)
			}
		case len(f) == 1 && f[0] == "status":
			reply("status %s %d", r.State(), fsm.AppliedIndex())
		case len(f) == 1 && f[0] == "barrier":
			if err := r.Barrier(5 * time.Second).Error(); err != nil {
				reply("err barrier %v", err)
			} else {
				// The barrier has gone through the leader's FSM, so its
				// state holds every command before it, up to the FSM's
				// AppliedIndex (a barrier or a no-op entry is not sent to
				// the FSM, so it may be below raft's).
				reply("barrier %d", fsm.AppliedIndex())
			}
		case len(f) == 1 && f[0] == "dump":
			_ = fsm.Scan(nil, nil, func(k, v []byte) error {
				fmt.Fprintf(out, "kv %s %s\n", k, v)
				return nil
			})
			reply("end")
		default:
			reply("err bad request %q", in.Text())
		}
	}
	_ = r.Shutdown().Error()
	_ = fsm.Close()
	_ = store.Close()
	return 0
}

// procNode is the parent's handle on one node process.
type procNode struct {
	index int
	dir   string
	addrs []string

	reqMu sync.Mutex // held for one request, so that answers match requests
	mu    sync.Mutex // guards the fields below, never held for long
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // stdout, closed when the process's stdout ends
}

var errNodeDown = errors.New("node down")

func (n *procNode) start(t *testing.T) {
	t.Helper()
	n.reqMu.Lock()
	defer n.reqMu.Unlock()
	cmd, stdin, stdout, err := proctest.Start(fmt.Sprintf("%s=%d,%s,%s", nodeEnv, n.index, n.dir, strings.Join(n.addrs, ",")))
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	n.mu.Lock()
	n.cmd, n.stdin, n.lines = cmd, stdin, lines
	n.mu.Unlock()
	select {
	case l, ok := <-lines:
		if !ok || l != "ready" {
			t.Fatalf("node%d did not start: %q", n.index, l)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("node%d did not start", n.index)
	}
}

// kill SIGKILLs the node and waits for it, whether or not a request is in
// flight (which then fails with errNodeDown).
func (n *procNode) kill() {
	n.mu.Lock()
	cmd := n.cmd
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// request sends one line and returns the response's lines (up to "end" for
// dump), or errNodeDown.
func (n *procNode) request(line string) ([]string, error) {
	n.reqMu.Lock()
	defer n.reqMu.Unlock()
	n.mu.Lock()
	cmd, stdin, lines := n.cmd, n.stdin, n.lines
	n.mu.Unlock()
	if cmd == nil {
		return nil, errNodeDown
	}
	if _, err := io.WriteString(stdin, line+"\n"); err != nil {
		return nil, errNodeDown
	}
	var resp []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return nil, errNodeDown
			}
			if strings.HasPrefix(l, "fatal ") {
				return nil, errors.New(l)
			}
			resp = append(resp, l)
			if line != "dump" || l == "end" {
				return resp, nil
			}
		case <-timeout:
			return nil, fmt.Errorf("node%d: no answer to %q", n.index, line)
		}
	}
}

type procCluster struct {
	t     *testing.T
	nodes []*procNode
}

// leader returns the node that says it leads, waiting for an election.
func (c *procCluster) leader() *procNode {
	c.t.Helper()
	var l *procNode
	if !waitFor(30*time.Second, func() bool {
		for _, n := range c.nodes {
			if resp, err := n.request("status"); err == nil && strings.HasPrefix(resp[0], "status Leader ") {
				l = n
				return true
			}
		}
		return false
	}) {
		c.t.Fatal("no leader elected")
	}
	return l
}

// write sends key=value ("" deletes) to the leader until it is acknowledged
// or its outcome is unknown, and records that in the model.
func (c *procCluster) write(m kvModel, seq int, key, value string) {
	c.t.Helper()
	req := fmt.Sprintf("put %d %s %s", seq, key, value)
	if value == "" {
		req = fmt.Sprintf("del %d %s", seq, key)
	}
	for try := 0; try < 50; try++ {
		resp, err := c.leader().request(req)
		switch {
		case err == nil && resp[0] == fmt.Sprintf("ack %d", seq):
			m.acked(key, value)
			return
		case err == nil && resp[0] == fmt.Sprintf("notleader %d", seq):
			time.Sleep(20 * time.Millisecond) // nothing was appended: try again
			continue
		case err == nil && strings.HasPrefix(resp[0], fmt.Sprintf("err %d ", seq)), errors.Is(err, errNodeDown):
			m.unknown(key, value) // a lost leadership, a timeout, a killed leader
			return
		default:
			c.t.Fatalf("write %d: %v %v", seq, resp, err)
		}
	}
	c.t.Fatalf("write %d: no leader would take it", seq)
}

// converge waits until every node has applied what the leader has, and
// checks that their states are equal and agree with the model.
func (c *procCluster) converge(m kvModel) {
	c.t.Helper()
	var want uint64
	if !waitFor(30*time.Second, func() bool {
		resp, err := c.leader().request("barrier")
		if err == nil && strings.HasPrefix(resp[0], "barrier ") {
			want, err = strconv.ParseUint(strings.TrimPrefix(resp[0], "barrier "), 10, 64)
			return err == nil
		}
		return false
	}) {
		c.t.Fatal("no barrier went through")
	}
	var states []map[string]string
	for _, n := range c.nodes {
		if !waitFor(30*time.Second, func() bool {
			resp, err := n.request("status")
			if err != nil {
				return false
			}
			f := strings.Fields(resp[0])
			applied, err := strconv.ParseUint(f[len(f)-1], 10, 64)
			return err == nil && applied >= want
		}) {
			c.t.Fatalf("node%d did not apply up to %d", n.index, want)
		}
		resp, err := n.request("dump")
		if err != nil {
			c.t.Fatal(err)
		}
		state := map[string]string{}
		for _, l := range resp[:len(resp)-1] {
			f := strings.Fields(l)
			if len(f) != 3 || f[0] != "kv" {
				c.t.Fatalf("node%d: bad dump line %q", n.index, l)
			}
			state[f[1]] = f[2]
		}
		if err := m.check(state); err != nil {
			c.t.Fatalf("node%d: %v", n.index, err)
		}
		states = append(states, state)
	}
	for i := range states[1:] {
		if !maps.Equal(states[i+1], states[0]) {
			c.t.Fatalf("node%d's state differs from node0's", i+1)
		}
	}
}

func TestRaftProcessKills(t *testing.T) {
	seed := *raftSeed
	t.Logf("seed %d (-raft.seed=%d reproduces the choices, not the timing), %d kills", seed, seed, *raftKills)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	c := &procCluster{t: t}
	addrs := []string{proctest.FreeAddr(t), proctest.FreeAddr(t), proctest.FreeAddr(t)}
	for i := range 3 {
		c.nodes = append(c.nodes, &procNode{index: i, dir: t.TempDir(), addrs: addrs})
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.kill()
		}
	})
	for _, n := range c.nodes {
		n.start(t)
	}
	m := kvModel{}
	seq := 0
	writes := func(n int) {
		for range n {
			seq++
			key, value := fmt.Sprintf("k%03d", rng.IntN(100)), fmt.Sprintf("v%d", seq)
			if rng.IntN(7) == 0 {
				value = ""
			}
			c.write(m, seq, key, value)
		}
	}
	writes(30)
	start := time.Now()
	for kill := range *raftKills {
		// The leader mostly, a follower sometimes, killed after a random
		// delay while the writes go on.
		victim := c.leader()
		if rng.IntN(4) == 0 {
			victim = c.nodes[(victim.index+1+rng.IntN(2))%3]
		}
		delay := time.Duration(rng.IntN(300)) * time.Millisecond
		done := make(chan struct{})
		go func() {
			time.Sleep(delay)
			victim.kill()
			close(done)
		}()
		writes(20 + rng.IntN(30))
		<-done
		victim.start(t)
		if kill%5 == 4 {
			c.converge(m)
		}
	}
	c.converge(m)
	// All three at once: only what is on disk is left.
	for _, n := range c.nodes {
		n.kill()
	}
	for _, n := range c.nodes {
		n.start(t)
	}
	writes(10)
	c.converge(m)
	t.Logf("%d writes (%d of unknown outcome), %d kills in %v", seq, unknownWrites.Load(), *raftKills, time.Since(start).Round(time.Millisecond))
}

package raftstore

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// testConfig is raft's configuration for the cluster tests: short timeouts
// (but not so short that a loaded 2-core machine under -race keeps
// re-electing), and snapshots every few dozen entries, keeping few, so that
// a lagging follower must catch up from a snapshot.
func testConfig(id raft.ServerID) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = id
	c.HeartbeatTimeout = 200 * time.Millisecond
	c.ElectionTimeout = 200 * time.Millisecond
	c.LeaderLeaseTimeout = 100 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.SnapshotThreshold = 32
	c.SnapshotInterval = 50 * time.Millisecond
	c.TrailingLogs = 8
	c.LogOutput = io.Discard
	return c
}

// memNode is one node of the in-process cluster: raft on our Store and FSM
// in its directory, a file snapshot store, and the in-memory transport.
type memNode struct {
	id    raft.ServerID
	dir   string
	store *Store
	fsm   *FSM
	trans *raft.InmemTransport
	r     *raft.Raft
}

type memCluster struct {
	t     *testing.T
	nodes []*memNode
}

func (c *memCluster) start(n *memNode) {
	t := c.t
	t.Helper()
	var err error
	if n.store, err = Open(filepath.Join(n.dir, "raft"), nil); err != nil {
		t.Fatal(err)
	}
	if n.fsm, err = OpenFSM(filepath.Join(n.dir, "state"), nil); err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStore(n.dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, n.trans = raft.NewInmemTransport(raft.ServerAddress(n.id))
	if n.r, err = raft.NewRaft(testConfig(n.id), n.fsm, n.store, n.store, snaps, n.trans); err != nil {
		t.Fatal(err)
	}
	for _, o := range c.nodes {
		if o != n && o.r != nil {
			c.connect(n, o)
		}
	}
}

func (c *memCluster) connect(a, b *memNode) {
	a.trans.Connect(b.trans.LocalAddr(), b.trans)
	b.trans.Connect(a.trans.LocalAddr(), a.trans)
}

// disconnect cuts n off from every other node, both ways.
func (c *memCluster) disconnect(n *memNode) {
	n.trans.DisconnectAll()
	for _, o := range c.nodes {
		if o != n && o.r != nil {
			o.trans.Disconnect(n.trans.LocalAddr())
		}
	}
}

func (c *memCluster) stop(n *memNode) {
	c.t.Helper()
	if err := n.r.Shutdown().Error(); err != nil {
		c.t.Fatal(err)
	}
	n.r = nil
	if err := n.fsm.Close(); err != nil {
		c.t.Fatal(err)
	}
	if err := n.store.Close(); err != nil {
		c.t.Fatal(err)
	}
}

// leader waits for one node to be the leader and returns it.
func (c *memCluster) leader() *memNode {
	c.t.Helper()
	var l *memNode
	if !waitFor(20*time.Second, func() bool {
		for _, n := range c.nodes {
			if n.r != nil && n.r.State() == raft.Leader {
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

// write applies key=value ("" deletes) through the leader, retrying on
// another leader when the one it tried was not (so nothing was appended),
// and records in the model what is known of it.
func (c *memCluster) write(m kvModel, key, value string) {
	c.t.Helper()
	cmd := AppendSet(nil, []byte(key), []byte(value))
	if value == "" {
		cmd = AppendDelete(nil, []byte(key))
	}
	for try := 0; ; try++ {
		f := c.leader().r.Apply(cmd, 5*time.Second)
		err := f.Error()
		if err == nil {
			if resp := f.Response(); resp != nil {
				c.t.Fatalf("write %s: response %v", key, resp)
			}
			m.acked(key, value)
			return
		}
		if errors.Is(err, raft.ErrNotLeader) && try < 20 {
			continue
		}
		c.t.Logf("write %s=%q: %v (outcome unknown)", key, value, err)
		m.unknown(key, value)
		return
	}
}

// converge waits until every running node has applied all the leader has,
// and checks that their states are equal and agree with the model.
func (c *memCluster) converge(m kvModel) {
	c.t.Helper()
	l := c.leader()
	if err := l.r.Barrier(10 * time.Second).Error(); err != nil {
		c.t.Fatal(err)
	}
	want := l.r.AppliedIndex()
	for _, n := range c.nodes {
		if !waitFor(20*time.Second, func() bool { return n.r.AppliedIndex() >= want }) {
			c.t.Fatalf("node %s applied %d, the leader %d", n.id, n.r.AppliedIndex(), want)
		}
	}
	leaderState := fsmState(c.t, l.fsm)
	if err := m.check(leaderState); err != nil {
		c.t.Fatalf("leader %s: %v", l.id, err)
	}
	// raft's AppliedIndex is the last entry sent to the FSM's apply
	// channel, not the last the FSM applied: a follower's FSM may still be
	// applying the last batch, so its state is waited for, not read once.
	for _, n := range c.nodes {
		var got map[string]string
		if !waitFor(20*time.Second, func() bool { got = fsmState(c.t, n.fsm); return maps.Equal(got, leaderState) }) {
			c.t.Fatalf("node %s's state differs from the leader's: %v vs %v", n.id, clip(got), clip(leaderState))
		}
	}
}

// TestRaftCluster runs three raft nodes in one process on the Store and the
// FSM: an election, writes through the leader, the leader shut down and
// restarted on its directory, a follower cut off while the others move on
// and compact their logs so that it catches up from a snapshot; at the end
// every node's state is the same and holds every acknowledged write.
func TestRaftCluster(t *testing.T) {
	c := &memCluster{t: t}
	var servers []raft.Server
	for i := range 3 {
		id := raft.ServerID(fmt.Sprintf("node%d", i))
		c.nodes = append(c.nodes, &memNode{id: id, dir: t.TempDir()})
		servers = append(servers, raft.Server{ID: id, Address: raft.ServerAddress(id)})
	}
	for _, n := range c.nodes {
		c.start(n)
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if n.r != nil {
				c.stop(n)
			}
		}
	})
	if err := c.nodes[0].r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	m := kvModel{}
	seq := 0
	writes := func(n int) {
		for range n {
			seq++
			key := fmt.Sprintf("k%03d", seq%150) // overwrites, so snapshots differ from logs
			value := fmt.Sprintf("v%d", seq)
			if seq%7 == 0 {
				value = ""
			}
			c.write(m, key, value)
		}
	}
	writes(100)
	c.converge(m)

	// The leader shut down: the others elect one and go on; it comes back on
	// its directory (its log, its stable term and vote, its state).
	old := c.leader()
	c.stop(old)
	writes(60)
	c.start(old)
	writes(20)
	c.converge(m)

	// A follower cut off while the leader moves far past it and snapshots,
	// so its log no longer has the entries the follower lacks.
	var lag *memNode
	for _, n := range c.nodes {
		if n != c.leader() {
			lag = n
			break
		}
	}
	lagSeq := lag.fsm.stateSeq()
	c.disconnect(lag)
	writes(200)
	l := c.leader()
	if err := l.r.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		t.Fatal(err)
	}
	if first, _ := l.store.FirstIndex(); first <= lag.r.AppliedIndex() {
		t.Fatalf("leader's log starts at %d, the follower has applied %d: it would catch up from the log", first, lag.r.AppliedIndex())
	}
	for _, n := range c.nodes {
		if n != lag {
			c.connect(lag, n)
		}
	}
	writes(10)
	c.converge(m)
	if lag.fsm.stateSeq() == lagSeq {
		t.Fatalf("the lagging follower %s caught up without restoring a snapshot", lag.id)
	}
	t.Logf("%d writes; leader's log %d..%d", seq, must(l.store.FirstIndex()), must(l.store.LastIndex()))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv/raftstore"
)

// Config configures a Node. ID, Dir, HTTPAddr and RaftAddr are required;
// the zero values of the rest are the defaults (withDefaults).
type Config struct {
	// ID is the node's raft server ID, unique in its cluster.
	ID string
	// Dir holds the node's data: raft/ (the log, a raftstore.Store),
	// state/ (the replicated state, a raftstore.FSM) and snapshots/.
	Dir string
	// HTTPAddr and RaftAddr are the addresses the API and raft's TCP
	// transport listen on (port 0 picks a free port).
	HTTPAddr, RaftAddr string
	// HTTPAdvertise and RaftAdvertise are the addresses other nodes and
	// clients reach them at; empty means the listeners' addresses.
	HTTPAdvertise, RaftAdvertise string
	// Bootstrap lists the servers, ID to raft address, of a new cluster
	// this node starts with (every one of them given the same list). Empty,
	// with Join empty too, a node with no raft state bootstraps a cluster
	// of itself alone. A node with raft state ignores both.
	Bootstrap map[string]string
	// Join lists HTTP addresses of nodes of a running cluster, tried in
	// order until one adds this node (POST /join), when it has no raft
	// state.
	Join []string
	// ElectionTimeout is raft's heartbeat and election timeout (default 1s;
	// the leader lease is half of it).
	ElectionTimeout time.Duration
	// SnapshotThreshold is the number of log entries after which raft
	// snapshots the state (DB.Checkpoint) and compacts its log (default
	// 8192).
	SnapshotThreshold uint64
	// ApplyTimeout bounds a write's wait to enter raft's queue (default 10s).
	ApplyTimeout time.Duration
	// MaxBodySize bounds a request's body (default 4 MiB).
	MaxBodySize int64
	// LogStore and StableStore replace the raftstore.Store in Dir/raft as
	// raft's log and stable store (another store to compare against);
	// Close leaves them open.
	LogStore    raft.LogStore
	StableStore raft.StableStore
	// Dial dials another node's raft address (its RaftAdvertise); nil is
	// plain TCP. A test puts its proxies in the way through it.
	Dial func(addr string, timeout time.Duration) (net.Conn, error)
	// Logger receives the node's and raft's messages (default: text to
	// stderr at level Warn for raft, Info for the node).
	Logger *slog.Logger
	// RaftLogOutput receives raft's log (default os.Stderr); raft logs at
	// level warn and above.
	RaftLogOutput io.Writer
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.ID == "":
		return c, errors.New("node: Config.ID is empty")
	case c.Dir == "":
		return c, errors.New("node: Config.Dir is empty")
	case c.HTTPAddr == "":
		return c, errors.New("node: Config.HTTPAddr is empty")
	case c.RaftAddr == "":
		return c, errors.New("node: Config.RaftAddr is empty")
	case (c.LogStore == nil) != (c.StableStore == nil):
		return c, errors.New("node: Config.LogStore and Config.StableStore are set together")
	case c.Bootstrap != nil && len(c.Join) > 0:
		return c, errors.New("node: Config.Bootstrap and Config.Join exclude each other")
	}
	if c.ElectionTimeout == 0 {
		c.ElectionTimeout = time.Second
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.ApplyTimeout == 0 {
		c.ApplyTimeout = 10 * time.Second
	}
	if c.MaxBodySize == 0 {
		c.MaxBodySize = 4 << 20
	}
	if c.Dial == nil {
		c.Dial = func(addr string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout("tcp", addr, timeout)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if c.RaftLogOutput == nil {
		c.RaftLogOutput = os.Stderr
	}
	return c, nil
}

// Node is one bloomkv server of a raft cluster: raft on a raftstore.Store
// and a raftstore.FSM, raft's TCP transport, and the HTTP API (see the
// package documentation).
type Node struct {
	cfg   Config
	r     *raft.Raft
	fsm   *raftstore.FSM
	store *raftstore.Store // nil when Config.LogStore is set
	trans *raft.NetworkTransport
	mux   *muxLayer
	srv   *http.Server
	httpL net.Listener
	fwd   *http.Client
	log   *slog.Logger

	// readyTerm is the last term in which this node, as leader, committed
	// an entry of its own (a barrier): only then is its commit index at
	// least that of every entry committed before (see readIndex).
	readyTerm atomic.Uint64

	mu        sync.Mutex
	httpAddrs map[string]string // raft address → HTTP address, learnt via mux

	serveErr  chan error
	closeOnce sync.Once
	closeErr  error
}

// unsafeLocalReads, set only by the tests, makes every node answer reads
// from its local state as if they were linearizable: the injected bug the
// linearizability checker must catch.
var unsafeLocalReads bool

// Start opens the node's stores, starts raft and the HTTP API, and
// bootstraps or joins a cluster as the Config says. It returns once both
// listeners are up; joining goes on in the background.
func Start(cfg Config) (*Node, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: cfg.Logger.With("node", cfg.ID), httpAddrs: map[string]string{}, serveErr: make(chan error, 1)}
	var raftL net.Listener
	fail := func(err error) (*Node, error) {
		if n.r != nil {
			_ = n.r.Shutdown().Error()
		}
		if n.trans != nil {
			_ = n.trans.Close()
		} else if raftL != nil {
			_ = raftL.Close()
		}
		_ = n.closeStores()
		return nil, err
	}
	logs, stable := cfg.LogStore, cfg.StableStore
	if logs == nil {
		if n.store, err = raftstore.Open(filepath.Join(cfg.Dir, "raft"), nil); err != nil {
			return fail(err)
		}
		logs, stable = n.store, n.store
	}
	if n.fsm, err = raftstore.OpenFSM(filepath.Join(cfg.Dir, "state"), nil); err != nil {
		return fail(err)
	}
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(cfg.Dir, "snapshots"), 2, cfg.RaftLogOutput)
	if err != nil {
		return fail(err)
	}
	if n.httpL, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return fail(err)
	}
	httpAdv := cfg.HTTPAdvertise
	if httpAdv == "" {
		httpAdv = n.httpL.Addr().String()
	}
	n.cfg.HTTPAdvertise = httpAdv
	if raftL, err = net.Listen("tcp", cfg.RaftAddr); err != nil {
		return fail(err)
	}
	raftAdv := raftL.Addr()
	if cfg.RaftAdvertise != "" {
		if raftAdv, err = net.ResolveTCPAddr("tcp", cfg.RaftAdvertise); err != nil {
			return fail(fmt.Errorf("node: RaftAdvertise: %w", err))
		}
	}
	n.cfg.RaftAdvertise = raftAdv.String()
	n.mux = newMuxLayer(raftL, raftAdv, httpAdv, cfg.Dial)
	n.trans = raft.NewNetworkTransport(n.mux, 3, 10*time.Second, cfg.RaftLogOutput)

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.HeartbeatTimeout = cfg.ElectionTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.ElectionTimeout / 2
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.TrailingLogs = max(cfg.SnapshotThreshold/4, 64)
	rc.LogOutput = cfg.RaftLogOutput
	rc.LogLevel = "warn"
	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return fail(err)
	}
	if !existing && len(cfg.Join) == 0 {
		// Before raft starts: once it runs, a node bootstrapped with the
		// same servers may reach it first, and a bootstrap then finds the
		// state it sent.
		servers := []raft.Server{{ID: rc.LocalID, Address: n.trans.LocalAddr()}}
		if cfg.Bootstrap != nil {
			servers = servers[:0]
			for id, addr := range cfg.Bootstrap {
				servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(addr)})
			}
		}
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, n.trans, raft.Configuration{Servers: servers}); err != nil {
			return fail(fmt.Errorf("node: bootstrap: %w", err))
		}
	}
	if n.r, err = raft.NewRaft(rc, n.fsm, logs, stable, snaps, n.trans); err != nil {
		return fail(err)
	}
	n.fwd = &http.Client{Timeout: 30 * time.Second}
	n.srv = &http.Server{Handler: n.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { n.serveErr <- n.srv.Serve(n.httpL) }()
	if !existing && len(cfg.Join) > 0 {
		go n.join()
	}
	n.log.Info("started", "http", httpAdv, "raft", raftAdv.String(), "existing_state", existing)
	return n, nil
}

// HTTPAddr returns the address the node's API is reached at.
func (n *Node) HTTPAddr() string { return n.cfg.HTTPAdvertise }

// RaftAddr returns the address the node's raft transport is reached at.
func (n *Node) RaftAddr() string { return n.cfg.RaftAdvertise }

// Raft returns the node's raft instance, for its state and statistics.
func (n *Node) Raft() *raft.Raft { return n.r }

// Err returns a channel that receives the HTTP server's error if it stops
// serving before Close.
func (n *Node) Err() <-chan error { return n.serveErr }

// join asks the nodes of Config.Join, in turn, to add this node, until one
// does or the node closes.
func (n *Node) join() {
	body := fmt.Sprintf(`{"id":%q,"raft_addr":%q}`, n.cfg.ID, n.cfg.RaftAdvertise)
	for attempt := 0; ; attempt++ {
		for _, addr := range n.cfg.Join {
			resp, err := n.fwd.Post("http://"+addr+"/join", "application/json", strings.NewReader(body))
			if err == nil {
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					n.log.Info("joined", "via", addr)
					return
				}
				err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
			}
			n.log.Warn("join failed, retrying", "via", addr, "err", err)
		}
		select {
		case <-n.mux.closed:
			return
		case <-time.After(time.Second):
		}
	}
}

// Close shuts the node down gracefully: the API stops taking requests and
// finishes those in flight, a leader hands its leadership to another voter
// (so that the cluster does not wait out an election timeout), raft stops,
// and the stores close.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := n.srv.Shutdown(ctx)
		if n.r.State() == raft.Leader && n.voters() > 1 {
			if terr := n.r.LeadershipTransfer().Error(); terr != nil {
				n.log.Warn("leadership transfer", "err", terr)
			}
		}
		err = errors.Join(err, n.r.Shutdown().Error(), n.trans.Close())
		n.closeErr = errors.Join(err, n.closeStores())
	})
	return n.closeErr
}

func (n *Node) closeStores() error {
	var err error
	if n.fsm != nil {
		err = n.fsm.Close()
	}
	if n.store != nil {
		err = errors.Join(err, n.store.Close())
	}
	if n.httpL != nil && n.srv == nil {
		err = errors.Join(err, n.httpL.Close())
	}
	return err
}

func (n *Node) voters() int {
	f := n.r.GetConfiguration()
	if f.Error() != nil {
		return 0
	}
	c := 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			c++
		}
	}
	return c
}

// leaderHTTP returns the HTTP address of the leader this node knows of, or
// "" if it knows none (or cannot reach it to ask).
func (n *Node) leaderHTTP() string {
	addr, id := n.r.LeaderWithID()
	if addr == "" {
		return ""
	}
	if string(id) == n.cfg.ID {
		return n.cfg.HTTPAdvertise
	}
	n.mu.Lock()
	h, ok := n.httpAddrs[string(addr)]
	n.mu.Unlock()
	if ok {
		return h
	}
	h, err := n.mux.askHTTPAddr(string(addr), 2*time.Second)
	if err != nil {
		n.log.Debug("asking the leader's HTTP address", "raft", addr, "err", err)
		return ""
	}
	n.mu.Lock()
	n.httpAddrs[string(addr)] = h
	n.mu.Unlock()
	return h
}

// errNotLeader is readIndex's error when this node does not lead.
var errNotLeader = errors.New("not the leader")

// readIndex makes a linearizable read of the local state safe: it returns
// once this node has confirmed, after the read began, that it leads, and
// its state holds every entry committed before then (the ReadIndex of the
// raft paper, §6.4). A leader's commit index covers every earlier commit
// only once it has committed an entry of its own term, which the empty
// command of the term's first read makes sure of.
//
// The FSM's applied index counts the entries raft gives it (commands and
// configurations), not raft's no-ops and barriers: if it has not reached
// the commit index after a short wait, an empty command, which responds
// only once applied after every entry before it, does the waiting instead.
func (n *Node) readIndex(ctx context.Context) error {
	if unsafeLocalReads {
		return nil
	}
	if n.r.State() != raft.Leader {
		return errNotLeader
	}
	term := n.r.CurrentTerm()
	if n.readyTerm.Load() != term {
		if err := n.r.Apply(nil, n.cfg.ApplyTimeout).Error(); err != nil {
			return err
		}
		n.readyTerm.Store(term)
	}
	index := n.r.CommitIndex()
	if err := n.r.VerifyLeader().Error(); err != nil {
		return err
	}
	for wait := 0; n.fsm.AppliedIndex() < index; wait++ {
		if wait == 100 {
			return n.r.Apply(nil, n.cfg.ApplyTimeout).Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Microsecond):
		}
	}
	return nil
}

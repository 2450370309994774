//go:build linux

package node

// The linearizability check: three node processes (this test binary,
// re-executed by TestMain) on loopback, each raft link through a proxy
// that can drop its traffic; concurrent clients doing puts, gets and
// compare-and-sets while a nemesis SIGKILLs and restarts nodes (the leader
// mostly) and cuts the leader off from the others; the history of every
// operation, with its call and return times, checked by porcupine against
// a register per key.
//
// Long form (minutes of faults), from the raftstore module's directory, as
// make raft-reliability runs it:
//
//	go test -count=1 -run TestLinearizable ./node -lin.duration=3m -lin.clients=8

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/bloomkv/bloomkv/raftstore/client"
)

var (
	linDuration = flag.Duration("lin.duration", 8*time.Second, "how long TestLinearizable's clients and faults run")
	linClients  = flag.Int("lin.clients", 4, "TestLinearizable's concurrent clients")
	linSeed     = flag.Uint64("lin.seed", 1, "seed of TestLinearizable's choices (not of its timing)")
)

// kvInput is an operation on one key: a get, a put of Value, or a cas of
// Expected ("" for absent) to Value. Values are never empty.
type kvInput struct {
	Op                   string
	Key, Value, Expected string
}

// kvOutput is what came back: a get's value ("" for absent), a cas's
// outcome; Unknown marks a write whose outcome the client could not learn.
type kvOutput struct {
	Value   string
	OK      bool
	Unknown bool
}

// kvModel is a register per key (partitioned by key), its state the
// value, "" for absent.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(kvInput).Key
			if byKey[k] == nil {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		var parts [][]porcupine.Operation
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(string), input.(kvInput), output.(kvOutput)
		switch in.Op {
		case "get":
			return out.Value == s, s
		case "put":
			return true, in.Value
		default: // cas
			holds := s == in.Expected
			if !out.Unknown && out.OK != holds {
				return false, s
			}
			if holds {
				return true, in.Value
			}
			return true, s
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		return fmt.Sprintf("%s(%s %q %q) -> %+v", in.Op, in.Key, in.Expected, in.Value, out)
	},
}

// history records operations with their call and return times.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation

	acked, unknown, failedReads int
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// do runs one operation through c and records it: a write of unknown
// outcome as one that may take effect at any time after its call (its
// return at the end of time), a read that failed not at all (it changed
// nothing).
func (h *history) do(c *client.Client, clientID int, in kvInput) kvOutput {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := h.now()
	var out kvOutput
	var err error
	switch in.Op {
	case "get":
		var v []byte
		v, err = c.Get(ctx, in.Key)
		if errors.Is(err, client.ErrNotFound) {
			err = nil
		}
		out.Value = string(v)
	case "put":
		err = c.Put(ctx, in.Key, []byte(in.Value))
	case "cas":
		var want []byte
		if in.Expected != "" {
			want = []byte(in.Expected)
		}
		out.OK, err = c.CAS(ctx, in.Key, want, []byte(in.Value))
	}
	ret := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil:
		h.acked++
	case in.Op == "get":
		h.failedReads++
		return out
	default:
		// Unknown, or failed with no node carrying it out (which a
		// forwarding node cannot always tell apart): either way it may
		// have been applied.
		h.unknown++
		out, ret = kvOutput{Unknown: true}, math.MaxInt64
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: clientID, Input: in, Call: call, Output: out, Return: ret})
	return out
}

// check runs porcupine on the history.
func (h *history) check(t *testing.T) porcupine.CheckResult {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	res, _ := porcupine.CheckOperationsVerbose(kvModel, h.ops, 2*time.Minute)
	return res
}

// runClient does random operations on keys among nkeys until stop closes.
func runClient(h *history, c *client.Client, id, nkeys int, seed uint64, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(seed, uint64(id)))
	last := map[string]string{} // the last value this client saw per key
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("k%d", rng.IntN(nkeys))
		value := fmt.Sprintf("c%d.%d", id, n)
		switch r := rng.IntN(10); {
		case r < 4:
			last[key] = h.do(c, id, kvInput{Op: "get", Key: key}).Value
		case r < 7:
			h.do(c, id, kvInput{Op: "put", Key: key, Value: value})
		default:
			h.do(c, id, kvInput{Op: "cas", Key: key, Expected: last[key], Value: value})
		}
	}
}

// TestLinearizable runs the clients and the faults for -lin.duration and
// checks the history. The clients share two keys each: enough that
// operations overlap on one key, few enough that porcupine, whose search
// grows with the writes of unknown outcome pending on a key, ends.
func TestLinearizable(t *testing.T) {
	c := startProcCluster(t, false)
	h := &history{start: time.Now()}
	admin, err := client.New(c.httpAddrs(), &client.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := c.leader(admin, 30*time.Second); l < 0 {
		t.Fatal("no leader elected")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for id := range *linClients {
		// Half the clients go to the leader; the others each to a node of
		// their own, which forwards (or, with the injected bug, answers
		// reads itself).
		addrs := c.httpAddrs()
		for range id % 3 {
			addrs = append(addrs[1:], addrs[0])
		}
		cl, err := client.New(addrs, &client.Options{Timeout: 5 * time.Second, NoRedirect: id%2 == 1})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); runClient(h, cl, id, 2**linClients, *linSeed, stop) }()
	}

	// The nemesis: kills and partitions in turn, the leader mostly, each
	// followed by a pause that lets the cluster recover.
	rng := rand.New(rand.NewPCG(*linSeed, 0xfa17))
	kills, partitions, leaderChanges := 0, 0, 0
	lastTerm := uint64(0)
	noteLeader := func() int {
		l, term := c.leader(admin, 30*time.Second)
		if l < 0 {
			t.Error("no leader elected within 30s")
			return 0
		}
		if lastTerm != 0 && term != lastTerm {
			leaderChanges++
		}
		lastTerm = term
		return l
	}
	deadline := time.Now().Add(*linDuration)
	for round := 0; time.Now().Before(deadline) && !t.Failed(); round++ {
		l := noteLeader()
		victim := l
		if rng.IntN(4) == 0 {
			victim = (l + 1 + rng.IntN(2)) % 3
		}
		pause := time.Duration(300+rng.IntN(1200)) * time.Millisecond
		if round%2 == 0 {
			c.kill(victim)
			kills++
			time.Sleep(pause)
			c.start(victim)
		} else {
			c.isolate(victim, true)
			partitions++
			time.Sleep(pause)
			c.isolate(victim, false)
		}
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
	}
	noteLeader()
	close(stop)
	wg.Wait()
	t.Logf("%d operations (%d acknowledged, %d writes of unknown outcome, %d failed reads left out), %d kills, %d partitions of the leader or a follower, %d leader changes seen",
		len(h.ops), h.acked, h.unknown, h.failedReads, kills, partitions, leaderChanges)
	if h.acked < 20 {
		t.Fatalf("only %d operations acknowledged: the history checks too little", h.acked)
	}
	if res := h.check(t); res != porcupine.Ok {
		t.Fatalf("porcupine: the history is %s", res)
	}
}

// TestLinearizableCatchesStaleReads runs one scenario twice: a follower
// cut off from raft, a write through the leader, then a read through the
// cut-off follower. The nodes as built pass porcupine's check (the
// follower forwards the read to the leader, or fails it once it has lost
// track of the leader); with unsafeLocalReads (the
// injected bug: every node answers reads from its own state as if
// linearizable) the follower returns the value before the write, and
// porcupine must call the history illegal.
func TestLinearizableCatchesStaleReads(t *testing.T) {
	for _, tc := range []struct {
		unsafe bool
		want   porcupine.CheckResult
	}{
		{false, porcupine.Ok},
		{true, porcupine.Illegal},
	} {
		t.Run(fmt.Sprintf("unsafeLocalReads=%v", tc.unsafe), func(t *testing.T) {
			c := startProcCluster(t, tc.unsafe)
			h := &history{start: time.Now()}
			all, err := client.New(c.httpAddrs(), &client.Options{Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			// An acknowledged write (one of unknown outcome, an election
			// coming in its way, stays in the history as it is).
			put := func(value string) {
				for try := 0; h.do(all, 0, kvInput{Op: "put", Key: "k", Value: fmt.Sprintf("%s%d", value, try)}).Unknown; try++ {
					if try == 10 {
						t.Fatalf("no put of %q acknowledged in 10 tries", value)
					}
				}
			}
			put("before")
			l, _ := c.leader(all, 30*time.Second)
			if l < 0 {
				t.Fatal("no leader elected")
			}
			follower := (l + 1) % 3
			// The follower has "before" once it answers it to a stale read.
			for deadline := time.Now().Add(30 * time.Second); ; {
				if time.Now().After(deadline) {
					t.Fatal("the follower did not apply the first put in 30s")
				}
				resp, err := http.Get("http://" + c.nodes[follower].cfg.HTTPAddr + "/kv/k?stale=true")
				if err != nil {
					t.Fatal(err)
				}
				v, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err == nil && strings.HasPrefix(string(v), "before") {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			c.isolate(follower, true)
			put("after")
			// A new client, which knows no leader yet, asks the follower.
			reader, err := client.New([]string{c.nodes[follower].cfg.HTTPAddr}, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := h.do(reader, 1, kvInput{Op: "get", Key: "k"})
			t.Logf("the read through the cut-off follower: %+v (%d failed)", out, h.failedReads)
			// The bug answers from the follower's state, always. Without
			// it the follower forwards the read to the leader while it
			// still knows it; once its election timeout passes it knows
			// none and the read fails, which changes nothing.
			if tc.unsafe && h.failedReads != 0 {
				t.Fatal("the read through the follower failed")
			}
			if res := h.check(t); res != tc.want {
				t.Fatalf("porcupine: %s, want %s", res, tc.want)
			}
		})
	}
}

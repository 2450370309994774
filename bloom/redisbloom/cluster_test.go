package redisbloom

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The filter on a real Redis Cluster: three masters, a ClusterClient, and
// the two events of a cluster's life that move a filter's keys under its
// clients — a slot migration and a master's restart.

// TestClusterThreeMasters runs the operations of the suite (exercise)
// through a ClusterClient on filters spread over three masters, and checks
// that each filter's keys live together on the master of their slot.
func TestClusterThreeMasters(t *testing.T) {
	c := sharedCluster(t)
	c.flushAll()
	rdb := c.Client()
	ctx := context.Background()
	// One filter on each master: names picked by their keys' slots.
	names := make([]string, 3)
	for i := 0; names[0] == "" || names[1] == "" || names[2] == ""; i++ {
		name := fmt.Sprintf("tenant-%d", i)
		meta, _ := Keys(name)
		slot, err := c.admins[0].ClusterKeySlot(ctx, meta).Result()
		if err != nil {
			t.Fatal(err)
		}
		if owner := c.owner(int(slot)); names[owner] == "" {
			names[owner] = name
		}
	}
	for owner, name := range names {
		exercise(t, rdb, name)
		mustCreate(t, rdb, name, 1000, 0.01)
		meta, bits := Keys(name)
		for j, admin := range c.admins {
			// A node that does not serve the slot answers MOVED, an error.
			n, err := admin.Exists(ctx, meta, bits).Result()
			switch {
			case j == owner && (err != nil || n != 2):
				t.Fatalf("filter %q: its master holds %d of its 2 keys (%v)", name, n, err)
			case j != owner && err == nil:
				t.Fatalf("filter %q: node %d answers for a slot it does not serve", name, j)
			}
		}
	}
}

// ackedItems is the model of the cluster tests: the items whose Add (or
// TestAndAdd) returned nil, which no later call may report absent.
type ackedItems struct {
	mu    sync.Mutex
	items [][]byte
}

func (a *ackedItems) add(items [][]byte) {
	a.mu.Lock()
	a.items = append(a.items, items...)
	a.mu.Unlock()
}

// sample returns up to n items acknowledged so far.
func (a *ackedItems) sample(rng *rand.Rand, n int) [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.items) == 0 {
		return nil
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = a.items[rng.IntN(len(a.items))]
	}
	return out
}

// callCounts are what the clients saw while the cluster changed.
type callCounts struct {
	mu          sync.Mutex
	ok, errs    int
	errExamples []string
}

func (c *callCounts) record(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.ok++
		return
	}
	c.errs++
	if len(c.errExamples) < 3 {
		c.errExamples = append(c.errExamples, err.Error())
	}
}

func (c *callCounts) get() (ok, errs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok, c.errs
}

// clusterClients runs clients on filter f until stop is closed: each adds
// new items of its own (Add or TestAndAdd, in batches) and queries items
// acknowledged so far. It fails the test the moment a call succeeds with
// "absent" for an acknowledged item, or returns answers with an error.
func clusterClients(t *testing.T, f *Filter, acked *ackedItems, counts *callCounts, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			ctx := context.Background()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g%2 == 0 || i%2 == 0 {
					batch := items(fmt.Sprintf("client%d", g), i*20, 20)
					var err error
					var got []bool
					if i%3 == 0 {
						got, err = f.TestAndAdd(ctx, batch...)
					} else {
						err = f.Add(ctx, batch...)
					}
					if err != nil && got != nil {
						t.Errorf("TestAndAdd returned %d answers with an error: %v", len(got), err)
					}
					counts.record(err)
					if err == nil {
						acked.add(batch)
					}
					continue
				}
				query := acked.sample(rng, 50)
				if query == nil {
					continue
				}
				got, err := f.MayContain(ctx, query...)
				counts.record(err)
				if err != nil && got != nil {
					t.Errorf("MayContain returned %d answers with an error: %v", len(got), err)
				}
				for j, ok := range got {
					if !ok {
						t.Errorf("MayContain(%q) = absent, but its Add was acknowledged", query[j])
						return
					}
				}
			}
		}()
	}
	return &wg
}

// checkAllAcked queries every acknowledged item, retrying calls that fail
// (the cluster settling), and fails the test on any "absent".
func checkAllAcked(t *testing.T, f *Filter, acked *ackedItems) {
	t.Helper()
	ctx := context.Background()
	acked.mu.Lock()
	all := append([][]byte(nil), acked.items...)
	acked.mu.Unlock()
	batches(all, 2000, func(batch [][]byte) {
		var got []bool
		var err error
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if got, err = f.MayContain(ctx, batch...); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatalf("MayContain still failing after the cluster settled: %v", err)
		}
		for j, ok := range got {
			if !ok {
				t.Fatalf("%q absent at the end, but its Add was acknowledged", batch[j])
			}
		}
	})
	t.Logf("%d acknowledged items all present", len(all))
}

// clusterClientOptions: redirections and retries enough to ride a
// migration, timeouts short enough that a dead master fails calls quickly.
func clusterClientOptions(o *redis.ClusterOptions) {
	o.MaxRedirects = 16
	o.DialerRetries = 1
	o.DialerRetryTimeout = time.Millisecond
	o.DialTimeout = 500 * time.Millisecond
	o.ReadTimeout = 2 * time.Second
	o.WriteTimeout = 2 * time.Second
}

// TestClusterSlotMigration moves the filter's hash slot to another master,
// one key at a time (so that for a while its meta key and its bits key are
// on different nodes), while clients add and query: every call either
// answers rightly or fails with an error, and no acknowledged item ever
// reads absent, during the move or after.
func TestClusterSlotMigration(t *testing.T) {
	c := startCluster(t, 3)
	rdb := c.Client(clusterClientOptions)
	ctx := context.Background()
	f := mustCreate(t, rdb, "migrating", 200_000, 0.01)
	meta, bits := Keys("migrating")
	slot, err := rdb.ClusterKeySlot(ctx, meta).Result()
	if err != nil {
		t.Fatal(err)
	}
	src := c.owner(int(slot))
	dst := (src + 1) % 3

	acked := &ackedItems{}
	var during callCounts
	warmUp(t, f, acked, "the migration")

	stop := make(chan struct{})
	wg := clusterClients(t, f, acked, &during, stop)
	c.migrateSlot(int(slot), src, dst, func() { time.Sleep(100 * time.Millisecond) })
	time.Sleep(200 * time.Millisecond) // calls after the move, on the new master
	close(stop)
	wg.Wait()

	if got := c.owner(int(slot)); got != dst {
		t.Fatalf("slot %d is on master %d after the migration, want %d", slot, got, dst)
	}
	ok, errs := during.get()
	redirects := c.errorStats()
	t.Logf("slot %d from master %d to %d: %d calls answered during the move, %d failed with errors %q; the servers answered %v",
		slot, src, dst, ok, errs, during.errExamples, redirects)
	if ok == 0 {
		t.Fatal("no call answered during the migration")
	}
	// The clients met the slot in the middle of its move: sent to the old
	// master for keys gone (ASK), or to the new one with one key there and
	// one not (TRYAGAIN).
	if redirects["ASK"]+redirects["TRYAGAIN"] == 0 {
		t.Fatal("no call was redirected during the migration: the clients did not meet it")
	}
	checkAllAcked(t, f, acked)
	// The keys moved whole: the new master holds both.
	if n, err := c.admins[dst].Exists(ctx, meta, bits).Result(); err != nil || n != 2 {
		t.Fatalf("new master holds %d of the filter's 2 keys (%v)", n, err)
	}
}

// warmUp runs the clients until 20 calls are answered, and stops them;
// the test fails, once they have stopped, if none is answered in time.
func warmUp(t *testing.T, f *Filter, acked *ackedItems, before string) {
	t.Helper()
	var counts callCounts
	stop := make(chan struct{})
	wg := clusterClients(t, f, acked, &counts, stop)
	answered := waitForCalls(&counts, 20)
	close(stop)
	wg.Wait()
	if !answered {
		t.Fatalf("no calls answered before %s", before)
	}
}

func waitForCalls(counts *callCounts, n int) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok, _ := counts.get(); ok >= n {
			return true
		}
	}
	return false
}

// TestClusterMasterRestart kills the filter's master with SIGKILL while
// clients add and query, and restarts it on its port and directory (AOF
// with appendfsync always, so an acknowledged Add is on its disk): while it
// is down every call fails with an error, and after it every acknowledged
// item is there.
func TestClusterMasterRestart(t *testing.T) {
	c := startCluster(t, 3, "--save", "", "--appendonly", "yes", "--appendfsync", "always")
	// Few retries and redirections: with the master down, each one waits
	// a backoff before the call fails.
	rdb := c.Client(clusterClientOptions, func(o *redis.ClusterOptions) { o.MaxRetries, o.MaxRedirects = 1, 2 })
	ctx := context.Background()
	f := mustCreate(t, rdb, "restarted", 200_000, 0.01)
	meta, _ := Keys("restarted")
	slot, err := rdb.ClusterKeySlot(ctx, meta).Result()
	if err != nil {
		t.Fatal(err)
	}
	master := c.servers[c.owner(int(slot))]

	acked := &ackedItems{}
	var down, after callCounts
	warmUp(t, f, acked, "the kill")

	stop := make(chan struct{})
	wg := clusterClients(t, f, acked, &down, stop)
	time.Sleep(50 * time.Millisecond) // calls in flight when it dies
	master.Stop(syscall.SIGKILL)
	// Down until calls fail (the client first retries and redirects).
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, errs := down.get(); errs > 0 {
			break
		}
	}
	master.Restart(syscall.SIGKILL)
	c.waitOK()
	close(stop)
	wg.Wait()

	stop = make(chan struct{})
	wg = clusterClients(t, f, acked, &after, stop)
	okAfter := waitForCalls(&after, 20)
	close(stop)
	wg.Wait()
	okDown, errsDown := down.get()
	t.Logf("around the restart: %d calls answered, %d failed with errors %q", okDown, errsDown, down.errExamples)
	if errsDown == 0 {
		t.Fatal("no call failed while the master was down: the kill did not land under the clients")
	}
	if !okAfter {
		ok, errs := after.get()
		t.Fatalf("after the restart only %d calls answered, %d failed: %q", ok, errs, after.errExamples)
	}
	checkAllAcked(t, f, acked)
}

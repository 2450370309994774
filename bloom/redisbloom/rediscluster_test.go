package redisbloom

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// testCluster is a Redis Cluster of masters (no replicas), each a
// redistest.Server in cluster mode with its own data directory and nodes.conf.
type testCluster struct {
	tb      testing.TB
	servers []*redistest.Server
	ids     []string        // node IDs, by server
	admins  []*redis.Client // a plain client of each server
}

// clusterArgs are the options of a cluster node: its cluster config in its
// data directory, and a short node timeout so that a killed master is seen
// quickly.
var clusterArgs = []string{
	"--cluster-enabled", "yes",
	"--cluster-config-file", "nodes.conf",
	"--cluster-node-timeout", "1000",
}

// startCluster starts n masters with the given persistence options
// (redistest.NoPersistence if none), splits the 16384 hash slots among them in equal
// ranges, joins them with CLUSTER MEET and waits until every node reports
// the cluster ok. It fails the test — never skips it — when redis-server is
// not installed.
func startCluster(tb testing.TB, n int, persistence ...string) *testCluster {
	tb.Helper()
	if len(persistence) == 0 {
		persistence = redistest.NoPersistence
	}
	c := &testCluster{tb: tb}
	ctx := context.Background()
	for i := range n {
		s := redistest.Start(tb, append(append([]string{}, clusterArgs...), persistence...)...)
		c.servers = append(c.servers, s)
		admin := s.Client()
		c.admins = append(c.admins, admin)
		id, err := admin.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			tb.Fatal(err)
		}
		c.ids = append(c.ids, id)
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			tb.Fatal(err)
		}
	}
	first := c.admins[0]
	for _, s := range c.servers[1:] {
		if err := first.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(s.Port())).Err(); err != nil {
			tb.Fatal(err)
		}
	}
	c.waitOK()
	return c
}

// waitOK waits until every node reports cluster_state:ok and knows all the
// nodes, and agrees with the others on who serves every slot.
func (c *testCluster) waitOK() {
	c.tb.Helper()
	ctx := context.Background()
	want := "cluster_known_nodes:" + strconv.Itoa(len(c.servers))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ok := true
		var last string
		var slots []string
		for _, admin := range c.admins {
			info, err := admin.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, want) {
				ok, last = false, info
			}
			if ok {
				shards, err := admin.ClusterSlots(ctx).Result()
				if err != nil {
					ok = false
					break
				}
				slots = append(slots, slotOwners(shards))
			}
			if !ok {
				break
			}
		}
		for _, s := range slots {
			ok = ok && s == slots[0]
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("cluster not ok after 30 s: %s", last)
		}
	}
}

// slotOwners describes a CLUSTER SLOTS answer: each range and its master.
func slotOwners(shards []redis.ClusterSlot) string {
	var b strings.Builder
	for _, s := range shards {
		if len(s.Nodes) > 0 {
			b.WriteString(strconv.Itoa(s.Start) + "-" + strconv.Itoa(s.End) + "@" + s.Nodes[0].ID + " ")
		}
	}
	return b.String()
}

// Client returns a ClusterClient of the cluster, closed at the test's
// cleanup.
func (c *testCluster) Client(opt ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	o := &redis.ClusterOptions{}
	for _, s := range c.servers {
		o.Addrs = append(o.Addrs, s.Addr())
	}
	for _, f := range opt {
		f(o)
	}
	rdb := redis.NewClusterClient(o)
	c.tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// owner returns the index of the server that serves slot.
func (c *testCluster) owner(slot int) int {
	c.tb.Helper()
	shards, err := c.admins[0].ClusterSlots(context.Background()).Result()
	if err != nil {
		c.tb.Fatal(err)
	}
	for _, s := range shards {
		if slot >= s.Start && slot <= s.End {
			for i, id := range c.ids {
				if id == s.Nodes[0].ID {
					return i
				}
			}
		}
	}
	c.tb.Fatalf("no node serves slot %d", slot)
	return -1
}

// migrateSlot moves slot from server src to server dst the way
// redis-cli --cluster reshard does: dst IMPORTING, src MIGRATING, the keys
// moved by MIGRATE one at a time (so that for a while a filter's meta key is
// on one node and its bits key on the other), then every node told the
// slot is dst's. pause runs between the steps, so
// that clients' calls land in each of them.
func (c *testCluster) migrateSlot(slot, src, dst int, pause func()) {
	c.tb.Helper()
	ctx := context.Background()
	from, to := c.admins[src], c.admins[dst]
	do := func(rdb *redis.Client, args ...any) {
		c.tb.Helper()
		if err := rdb.Do(ctx, args...).Err(); err != nil {
			c.tb.Fatalf("%v: %v", args, err)
		}
	}
	do(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", c.ids[src])
	pause()
	do(from, "CLUSTER", "SETSLOT", slot, "MIGRATING", c.ids[dst])
	pause()
	for {
		keys, err := from.ClusterGetKeysInSlot(ctx, slot, 1).Result()
		if err != nil {
			c.tb.Fatal(err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", c.servers[dst].Port(), "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		do(from, args...)
		pause()
	}
	do(to, "CLUSTER", "SETSLOT", slot, "NODE", c.ids[dst])
	do(from, "CLUSTER", "SETSLOT", slot, "NODE", c.ids[dst])
	for i, admin := range c.admins {
		if i != src && i != dst {
			do(admin, "CLUSTER", "SETSLOT", slot, "NODE", c.ids[dst])
		}
	}
	c.waitOK()
}

// errorStats sums over the nodes the error replies they sent, by code (INFO
// errorstats: MOVED, ASK, TRYAGAIN, CLUSTERDOWN, ...).
func (c *testCluster) errorStats() map[string]int {
	c.tb.Helper()
	out := map[string]int{}
	for _, admin := range c.admins {
		info, err := admin.Info(context.Background(), "errorstats").Result()
		if err != nil {
			c.tb.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			// errorstat_ASK:count=12
			code, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "errorstat_"), ":count=")
			if n, err := strconv.Atoi(rest); ok && err == nil {
				out[code] += n
			}
		}
	}
	return out
}

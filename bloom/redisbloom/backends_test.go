package redisbloom

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The tests of the filter's behaviour run on every backend: a single
// redis-server, and a Redis Cluster of three masters reached through a
// ClusterClient, where the filter's scripts go to the master of its keys'
// slot. The tests about one server's process (its persistence, its death,
// its command counters) start their own servers.

// connector returns a new client of a backend (a connection pool of its
// own), closed at the test's cleanup.
type connector func() redis.UniversalClient

// backends are the deployments onBackends runs a test on. Each start is
// called by one test and gives that test a backend with no keys.
var backends = []struct {
	name  string
	start func(t *testing.T) connector
}{
	{"server", func(t *testing.T) connector {
		srv := redistest.Start(t)
		return func() redis.UniversalClient { return srv.Client() }
	}},
	{"cluster", func(t *testing.T) connector {
		c := sharedCluster(t)
		c.flushAll()
		return func() redis.UniversalClient { return c.Client() }
	}},
}

// onBackends runs test as a subtest on each backend.
func onBackends(t *testing.T, test func(t *testing.T, connect connector)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b.start(t)) })
	}
}

// suite is what the test binary's tests share: a 3-master cluster started
// by the first test that needs it and stopped by TestMain after the last,
// so that the cluster backend adds a cluster start to the suite, not one
// per test. The tests of the package do not run in parallel, so one test
// at a time has it, and flushes it first.
var suite struct {
	once     sync.Once
	cluster  *testCluster
	mu       sync.Mutex
	cleanups []func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	suite.mu.Lock()
	cleanups := suite.cleanups
	suite.mu.Unlock()
	for _, f := range slices.Backward(cleanups) {
		f()
	}
	os.Exit(code)
}

// suiteTB is the testing.TB the shared cluster is started with: the
// starting test's for failing the start, but whose cleanups and temporary
// directories last until TestMain's end.
type suiteTB struct{ testing.TB }

func (suiteTB) Cleanup(f func()) {
	suite.mu.Lock()
	suite.cleanups = append(suite.cleanups, f)
	suite.mu.Unlock()
}

func (s suiteTB) TempDir() string {
	dir, err := os.MkdirTemp("", "redisbloom-cluster-")
	if err != nil {
		s.Fatal(err)
	}
	s.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// sharedCluster returns the binary's shared cluster, starting it if no test
// has, as seen from t: its failures and its clients' cleanups are t's. Its
// servers are never stopped or restarted by a test (the tests that do that
// start their own cluster).
func sharedCluster(t *testing.T) *testCluster {
	t.Helper()
	suite.once.Do(func() { suite.cluster = startCluster(suiteTB{t}, 3) })
	if suite.cluster == nil {
		t.Fatal("the shared Redis Cluster failed to start in an earlier test")
	}
	c := *suite.cluster
	c.tb = t
	return &c
}

// flushAll removes every key from every master.
func (c *testCluster) flushAll() {
	c.tb.Helper()
	for _, admin := range c.admins {
		if err := admin.FlushAll(context.Background()).Err(); err != nil {
			c.tb.Fatal(err)
		}
	}
}

package redisbloom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// items returns n distinct items named prefix-i for i from first.
func items(prefix string, first, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("%s-%d", prefix, first+i))
	}
	return out
}

// batches calls fn on consecutive slices of at most size items.
func batches(all [][]byte, size int, fn func([][]byte)) {
	for len(all) > 0 {
		n := min(size, len(all))
		fn(all[:n])
		all = all[n:]
	}
}

func mustCreate(t *testing.T, rdb redis.UniversalClient, name string, n int, p float64) *Filter {
	t.Helper()
	f, err := Create(context.Background(), rdb, name, n, p)
	if err != nil {
		t.Fatalf("Create(%q, %d, %v): %v", name, n, p, err)
	}
	return f
}

func mustNewClassic(t *testing.T, n int, p float64) *bloom.Classic {
	t.Helper()
	f, err := bloom.NewClassic(n, p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameBits fails the test unless the Redis filter called name holds exactly
// the bits of the local filter want, both through FromRedis and in the raw
// string at the bits key (the bitmap invariant of the package doc).
func sameBits(t *testing.T, rdb redis.UniversalClient, name string, want *bloom.Classic) {
	t.Helper()
	ctx := context.Background()
	got, err := FromRedis(ctx, rdb, name)
	if err != nil {
		t.Fatalf("FromRedis(%q): %v", name, err)
	}
	if got.Bits() != want.Bits() || got.Probes() != want.Probes() {
		t.Fatalf("FromRedis(%q): m=%d k=%d, want m=%d k=%d", name, got.Bits(), got.Probes(), want.Bits(), want.Probes())
	}
	wantMap := want.AppendBitmap(nil)
	if gotMap := got.AppendBitmap(nil); !bytes.Equal(gotMap, wantMap) {
		t.Fatalf("FromRedis(%q): bitmap differs from the local filter's (%d vs %d bits set)", name, got.BitsSet(), want.BitsSet())
	}
	_, bitsKey := Keys(name)
	raw, err := rdb.Get(ctx, bitsKey).Bytes()
	if err != nil {
		t.Fatalf("GET %s: %v", bitsKey, err)
	}
	if trimmed := bytes.TrimRight(wantMap, "\x00"); !bytes.Equal(bytes.TrimRight(raw, "\x00"), trimmed) || len(raw) > len(wantMap) {
		t.Fatalf("GET %s: %d bytes, not the local bitmap (%d bytes, %d without trailing zeros)", bitsKey, len(raw), len(wantMap), len(trimmed))
	}
}

// TestMatchesLocalFilter is the oracle test: after the same adds, through
// batches of every size (including ones split into several scripts), the
// Redis filter answers like a local bloom.Classic of the same parameters
// and holds its bitmap bit for bit.
func TestMatchesLocalFilter(t *testing.T) { onBackends(t, testMatchesLocalFilter) }

func testMatchesLocalFilter(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	for _, tc := range []struct {
		n     int
		p     float64
		batch int
	}{
		{1, 0.5, 1},       // m=2, k=1: the smallest filter
		{10, 0.1, 3},      // m not a multiple of 8
		{1000, 0.01, 100}, // k=7
		{5000, 0.001, 3000},
		{300, 1e-6, 2500},   // k=20: 409 items per script, so 7 scripts per batch
		{3000, 1e-12, 2000}, // k=40: 204 items per script
	} {
		name := fmt.Sprintf("oracle-%d-%g-%d", tc.n, tc.p, tc.batch)
		t.Run(name, func(t *testing.T) {
			f := mustCreate(t, rdb, name, tc.n, tc.p)
			local := mustNewClassic(t, tc.n, tc.p)
			if f.Bits() != local.Bits() || f.Probes() != local.Probes() {
				t.Fatalf("m=%d k=%d, local filter m=%d k=%d", f.Bits(), f.Probes(), local.Bits(), local.Probes())
			}
			// Half the items by Add ...
			added := items(name, 0, tc.n/2+1)
			batches(added, tc.batch, func(b [][]byte) {
				if err := f.Add(ctx, b...); err != nil {
					t.Fatal(err)
				}
				for _, item := range b {
					local.Add(item)
				}
			})
			// ... the rest by TestAndAdd, with some of the first half again
			// and every item twice in its batch: the answers must be the
			// local filter's, taken in order.
			var more [][]byte
			for _, item := range items(name, tc.n/2-tc.n/4, tc.n/2+tc.n/4) {
				more = append(more, item, item)
			}
			batches(more, tc.batch, func(b [][]byte) {
				got, err := f.TestAndAdd(ctx, b...)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(b) {
					t.Fatalf("TestAndAdd of %d items: %d answers", len(b), len(got))
				}
				for i, item := range b {
					if want := local.TestAndAdd(item); got[i] != want {
						t.Fatalf("TestAndAdd(%q) = %v, local filter says %v", item, got[i], want)
					}
				}
			})
			sameBits(t, rdb, name, local)
			// Queries of present and absent items answer as locally.
			queries := items(name, 0, 2*tc.n+10)
			batches(queries, tc.batch, func(b [][]byte) {
				got, err := f.MayContain(ctx, b...)
				if err != nil {
					t.Fatal(err)
				}
				for i, item := range b {
					if want := local.MayContain(item); got[i] != want {
						t.Fatalf("MayContain(%q) = %v, local filter says %v", item, got[i], want)
					}
				}
			})
		})
	}
}

func TestEmptyBatch(t *testing.T) { onBackends(t, testEmptyBatch) }

func testEmptyBatch(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	f := mustCreate(t, rdb, "empty", 100, 0.01)
	if err := f.Add(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := f.MayContain(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("MayContain() = %v, %v; want an empty slice", got, err)
	}
	if got, err := f.TestAndAdd(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("TestAndAdd() = %v, %v; want an empty slice", got, err)
	}
}

// TestNoFalseNegativesAndRate adds 100,000 items, finds every one, and
// measures the false-positive rate over enough absent items that the
// allowed 15% error is 4 standard deviations of the binomial noise.
func TestNoFalseNegativesAndRate(t *testing.T) { onBackends(t, testNoFalseNegativesAndRate) }

func testNoFalseNegativesAndRate(t *testing.T, connect connector) {
	const (
		n         = 100_000
		p         = 0.01
		tolerance = 0.15
		sigmas    = 4
	)
	rdb := connect()
	ctx := context.Background()
	f := mustCreate(t, rdb, "fnr", n, p)
	local := mustNewClassic(t, n, p)
	added := items("member", 0, n)
	batches(added, 1000, func(b [][]byte) {
		if err := f.Add(ctx, b...); err != nil {
			t.Fatal(err)
		}
		for _, item := range b {
			local.Add(item)
		}
	})
	batches(added, 1000, func(b [][]byte) {
		got, err := f.MayContain(ctx, b...)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if !ok {
				t.Fatalf("false negative: %q was added", b[i])
			}
		}
	})

	// The measured rate of q queries has standard deviation sqrt(p(1−p)/q);
	// tolerance·p ≥ sigmas·that when q ≥ sigmas²·(1−p)/(tolerance²·p).
	q := int(math.Ceil(sigmas * sigmas * (1 - p) / (tolerance * tolerance * p)))
	positives := 0
	batches(items("absent", 0, q), 1000, func(b [][]byte) {
		got, err := f.MayContain(ctx, b...)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if ok != local.MayContain(b[i]) {
				t.Fatalf("MayContain(%q) = %v, local filter says %v", b[i], ok, !ok)
			}
			if ok {
				positives++
			}
		}
	})
	rate := float64(positives) / float64(q)
	t.Logf("false-positive rate %.5f over %d absent items (target %v, expected %.5f)",
		rate, q, p, bloom.ClassicFalsePositiveRate(f.Bits(), f.Probes(), n))
	if math.Abs(rate-p) > tolerance*p {
		t.Errorf("false-positive rate %.5f over %d queries, more than %.0f%% from the target %v", rate, q, tolerance*100, p)
	}
}

// TestTwoClients simulates two replicas: separate clients (separate
// connection pools) each open the filter by name and see the other's adds.
func TestTwoClients(t *testing.T) { onBackends(t, testTwoClients) }

func testTwoClients(t *testing.T, connect connector) {
	a, b := connect(), connect()
	ctx := context.Background()
	fa := mustCreate(t, a, "shared", 10_000, 0.001)
	fb, err := Open(ctx, b, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if fb.Bits() != fa.Bits() || fb.Probes() != fa.Probes() || fb.ExpectedItems() != 10_000 || fb.TargetRate() != 0.001 {
		t.Fatalf("Open: m=%d k=%d n=%d p=%v; created m=%d k=%d n=10000 p=0.001",
			fb.Bits(), fb.Probes(), fb.ExpectedItems(), fb.TargetRate(), fa.Bits(), fa.Probes())
	}
	fromA, fromB := items("a", 0, 500), items("b", 0, 500)
	if err := fa.Add(ctx, fromA...); err != nil {
		t.Fatal(err)
	}
	if err := fb.Add(ctx, fromB...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who   string
		f     *Filter
		items [][]byte
	}{{"b sees a's", fb, fromA}, {"a sees b's", fa, fromB}} {
		got, err := c.f.MayContain(ctx, c.items...)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if !ok {
				t.Fatalf("%s: %q missing", c.who, c.items[i])
			}
		}
	}
}

// TestConcurrentCreate: replicas creating one filter at once agree on it;
// with conflicting parameters, one side wins and the other gets ErrConflict.
func TestConcurrentCreate(t *testing.T) { onBackends(t, testConcurrentCreate) }

func testConcurrentCreate(t *testing.T, connect connector) {
	clients := []redis.UniversalClient{connect(), connect()}
	ctx := context.Background()
	const g = 8
	var wg sync.WaitGroup
	errs := make([]error, g)
	filters := make([]*Filter, g)
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 1000
			if i%2 == 1 {
				n = 2000 // another size: conflicts with the even ones
			}
			filters[i], errs[i] = Create(ctx, clients[i%2], "race", n, 0.01)
		}()
	}
	wg.Wait()
	var won, lost int
	for i, err := range errs {
		switch {
		case err == nil:
			won |= 1 << (i % 2)
		case errors.Is(err, ErrConflict):
			lost |= 1 << (i % 2)
		default:
			t.Fatalf("Create: %v", err)
		}
	}
	if won == 0 || won == 3 || won&lost != 0 || won|lost != 3 {
		t.Fatalf("one size must win every Create and the other lose every one: won %b lost %b (%v)", won, lost, errs)
	}
}

// TestConcurrentTestAndAdd: a test-and-add is atomic, so of many concurrent
// calls with the same new item, across clients, exactly one reports it new.
func TestConcurrentTestAndAdd(t *testing.T) { onBackends(t, testConcurrentTestAndAdd) }

func testConcurrentTestAndAdd(t *testing.T, connect connector) {
	clients := []redis.UniversalClient{connect(), connect()}
	ctx := context.Background()
	// p is tiny, so that no item is a false positive in practice.
	f0 := mustCreate(t, clients[0], "tas", 10_000, 1e-9)
	f1, err := Open(ctx, clients[1], "tas")
	if err != nil {
		t.Fatal(err)
	}
	all := items("tas", 0, 400)
	const g = 8
	news := make([][]int, g)
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := []*Filter{f0, f1}[i%2]
			news[i] = make([]int, len(all))
			// Each goroutine goes through the items from another start.
			for j := 0; j < len(all); j += 20 {
				at := (j + i*60) % len(all) // a multiple of 20, as j is
				got, err := f.TestAndAdd(ctx, all[at:at+20]...)
				if err != nil {
					t.Error(err)
					return
				}
				for x, present := range got {
					if !present {
						news[i][at+x]++
					}
				}
			}
		}()
	}
	wg.Wait()
	for x := range all {
		total := 0
		for i := range g {
			total += news[i][x]
		}
		if total != 1 {
			t.Fatalf("%q reported new by %d of %d concurrent TestAndAdd calls, want exactly 1", all[x], total, g)
		}
	}
}

// TestPersistence: a filter outlives a restart of Redis with AOF (even a
// crash, with fsync on every write) or with an RDB saved at shutdown.
// It runs on one server, not the cluster backend: it restarts the server
// process, which the shared cluster's tests may not do (TestClusterMasterRestart
// restarts a master of a cluster of its own).
func TestPersistence(t *testing.T) {
	for _, tc := range []struct {
		name        string
		persistence []string
		stop        syscall.Signal
	}{
		{"aof-crash", []string{"--appendonly", "yes", "--appendfsync", "always", "--save", ""}, syscall.SIGKILL},
		{"rdb-shutdown", []string{"--appendonly", "no", "--save", "3600", "1"}, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, tc.persistence...)
			rdb := srv.Client()
			ctx := context.Background()
			f := mustCreate(t, rdb, "durable", 20_000, 0.01)
			local := mustNewClassic(t, 20_000, 0.01)
			added := items("durable", 0, 10_000)
			batches(added, 1000, func(b [][]byte) {
				if err := f.Add(ctx, b...); err != nil {
					t.Fatal(err)
				}
			})
			for _, item := range added {
				local.Add(item)
			}
			srv.Restart(tc.stop)

			// The old handle, reconnecting, and a new one by name both work.
			g, err := Open(ctx, srv.Client(), "durable")
			if err != nil {
				t.Fatalf("Open after restart: %v", err)
			}
			if g.Bits() != f.Bits() || g.Probes() != f.Probes() {
				t.Fatalf("after restart m=%d k=%d, before m=%d k=%d", g.Bits(), g.Probes(), f.Bits(), f.Probes())
			}
			for _, h := range []*Filter{f, g} {
				got, err := h.MayContain(ctx, added...)
				if err != nil {
					t.Fatalf("MayContain after restart: %v", err)
				}
				for i, ok := range got {
					if !ok {
						t.Fatalf("after restart: %q missing", added[i])
					}
				}
			}
			sameBits(t, rdb, "durable", local)
		})
	}
}

// TestDataLossIsAnError: when Redis loses the filter (a restart without
// persistence) or one of its keys, every call fails instead of answering
// "absent" from zero bits.
// It runs on one server, not the cluster backend: it restarts the server
// process to lose the data, which the shared cluster's tests may not do.
func TestDataLossIsAnError(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx := context.Background()
	f := mustCreate(t, rdb, "lost", 1000, 0.01)
	added := items("lost", 0, 100)
	if err := f.Add(ctx, added...); err != nil {
		t.Fatal(err)
	}

	srv.Restart(syscall.SIGKILL) // no persistence: everything is gone
	if got, err := f.MayContain(ctx, added...); !errors.Is(err, ErrNotFound) || got != nil {
		t.Fatalf("MayContain after losing the filter = %v, %v; want nil, ErrNotFound", got, err)
	}
	if got, err := f.TestAndAdd(ctx, added...); !errors.Is(err, ErrNotFound) || got != nil {
		t.Fatalf("TestAndAdd after losing the filter = %v, %v; want nil, ErrNotFound", got, err)
	}
	if err := f.Add(ctx, added...); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Add after losing the filter = %v; want ErrNotFound", err)
	}
	if _, err := Open(ctx, rdb, "lost"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after losing the filter = %v; want ErrNotFound", err)
	}
	metaKey, bitsKey := Keys("lost")
	if n, err := rdb.Exists(ctx, metaKey, bitsKey).Result(); err != nil || n != 0 {
		t.Fatalf("a failed Add left %d keys behind (%v)", n, err)
	}

	// Only the bits lost (an eviction, a stray DEL): an error, not zeros.
	f = mustCreate(t, rdb, "lost", 1000, 0.01)
	if err := f.Add(ctx, added...); err != nil {
		t.Fatal(err)
	}
	rdb.Del(ctx, bitsKey)
	if got, err := f.MayContain(ctx, added...); !errors.Is(err, ErrCorrupt) || got != nil {
		t.Fatalf("MayContain without the bits key = %v, %v; want nil, ErrCorrupt", got, err)
	}
	if err := f.Add(ctx, added...); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Add without the bits key = %v; want ErrCorrupt", err)
	}
	if n, _ := rdb.Exists(ctx, bitsKey).Result(); n != 0 {
		t.Fatal("a refused Add recreated the bits key")
	}
}

// TestServerKilled: killing Redis while calls are in flight makes them
// fail with errors; no call ever answers "absent" for an added item.
// It runs on one server, not the cluster backend: it kills the server
// process (TestClusterMasterRestart does so to a master of a cluster of its
// own).
func TestServerKilled(t *testing.T) {
	srv := redistest.Start(t)
	// No retries, so that calls fail fast once the server is gone.
	noRetry := func(o *redis.Options) {
		o.MaxRetries = -1
		o.DialerRetries = 1
		o.DialerRetryTimeout = time.Millisecond
	}
	rdb := srv.Client(noRetry)
	ctx := context.Background()
	f := mustCreate(t, rdb, "killed", 100_000, 0.01)
	added := items("killed", 0, 5000) // large batches (5 scripts each), so the kill lands mid-call
	if err := f.Add(ctx, added...); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	var okCalls, failed, cut int // cut: failed in flight, not refused at dial
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var got []bool
				var err error
				switch g {
				case 0:
					got, err = f.MayContain(ctx, added...)
				case 1:
					got, err = f.TestAndAdd(ctx, added...)
				case 2:
					err = f.Add(ctx, added...)
				}
				if err != nil && got != nil {
					t.Errorf("an error with answers: %v, %d answers", err, len(got))
				}
				for i, ok := range got {
					if !ok {
						t.Errorf("%q reported absent while the server was being killed (err %v)", added[i], err)
						break
					}
				}
				mu.Lock()
				if err != nil {
					failed++
					if !errors.Is(err, syscall.ECONNREFUSED) {
						cut++
					}
				} else {
					okCalls++
				}
				mu.Unlock()
			}
		}()
	}
	// Kill once some calls have answered, with others surely in flight.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		answered := okCalls
		mu.Unlock()
		if answered >= 3 || time.Now().After(deadline) {
			break
		}
	}
	srv.Stop(syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d calls answered before the kill, %d failed with errors (%d of them in flight)", okCalls, failed, cut)
	if okCalls == 0 || failed == 0 {
		t.Fatalf("want calls both before and after the kill: %d answered, %d failed", okCalls, failed)
	}

	// Once the server is gone every call is an error, never an answer, and
	// the error is the cause: for one script and for a pipeline of several.
	for _, batch := range [][][]byte{added[:10], added} {
		if got, err := f.MayContain(ctx, batch...); !errors.Is(err, syscall.ECONNREFUSED) || got != nil {
			t.Fatalf("MayContain of %d items with the server dead = %v, %v; want nil, connection refused", len(batch), got, err)
		}
		if got, err := f.TestAndAdd(ctx, batch...); !errors.Is(err, syscall.ECONNREFUSED) || got != nil {
			t.Fatalf("TestAndAdd of %d items with the server dead = %v, %v; want nil, connection refused", len(batch), got, err)
		}
	}
	if err := f.Add(ctx, added[:10]...); err == nil {
		t.Fatal("Add with the server dead: no error")
	}
	if _, err := Open(ctx, rdb, "killed"); err == nil {
		t.Fatal("Open with the server dead: no error")
	}
}

// TestContextDeadline: a context already done sends nothing; a deadline
// passing while Redis is blocked returns an error wrapping
// context.DeadlineExceeded, whether or not the client itself watches
// contexts.
// It runs on one server, not the cluster backend: it blocks that server
// and counts the commands it processed, which on a cluster are spread over
// masters the test cannot tell apart by key.
func TestContextDeadline(t *testing.T) {
	srv := redistest.Start(t)
	ctl := srv.Client()
	bg := context.Background()
	f := mustCreate(t, ctl, "deadline", 1000, 0.01)
	local := mustNewClassic(t, 1000, 0.01)
	some := items("deadline", 0, 10)

	t.Run("already-done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(bg)
		cancel()
		before := commandsProcessed(t, ctl)
		calls := map[string]error{
			"Create":    second(Create(ctx, ctl, "deadline", 1000, 0.01)),
			"Open":      second(Open(ctx, ctl, "deadline")),
			"Add":       f.Add(ctx, some...),
			"Delete":    Delete(ctx, ctl, "deadline"),
			"ToRedis":   second(ToRedis(ctx, ctl, "deadline", local)),
			"FromRedis": second(FromRedis(ctx, ctl, "deadline")),
		}
		got, err := f.MayContain(ctx, some...)
		if got != nil {
			t.Errorf("MayContain with a canceled context returned answers")
		}
		calls["MayContain"] = err
		got, err = f.TestAndAdd(ctx, some...)
		if got != nil {
			t.Errorf("TestAndAdd with a canceled context returned answers")
		}
		calls["TestAndAdd"] = err
		for name, err := range calls {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
			}
		}
		// One command: the INFO that read the count before.
		if after := commandsProcessed(t, ctl); after-before > 1 {
			t.Errorf("calls with a canceled context sent %d commands", after-before-1)
		}
	})

	for _, tc := range []struct {
		name string
		opt  func(*redis.Options)
	}{
		{"client-ignores-context", func(*redis.Options) {}},
		{"client-watches-context", func(o *redis.Options) { o.ContextTimeoutEnabled = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := srv.Client(tc.opt)
			h, err := Open(bg, rdb, "deadline")
			if err != nil {
				t.Fatal(err)
			}
			// CLIENT PAUSE holds every client's commands, like a server
			// busy with a slow script.
			const pause = 800 * time.Millisecond
			if err := ctl.Do(bg, "CLIENT", "PAUSE", pause.Milliseconds(), "ALL").Err(); err != nil {
				t.Fatal(err)
			}
			paused := time.Now()
			ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
			defer cancel()
			got, err := h.MayContain(ctx, some...)
			took := time.Since(paused)
			if !errors.Is(err, context.DeadlineExceeded) || got != nil {
				t.Fatalf("MayContain past the deadline = %v, %v; want nil, context.DeadlineExceeded", got, err)
			}
			if took >= pause-100*time.Millisecond {
				t.Fatalf("MayContain returned after %v, not at its deadline", took)
			}
			// After the pause the filter answers again.
			if _, err := h.MayContain(bg, some...); err != nil {
				t.Fatalf("MayContain after the pause: %v", err)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

func commandsProcessed(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
	}
	t.Fatal("INFO stats has no total_commands_processed")
	return 0
}

// TestConflict: creating with other parameters fails with a clear error;
// a handle whose filter was recreated with other parameters fails too.
func TestConflict(t *testing.T) { onBackends(t, testConflict) }

func testConflict(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	f := mustCreate(t, rdb, "params", 1000, 0.01)

	_, err := Create(ctx, rdb, "params", 2000, 0.01)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Create with another n: %v, want ErrConflict", err)
	}
	for _, want := range []string{`"params"`, fmt.Sprintf("m = %d bits", f.Bits()), "n = 1000", "p = 0.01"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	t.Logf("conflict error: %v", err)
	if _, err := Create(ctx, rdb, "params", 1000, 0.001); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "k = 7 probes, not 10") {
		t.Fatalf("Create with another p: %v, want ErrConflict naming k", err)
	}
	if g, err := Create(ctx, rdb, "params", 1000, 0.01); err != nil || g.Bits() != f.Bits() {
		t.Fatalf("Create with the same parameters: %v", err)
	}
	if _, err := Open(ctx, rdb, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open of a missing filter: %v, want ErrNotFound", err)
	}
	if _, err := FromRedis(ctx, rdb, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FromRedis of a missing filter: %v, want ErrNotFound", err)
	}

	// Deleted and recreated with other parameters: the old handle must not
	// use the new bits with its own positions.
	if err := Delete(ctx, rdb, "params"); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(ctx, []byte("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Add after Delete: %v, want ErrNotFound", err)
	}
	mustCreate(t, rdb, "params", 5000, 0.01)
	if got, err := f.MayContain(ctx, []byte("x")); !errors.Is(err, ErrConflict) || got != nil {
		t.Fatalf("MayContain on a recreated filter = %v, %v; want nil, ErrConflict", got, err)
	}
	if err := f.Add(ctx, []byte("x")); !errors.Is(err, ErrConflict) {
		t.Fatalf("Add on a recreated filter: %v, want ErrConflict", err)
	}
	// Recreated with the same parameters, the old handle works again.
	if err := Delete(ctx, rdb, "params"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, rdb, "params", 1000, 0.01)
	if err := f.Add(ctx, []byte("x")); err != nil {
		t.Fatalf("Add on a filter recreated alike: %v", err)
	}
	if err := Delete(ctx, rdb, "never-was"); err != nil {
		t.Fatalf("Delete of a missing filter: %v", err)
	}
}

// TestDamagedKeys: wrong types and damaged or half-missing keys are errors
// for Open and for every call, never answers.
func TestDamagedKeys(t *testing.T) { onBackends(t, testDamagedKeys) }

func testDamagedKeys(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(meta, bits string, f *Filter) // f is nil if no filter was made first
		want   func(error) bool
		wants  string
	}{
		{"meta-not-a-hash", func(meta, bits string, f *Filter) { rdb.Set(ctx, meta, "x", 0) }, isWrongType, "WRONGTYPE"},
		{"bits-not-a-string", func(meta, bits string, f *Filter) {
			rdb.Del(ctx, bits)
			rdb.RPush(ctx, bits, "x")
		}, isWrongType, "WRONGTYPE"},
		{"meta-lacks-k", func(meta, bits string, f *Filter) { rdb.HDel(ctx, meta, "k") }, is(ErrCorrupt), "ErrCorrupt"},
		{"meta-bad-m", func(meta, bits string, f *Filter) { rdb.HSet(ctx, meta, "m", "lots") }, is(ErrCorrupt), "ErrCorrupt"},
		{"meta-m-too-large", func(meta, bits string, f *Filter) { rdb.HSet(ctx, meta, "m", fmt.Sprint(uint64(MaxBits)+1)) }, is(ErrCorrupt), "ErrCorrupt"},
		{"meta-newer-format", func(meta, bits string, f *Filter) { rdb.HSet(ctx, meta, "format", "2") }, is(ErrConflict), "ErrConflict"},
		{"bits-without-meta", func(meta, bits string, f *Filter) { rdb.Del(ctx, meta) }, is(ErrNotFound), "ErrNotFound"},
		{"meta-without-bits", func(meta, bits string, f *Filter) { rdb.Del(ctx, bits) }, is(ErrCorrupt), "ErrCorrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "damaged-" + tc.name
			metaKey, bitsKey := Keys(name)
			f := mustCreate(t, rdb, name, 1000, 0.01)
			if err := f.Add(ctx, items(name, 0, 50)...); err != nil {
				t.Fatal(err)
			}
			tc.damage(metaKey, bitsKey, f)
			if _, err := Open(ctx, rdb, name); !tc.want(err) {
				t.Errorf("Open: %v, want %s", err, tc.wants)
			}
			if _, err := FromRedis(ctx, rdb, name); !tc.want(err) {
				t.Errorf("FromRedis: %v, want %s", err, tc.wants)
			}
			if tc.name == "meta-newer-format" {
				return // the handle's own m and k still match: its calls work
			}
			if err := f.Add(ctx, []byte("x")); err == nil {
				t.Errorf("Add: no error")
			}
			if got, err := f.MayContain(ctx, items(name, 0, 50)...); err == nil || got != nil {
				t.Errorf("MayContain = %v, %v; want nil and an error", got, err)
			}
			if got, err := f.TestAndAdd(ctx, []byte("x")); err == nil || got != nil {
				t.Errorf("TestAndAdd = %v, %v; want nil and an error", got, err)
			}
		})
	}

	// Create refuses to adopt a bits key it did not make.
	_, bitsKey := Keys("squatted")
	rdb.Set(ctx, bitsKey, "\xff", 0)
	if _, err := Create(ctx, rdb, "squatted", 1000, 0.01); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Create over a stray bits key: %v, want ErrCorrupt", err)
	}
	// A bit set past m (by hand) makes the bitmap unreadable as the filter.
	f := mustCreate(t, rdb, "past-m", 10, 0.1) // m = 48
	_, bitsKey = Keys("past-m")
	rdb.SetBit(ctx, bitsKey, int64(f.Bits()), 1)
	if _, err := FromRedis(ctx, rdb, "past-m"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("FromRedis with a bit past m: %v, want ErrCorrupt", err)
	}
}

func isWrongType(err error) bool { return err != nil && strings.Contains(err.Error(), "WRONGTYPE") }

func is(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }

// TestArguments: bad names and sizes, including filters larger than a
// Redis string, return *bloom.ArgumentError naming the argument.
func TestArguments(t *testing.T) { onBackends(t, testArguments) }

func testArguments(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		n    int
		p    float64
		arg  string
	}{
		{"", 1000, 0.01, "name"},
		{"a}b", 1000, 0.01, "name"},
		{"}", 1000, 0.01, "name"},
		{"ok", 0, 0.01, "n"},
		{"ok", 1000, 1, "p"},
		{"ok", 1000, 0, "p"},
		{"ok", 500_000_000, 0.01, "n"}, // 4.8e9 bits > 2^32
	} {
		_, err := Create(ctx, rdb, tc.name, tc.n, tc.p)
		var aerr *bloom.ArgumentError
		if !errors.As(err, &aerr) || aerr.Arg != tc.arg {
			t.Errorf("Create(%q, %d, %v): %v, want an ArgumentError for %s", tc.name, tc.n, tc.p, err, tc.arg)
		}
	}
	_, err := Create(ctx, rdb, "ok", 500_000_000, 0.01)
	if !strings.Contains(fmt.Sprint(err), "Redis string") {
		t.Errorf("the error for too many bits does not say why: %v", err)
	}
	for _, name := range []string{"", "x}"} {
		var aerr *bloom.ArgumentError
		if _, err := Open(ctx, rdb, name); !errors.As(err, &aerr) {
			t.Errorf("Open(%q): %v, want an ArgumentError", name, err)
		}
	}

	// The largest filters that fit are fine, and cost nothing until bits
	// are set: Redis strings grow only to the highest set bit.
	f := mustCreate(t, rdb, "huge", 400_000_000, 0.01)
	if f.Bits() <= 1<<31 || f.Bits() > MaxBits {
		t.Fatalf("m = %d, want between 2^31 and 2^32", f.Bits())
	}
	if got, err := f.MayContain(ctx, []byte("a"), []byte("b")); err != nil || got[0] || got[1] {
		t.Fatalf("MayContain on an empty huge filter = %v, %v", got, err)
	}
}

// TestToRedisFromRedis: a local filter exported to Redis and read back is
// the same filter; exporting into an existing filter is a union.
func TestToRedisFromRedis(t *testing.T) { onBackends(t, testToRedisFromRedis) }

func testToRedisFromRedis(t *testing.T, connect connector) {
	rdb := connect()
	ctx := context.Background()
	a, b := mustNewClassic(t, 5000, 0.01), mustNewClassic(t, 5000, 0.01)
	fromA, fromB := items("a", 0, 3000), items("b", 0, 3000)
	for i := range fromA {
		a.Add(fromA[i])
		b.Add(fromB[i])
	}

	f, err := ToRedis(ctx, rdb, "exported", a)
	if err != nil {
		t.Fatal(err)
	}
	if f.Bits() != a.Bits() || f.Probes() != a.Probes() || f.ExpectedItems() != 0 || f.TargetRate() != 0 {
		t.Fatalf("ToRedis: m=%d k=%d n=%d p=%v", f.Bits(), f.Probes(), f.ExpectedItems(), f.TargetRate())
	}
	got, err := f.MayContain(ctx, fromA...)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("%q missing after ToRedis", fromA[i])
		}
	}
	sameBits(t, rdb, "exported", a)

	// Into an existing filter: the union, as bloom's Union.
	if _, err := ToRedis(ctx, rdb, "exported", b); err != nil {
		t.Fatal(err)
	}
	union := mustNewClassic(t, 5000, 0.01)
	if err := union.Union(a); err != nil {
		t.Fatal(err)
	}
	if err := union.Union(b); err != nil {
		t.Fatal(err)
	}
	sameBits(t, rdb, "exported", union)
	// A filter made by Create with the same n and p takes exports too.
	mustCreate(t, rdb, "created", 5000, 0.01)
	if _, err := ToRedis(ctx, rdb, "created", a); err != nil {
		t.Fatal(err)
	}
	sameBits(t, rdb, "created", a)

	other := mustNewClassic(t, 100, 0.01)
	if _, err := ToRedis(ctx, rdb, "exported", other); !errors.Is(err, ErrConflict) {
		t.Fatalf("ToRedis of another size: %v, want ErrConflict", err)
	}
	sameBits(t, rdb, "exported", union) // unchanged by the refused export
	// An empty filter exports as an empty bits string.
	if _, err := ToRedis(ctx, rdb, "empty", other); err != nil {
		t.Fatal(err)
	}
	sameBits(t, rdb, "empty", other)
	// One key per EXISTS: on a cluster, keys of two filters are in two
	// slots, which one command may not name.
	for _, name := range []string{"exported", "empty", "created"} {
		if n, err := rdb.Exists(ctx, tmpKey(name)).Result(); err != nil || n != 0 {
			t.Fatalf("ToRedis left its temporary key of %q (%d, %v)", name, n, err)
		}
	}
}

// exercise runs every operation through rdb on the filter name, comparing
// with a local filter, with a batch large enough to take several scripts.
func exercise(t *testing.T, rdb redis.UniversalClient, name string) {
	t.Helper()
	ctx := context.Background()
	f := mustCreate(t, rdb, name, 5000, 0.001) // k = 10: 819 items per script
	local := mustNewClassic(t, 5000, 0.001)
	batch := items(name, 0, 3000)
	if err := f.Add(ctx, batch[:1500]...); err != nil {
		t.Fatal(err)
	}
	got, err := f.TestAndAdd(ctx, batch...)
	if err != nil {
		t.Fatal(err)
	}
	for i, item := range batch {
		if i < 1500 {
			local.Add(item)
		}
	}
	for i, item := range batch {
		if want := local.TestAndAdd(item); got[i] != want {
			t.Fatalf("TestAndAdd(%q) = %v, local filter says %v", item, got[i], want)
		}
	}
	got, err = f.MayContain(ctx, batch...)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("%q missing", batch[i])
		}
	}
	sameBits(t, rdb, name, local)
	if _, err := ToRedis(ctx, rdb, name, local); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, rdb, name); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, rdb, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after Delete: %v, want ErrNotFound", err)
	}
}

// TestCluster runs a one-node Redis Cluster: it refuses any script or
// command whose keys are in different hash slots (CROSSSLOT), so this
// checks the key layout, and the ClusterClient's routing of scripts.
func TestCluster(t *testing.T) {
	srv := redistest.Start(t, append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}, redistest.NoPersistence...)...)
	ctx := context.Background()
	admin := srv.Client()
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, err := admin.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ok: %v %s", err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr()}})
	t.Cleanup(func() { _ = rdb.Close() })
	for _, name := range []string{"users", "blocked:accounts", "{odd"} {
		exercise(t, rdb, name)
	}
}

// TestRing shards filters across two servers with a Ring: each filter's
// keys land together on one of them.
func TestRing(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	rdb := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	shards := map[string]int{}
	for i := range 8 {
		name := fmt.Sprintf("ring-%d", i)
		exercise(t, rdb, name)
		mustCreate(t, rdb, name, 100, 0.01)
		metaKey, bitsKey := Keys(name)
		for s, c := range map[string]*redis.Client{"a": a.Client(), "b": b.Client()} {
			switch n, _ := c.Exists(ctx, metaKey, bitsKey).Result(); n {
			case 2:
				shards[s]++
			case 1:
				t.Fatalf("%s: the keys of filter %q are on different shards", s, name)
			}
		}
	}
	if shards["a"]+shards["b"] != 8 {
		t.Fatalf("filters per shard %v, want 8 in all", shards)
	}
	t.Logf("filters per shard: %v", shards)
}

//go:build linux || darwin || freebsd

package bloomkv

// The acceptance test: a DB of thousands of tables, more than the
// process may have files open, opened with the default options by a child
// process (this test binary, re-executed) whose RLIMIT_NOFILE is 256.
// Without the table cache its Open failed with "too many open files".
//
// Long form (make test runs it without -race): go test -count=1
// -run '^TestTableCacheUnderFileLimit$' -tablecache.tables=2000 .

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

var fileLimitTables = flag.Int("tablecache.tables", 0,
	"tables TestTableCacheUnderFileLimit builds (default 2,000, 1,000 under -race)")

const (
	fileLimitChildEnv = "BLOOMKV_FILE_LIMIT_CHILD"
	// childFileLimit is the child's RLIMIT_NOFILE.
	childFileLimit = 256
)

func fileLimitKey(i int) string { return fmt.Sprintf("fk%07d", i) }

// fileLimitBatches returns the batches of the workload of n tables, each
// to be flushed to a table of its own: table t holds two new keys, above
// every key before them, and after every fourth one a batch of one key
// overwrites or deletes an older key. The parent and the child derive the
// expected contents from it alone.
func fileLimitBatches(n int) [][]kvOp {
	var batches [][]kvOp
	for t := range n {
		value := func(i int) string { return fmt.Sprintf("%s=t%d|%s", fileLimitKey(i), t, strings.Repeat("x", t%50)) }
		batches = append(batches, []kvOp{{key: fileLimitKey(2 * t), value: value(2 * t)}, {key: fileLimitKey(2*t + 1), value: value(2*t + 1)}})
		if t%4 == 3 {
			i := t * 7919 % (2 * t)
			if t%8 == 7 {
				batches = append(batches, []kvOp{{del: true, key: fileLimitKey(i)}})
			} else {
				batches = append(batches, []kvOp{{key: fileLimitKey(i), value: value(i)}})
			}
		}
	}
	return batches
}

// fileLimitModel is what the DB of the workload of n tables holds.
func fileLimitModel(n int) kvModel {
	m := kvModel{}
	for _, b := range fileLimitBatches(n) {
		m.apply(b)
	}
	return m
}

// TestTableCacheUnderFileLimit builds the DB in memory — the same bytes as
// on disk, without the four fsyncs of each of thousands of flushes, which
// took 12 s for 2,000 — one table per Flush, each moved to L1 at once, and
// copies its files into a real directory; then a child opens it there
// under RLIMIT_NOFILE 256 with the default options, and must serve every
// key and scan them all, and exit 0.
func TestTableCacheUnderFileLimit(t *testing.T) {
	if os.Getenv(fileLimitChildEnv) != "" {
		t.Skip("in the child")
	}
	n := *fileLimitTables
	if n == 0 {
		n = 2000
		if race.Enabled {
			n = 1000
		}
	}
	start := time.Now()
	mem := vfs.NewMem()
	// L0 is kept to one table, which compaction moves to L1 as it is, or
	// merges with the one L1 table it overlaps (an update): a large L0
	// costs every manifest edit a check of all its pairs.
	d, err := Open("db", &Options{FS: mem, MemtableSize: 64 << 10, L0CompactionTrigger: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range fileLimitBatches(n) {
		if err := applyOps(d, b, NoSync); err != nil {
			t.Fatal(err)
		}
		d.waitForCompactions(t) // flushes first
	}
	if got := tableCount(d); got != n {
		t.Fatalf("built %d tables, want %d", got, n)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)

	dir := filepath.Join(t.TempDir(), "db")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := mem.List("db")
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, name := range names {
		if err := copyFromFS(mem, mem.PathJoin("db", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".sst") {
			tables++
		}
	}
	if tables < n || tables <= 2*childFileLimit {
		t.Fatalf("%d tables on disk, want %d, and far more than %d", tables, n, childFileLimit)
	}

	start = time.Now()
	out := runTestChild(t, "TestTableCacheFileLimitChild", fmt.Sprintf("%s=%s,%d", fileLimitChildEnv, dir, n))
	if !strings.Contains(out, "child served") {
		t.Fatalf("child under RLIMIT_NOFILE %d:\n%s", childFileLimit, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "child served") {
			t.Logf("%d tables built in %v; %s (%v)", tables, built.Round(time.Millisecond), strings.TrimSpace(line), time.Since(start).Round(time.Millisecond))
		}
	}
}

// copyFromFS copies file from of fs to the OS path to.
func copyFromFS(fs vfs.FS, from, to string) error {
	f, err := fs.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// TestTableCacheFileLimitChild is the child of TestTableCacheUnderFileLimit;
// it does nothing unless BLOOMKV_FILE_LIMIT_CHILD=dir,tables is set. It
// lowers its RLIMIT_NOFILE to 256, opens the DB with the default options,
// and checks every key with Get and a full scan against the workload.
func TestTableCacheFileLimitChild(t *testing.T) {
	env := os.Getenv(fileLimitChildEnv)
	if env == "" {
		t.Skip("only run by TestTableCacheUnderFileLimit")
	}
	dir, nStr, _ := strings.Cut(env, ",")
	n, err := strconv.Atoi(nStr)
	if err != nil {
		t.Fatalf("bad table count %q", nStr)
	}
	lim := syscall.Rlimit{Cur: childFileLimit, Max: childFileLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if got := processFileLimit(); got != childFileLimit {
		t.Fatalf("RLIMIT_NOFILE is %d after setting it to %d", got, childFileLimit)
	}
	// The limit bites: this process cannot hold a descriptor per table.
	var held []*os.File
	for range childFileLimit {
		f, err := os.Open(dir)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("probing the limit: %v", err)
			}
			break
		}
		held = append(held, f)
	}
	for _, f := range held {
		f.Close()
	}
	if len(held) >= childFileLimit {
		t.Fatalf("opened %d files under RLIMIT_NOFILE %d", len(held), childFileLimit)
	}

	d, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("Open under RLIMIT_NOFILE %d: %v", childFileLimit, err)
	}
	defer d.Close()
	opened := d.tableCache.stats()
	if opened.misses < uint64(n) {
		t.Fatalf("Open opened %d table files, want all %d", opened.misses, n)
	}
	m := fileLimitModel(n)
	keys := 0
	for i := range 2 * n {
		if err := checkGet(d, []byte(fileLimitKey(i)), m); err != nil {
			t.Fatal(err)
		}
		keys++
	}
	got, err := readAll(d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffModels(got, m); diff != "" {
		t.Fatalf("scan: %s", diff)
	}
	st := d.tableCache.stats()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("child served %d keys (%d live) and scanned them under RLIMIT_NOFILE %d, %d descriptors free before Open; table cache of %d: %d opens at Open, then %d hits, %d misses, %d evictions\n",
		keys, len(m), childFileLimit, len(held), tableCacheCapacity(defaultMaxOpenFiles, childFileLimit), opened.misses, st.hits-opened.hits, st.misses-opened.misses, st.evictions)
}

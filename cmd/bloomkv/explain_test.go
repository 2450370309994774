package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
)

// buildTestDB builds, in a new directory, the same small tree every time:
//
//   - L1 and below: key0000…key0399 (every other key, values v1), pushed
//     down by compactions that tiny level sizes force;
//   - L0: two tables flushed after reopening with the default triggers —
//     an overwrite of key0100…key0148 with one key deleted, and new keys
//     key0500…key0549;
//   - nothing in the memtable, so that Open's replay adds no table.
//
// Background compactions are waited for by their count, which the keys and
// options fix, so the file numbers and the tree's shape are deterministic.
func buildTestDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	put := func(db *bloomkv.DB, key, value string) {
		if err := db.Put([]byte(key), []byte(value), bloomkv.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// Static sizing and one compaction at a time make the tree, and so
	// the golden files, the same on every run and machine.
	deep := &bloomkv.Options{
		BlockSize: 512, L0CompactionTrigger: 1,
		BaseLevelSize: 8 << 10, LevelMultiplier: 2, TargetFileSize: 8 << 10,
		LevelSizing: bloomkv.StaticLevelSizing, MaxConcurrentCompactions: 1,
	}
	db, err := bloomkv.Open(dir, deep)
	if err != nil {
		t.Fatal(err)
	}
	// Three interleaved flushes, so that compactions merge and cut tables.
	for phase, want := range testDBCompactions {
		for i := 2 * phase; i < 2000; i += 6 {
			put(db, fmt.Sprintf("key%04d", i), fmt.Sprintf("v1-%016x", uint64(i)*0x9e3779b97f4a7c15))
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		waitCompactions(t, db, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bloomkv.Open(dir, &bloomkv.Options{BlockSize: 512, LevelSizing: bloomkv.StaticLevelSizing, MaxConcurrentCompactions: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 20 {
		put(db, fmt.Sprintf("key%04d", i), fmt.Sprintf("v2-%04d", i))
	}
	if err := db.Delete([]byte("key0400"), bloomkv.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 2000; i += 10 {
		put(db, fmt.Sprintf("key%04d", i), fmt.Sprintf("v3-%04d", i))
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testDBCompactions are the numbers of compactions run after each flush of
// buildTestDB's first phase: the flush's L0→L1, then those the level sizes
// ask for. They are deterministic, since nothing is written meanwhile.
var testDBCompactions = []uint64{2, 5, 8}

// waitCompactions waits until db has run n compactions, and checks it runs
// no more.
func waitCompactions(t *testing.T, db *bloomkv.DB, n uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for db.Metrics().Compactions < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d compactions after 30s, want %d", db.Metrics().Compactions, n)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := db.Metrics().Compactions; got != n {
		t.Fatalf("%d compactions, want %d", got, n)
	}
}

// runOK runs a command line that must succeed and returns its output.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

func TestExplainGolden(t *testing.T) {
	dir := buildTestDB(t)
	for _, tc := range []struct{ name, key string }{
		{"explain-deep", "key0010"},             // found below L0 after the L0 tables
		{"explain-l0", "key0100"},               // found in the older L0 table
		{"explain-deleted", "key0400"},          // a tombstone in L0 hides the deeper value
		{"explain-absent", "key0011"},           // in range everywhere, filters say no
		{"explain-out-of-range", "zzz"},         // no table's range holds it
		{"explain-new", "key0525"},              // only in the newest L0 table
		{"explain-false-positive", "key0036-x"}, // a filter says maybe; the block read finds nothing
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGolden(t, tc.name, runOK(t, "explain", "-db", dir, tc.key))
		})
	}
}

// TestExplainMulti explains a batch with -multi: keys found below L0, in
// L0, deleted, absent and out of range, two sharing a block; and checks
// that each key's path in it is the one explain alone prints.
func TestExplainMulti(t *testing.T) {
	dir := buildTestDB(t)
	keys := []string{"key0010", "key0012", "key0100", "key0400", "key0011", "zzz", "key0525"}
	out := runOK(t, append([]string{"explain", "-db", dir, "-multi"}, keys...)...)
	checkGolden(t, "explain-multi", out)
	_, perKey, _ := strings.Cut(out, "key 1 of ")
	for i, key := range keys {
		// The key's part of the batch's output, and its answer: the
		// summary's last clause ("found in L0/000007.sst", "not found").
		part, rest, _ := strings.Cut(perKey, fmt.Sprintf("key %d of ", i+2))
		perKey = rest
		alone := runOK(t, "explain", "-db", dir, key)
		answer := strings.TrimSpace(alone[strings.LastIndex(alone, ", ")+2:])
		if !strings.Contains(part, fmt.Sprintf("lookup %q", key)) || !strings.Contains(part, ", "+answer+"\n") {
			t.Errorf("%s: explain alone answers %q, the batch:\n%s", key, answer, part)
		}
	}
}

// TestExplainUsage checks explain's usage errors: exit 2 and the reason.
func TestExplainUsage(t *testing.T) {
	dir := buildTestDB(t)
	for _, tc := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"explain", "-db", dir}, "KEY"},
		{[]string{"explain", "-db", dir, "a", "b"}, "KEY"},
		{[]string{"explain", "-db", dir, "-multi"}, "-multi"},
		{[]string{"explain", "-db", dir, "-multi", "-hex", "61", "zz"}, "hexadecimal"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.mentions) || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, %q; want %d naming %q", tc.args, code, stderr.String(), exitUsage, tc.mentions)
		}
	}
}

func TestTreeGolden(t *testing.T) {
	dir := buildTestDB(t)
	checkGolden(t, "tree", runOK(t, "tree", "-db", dir))
}

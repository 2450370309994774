package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// explainTestDB returns a DB of two L0 tables and a memtable:
// k000…k099 (even keys) in the older table, k001…k099 (odd) in the newer,
// k050 deleted in the memtable, k200 only in the memtable.
func explainTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open("/db", &Options{FS: vfs.NewMem(), BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for parity := range 2 {
		for i := parity; i < 100; i += 2 {
			if err := db.Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete([]byte("k050"), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := db.Put([]byte("k200"), []byte("mem"), NoSync); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestExplainMatchesGet checks, for present, deleted and absent keys, that
// Explain gives Get's answer, and that its steps follow the read path.
func TestExplainMatchesGet(t *testing.T) {
	db := explainTestDB(t)
	for i := range 300 {
		key := fmt.Appendf(nil, "k%03d", i)
		want, err := db.Get(key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		tr, err := db.Explain(key)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Found && !tr.Deleted != (want != nil) || !bytes.Equal(tr.Value, want) {
			t.Fatalf("%s: Explain found=%v deleted=%v value %q; Get %q", key, tr.Found, tr.Deleted, tr.Value, want)
		}
		if len(tr.Steps) == 0 || tr.Steps[0].Kind != MemtableStep {
			t.Fatalf("%s: first step %+v, want the memtable", key, tr.Steps)
		}
		last := tr.Steps[len(tr.Steps)-1]
		if tr.Found && (!last.Found || last.Place() != tr.Source) {
			t.Fatalf("%s: found in %q, but the last step is %+v", key, tr.Source, last)
		}
	}
}

func TestExplainSteps(t *testing.T) {
	db := explainTestDB(t)
	for _, tc := range []struct {
		key, summary string
		steps        int
	}{
		{"k200", "found in memtable", 1},
		{"k050", "deleted in memtable", 1},
		// Odd keys are in the newer L0 table, listed first.
		{"k051", "1 block read", 2},
		// Even keys: the newer table's filter (most likely) rules it out.
		{"k300", "2 tables out of range, no block read, not found", 3},
	} {
		tr, err := db.Explain([]byte(tc.key))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Steps) != tc.steps || !bytes.Contains([]byte(tr.Summary()), []byte(tc.summary)) {
			t.Errorf("%s: %d steps, summary %q; want %d steps, summary with %q\n%s", tc.key, len(tr.Steps), tr.Summary(), tc.steps, tc.summary, tr)
		}
	}
	// A second lookup of the same key finds its block in the cache.
	tr, _ := db.Explain([]byte("k051"))
	if n := tr.Totals(); n.BlocksFromCache != 1 || n.BlocksFromFile != 0 || n.BytesRead != 0 {
		t.Errorf("second lookup: %+v, want 1 block from the cache\n%s", n, tr)
	}
}

// TestExplainCountsLikeGet checks that Explain's totals and the metrics
// it moves agree: it is a Get.
func TestExplainCountsLikeGet(t *testing.T) {
	db := explainTestDB(t)
	before := db.Metrics()
	var sum TraceTotals
	for i := range 100 {
		tr, err := db.Explain(fmt.Appendf(nil, "k%03d-absent", i))
		if err != nil {
			t.Fatal(err)
		}
		n := tr.Totals()
		sum.FilterNegatives += n.FilterNegatives
		sum.FalsePositives += n.FalsePositives
		sum.BlocksFromFile += n.BlocksFromFile
	}
	after := db.Metrics().Levels[0]
	if got := after.FilterNegatives - before.Levels[0].FilterNegatives; got != uint64(sum.FilterNegatives) {
		t.Errorf("metrics count %d filter negatives, traces %d", got, sum.FilterNegatives)
	}
	if got := after.FalsePositives() - before.Levels[0].FalsePositives(); got != uint64(sum.FalsePositives) {
		t.Errorf("metrics count %d false positives, traces %d", got, sum.FalsePositives)
	}
}

func TestExplainClosed(t *testing.T) {
	db := explainTestDB(t)
	db.Close()
	if _, err := db.Explain([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Explain after Close: %v, want ErrClosed", err)
	}
}

// TestExplainGetAllocs checks that sharing the read path with Explain costs
// Get no allocation: Get allocates what it did before Explain shared its
// path (measured then: 5 for a table hit — read state, seek key, block
// read and decode, the value's copy — and 2 for a miss every filter rules
// out).
func TestExplainGetAllocs(t *testing.T) {
	db := explainTestDB(t)
	key := []byte("k051")
	db.Get(key)
	tableHit := testing.AllocsPerRun(100, func() { db.Get(key) })
	miss := testing.AllocsPerRun(100, func() { db.Get([]byte("k300")) })
	if tableHit > 5 || miss > 2 {
		t.Errorf("Get allocates %v (table hit), %v (miss)", tableHit, miss)
	}
}

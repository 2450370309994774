package main

import (
	"strings"
	"testing"
)

// TestLoader loads a small tree both ways, twice: every Get of a present
// key must return its value and every Get of an absent one ErrNotFound
// (reads checks each), and the report names both loads and reads.
func TestLoader(t *testing.T) {
	var out strings.Builder
	c := config{n: 3000, value: 20, table: 700, reads: 1000, missingReads: 2000, compare: true, pairs: 2, dir: t.TempDir()}
	if err := run(&out, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ingest: 3000 keys in 5 tables", "puts:   3000 keys", "2 pairs", "readrandom", "readmissing"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(&out, config{n: 0, table: 1, pairs: 1}); err == nil {
		t.Error("-n 0 accepted")
	}
}

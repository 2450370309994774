package bloomkv

import (
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/vfs"
)

// explainAt is Explain at sequence number seq (a snapshot's), which the
// API does not offer: the same lookup, with a Trace.
func explainAt(t *testing.T, d *DB, key []byte, seq base.SeqNum) *Trace {
	t.Helper()
	rs, _, err := d.acquireReadState()
	if err != nil {
		t.Fatal(err)
	}
	defer d.releaseReadState(rs)
	tr := &Trace{Key: key, SeqNum: uint64(seq)}
	if _, err := d.lookup(rs, key, seq, tr); err != nil && err != ErrNotFound {
		t.Fatal(err)
	}
	return tr
}

// TestSnapshotReadIsNoFalsePositive reads, at a snapshot, keys overwritten
// after it, from an L0 table that holds only the newer versions: its
// filter's "maybe" is right (the table holds the user keys), though the
// read finds nothing there and goes on to the older table. Metrics and
// Explain used to count each such read as a false positive (an L0 FPR of
// 100% was seen). Absent keys whose filters say "maybe" must still count:
// the oracle for them is the tables' filters, asked directly.
func TestSnapshotReadIsNoFalsePositive(t *testing.T) {
	d, err := Open("/db", &Options{FS: vfs.NewMem(), L0CompactionTrigger: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// 100 keys a table: at 10 bits per key about 1% of absent keys pass
	// its filter.
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("k%03d", 2*i))
	}
	write := func(value string) {
		t.Helper()
		for _, k := range keys {
			if err := d.Put([]byte(k), []byte(value), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write("old")
	snap, err := d.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	write("new") // the newer L0 table: only versions after the snapshot

	d.mu.Lock()
	l0 := d.mu.current.tables[0]
	d.mu.Unlock()
	if len(l0) != 2 {
		t.Fatalf("%d L0 tables, want 2 (no compaction)", len(l0))
	}
	// mayContain counts the L0 tables whose filter says "maybe" for key,
	// which both tables' ranges must hold.
	mayContain := func(key []byte) uint64 {
		n := uint64(0)
		for _, tb := range l0 {
			if !tb.meta.ContainsUserKey(key) {
				t.Fatalf("%q is outside table %d's range", key, tb.meta.FileNum)
			}
			if tb.reader.Filter().MayContainHash(bloom.Hash(key)) {
				n++
			}
		}
		return n
	}
	// A key absent from both tables, inside their range, that a filter
	// says "maybe" for: a genuine false positive.
	var absent []byte
	for i := 0; absent == nil; i++ {
		if i == 100_000 {
			t.Fatal("no absent key passes either filter")
		}
		if k := fmt.Appendf(nil, "k100.%d", i); mayContain(k) > 0 {
			absent = k
		}
	}

	for _, tc := range []struct {
		name          string
		key           []byte
		want          string // the snapshot's value, "" for none
		falsePositive uint64 // L0 tables whose filter was wrong
	}{
		{"overwritten after the snapshot", []byte("k100"), "old", 0},
		{"first key", []byte("k000"), "old", 0},
		{"last key", []byte("k198"), "old", 0},
		{"absent, filter says maybe", absent, "", mayContain(absent)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := d.Metrics().Levels[0]
			v, err := snap.Get(tc.key)
			if string(v) != tc.want || (tc.want == "" && err != ErrNotFound) || (tc.want != "" && err != nil) {
				t.Fatalf("snapshot Get(%q) = %q, %v; want %q", tc.key, v, err, tc.want)
			}
			after := d.Metrics().Levels[0]
			got := after.FalsePositives() - before.FalsePositives()
			positives := after.FilterPositives - before.FilterPositives
			if got != tc.falsePositive || positives != mayContain(tc.key) {
				t.Fatalf("Metrics: %d false positives of %d filter positives; want %d of %d",
					got, positives, tc.falsePositive, mayContain(tc.key))
			}

			tr := explainAt(t, d, tc.key, snap.seq)
			if n := tr.Totals(); uint64(n.FalsePositives) != tc.falsePositive || uint64(n.FilterPositives) != mayContain(tc.key) {
				t.Fatalf("Explain: %d false positives of %d filter positives; want %d of %d:\n%s",
					n.FalsePositives, n.FilterPositives, tc.falsePositive, mayContain(tc.key), tr)
			}
			// The newer table, consulted first, holds the overwritten keys
			// only after the snapshot.
			if tc.want != "" {
				s := tr.Steps[1]
				if s.Kind != TableStep || s.FileNum != l0[0].meta.FileNum || s.Found || !s.KeyInTable || s.FalsePositive() {
					t.Fatalf("Explain's step for the newer table: %+v; want not found, key in table, no false positive", s)
				}
			}
		})
	}
}

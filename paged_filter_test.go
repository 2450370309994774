package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/sstable"
)

// TestPagedFilters fills a DB under a MemoryLimit whose filters' share
// cannot hold BitsPerKey for its keys, so that the planner lowers the
// tables' filters, and checks: the tables whose filter is weaker than a
// Bloom filter of BitsPerKey, and only those, carry a paged filter of
// BitsPerKey bits; absent keys are never found, and of the false
// positives of their filters the paged filters rule out all but the few
// the paged filters' own rate lets through (at 40 bits per key, a rate of
// about 10^-7: none are expected), so that data blocks are read only for
// those; every present key is found with its value (the map model), by
// Get and by MultiGet, which finds no absent one; and
// with DisablePagedFilters no table has one and nothing is ruled out so.
func TestPagedFilters(t *testing.T) {
	const bits = 40
	n := sizeFor(250_000, 250_000)
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("disabled=%v", disabled), func(t *testing.T) {
			d, err := Open(t.TempDir(), &Options{MemoryLimit: 4 << 20, BitsPerKey: bits, MaxConcurrentCompactions: 1, TargetFileSize: 256 << 10, DisablePagedFilters: disabled})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			key := func(i int) []byte { return fmt.Appendf(nil, "key%09d", i) }
			for i := range n {
				if err := d.Put(key(2*i), key(2*i), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			tables, err := d.Tables()
			if err != nil {
				t.Fatal(err)
			}
			paged := 0
			for _, lt := range tables {
				weaker := lt.Filter.Family == sstable.NoFilter || lt.Filter.ExpectedFalsePositiveRate() > sstable.Bloom(bits).ExpectedFalsePositiveRate()
				want := 0.0
				if weaker && !disabled {
					want, paged = bits, paged+1
				}
				if lt.PagedFilterBitsPerKey < want*0.95 || lt.PagedFilterBitsPerKey > want*1.1 {
					t.Fatalf("L%d table %d, filter %v: paged filter of %.2f bits/key, want about %v", lt.Level, lt.FileNum, lt.Filter, lt.PagedFilterBitsPerKey, want)
				}
			}
			if !disabled && paged == 0 {
				t.Fatalf("no table has a paged filter: the budget did not bind (tables: %d)", len(tables))
			}
			total := func() (l LevelMetrics) {
				for _, lm := range d.Metrics().Levels {
					l = l.Plus(lm)
				}
				return l
			}
			before := total()
			for i := range n / 10 {
				if _, err := d.Get(key(20*i + 1)); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Get of absent key %d: %v", 20*i+1, err)
				}
			}
			m := total()
			falsePositives := m.FalsePositives() - before.FalsePositives()
			negatives := m.PagedFilterNegatives - before.PagedFilterNegatives
			blocks := m.BlocksFromFile + m.BlocksFromCache - before.BlocksFromFile - before.BlocksFromCache
			t.Logf("%d tables, %d with a paged filter; %d absent-key Gets: %d false positives, %d ruled out by paged filters, %d data blocks", len(tables), paged, n/10, falsePositives, negatives, blocks)
			switch {
			case disabled && (negatives != 0 || m.FilterPagesFromFile+m.FilterPagesFromCache != 0):
				t.Fatalf("paged filters disabled, yet %d negatives, %d pages", negatives, m.FilterPagesFromFile+m.FilterPagesFromCache)
			case !disabled && falsePositives < 100:
				t.Fatalf("%d false positives: the filters were not lowered enough to test the paged ones", falsePositives)
			case !disabled && falsePositives-negatives > 3:
				t.Fatalf("the paged filters ruled out %d of %d false positives", negatives, falsePositives)
			case blocks > falsePositives-negatives:
				t.Fatalf("%d data blocks read for %d false positives the paged filters let through", blocks, falsePositives-negatives)
			}
			for i := range n / 10 {
				k := key(20 * i)
				if v, err := d.Get(k); err != nil || !bytes.Equal(v, k) {
					t.Fatalf("Get(%s) = %q, %v", k, v, err)
				}
			}
			// MultiGet, whose Locate consults the paged filters too: a
			// batch of present and absent keys.
			var batch [][]byte
			for i := range 2000 {
				batch = append(batch, key(10*i+i%2))
			}
			values, err := d.MultiGet(batch)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range values {
				if present := i%2 == 0; present && !bytes.Equal(v, batch[i]) || !present && v != nil {
					t.Fatalf("MultiGet: %s = %q", batch[i], v)
				}
			}
		})
	}
}

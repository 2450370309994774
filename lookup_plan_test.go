package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestLookupPlanBatches checks lookups over more L0 tables than one plan
// holds (placeBatch), so that batches end inside L0 and at its end: every
// Get gives the model's answer, and Explain lists, after the memtable,
// every L0 table newest first, from the DB's own list of its tables, up
// to the one that answers — in range or not as the table's bounds say
// (the oracle), each in-range table with its filter's verdict — and, for
// a key no table holds, every one.
//
// Table j holds "key%03d" for j ≤ i < j+8 (so ranges overlap, and a key
// is in up to 8 tables), each at value "j", and "z%03d" = j: the newest
// table holding a key answers.
func TestLookupPlanBatches(t *testing.T) {
	const tables = 3*placeBatch + 1
	d, err := Open("db", &Options{FS: vfs.NewMem(), L0CompactionTrigger: noCompaction, L0SlowdownTrigger: noCompaction + 1, L0StopTrigger: noCompaction + 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	model := map[string]string{}
	for j := range tables {
		put := func(k, v string) {
			if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		}
		for i := j; i < j+8; i++ {
			put(fmt.Sprintf("key%03d", i), fmt.Sprint(j))
		}
		put(fmt.Sprintf("z%03d", j), fmt.Sprint(j))
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	live, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != tables || live[0].Level != 0 || live[tables-1].Level != 0 {
		t.Fatalf("%d tables (first at L%d), want %d in L0", len(live), live[0].Level, tables)
	}
	var keys []string
	for k := range model {
		keys = append(keys, k, k+"-absent")
	}
	keys = append(keys, "a", "zzz")
	for _, k := range keys {
		want, inModel := model[k]
		got, err := d.Get([]byte(k))
		if inModel && (err != nil || string(got) != want) || !inModel && !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%q) = %q, %v; want %q (held: %v)", k, got, err, want, inModel)
		}
		tr, err := d.Explain([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Found != inModel || inModel && string(tr.Value) != want {
			t.Fatalf("Explain(%q) found %v, %q; want %v, %q", k, tr.Found, tr.Value, inModel, want)
		}
		steps := tr.Steps[1:] // the memtable first
		if tr.Steps[0].Kind != MemtableStep {
			t.Fatalf("Explain(%q): first step %+v, want the memtable", k, tr.Steps[0])
		}
		for i, s := range steps {
			lt := live[i]
			inRange := bytes.Compare(lt.Smallest, []byte(k)) <= 0 && bytes.Compare([]byte(k), lt.Largest) <= 0
			if s.Kind != TableStep || s.FileNum != lt.FileNum || s.InRange != inRange {
				t.Fatalf("Explain(%q) step %d: %+v; want table %06d, in range %v\n%s", k, i+1, s, lt.FileNum, inRange, tr)
			}
			if inRange && s.Filter != FilterAbsent && s.Filter != FilterMaybe {
				t.Fatalf("Explain(%q) step %d: filter verdict %v", k, i+1, s.Filter)
			}
			if s.Found && i != len(steps)-1 {
				t.Fatalf("Explain(%q): found at step %d, but %d steps follow\n%s", k, i+1, len(steps)-1-i, tr)
			}
		}
		if !inModel && len(steps) != tables {
			t.Fatalf("Explain(%q) of an absent key: %d table steps, want all %d\n%s", k, len(steps), tables, tr)
		}
		if inModel && !steps[len(steps)-1].Found {
			t.Fatalf("Explain(%q): the last step did not answer\n%s", k, tr)
		}
	}
}

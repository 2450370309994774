//go:build !peers_single || peers_badger

package peers

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
	bvfs "github.com/bloomkv/bloomkv/vfs"
	"github.com/dgraph-io/badger/v4"
)

// txnDiffPair is one transaction begun on both engines at the same point
// of the history.
type txnDiffPair struct {
	b *bloomkv.Transaction
	g *badger.Txn
}

// TestTxnDifferential runs one random single-threaded history of
// interleaved update transactions (up to four open at once: Gets, Sets,
// Deletes, Sets with an hour's time-to-live, Commits and Discards) and
// plain writes on bloomkv and on Badger, whose transactions bloomkv's
// follow (snapshot isolation; a commit conflicts when a commit after the
// snapshot wrote a key the transaction read by Get, own writes not
// counting; a transaction with no reads or no writes never conflicts).
// Every Get in a transaction must return the same on both, every Commit
// the same outcome (ErrConflict or not), and every key the same value
// every few hundred steps and at the end. Scans are left out: Badger
// counts as read the keys an iterator returned, bloomkv the range it
// passed over (phantoms conflict), so the outcomes differ by design.
//
// Time-to-live: Badger's clock is the wall clock, in whole seconds, so
// the history's writes with a time-to-live either outlive the test (an
// hour) or, on keys of their own that no transaction reads, last one
// second; at the end, a second and a half after the last of those, both
// engines must show them gone (a key written at T expires at T+1 s on
// both: Badger rounds its expiry down to the second).
func TestTxnDifferential(t *testing.T) {
	b, err := bloomkv.Open("db", &bloomkv.Options{FS: bvfs.NewMem(), MemtableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	g, err := badger.Open(badger.DefaultOptions("").WithInMemory(true).WithLogger(nil).WithMemTableSize(8 << 20).WithNumVersionsToKeep(1))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	rng := rand.New(rand.NewPCG(39, 11))
	keys := make([][]byte, 60)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%03d", i)
	}
	short := make([][]byte, 20) // the keys of the one-second writes
	for i := range short {
		short[i] = fmt.Appendf(nil, "t%03d", i)
	}
	var lastShort time.Time
	must := func(what string, errB, errG error) {
		t.Helper()
		if errB != nil {
			t.Fatalf("bloomkv %s: %v", what, errB)
		}
		if errG != nil {
			t.Fatalf("badger %s: %v", what, errG)
		}
	}
	var open []*txnDiffPair
	commits, conflicts, steps := 0, 0, 3000
	for i := range steps {
		k := keys[rng.IntN(len(keys))]
		v := fmt.Appendf(nil, "v%d", i)
		if len(open) == 0 || len(open) < 4 && rng.IntN(6) == 0 {
			tb, err := b.NewTransaction(true)
			must("NewTransaction", err, nil)
			open = append(open, &txnDiffPair{b: tb, g: g.NewTransaction(true)})
			continue
		}
		j := rng.IntN(len(open))
		p := open[j]
		switch r := rng.IntN(20); {
		case r < 6:
			bv, berr := p.b.Get(k)
			gv, gerr := badgerGet(p.g, k)
			if errors.Is(berr, bloomkv.ErrNotFound) != errors.Is(gerr, badger.ErrKeyNotFound) || !bytes.Equal(bv, gv) ||
				berr != nil && !errors.Is(berr, bloomkv.ErrNotFound) || gerr != nil && !errors.Is(gerr, badger.ErrKeyNotFound) {
				t.Fatalf("step %d: transaction Get(%s): bloomkv %q %v, badger %q %v", i, k, bv, berr, gv, gerr)
			}
		case r < 9:
			must("Set", p.b.Set(k, v), p.g.Set(k, v))
		case r < 10:
			must("SetWithTTL", p.b.SetWithTTL(k, v, time.Hour), p.g.SetEntry(badger.NewEntry(k, v).WithTTL(time.Hour)))
		case r < 11:
			must("Delete", p.b.Delete(k), p.g.Delete(k))
		case r < 15:
			open = slices.Delete(open, j, j+1)
			berr, gerr := p.b.Commit(bloomkv.NoSync), p.g.Commit()
			bc, gc := errors.Is(berr, bloomkv.ErrConflict), errors.Is(gerr, badger.ErrConflict)
			if bc != gc || berr != nil && !bc || gerr != nil && !gc {
				t.Fatalf("step %d: Commit: bloomkv %v, badger %v", i, berr, gerr)
			}
			commits += b2i(!bc)
			conflicts += b2i(bc)
		case r < 16:
			open = slices.Delete(open, j, j+1)
			p.b.Discard()
			p.g.Discard()
		case r < 18: // a plain write, outside the open transactions
			must("Put", b.Put(k, v, bloomkv.NoSync), g.Update(func(txn *badger.Txn) error { return txn.Set(k, v) }))
		case r < 19:
			must("Delete", b.Delete(k, bloomkv.NoSync), g.Update(func(txn *badger.Txn) error { return txn.Delete(k) }))
		default:
			s := short[rng.IntN(len(short))]
			must("PutWithTTL", b.PutWithTTL(s, v, time.Second, bloomkv.NoSync),
				g.Update(func(txn *badger.Txn) error { return txn.SetEntry(badger.NewEntry(s, v).WithTTL(time.Second)) }))
			lastShort = time.Now()
		}
		if i%700 == 699 {
			must("Flush", b.Flush(), nil)
		}
		if i%500 == 0 {
			compareTxnState(t, b, g, keys, i)
		}
	}
	for _, p := range open {
		p.b.Discard()
		p.g.Discard()
	}
	compareTxnState(t, b, g, keys, steps)
	if commits == 0 || conflicts == 0 {
		t.Fatalf("%d commits, %d conflicts: the history must have both", commits, conflicts)
	}
	// Every one-second write has expired a second after the last one
	// returned; the half second more is for a wall clock slewed meanwhile.
	time.Sleep(time.Until(lastShort.Add(1500 * time.Millisecond)))
	for _, s := range short {
		if v, err := b.Get(s); !errors.Is(err, bloomkv.ErrNotFound) {
			t.Errorf("bloomkv Get(%s) = %q, %v after its time-to-live", s, v, err)
		}
		if err := g.View(func(txn *badger.Txn) error { _, err := txn.Get(s); return err }); !errors.Is(err, badger.ErrKeyNotFound) {
			t.Errorf("badger Get(%s): %v after its time-to-live", s, err)
		}
	}
	t.Logf("%d steps: %d commits, %d conflicts", steps, commits, conflicts)
}

// badgerGet returns txn's value of key.
func badgerGet(txn *badger.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

// compareTxnState compares every key's value in b and g.
func compareTxnState(t *testing.T, b *bloomkv.DB, g *badger.DB, keys [][]byte, step int) {
	t.Helper()
	err := g.View(func(txn *badger.Txn) error {
		for _, k := range keys {
			bv, berr := b.Get(k)
			gv, gerr := badgerGet(txn, k)
			if errors.Is(berr, bloomkv.ErrNotFound) != errors.Is(gerr, badger.ErrKeyNotFound) || !bytes.Equal(bv, gv) {
				return fmt.Errorf("after %d steps, Get(%s): bloomkv %q %v, badger %q %v", step, k, bv, berr, gv, gerr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

func openTxnTestDB(t *testing.T, o *Options) *DB {
	t.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.FS = vfs.NewMem()
	d, err := Open("/db", &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// scanAll reads every key of it within its bounds, forward.
func scanAll(it *Iterator) []string {
	var keys []string
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, string(it.Key()))
	}
	return keys
}

// TestTransactionConflicts checks, case by case, whether a transaction
// that read something commits after another commit wrote something, as
// docs/transactions.md states: the expected outcome is the rule's, worked
// out by hand for each case.
func TestTransactionConflicts(t *testing.T) {
	type step func(d *DB, txn *Transaction) error
	get := func(k string) step {
		return func(_ *DB, txn *Transaction) error {
			_, err := txn.Get([]byte(k))
			if errors.Is(err, ErrNotFound) {
				err = nil
			}
			return err
		}
	}
	set := func(k string) step {
		return func(_ *DB, txn *Transaction) error { return txn.Set([]byte(k), []byte("t")) }
	}
	scan := func(lo, hi string) step { // a full scan of [lo, hi)
		return func(_ *DB, txn *Transaction) error {
			it, err := txn.NewIter(&IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)})
			if err != nil {
				return err
			}
			scanAll(it)
			return it.Close()
		}
	}
	seekOne := func(k string) step { // SeekGE, and nothing after
		return func(_ *DB, txn *Transaction) error {
			it, err := txn.NewIter(nil)
			if err != nil {
				return err
			}
			it.SeekGE([]byte(k))
			return it.Close()
		}
	}
	put := func(k string) step { // another commit, a plain Put
		return func(d *DB, _ *Transaction) error { return d.Put([]byte(k), []byte("other"), nil) }
	}
	delRange := func(lo, hi string) step {
		return func(d *DB, _ *Transaction) error { return d.DeleteRange([]byte(lo), []byte(hi), nil) }
	}
	otherTxn := func(k string) step { // another transaction, write-only
		return func(d *DB, _ *Transaction) error {
			return d.Update(func(o *Transaction) error { return o.Set([]byte(k), []byte("o")) })
		}
	}
	// The DB holds b, d, f before each case.
	cases := []struct {
		name     string
		steps    []step
		conflict bool
	}{
		{"read, other writes it", []step{get("b"), put("b"), set("x")}, true},
		{"read, other writes another key", []step{get("b"), put("d"), set("x")}, false},
		{"read of a missing key, other creates it", []step{get("c"), put("c"), set("x")}, true},
		{"write only, other writes the same key", []step{set("b"), put("b")}, false},
		{"read of own write, other writes it", []step{set("b"), get("b"), put("b")}, false},
		{"read, other transaction writes it", []step{get("d"), otherTxn("d"), set("x")}, true},
		{"scan, other writes inside", []step{scan("a", "e"), put("c"), set("x")}, true},
		{"scan, other writes below", []step{scan("c", "e"), put("a"), set("x")}, false},
		{"scan, other writes above", []step{scan("a", "c"), put("e"), set("x")}, false},
		{"scan, other writes at the upper bound", []step{scan("a", "c"), put("c"), set("x")}, true},
		{"seek stops at d, other writes e", []step{seekOne("c"), put("e"), set("x")}, false},
		{"seek stops at d, other writes c", []step{seekOne("c"), put("c"), set("x")}, true},
		{"seek stops at d, other writes d", []step{seekOne("c"), put("d"), set("x")}, true},
		{"read, other deletes a range over it", []step{get("d"), delRange("c", "e"), set("x")}, true},
		{"read, other deletes a range beside it", []step{get("d"), delRange("e", "g"), set("x")}, false},
		{"scan, other deletes an overlapping range", []step{scan("a", "c"), delRange("b", "z"), set("x")}, true},
		{"read and no write, other writes it", []step{get("b"), put("b")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := openTxnTestDB(t, nil)
			for _, k := range []string{"b", "d", "f"} {
				if err := d.Put([]byte(k), []byte("v"), nil); err != nil {
					t.Fatal(err)
				}
			}
			txn, err := d.NewTransaction(true)
			if err != nil {
				t.Fatal(err)
			}
			defer txn.Discard()
			for i, s := range tc.steps {
				if err := s(d, txn); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			err = txn.Commit(nil)
			switch {
			case tc.conflict && !errors.Is(err, ErrConflict):
				t.Fatalf("Commit: %v, want ErrConflict", err)
			case !tc.conflict && err != nil:
				t.Fatalf("Commit: %v, want nil", err)
			}
			// A conflict wrote nothing; a commit wrote x if it set it.
			_, _, setX := txn.batch.index.get([]byte("x"))
			v, err := d.Get([]byte("x"))
			switch {
			case setX && !tc.conflict && (err != nil || string(v) != "t"):
				t.Fatalf("after Commit, Get(x) = %q, %v; want t", v, err)
			case (!setX || tc.conflict) && !errors.Is(err, ErrNotFound):
				t.Fatalf("Get(x) = %q, %v; want ErrNotFound: the transaction did not commit x", v, err)
			}
		})
	}
}

// TestTransactionWriteSkew is the on-call example of write skew: two
// doctors are on call, and each, in a transaction, leaves if the other
// still is. Under snapshot isolation alone both would see two on call and
// both leave. Here each transaction's scan of the on-call range is a read
// of the range, so the second to commit conflicts — and so does one whose
// scanned range gains a new key (a phantom), while a transaction that
// scanned elsewhere commits.
func TestTransactionWriteSkew(t *testing.T) {
	d := openTxnTestDB(t, nil)
	for _, k := range []string{"oncall/alice", "oncall/bob"} {
		if err := d.Put([]byte(k), []byte("1"), nil); err != nil {
			t.Fatal(err)
		}
	}
	onCall := func(txn *Transaction) int {
		t.Helper()
		it, err := txn.NewIter(&IterOptions{LowerBound: []byte("oncall/"), UpperBound: []byte("oncall0")})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if string(it.Value()) == "1" {
				n++
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	leave := func(who string) *Transaction {
		txn, err := d.NewTransaction(true)
		if err != nil {
			t.Fatal(err)
		}
		if n := onCall(txn); n != 2 {
			t.Fatalf("%s sees %d on call, want 2", who, n)
		}
		if err := txn.Set([]byte("oncall/"+who), []byte("0")); err != nil {
			t.Fatal(err)
		}
		return txn
	}
	alice, bob := leave("alice"), leave("bob")
	if err := alice.Commit(nil); err != nil {
		t.Fatalf("alice's Commit: %v", err)
	}
	if err := bob.Commit(nil); !errors.Is(err, ErrConflict) {
		t.Fatalf("bob's Commit: %v, want ErrConflict", err)
	}
	if err := d.View(func(txn *Transaction) error {
		if n := onCall(txn); n != 1 {
			return fmt.Errorf("%d on call after both tried to leave, want 1", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// A phantom: a key new in the scanned range.
	count, err := d.NewTransaction(true)
	if err != nil {
		t.Fatal(err)
	}
	onCall(count)
	if err := count.Set([]byte("report"), []byte("1 on call")); err != nil {
		t.Fatal(err)
	}
	if err := d.Put([]byte("oncall/carol"), []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := count.Commit(nil); !errors.Is(err, ErrConflict) {
		t.Fatalf("Commit after a key was added to the scanned range: %v, want ErrConflict", err)
	}
	// A scan elsewhere does not conflict with the same write.
	other, err := d.NewTransaction(true)
	if err != nil {
		t.Fatal(err)
	}
	it, err := other.NewIter(&IterOptions{LowerBound: []byte("p"), UpperBound: []byte("q")})
	if err != nil {
		t.Fatal(err)
	}
	scanAll(it)
	it.Close()
	other.Set([]byte("report"), []byte("none"))
	if err := d.Put([]byte("oncall/dave"), []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(nil); err != nil {
		t.Fatalf("Commit of a scan outside the written range: %v", err)
	}
}

// TestTransactionBank moves money between accounts in concurrent
// transactions (read two balances, write both, and a per-worker count of
// transfers), retrying on ErrConflict, while read-only transactions sum
// the balances; in each cycle the file system is crashed at a random
// point (vfs.MemFS.CrashClone, with torn writes) and the DB reopened on
// what it left. The total never changes — in any View, and after every
// crash — no balance goes negative, and every transfer acknowledged
// before the crash survives it (the per-worker counts).
func TestTransactionBank(t *testing.T) {
	const (
		accounts = 8
		initial  = 100
		workers  = 4
	)
	cycles, perCycle := 4, 60
	if testing.Short() {
		cycles, perCycle = 2, 40
	}
	account := func(i int) []byte { return fmt.Appendf(nil, "acct/%02d", i) }
	counter := func(w int) []byte { return fmt.Appendf(nil, "ctr/%d", w) }
	num := func(txn *Transaction, k []byte) (int, error) {
		v, err := txn.Get(k)
		if errors.Is(err, ErrNotFound) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(string(v))
	}
	setNum := func(txn *Transaction, k []byte, n int) error { return txn.Set(k, strconv.AppendInt(nil, int64(n), 10)) }
	sum := func(txn *Transaction) (int, error) {
		it, err := txn.NewIter(&IterOptions{LowerBound: []byte("acct/"), UpperBound: []byte("acct0")})
		if err != nil {
			return 0, err
		}
		total, n := 0, 0
		for ok := it.First(); ok; ok = it.Next() {
			v, err := strconv.Atoi(string(it.Value()))
			if err != nil || v < 0 {
				it.Close()
				return 0, fmt.Errorf("balance of %s is %q", it.Key(), it.Value())
			}
			total, n = total+v, n+1
		}
		if n != accounts {
			return 0, fmt.Errorf("%d accounts, want %d", n, accounts)
		}
		return total, it.Close()
	}

	opts := &Options{MemtableSize: 64 << 10}
	mem := vfs.NewMem()
	opts.FS = mem
	d, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Update(func(txn *Transaction) error {
		for i := range accounts {
			if err := setNum(txn, account(i), initial); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	for cycle := range cycles {
		rng := rand.New(rand.NewPCG(uint64(cycle), 39))
		var acked [workers]atomic.Int64 // transfers acknowledged, from the DB's counter on
		var done atomic.Int64
		errs := make(chan error, workers+1)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var cycleConflicts atomic.Int64
		for w := range workers {
			wrng := rand.New(rand.NewPCG(uint64(cycle), uint64(w)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perCycle {
					from, to, amount := wrng.IntN(accounts), wrng.IntN(accounts), 1+wrng.IntN(20)
					var n int
					for {
						err := d.Update(func(txn *Transaction) error {
							a, err := num(txn, account(from))
							if err != nil {
								return err
							}
							b, err := num(txn, account(to))
							if err != nil {
								return err
							}
							if n, err = num(txn, counter(w)); err != nil {
								return err
							}
							runtime.Gosched() // widen the window for another commit to slip in
							if from != to && a >= amount {
								if err := setNum(txn, account(from), a-amount); err != nil {
									return err
								}
								if err := setNum(txn, account(to), b+amount); err != nil {
									return err
								}
							}
							return setNum(txn, counter(w), n+1)
						})
						if errors.Is(err, ErrConflict) {
							cycleConflicts.Add(1)
							continue
						}
						if err != nil {
							errs <- fmt.Errorf("worker %d: %w", w, err)
							return
						}
						break
					}
					acked[w].Store(int64(n + 1))
					done.Add(1)
				}
			}()
		}
		wg.Add(1)
		go func() { // the auditor
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var total int
				if err := d.View(func(txn *Transaction) (err error) {
					total, err = sum(txn)
					return err
				}); err != nil {
					errs <- fmt.Errorf("View: %w", err)
					return
				}
				if total != accounts*initial {
					errs <- fmt.Errorf("View: total %d, want %d", total, accounts*initial)
					return
				}
			}
		}()
		// Crash once a random share of the cycle's transfers is done.
		target := int64(1 + rng.IntN(workers*perCycle-1))
		for done.Load() < target && len(errs) == 0 {
			runtime.Gosched()
		}
		var before [workers]int64
		for w := range before {
			before[w] = acked[w].Load()
		}
		crashed := mem.CrashClone(vfs.CrashOptions{TornWrites: true, Seed: uint64(cycle)})
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		conflicts += int(cycleConflicts.Load())
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		mem = crashed
		opts.FS = mem
		if d, err = Open("/db", opts); err != nil {
			t.Fatalf("cycle %d: reopen after the crash: %v", cycle, err)
		}
		if err := d.View(func(txn *Transaction) error {
			total, err := sum(txn)
			if err != nil {
				return err
			}
			if total != accounts*initial {
				return fmt.Errorf("total %d, want %d", total, accounts*initial)
			}
			for w := range workers {
				n, err := num(txn, counter(w))
				if err != nil {
					return err
				}
				if int64(n) < before[w] {
					return fmt.Errorf("worker %d: %d transfers survived, %d were acknowledged before the crash", w, n, before[w])
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("cycle %d, after the crash: %v", cycle, err)
		}
	}
	t.Logf("%d conflicts retried", conflicts)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

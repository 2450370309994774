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

	"github.com/bloomkv/bloomkv/internal/base"
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
	lastOne := func(_ *DB, txn *Transaction) error { // Last, unbounded, and nothing after
		it, err := txn.NewIter(nil)
		if err != nil {
			return err
		}
		it.Last()
		return it.Close()
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
		{"scan with crossed bounds [d, b), other writes c", []step{scan("d", "b"), put("c"), set("x")}, true},
		{"scan with crossed bounds [d, b), other writes e", []step{scan("d", "b"), put("e"), set("x")}, false},
		{"Last stops at f, other writes g", []step{lastOne, put("g"), set("x")}, true},
		{"Last stops at f, other writes e", []step{lastOne, put("e"), set("x")}, false},
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
			// Metrics counts the conflict, once: the other steps' own
			// transaction (otherTxn) commits.
			if got, want := d.Metrics().TxnConflicts, map[bool]uint64{true: 1}[tc.conflict]; got != want {
				t.Fatalf("Metrics().TxnConflicts = %d, want %d", got, want)
			}
			// A conflict wrote nothing; a commit wrote x if it set it.
			_, _, _, setX := txn.batch.indexed().get([]byte("x"), base.SeqNumMax)
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

// modelTxn is an open transaction of TestTransactionModel and what the
// model knows of it.
type modelTxn struct {
	txn   *Transaction
	view  kvModel // the snapshot with the transaction's writes applied
	ops   []kvOp
	begun int // commits in the history when it began
	reads map[string]bool
	spans []modelSpan
	own   []kvOp // its writes, which answer its reads of what they cover
}

// modelSpan is the key range [lo, hi] a full scan read; with inf, [lo, ∞).
type modelSpan struct {
	lo, hi string
	inf    bool
}

// covers reports whether op wrote key.
func (op kvOp) covers(key string) bool {
	if op.rangeDel {
		return op.key <= key && key < op.end
	}
	return op.key == key
}

// touches reports whether op wrote something m read, by the rule of
// docs/transactions.md.
func (m *modelTxn) touches(op kvOp) bool {
	for k := range m.reads {
		if op.covers(k) {
			return true
		}
	}
	for _, s := range m.spans {
		switch {
		case op.rangeDel && s.lo < op.end && (s.inf || op.key <= s.hi):
			return true
		case !op.rangeDel && s.lo <= op.key && (s.inf || op.key <= s.hi):
			return true
		}
	}
	return false
}

// TestTransactionModel runs random interleavings of transactions and
// plain writes against a model: every read of a transaction must show
// its snapshot under its own writes, and its Commit must conflict
// exactly when a commit after its snapshot wrote a key it read (not
// answered by its own writes) or a key in the span of a scan it made,
// [lower bound, upper bound] for a full scan. After each run the DB must
// hold the model's committed state.
func TestTransactionModel(t *testing.T) {
	for _, seed := range testSeeds(16, 4, testing.Short()) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3939))
			d := openTxnTestDB(t, &Options{MemtableSize: 64 << 10})
			ks := newKeySpace(rng, 24)
			committed := kvModel{}
			var history [][]kvOp
			var open []*modelTxn
			conflicts := 0
			commit := func(ops []kvOp) {
				history = append(history, ops)
				committed.apply(ops)
			}
			for step := range 600 {
				if len(open) == 0 || rng.IntN(8) == 0 && len(open) < 4 {
					txn, err := d.NewTransaction(true)
					if err != nil {
						t.Fatal(err)
					}
					open = append(open, &modelTxn{txn: txn, view: committed.clone(), begun: len(history), reads: map[string]bool{}})
					continue
				}
				i := rng.IntN(len(open))
				m := open[i]
				switch r := rng.IntN(20); {
				case r < 6: // Get
					k := ks.pick(rng)
					if err := checkGet(multiGets{m.txn}, k, m.view); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					ownWrite := false
					for _, op := range m.own {
						ownWrite = ownWrite || op.covers(string(k))
					}
					if !ownWrite {
						m.reads[string(k)] = true
					}
				case r < 8: // a full scan
					opts := randBounds(rng, ks)
					it, err := m.txn.NewIter(opts)
					if err != nil {
						t.Fatal(err)
					}
					var lo, hi []byte
					if opts != nil {
						lo, hi = opts.LowerBound, opts.UpperBound
					}
					wantKeys, _ := m.view.sorted(lo, hi)
					got := scanAll(it)
					if err := it.Close(); err != nil {
						t.Fatal(err)
					}
					if len(got) != len(wantKeys) {
						t.Fatalf("step %d: scan of [%q, %q) shows %d keys, want %d", step, lo, hi, len(got), len(wantKeys))
					}
					for j := range got {
						if got[j] != string(wantKeys[j]) {
							t.Fatalf("step %d: scan key %d is %q, want %q", step, j, got[j], wantKeys[j])
						}
					}
					// The span of the bounds, in whichever order: a scan with
					// crossed bounds starts at the lower and runs off at the
					// upper.
					sp := modelSpan{lo: string(lo), hi: string(hi), inf: hi == nil}
					if !sp.inf && sp.hi < sp.lo {
						sp.lo, sp.hi = sp.hi, sp.lo
					}
					m.spans = append(m.spans, sp)
				case r < 13: // a write
					op := randKVOp(rng, ks, fmt.Sprint("t", step))
					var err error
					switch {
					case op.rangeDel:
						err = m.txn.DeleteRange([]byte(op.key), []byte(op.end))
					case op.del:
						err = m.txn.Delete([]byte(op.key))
					default:
						err = m.txn.Set([]byte(op.key), []byte(op.value))
					}
					if err != nil {
						t.Fatal(err)
					}
					m.ops, m.own = append(m.ops, op), append(m.own, op)
					m.view.apply([]kvOp{op})
				case r < 15: // a plain write by another
					ops := []kvOp{randKVOp(rng, ks, fmt.Sprint("p", step))}
					if err := applyOps(d, ops, NoSync); err != nil {
						t.Fatal(err)
					}
					commit(ops)
				case r < 19: // Commit
					want := false
					for _, ops := range history[m.begun:] {
						for _, op := range ops {
							want = want || m.touches(op)
						}
					}
					want = want && len(m.ops) > 0
					err := m.txn.Commit(NoSync)
					switch {
					case want && !errors.Is(err, ErrConflict):
						t.Fatalf("step %d: Commit: %v, want ErrConflict", step, err)
					case !want && err != nil:
						t.Fatalf("step %d: Commit: %v, want nil", step, err)
					case want:
						conflicts++
					case len(m.ops) > 0:
						commit(m.ops)
					}
					open = append(open[:i], open[i+1:]...)
				default:
					m.txn.Discard()
					open = append(open[:i], open[i+1:]...)
				}
			}
			for _, m := range open {
				m.txn.Discard()
			}
			if _, err := checkState(d, ks, committed); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d commits, %d conflicts", len(history), conflicts)
		})
	}
}

// TestTransactionLimits checks the bounds of a transaction's memory and
// of the record of commits: a write or read past MaxTransactionSize fails
// with ErrTxnTooBig, leaving the transaction as it was, able to commit;
// and once the record outgrows TxnConflictMemory, a transaction that read
// something and whose snapshot is older than what was dropped conflicts,
// while one that only wrote commits.
func TestTransactionLimits(t *testing.T) {
	t.Run("MaxTransactionSize", func(t *testing.T) {
		d := openTxnTestDB(t, &Options{MaxTransactionSize: 1000})
		txn, err := d.NewTransaction(true)
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.Set([]byte("a"), make([]byte, 900)); err != nil {
			t.Fatal(err)
		}
		if err := txn.Set([]byte("b"), make([]byte, 100)); !errors.Is(err, ErrTxnTooBig) {
			t.Fatalf("Set past the limit: %v, want ErrTxnTooBig", err)
		}
		for i := 0; ; i++ { // reads fill the rest
			_, err := txn.Get(fmt.Appendf(nil, "key%d", i))
			if errors.Is(err, ErrTxnTooBig) {
				break
			}
			if !errors.Is(err, ErrNotFound) || i > 100 {
				t.Fatalf("Get %d: %v", i, err)
			}
		}
		if err := txn.Commit(nil); err != nil {
			t.Fatalf("Commit within the limit: %v", err)
		}
		if v, err := d.Get([]byte("a")); err != nil || len(v) != 900 {
			t.Fatalf("Get(a) = %d bytes, %v; want 900", len(v), err)
		}
		if _, err := d.Get([]byte("b")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(b): %v; the write past the limit must not be there", err)
		}
		if _, err := Open("/x", &Options{FS: vfs.NewMem(), MaxTransactionSize: MaxBatchSize + 1}); err == nil {
			t.Fatal("Open with MaxTransactionSize past MaxBatchSize: no error")
		}
	})
	t.Run("TxnConflictMemory", func(t *testing.T) {
		d := openTxnTestDB(t, &Options{TxnConflictMemory: 4 << 10})
		reader, err := d.NewTransaction(true)
		if err != nil {
			t.Fatal(err)
		}
		writer, err := d.NewTransaction(true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reader.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		// Writes of other keys, past the record's memory.
		for i := range 200 {
			if err := d.Put(fmt.Appendf(nil, "other%04d", i), []byte("v"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if d.oracle.horizon == 0 {
			t.Fatal("200 recorded writes of 41 bytes each did not pass 4 KiB of record")
		}
		reader.Set([]byte("r"), []byte("1"))
		if err := reader.Commit(nil); !errors.Is(err, ErrConflict) {
			t.Fatalf("Commit of a transaction older than the record: %v, want ErrConflict", err)
		}
		writer.Set([]byte("w"), []byte("1"))
		if err := writer.Commit(nil); err != nil {
			t.Fatalf("Commit of a write-only transaction: %v", err)
		}
	})
}

// TestTransactionAPI checks the rules of a transaction's life: a
// read-only one refuses writes, a finished one refuses everything, and
// Update and View pass fn's error through, committing nothing.
func TestTransactionAPI(t *testing.T) {
	d := openTxnTestDB(t, nil)
	errFn := errors.New("fn failed")
	if err := d.Update(func(txn *Transaction) error {
		txn.Set([]byte("k"), []byte("v"))
		return errFn
	}); !errors.Is(err, errFn) {
		t.Fatalf("Update: %v, want fn's error", err)
	}
	if _, err := d.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after a failed Update: %v, want ErrNotFound", err)
	}
	if err := d.View(func(txn *Transaction) error { return txn.Set([]byte("k"), nil) }); !errors.Is(err, ErrTxnReadOnly) {
		t.Fatalf("Set in View: %v, want ErrTxnReadOnly", err)
	}
	txn, err := d.NewTransaction(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Get([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Commit: %v, want ErrClosed", err)
	}
	if err := txn.Set([]byte("k"), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Set after Commit: %v, want ErrClosed", err)
	}
	if err := txn.Commit(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Commit: %v, want ErrClosed", err)
	}
	txn.Discard()
	if n := d.oracle.live.Load(); n != 0 {
		t.Fatalf("%d update transactions open after all ended", n)
	}
}

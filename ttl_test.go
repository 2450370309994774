package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/vfs"
)

// testClock is a Clock the test moves by hand, so that what expires when is
// exact.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := new(testClock)
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) Now() time.Time              { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration)     { c.ns.Add(int64(d)) }
func (c *testClock) nanos() int64                { return c.ns.Load() }
func (c *testClock) after(d time.Duration) int64 { return c.ns.Load() + int64(d) }

// checkEveryRead checks r against m by every read path: a Get of every
// stride-th key of ks, a MultiGet of the same keys, a full scan forward
// (checkState), and random moves — seeks, both directions, random bounds — of
// iters iterators, each ended by a full scan forward and backward.
func checkEveryRead(rng *rand.Rand, r dbReader, ks *keySpace, m kvModel, stride, iters int) error {
	some := &keySpace{}
	for i := 0; i < len(ks.keys); i += stride {
		some.keys = append(some.keys, ks.keys[i])
	}
	if _, err := checkState(r, some, m); err != nil {
		return err
	}
	for range iters {
		opts := randBounds(rng, ks)
		it, err := r.NewIter(opts)
		if err != nil {
			return err
		}
		err = checkIterMoves(rng, it, opts, m, ks, 200, true)
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// openWithClock opens a DB with opts on a MemFS, its clock a testClock,
// to be closed when the test ends.
func openWithClock(t *testing.T, opts Options) (*DB, *testClock) {
	t.Helper()
	clock := newTestClock()
	opts.FS, opts.Clock = vfs.NewMem(), clock
	db, err := Open("db", &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, clock
}

// fillBatches writes n keys to d in NoSync batches of 1,000, add putting
// write i into its batch.
func fillBatches(t *testing.T, d *DB, n int, add func(b *Batch, i int) error) {
	t.Helper()
	b := NewBatch()
	for i := range n {
		if err := add(b, i); err != nil {
			t.Fatal(err)
		}
		if b.Len() == 1000 || i == n-1 {
			if err := d.Apply(b, NoSync); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
}

// tableBytes sums the sizes of the DB's tables.
func tableBytes(d *DB) uint64 {
	var n uint64
	for _, l := range d.Metrics().Levels {
		n += l.Bytes
	}
	return n
}

// TestTTLExpiresHalf writes 100,000 keys (4,000 under -race), every
// other one with a time-to-live of an hour, and checks every read path —
// the DB's Get, MultiGet and iterators, a snapshot, a transaction and an
// indexed batch made before the expiry, and new ones — against a map of
// the keys: all of them a nanosecond before the hour, the half without a
// time-to-live from the hour on; an iterator made before the hour still
// shows all. The keys were compacted into the deepest level before the
// expiry; a compaction after it rewrites that level and drops the expired
// half: the tables lose at least 45% of their bytes (the values are
// incompressible and the keys short, so half the entries are about half
// the bytes), and Metrics.ExpiredDropped counts every expired key once.
func TestTTLExpiresHalf(t *testing.T) {
	n := sizeFor(100_000, 4_000)
	db, clock := openWithClock(t, Options{MemtableSize: 64 << 20})
	rng := rand.New(rand.NewPCG(39, 3))
	ks := &keySpace{}
	all, kept := kvModel{}, kvModel{}
	fillBatches(t, db, n, func(b *Batch, i int) error {
		k := fmt.Appendf(nil, "key%07d", i)
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		ks.keys = append(ks.keys, k)
		all[string(k)] = string(v)
		if i%2 == 0 {
			return b.SetWithTTL(k, v, time.Hour)
		}
		kept[string(k)] = string(v)
		return b.Set(k, v)
	})
	// Compacted before the expiry, the keys are in the deepest level,
	// which no compaction from above reaches again: Compact must rewrite
	// it in place to reclaim what expires.
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	before := tableBytes(db)
	if m := db.Metrics(); m.Levels[0].Tables != 0 || m.ExpiredDropped != 0 {
		t.Fatalf("after the first compaction: %d L0 tables, %d expired versions dropped; want none", m.Levels[0].Tables, m.ExpiredDropped)
	}

	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	txn, err := db.NewTransaction(false)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Discard()
	ib, err := db.NewIndexedBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	readers := func() map[string]dbReader {
		return map[string]dbReader{
			"DB":            db,
			"snapshot":      snap,
			"transaction":   multiGets{txn},
			"indexed batch": multiGets{ib},
		}
	}
	check := func(when string, m kvModel) {
		t.Helper()
		for name, r := range readers() {
			stride, iters := 1, 2
			if name != "DB" {
				stride, iters = 20, 1
			}
			if err := checkEveryRead(rng, r, ks, m, stride, iters); err != nil {
				t.Fatalf("%s, %s: %v", when, name, err)
			}
		}
	}

	clock.advance(time.Hour - 1)
	check("a nanosecond before the expiry", all)
	early, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(1)
	check("at the expiry", kept)
	got, err := readAll(iterReader{early})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffModels(got, all); d != "" { // readAll closed it
		t.Fatalf("an iterator made before the expiry, scanned after it: %s", d)
	}
	// A new transaction and indexed batch see the same.
	txn2, err := db.NewTransaction(true)
	if err != nil {
		t.Fatal(err)
	}
	defer txn2.Discard()
	if err := checkEveryRead(rng, multiGets{txn2}, ks, kept, 20, 1); err != nil {
		t.Fatalf("a transaction begun after the expiry: %v", err)
	}

	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	after := tableBytes(db)
	t.Logf("tables: %d bytes before the expiry, %d after the compaction (%.1f%% less)", before, after, 100*(1-float64(after)/float64(before)))
	if float64(after) > 0.55*float64(before) {
		t.Errorf("tables hold %d bytes after the compaction, %.1f%% of the %d before: want at most 55%%", after, 100*float64(after)/float64(before), before)
	}
	if got, want := db.Metrics().ExpiredDropped, uint64((n+1)/2); got != want {
		t.Errorf("Metrics.ExpiredDropped = %d, want %d", got, want)
	}
	check("after the compaction", kept)
}

// iterReader is an open Iterator as a dbReader for readAll: NewIter hands
// it out once.
type iterReader struct{ it *Iterator }

func (r iterReader) Get([]byte) ([]byte, error) { return nil, errors.New("iterReader: no Get") }
func (r iterReader) MultiGet([][]byte) ([][]byte, error) {
	return nil, errors.New("iterReader: no MultiGet")
}
func (r iterReader) NewIter(*IterOptions) (*Iterator, error) { return r.it, nil }

// TestTTLHidesOlderVersions checks, with the older version and the one
// with a time-to-live in a memtable or a table (its value inline or in a
// blob file), that every read sees the new value until the expiry and
// then nothing — not the older value: an expired version deletes — and
// that Explain shows the expiry as a step of its own.
func TestTTLHidesOlderVersions(t *testing.T) {
	cases := []struct {
		name               string
		flushOld, flushNew bool
		separate           bool
		wantSource         string
	}{
		{name: "both in the memtable", wantSource: "memtable"},
		{name: "old in a table, new in the memtable", flushOld: true, wantSource: "memtable"},
		{name: "both in tables", flushOld: true, flushNew: true, wantSource: "L0/"},
		{name: "new in a table, its value in a blob file", flushOld: true, flushNew: true, separate: true, wantSource: "L0/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts Options
			if tc.separate {
				opts.ValueSeparation.MinSize = 64
			}
			db, clock := openWithClock(t, opts)
			key, old, val := []byte("k"), []byte("old"), bytes.Repeat([]byte("new"), 40)
			if err := db.Put(key, old, nil); err != nil {
				t.Fatal(err)
			}
			if tc.flushOld {
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.PutWithTTL(key, val, 10*time.Second, nil); err != nil {
				t.Fatal(err)
			}
			if err := db.Put([]byte("z"), []byte("stays"), nil); err != nil {
				t.Fatal(err)
			}
			if tc.flushNew {
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.separate {
				if files, err := db.BlobFiles(); err != nil || len(files) != 1 {
					t.Fatalf("BlobFiles = %v, %v; want the one file of the flush", files, err)
				}
			}
			snap, err := db.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			ks := &keySpace{keys: [][]byte{[]byte(""), key, []byte("k\x00"), []byte("z")}}
			live := kvModel{"k": string(val), "z": "stays"}
			clock.advance(10*time.Second - 1)
			for name, r := range map[string]dbReader{"DB": db, "snapshot": snap} {
				if err := checkEveryRead(rng, r, ks, live, 1, 20); err != nil {
					t.Fatalf("before the expiry, %s: %v", name, err)
				}
			}
			tr, err := db.Explain(key)
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Found || tr.Deleted || tr.Expired || tr.ExpiresAt.UnixNano() != clock.after(1) || string(tr.Value) != string(val) {
				t.Fatalf("Explain before the expiry: found %v deleted %v expired %v, expires %v (want %v), value %q\n%s",
					tr.Found, tr.Deleted, tr.Expired, tr.ExpiresAt, time.Unix(0, clock.after(1)), tr.Value, tr)
			}

			clock.advance(1)
			gone := kvModel{"z": "stays"}
			for name, r := range map[string]dbReader{"DB": db, "snapshot": snap} {
				if err := checkEveryRead(rng, r, ks, gone, 1, 20); err != nil {
					t.Fatalf("at the expiry, %s: %v", name, err)
				}
			}
			tr, err = db.Explain(key)
			if err != nil {
				t.Fatal(err)
			}
			last := tr.Steps[len(tr.Steps)-1]
			if !tr.Found || !tr.Deleted || !tr.Expired || tr.Value != nil || last.Kind != ExpiredStep || !last.ExpiresAt.Equal(clock.Now()) ||
				!strings.HasPrefix(tr.Source, tc.wantSource) || !strings.Contains(tr.String(), "expired at") {
				t.Fatalf("Explain at the expiry: found %v deleted %v expired %v, value %q, source %q, last step %+v\n%s",
					tr.Found, tr.Deleted, tr.Expired, tr.Value, tr.Source, last, tr)
			}
			for _, s := range tr.Steps {
				if s.Kind == BlobStep {
					t.Errorf("Explain read the blob of an expired version:\n%s", tr)
				}
			}

			// A compaction keeps nothing of the key, however many
			// versions it had, and counts the expired one.
			if err := snap.Close(); err != nil {
				t.Fatal(err)
			}
			if err := db.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := checkEveryRead(rng, db, ks, gone, 1, 20); err != nil {
				t.Fatalf("after the compaction: %v", err)
			}
			if m := db.Metrics(); m.ExpiredDropped != 1 {
				t.Errorf("ExpiredDropped = %d, want 1", m.ExpiredDropped)
			}
		})
	}
}

// TestTTLStampedAtCommit checks that a batch's time-to-live runs from its
// commit, not from SetWithTTL: an indexed batch reads its own write as
// live however long it waits; each Apply stamps the expiry anew; a
// transaction's write expires ttl after its Commit.
func TestTTLStampedAtCommit(t *testing.T) {
	db, clock := openWithClock(t, Options{})
	b, err := db.NewIndexedBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.SetWithTTL([]byte("a"), []byte("1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Hour)
	if v, err := b.Get([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("the batch's own write, uncommitted, an hour on: %q, %v; want \"1\"", v, err)
	}
	wantGet := func(when, key, want string) {
		t.Helper()
		v, err := db.Get([]byte(key))
		if want == "" && !errors.Is(err, ErrNotFound) || want != "" && (err != nil || string(v) != want) {
			t.Fatalf("%s: Get(%q) = %q, %v; want %q", when, key, v, err, want)
		}
	}
	if err := db.Apply(b, nil); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute - 1)
	wantGet("a minute less a nanosecond after the commit", "a", "1")
	clock.advance(1)
	wantGet("a minute after the commit", "a", "")
	if err := db.Apply(b, nil); err != nil { // again: a new expiry
		t.Fatal(err)
	}
	wantGet("just after the second commit", "a", "1")
	clock.advance(time.Minute)
	wantGet("a minute after the second commit", "a", "")

	txn, err := db.NewTransaction(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.SetWithTTL([]byte("t"), []byte("x"), time.Second); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Hour)
	if v, err := txn.Get([]byte("t")); err != nil || string(v) != "x" {
		t.Fatalf("the transaction's own write: %q, %v", v, err)
	}
	if err := txn.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantGet("just after the transaction's commit", "t", "x")
	clock.advance(time.Second)
	wantGet("a second after the transaction's commit", "t", "")
}

// TestTTLSurvivesReopen checks that the WAL keeps the expiry's instant,
// not the duration: replayed later, a write expires when it was due to.
func TestTTLSurvivesReopen(t *testing.T) {
	clock := newTestClock()
	fs := vfs.NewMem()
	opts := &Options{FS: fs, Clock: clock}
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutWithTTL([]byte("a"), []byte("1"), time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.PutWithTTL([]byte("b"), []byte("2"), 2*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	clock.advance(90 * time.Second)
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Get([]byte("a")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a, due 60 s after its write, 90 s on after a reopen: %v; want ErrNotFound", err)
	}
	if v, err := db.Get([]byte("b")); err != nil || string(v) != "2" {
		t.Errorf("b, due 120 s after its write, 90 s on after a reopen: %q, %v; want \"2\"", v, err)
	}
}

// TestTTLArguments checks the refusals: a time-to-live that is not
// positive, a write in a read-only transaction; and that a time-to-live
// past what an int64 of nanoseconds counts never expires.
func TestTTLArguments(t *testing.T) {
	db, clock := openWithClock(t, Options{})
	for _, ttl := range []time.Duration{0, -time.Second} {
		err := db.PutWithTTL([]byte("k"), []byte("v"), ttl, nil)
		if ae := (*ArgumentError)(nil); !errors.As(err, &ae) || ae.Arg != "ttl" {
			t.Errorf("PutWithTTL with ttl %v: %v; want an *ArgumentError for ttl", ttl, err)
		}
		b := NewBatch()
		if err := b.SetWithTTL([]byte("k"), []byte("v"), ttl); err == nil || b.Len() != 0 {
			t.Errorf("SetWithTTL with ttl %v: %v, %d writes; want an error and none", ttl, err, b.Len())
		}
	}
	if err := db.PutWithTTL(bytes.Repeat([]byte("k"), MaxKeySize+1), nil, time.Second, nil); err == nil {
		t.Error("PutWithTTL of an oversized key: no error")
	}
	ro, err := db.NewTransaction(false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.SetWithTTL([]byte("k"), []byte("v"), time.Second); !errors.Is(err, ErrTxnReadOnly) {
		t.Errorf("SetWithTTL in a read-only transaction: %v; want ErrTxnReadOnly", err)
	}
	ro.Discard()
	if err := db.PutWithTTL([]byte("forever"), []byte("v"), time.Duration(math.MaxInt64), nil); err != nil {
		t.Fatal(err)
	}
	clock.advance(200 * 365 * 24 * time.Hour)
	if v, err := db.Get([]byte("forever")); err != nil || string(v) != "v" {
		t.Errorf("a time-to-live past the year 2262, 200 years on: %q, %v; want \"v\"", v, err)
	}
}

// The model suite's time-to-live (TestDBModel): writes live 1 to 4 ticks
// of a second, and the run advances the clock by 0 to 3 ticks.

// ttlTick is the unit of the model suite's times-to-live and clock.
const ttlTick = time.Second

// randTTL returns a time-to-live for a model write: 1 to 4 ticks, now and
// then a nanosecond off one, so that expiries fall between the clock's
// steps as well as on them.
func randTTL(rng *rand.Rand) time.Duration {
	ttl := time.Duration(1+rng.IntN(4)) * ttlTick
	if rng.IntN(4) == 0 {
		ttl += time.Duration(rng.IntN(3)) - 1
	}
	return ttl
}

// kvExpiries are the expiries of a model's keys written with a
// time-to-live (kvModel holds their values as if they never expired).
type kvExpiries map[string]kvExpiry

// kvExpiry is a key's time-to-live in a model: the instant its base value
// (the set with a time-to-live) expires, and the operands merged over that
// base since (merged: there are some, ops their fold as AppendMerger
// makes it). Once the base has expired, a read folds the operands over no
// base, as over a deletion: the key's value is then ops, or none.
type kvExpiry struct {
	at     int64
	ops    string
	merged bool
}

// applyExpiries updates exp, the expiries of a model's keys, for ops
// committed at now: a set with a time-to-live expires at now+ttl; a merge
// over one joins its operands; any other write of a key, a delete or a
// range deletion leaves it without one.
func applyExpiries(exp kvExpiries, ops []kvOp, now int64) {
	for _, op := range ops {
		switch {
		case op.rangeDel:
			for k := range exp {
				if op.key <= k && k < op.end {
					delete(exp, k)
				}
			}
		case op.merge:
			if e, ok := exp[op.key]; ok {
				e.ops, e.merged = e.ops+op.value, true
				exp[op.key] = e
			}
		case !op.del && op.ttl > 0:
			exp[op.key] = kvExpiry{at: now + int64(op.ttl)}
		default:
			delete(exp, op.key)
		}
	}
}

// liveAt returns m as a read at now sees it: each key whose base's expiry
// in exp has passed holds only the operands merged over it, or is gone.
func liveAt(m kvModel, exp kvExpiries, now int64) kvModel {
	live := m.clone()
	for k, e := range exp {
		switch {
		case now < e.at:
		case e.merged:
			live[k] = e.ops
		default:
			delete(live, k)
		}
	}
	return live
}

// live is what the run's DB must show now.
func (r *modelRun) live() kvModel { return liveAt(r.m, r.exp, r.clock.nanos()) }

// advanceClock moves the DB's clock on by 0 to 3 ticks (a step of a
// nanosecond now and then): the keys whose expiry it passes vanish from
// the DB's reads and its snapshots', not from an iterator's made before.
func (r *modelRun) advanceClock() error {
	d := time.Duration(r.rng.IntN(4)) * ttlTick
	if r.rng.IntN(4) == 0 {
		d = 1
	}
	r.note("clock +%v", d)
	r.clock.advance(d)
	return nil
}

// stoppedClock is a Clock stopped at an instant, in Unix nanoseconds.
type stoppedClock int64

func (c stoppedClock) Now() time.Time { return time.Unix(0, int64(c)) }

package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
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

// getsOnly makes a reader with Get and NewIter — a Transaction, an indexed
// Batch — a dbReader: its MultiGet is a Get per key.
type getsOnly struct {
	get     func([]byte) ([]byte, error)
	newIter func(*IterOptions) (*Iterator, error)
}

func (g getsOnly) Get(key []byte) ([]byte, error)               { return g.get(key) }
func (g getsOnly) NewIter(opts *IterOptions) (*Iterator, error) { return g.newIter(opts) }
func (g getsOnly) MultiGet(keys [][]byte) ([][]byte, error) {
	values := make([][]byte, len(keys))
	for i, k := range keys {
		v, err := g.get(k)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		default:
			values[i] = foundValue(v)
		}
	}
	return values, nil
}

// checkEveryRead checks r against m by every read path: a Get of every
// stride-th key of ks, a MultiGet of the same keys (in chunks), a full scan
// forward, and random moves — seeks, both directions, random bounds — of
// iters iterators, each ended by a full scan forward and backward.
func checkEveryRead(rng *rand.Rand, r dbReader, ks *keySpace, m kvModel, stride, iters int) error {
	var keys [][]byte
	for i := 0; i < len(ks.keys); i += stride {
		keys = append(keys, ks.keys[i])
		if err := checkGet(r, ks.keys[i], m); err != nil {
			return err
		}
	}
	const chunk = 4096
	for i := 0; i < len(keys); i += chunk {
		if err := checkMultiGet(r, keys[i:min(i+chunk, len(keys))], m); err != nil {
			return err
		}
	}
	got, err := readAll(r)
	if err != nil {
		return err
	}
	if d := diffModels(got, m); d != "" {
		return fmt.Errorf("full scan: %s", d)
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

// tableBytes sums the sizes of the DB's tables.
func tableBytes(d *DB) uint64 {
	var n uint64
	for _, l := range d.Metrics().Levels {
		n += l.Bytes
	}
	return n
}

// TestTTLExpiresHalf writes 100,000 keys (10,000 under -race), every
// other one with a time-to-live of an hour, and checks every read path —
// the DB's Get, MultiGet and iterators, a snapshot, a transaction and an
// indexed batch made before the expiry, and new ones — against a map of
// the keys: all of them a nanosecond before the hour, the half without a
// time-to-live from the hour on; an iterator made before the hour still
// shows all. A compaction then drops the expired half: the tables lose at
// least 45% of their bytes (the values are incompressible and the keys
// short, so half the entries are about half the bytes), and
// Metrics.ExpiredDropped counts every expired key once.
func TestTTLExpiresHalf(t *testing.T) {
	n := sizeFor(100_000, 10_000)
	clock := newTestClock()
	db, err := Open("db", &Options{FS: vfs.NewMem(), Clock: clock, MemtableSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(39, 3))
	ks := &keySpace{}
	all, kept := kvModel{}, kvModel{}
	b := NewBatch()
	for i := range n {
		k := fmt.Appendf(nil, "key%07d", i)
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		ks.keys = append(ks.keys, k)
		all[string(k)] = string(v)
		if i%2 == 0 {
			err = b.SetWithTTL(k, v, time.Hour)
		} else {
			err = b.Set(k, v)
			kept[string(k)] = string(v)
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() == 1000 || i == n-1 {
			if err := db.Apply(b, NoSync); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	before := tableBytes(db)

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
			"transaction":   getsOnly{txn.Get, txn.NewIter},
			"indexed batch": getsOnly{ib.Get, ib.NewIter},
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
	if err := checkEveryRead(rng, getsOnly{txn2.Get, txn2.NewIter}, ks, kept, 20, 1); err != nil {
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

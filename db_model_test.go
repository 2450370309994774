package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// modelSteps is the number of random operations TestDBModel makes per seed.
const modelSteps = 1200

// TestDBModel runs long random sequences of every DB operation — writes,
// batches, reads, iterators, snapshots, flushes, reopens — under random
// options, and checks every answer against a map of what the DB must hold
// (and, for each snapshot and each long-lived iterator, a copy of the map
// taken when it was made). A failure names its seed and options; rerun it
// alone with -db.seed=N.
func TestDBModel(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	for _, seed := range testSeeds(race.Size("db.seeds", *dbSeeds, 10), 8, testing.Short()) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			r := newModelRun(seed)
			err := r.run(modelSteps)
			r.closeAll()
			t.Logf("options %s: %d reopens, %d flushes, %d tables at the end, %d snapshots, %d ingests, %d transactions (%d in conflict)", describeOptions(r.firstOpts),
				r.stats.reopens, r.stats.flushes, r.stats.tables, r.stats.snapshots, r.stats.ingests, r.stats.txns, r.stats.txnConflicts)
			if err != nil {
				t.Fatalf("seed %d, options %s (now %s):\n%v\nlast operations:\n  %s\nrerun: go test -run 'TestDBModel$' -db.seed=%d",
					seed, describeOptions(r.firstOpts), describeOptions(r.opts), err, strings.Join(r.log, "\n  "), seed)
			}
		})
	}
}

// modelRun is one seed of TestDBModel: a DB on a MemFS and its oracle.
type modelRun struct {
	rng       *rand.Rand
	firstOpts Options // the options the run started with
	opts      Options // the options now: a reopen may change them
	db        *DB
	ks        *keySpace
	m         kvModel // what the DB holds, expired keys included
	// clock is the DB's, which the run advances (advanceClock); exp the
	// expiry of each key of m written with a time-to-live: reads see m
	// less the keys expired by the clock (live).
	clock *testClock
	exp   kvExpiries
	// snaps are the open snapshots, each with the model as it was taken.
	snaps []modelSnap
	// iters are open DB iterators, each with the model as it was made:
	// an iterator sees the DB as of its creation.
	iters []keptIter
	log   []string // the latest operations, for a failure's message
	n     int      // operations so far, to tag values

	// What Metrics must report since the DB was opened.
	gets, writes, batches, syncs uint64

	// What the run exercised, for -v.
	stats struct{ reopens, flushes, tables, snapshots, ingests, txns, txnConflicts int }
}

type modelSnap struct {
	s   *Snapshot
	m   kvModel
	exp kvExpiries // m's expiries: a snapshot judges them when it reads
}

type keptIter struct {
	it   *Iterator
	opts *IterOptions
	m    kvModel
}

func newModelRun(seed uint64) *modelRun {
	rng := rand.New(rand.NewPCG(seed, 0xdb))
	r := &modelRun{rng: rng, opts: randOptions(rng), m: kvModel{}, clock: newTestClock(), exp: kvExpiries{}}
	separateByParity(&r.opts, seed, rng)
	r.opts.FS = vfs.NewMem()
	r.opts.Merger = AppendMerger() // randOp merges, and kvModel folds as it does
	r.firstOpts = r.opts
	r.ks = newKeySpace(rng, 30+rng.IntN(300))
	return r
}

func (r *modelRun) note(format string, args ...any) {
	const keep = 40
	if len(r.log) == keep {
		r.log = r.log[1:]
	}
	r.log = append(r.log, fmt.Sprintf("%d: ", r.n)+fmt.Sprintf(format, args...))
}

func (r *modelRun) run(steps int) error {
	if err := r.open(); err != nil {
		return err
	}
	for ; r.n < steps; r.n++ {
		if err := r.step(); err != nil {
			return err
		}
	}
	// The end: everything checked, then checked again after a reopen.
	r.note("final checks")
	if err := r.fullCheck(); err != nil {
		return err
	}
	for _, s := range r.snaps {
		gets, err := checkState(s.s, r.ks, liveAt(s.m, s.exp, r.clock.nanos()))
		r.gets += uint64(gets)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	for len(r.iters) > 0 {
		if err := r.checkLiveIter(); err != nil {
			return err
		}
	}
	if err := r.checkMetrics(); err != nil {
		return err
	}
	for _, l := range r.db.Metrics().Levels {
		r.stats.tables += l.Tables
	}
	return r.reopen()
}

// closeAll releases whatever the run left open.
func (r *modelRun) closeAll() {
	for _, it := range r.iters {
		it.it.Close()
	}
	r.iters = nil
	for _, s := range r.snaps {
		s.s.Close()
	}
	r.snaps = nil
	if r.db != nil {
		r.db.Close()
		r.db = nil
	}
}

func (r *modelRun) open() error {
	r.opts.Clock = r.clock
	db, err := Open("db", &r.opts)
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	r.db = db
	r.gets, r.writes, r.batches, r.syncs = 0, 0, 0, 0
	return nil
}

func (r *modelRun) step() error {
	switch x := r.rng.IntN(1000); {
	case x < 260:
		return r.write([]kvOp{r.randOp()})
	case x < 340:
		return r.write([]kvOp{{del: true, key: string(r.ks.pick(r.rng))}})
	case x < 460:
		return r.batch()
	case x < 470:
		return r.oversized()
	case x < 475:
		r.note("Apply(empty batch)")
		if err := r.db.Apply(NewBatch(), nil); err != nil {
			return fmt.Errorf("Apply of an empty batch: %v", err)
		}
		return nil
	case x < 705:
		return r.get()
	case x < 735:
		return r.multiGet()
	case x < 770:
		return r.iterate()
	case x < 785:
		return r.prefixIterate()
	case x < 815:
		return r.newSnapshot()
	case x < 840:
		return r.closeSnapshot()
	case x < 855:
		return r.newLiveIter()
	case x < 875:
		return r.checkLiveIter()
	case x < 883:
		r.note("Flush")
		return r.flush()
	case x < 887:
		return r.reopen()
	case x < 890:
		r.note("full check")
		return r.fullCheck()
	case x < 895:
		lo, hi := r.ks.pick(r.rng), r.ks.pick(r.rng)
		if bytes.Compare(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		r.note("Compact(%q, %q)", lo, hi)
		if err := r.db.Compact(lo, hi); err != nil {
			return fmt.Errorf("Compact: %w", err)
		}
		return nil
	case x < 930:
		return r.txn()
	case x < 935:
		return r.ingest()
	case x < 950:
		return r.advanceClock()
	default:
		r.note("Metrics")
		return r.checkMetrics()
	}
}

// randOp returns a set, a merge (a short operand, so that a key's
// operands pile up rather than its value grow large), a delete of a key
// of the space (one in four) or, one time in twenty, a range deletion.
func (r *modelRun) randOp() kvOp {
	if r.rng.IntN(20) == 0 {
		return randRangeDel(r.rng, r.ks)
	}
	k := string(r.ks.pick(r.rng))
	switch r.rng.IntN(8) {
	case 0, 1:
		return kvOp{del: true, key: k}
	case 2, 3:
		return kvOp{merge: true, key: k, value: fmt.Sprintf("+%d.", r.n)}
	}
	op := kvOp{key: k, value: string(randValue(r.rng, fmt.Sprint("v", r.n)))}
	if r.rng.IntN(5) == 0 {
		op.ttl = randTTL(r.rng)
	}
	return op
}

// randRangeDel returns a DeleteRange over keys of ks: between two of its
// keys, or, one time in four, of exactly one key ([k, k‖0x00)).
func randRangeDel(rng *rand.Rand, ks *keySpace) kvOp {
	a, b := ks.pick(rng), ks.pick(rng)
	if bytes.Compare(a, b) > 0 {
		a, b = b, a
	}
	if bytes.Equal(a, b) || rng.IntN(4) == 0 {
		b = append(bytes.Clone(a), 0)
	}
	return kvOp{rangeDel: true, key: string(a), end: string(b)}
}

// randWriteOptions returns nil, Sync or NoSync, and whether it syncs.
func (r *modelRun) randWriteOptions() (*WriteOptions, bool) {
	switch r.rng.IntN(3) {
	case 0:
		return nil, true
	case 1:
		return Sync, true
	}
	return NoSync, false
}

// committed updates the model and the expected metrics for a write that
// succeeded.
func (r *modelRun) committed(ops []kvOp, sync bool) {
	r.m.apply(ops)
	applyExpiries(r.exp, ops, r.clock.nanos())
	r.writes += uint64(len(ops))
	r.batches++
	if sync {
		r.syncs++
	}
}

// ingest writes one to three tables of sets, deletes and range deletions
// over disjoint runs of keys and ingests them (DB.Ingest): the model takes
// them as one write, with no time-to-live.
func (r *modelRun) ingest() error {
	tables := randomIngestTables(r.rng, r.ks, int(r.stats.ingests))
	var paths []string
	for i, ops := range tables {
		path := fmt.Sprintf("/ingest/%d-%d.sst", r.stats.ingests, i)
		if err := writeIngestFile(r.opts.FS, path, ops); err != nil {
			return err
		}
		paths = append(paths, path)
	}
	r.stats.ingests++
	r.note("Ingest %v", tables)
	if err := r.db.Ingest(paths); err != nil {
		return fmt.Errorf("Ingest: %w", err)
	}
	for _, ops := range tables {
		r.m.apply(ops)
		applyExpiries(r.exp, ops, r.clock.nanos())
	}
	return nil
}

// write commits ops as a Put, a Delete or a batch.
func (r *modelRun) write(ops []kvOp) error {
	wo, sync := r.randWriteOptions()
	r.note("write %v sync=%v", ops, sync)
	if err := applyOps(r.db, ops, wo); err != nil {
		return fmt.Errorf("write %v: %w", ops, err)
	}
	r.committed(ops, sync)
	return nil
}

// batch commits a batch of several sets and deletes. Now and then it tries
// to add an oversized key too: Batch.Set or Delete must refuse it with an
// *ArgumentError and leave the batch as it was; the batch is then either
// abandoned (nothing changes) or applied without it.
func (r *modelRun) batch() error {
	n := 2 + r.rng.IntN(7)
	bad := -1
	if r.rng.IntN(6) == 0 {
		bad = r.rng.IntN(n)
	}
	b := NewBatch()
	var ops []kvOp
	for i := range n {
		if i == bad {
			before := slices.Clone(b.data)
			big := bytes.Repeat([]byte{'k'}, MaxKeySize+1)
			var err error
			if r.rng.IntN(2) == 0 {
				err = b.Set(big, []byte("v"))
			} else {
				err = b.Delete(big)
			}
			if ae := (*ArgumentError)(nil); !errors.As(err, &ae) || ae.Arg != "key" {
				return fmt.Errorf("adding a %d-byte key to a batch: %v; want an *ArgumentError for the key", len(big), err)
			}
			if b.Len() != len(ops) || !bytes.Equal(b.data, before) {
				return fmt.Errorf("a refused write changed the batch: %d writes, want %d", b.Len(), len(ops))
			}
			continue
		}
		op := r.randOp()
		if err := op.addTo(b); err != nil {
			return fmt.Errorf("Batch: %v", err)
		}
		ops = append(ops, op)
	}
	if b.Len() != len(ops) {
		return fmt.Errorf("batch Len %d, want %d", b.Len(), len(ops))
	}
	if bad >= 0 && r.rng.IntN(2) == 0 {
		r.note("batch %v abandoned after an oversized key", ops)
		return nil
	}
	wo, sync := r.randWriteOptions()
	r.note("Apply %v sync=%v", ops, sync)
	if err := r.db.Apply(b, wo); err != nil {
		return fmt.Errorf("Apply %v: %w", ops, err)
	}
	r.committed(ops, sync)
	return nil
}

// oversized makes a Put or Delete of an oversized key, or a DeleteRange of
// an empty range, which must fail with an *ArgumentError and change nothing
// (later checks see that it did not).
func (r *modelRun) oversized() error {
	if r.rng.IntN(3) == 0 {
		a, b := r.ks.pick(r.rng), r.ks.pick(r.rng)
		if bytes.Compare(a, b) < 0 {
			a, b = b, a
		}
		r.note("DeleteRange(%s, %s), an empty range", shortKey(string(a)), shortKey(string(b)))
		err := r.db.DeleteRange(a, b, nil)
		if ae := (*ArgumentError)(nil); !errors.As(err, &ae) || ae.Arg != "end" {
			return fmt.Errorf("DeleteRange(%q, %q): %v; want an *ArgumentError for end", a, b, err)
		}
		return nil
	}
	big := bytes.Repeat([]byte{'q'}, MaxKeySize+1+r.rng.IntN(100))
	var err error
	if r.rng.IntN(2) == 0 {
		r.note("Put(oversized key)")
		err = r.db.Put(big, []byte("v"), nil)
	} else {
		r.note("Delete(oversized key)")
		err = r.db.Delete(big, nil)
	}
	if ae := (*ArgumentError)(nil); !errors.As(err, &ae) || ae.Arg != "key" {
		return fmt.Errorf("writing a %d-byte key: %v; want an *ArgumentError for the key", len(big), err)
	}
	return nil
}

// reader returns the DB or, one time in three, an open snapshot, with the
// model it must match.
func (r *modelRun) reader() (dbReader, kvModel, string) {
	if len(r.snaps) > 0 && r.rng.IntN(3) == 0 {
		i := r.rng.IntN(len(r.snaps))
		return r.snaps[i].s, liveAt(r.snaps[i].m, r.snaps[i].exp, r.clock.nanos()), fmt.Sprintf("snapshot %d", i)
	}
	return r.db, r.live(), "DB"
}

func (r *modelRun) get() error {
	rd, m, name := r.reader()
	k := r.ks.pick(r.rng)
	if r.rng.IntN(5) == 0 {
		k = r.ks.probe(r.rng) // most likely a key never written
	}
	r.note("%s.Get(%s)", name, shortKey(string(k)))
	r.gets++
	if err := checkGet(rd, k, m); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// multiGet checks a MultiGet of up to 40 keys — known ones, keys most
// likely never written, and repeats — against the model.
func (r *modelRun) multiGet() error {
	rd, m, name := r.reader()
	keys := make([][]byte, r.rng.IntN(41))
	for i := range keys {
		switch x := r.rng.IntN(10); {
		case x < 2:
			keys[i] = r.ks.probe(r.rng)
		case x < 3 && i > 0:
			keys[i] = keys[r.rng.IntN(i)]
		default:
			keys[i] = r.ks.pick(r.rng)
		}
	}
	// Half the DB's batches (those of an odd number of keys: no draw of
	// its own) go through ExplainMultiGet, whose traces must give the
	// same answers.
	if db, ok := rd.(*DB); ok && len(keys)%2 == 1 {
		rd, name = explainedMultiGet{db}, "DB (ExplainMultiGet)"
	}
	r.note("%s.MultiGet(%d keys)", name, len(keys))
	r.gets += uint64(len(keys))
	if err := checkMultiGet(rd, keys, m); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// explainedMultiGet is a DB whose MultiGet answers from ExplainMultiGet's
// traces: a key's value where its trace found one, nil otherwise.
type explainedMultiGet struct{ *DB }

func (e explainedMultiGet) MultiGet(keys [][]byte) ([][]byte, error) {
	mt, err := e.ExplainMultiGet(keys)
	if err != nil {
		return nil, err
	}
	values := make([][]byte, len(mt.Keys))
	for i, t := range mt.Keys {
		if t.Found && !t.Deleted {
			values[i] = t.Value
		}
	}
	return values, nil
}

func (r *modelRun) iterate() error {
	rd, m, name := r.reader()
	r.note("%s iterator", name)
	if err := checkIter(r.rng, rd, m, r.ks, 10+r.rng.IntN(30)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// prefixIterate checks prefix seeks, and the moves of an iterator in
// prefix mode, against the model's keys with the prefix, under the
// options' extractor; without one, that a prefix seek fails with an
// *ArgumentError for opts.Prefix.
func (r *modelRun) prefixIterate() error {
	rd, m, name := r.reader()
	ext := r.opts.Prefix
	if ext == nil {
		r.note("%s.SeekPrefixGE without a prefix extractor", name)
		it, err := rd.NewIter(nil)
		if err != nil {
			return fmt.Errorf("%s: NewIter: %w", name, err)
		}
		ok := it.SeekPrefixGE(r.ks.pick(r.rng))
		if ae := (*ArgumentError)(nil); ok || !errors.As(it.Close(), &ae) || ae.Arg != "opts.Prefix" {
			return fmt.Errorf("%s: SeekPrefixGE without Options.Prefix: returned %v, Close %v; want an *ArgumentError for opts.Prefix", name, ok, it.Error())
		}
		return nil
	}
	r.note("%s prefix iterator (%s)", name, ext.Name)
	probe := func() []byte {
		if r.rng.IntN(3) == 0 {
			return bytes.Clone(ext.Prefix(r.ks.pick(r.rng))) // a prefix alone
		}
		return r.ks.probe(r.rng)
	}
	if err := checkPrefixMoves(r.rng, rd, ext, m, probe, 10+r.rng.IntN(30)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (r *modelRun) newSnapshot() error {
	if len(r.snaps) >= 8 {
		return r.closeSnapshot()
	}
	r.note("NewSnapshot -> %d", len(r.snaps))
	s, err := r.db.NewSnapshot()
	if err != nil {
		return fmt.Errorf("NewSnapshot: %w", err)
	}
	r.snaps = append(r.snaps, modelSnap{s: s, m: r.m.clone(), exp: maps.Clone(r.exp)})
	r.stats.snapshots++
	return nil
}

// closeSnapshot closes a random snapshot and checks that it then refuses
// every call with ErrClosed.
func (r *modelRun) closeSnapshot() error {
	if len(r.snaps) == 0 {
		return nil
	}
	i := r.rng.IntN(len(r.snaps))
	s := r.snaps[i].s
	r.snaps = slices.Delete(r.snaps, i, i+1)
	r.note("snapshot %d: Close", i)
	if err := s.Close(); err != nil {
		return fmt.Errorf("Snapshot.Close: %w", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		return fmt.Errorf("second Snapshot.Close: %v, want ErrClosed", err)
	}
	return checkSnapshotClosed(s)
}

func checkSnapshotClosed(s *Snapshot) error {
	if _, err := s.Get([]byte("a")); !errors.Is(err, ErrClosed) {
		return fmt.Errorf("Get on a closed snapshot: %v, want ErrClosed", err)
	}
	if it, err := s.NewIter(nil); !errors.Is(err, ErrClosed) {
		if it != nil {
			it.Close()
		}
		return fmt.Errorf("NewIter on a closed snapshot: %v, want ErrClosed", err)
	}
	return nil
}

// newLiveIter opens a DB iterator that the run keeps open across later
// writes and flushes: checkLiveIter checks it against the model as it was.
func (r *modelRun) newLiveIter() error {
	if len(r.iters) >= 3 {
		return r.checkLiveIter()
	}
	opts := randBounds(r.rng, r.ks)
	r.note("NewIter(%v) kept -> %d", opts, len(r.iters))
	it, err := r.db.NewIter(opts)
	if err != nil {
		return fmt.Errorf("NewIter: %w", err)
	}
	r.iters = append(r.iters, keptIter{it: it, opts: opts, m: r.live()}) // expiries judged at its creation
	return nil
}

func (r *modelRun) checkLiveIter() error {
	if len(r.iters) == 0 {
		return nil
	}
	i := r.rng.IntN(len(r.iters))
	mi := r.iters[i]
	r.iters = slices.Delete(r.iters, i, i+1)
	r.note("kept iterator %d: check and Close", i)
	if err := checkIterMoves(r.rng, mi.it, mi.opts, mi.m, r.ks, 10+r.rng.IntN(30), r.rng.IntN(2) == 0); err != nil {
		mi.it.Close()
		return fmt.Errorf("an iterator kept open across writes: %w", err)
	}
	if err := mi.it.Close(); err != nil {
		return fmt.Errorf("Iterator.Close: %w", err)
	}
	if err := mi.it.Close(); !errors.Is(err, ErrClosed) {
		return fmt.Errorf("second Iterator.Close: %v, want ErrClosed", err)
	}
	if mi.it.First() || mi.it.Valid() || mi.it.Key() != nil {
		return fmt.Errorf("a closed iterator moved")
	}
	return nil
}

// flush flushes and checks that the memtables are then empty and the
// model's keys in tables.
func (r *modelRun) flush() error {
	if err := r.db.Flush(); err != nil {
		return fmt.Errorf("Flush: %w", err)
	}
	m := r.db.Metrics()
	if m.ImmutableMemtables != 0 || m.MemtableBytes != 0 {
		return fmt.Errorf("after Flush: %d immutable memtables, a memtable of %d bytes; want none and 0",
			m.ImmutableMemtables, m.MemtableBytes)
	}
	tables := 0
	for _, l := range m.Levels {
		tables += l.Tables
	}
	if len(r.m) > 0 && tables == 0 {
		return fmt.Errorf("after Flush: no tables, but %d keys live", len(r.m))
	}
	return nil
}

// reopen closes the DB and opens it again — now and then with other
// options, which tables written under the old ones must not care about.
// Snapshots do not survive: each must refuse calls with ErrClosed. The
// iterators kept open do, as DB.Close promises, whatever the table cache's
// size: each is checked later (checkLiveIter), after the new DB has
// written, compacted and deleted the tables it no longer lists.
func (r *modelRun) reopen() error {
	r.note("Close and reopen, %d iterators kept open", len(r.iters))
	r.stats.reopens++
	r.stats.flushes += int(r.db.Metrics().Flushes)
	old := r.db
	r.db = nil
	if err := old.Close(); err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	if err := checkDBClosed(old); err != nil {
		return err
	}
	for _, s := range r.snaps {
		if err := checkSnapshotClosed(s.s); err != nil {
			return fmt.Errorf("snapshot of a closed DB: %w", err)
		}
	}
	r.snaps = nil
	if r.rng.IntN(3) == 0 {
		fs := r.opts.FS
		r.opts = randOptions(r.rng)
		r.opts.FS = fs
		r.opts.Merger = AppendMerger()
		r.note("new options %s", describeOptions(r.opts))
	}
	if err := r.open(); err != nil {
		return err
	}
	return r.fullCheck()
}

// checkDBClosed checks that every call on a closed DB fails with ErrClosed.
func checkDBClosed(d *DB) error {
	var errs []string
	check := func(call string, err error) {
		if !errors.Is(err, ErrClosed) {
			errs = append(errs, fmt.Sprintf("%s: %v", call, err))
		}
	}
	_, err := d.Get([]byte("a"))
	check("Get", err)
	check("Put", d.Put([]byte("a"), []byte("b"), nil))
	check("Delete", d.Delete([]byte("a"), NoSync))
	b := NewBatch()
	b.Set([]byte("a"), []byte("b"))
	check("Apply", d.Apply(b, nil))
	check("Apply(empty)", d.Apply(NewBatch(), nil))
	check("Flush", d.Flush())
	it, err := d.NewIter(nil)
	check("NewIter", err)
	if it != nil {
		it.Close()
	}
	s, err := d.NewSnapshot()
	check("NewSnapshot", err)
	if s != nil {
		s.Close()
	}
	check("Close", d.Close())
	if len(errs) > 0 {
		return fmt.Errorf("calls on a closed DB, want ErrClosed:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

func (r *modelRun) fullCheck() error {
	gets, err := checkState(r.db, r.ks, r.live())
	r.gets += uint64(gets)
	return err
}

// checkMetrics checks the counters against what the run did since the DB
// opened, and the invariants between counters.
func (r *modelRun) checkMetrics() error {
	m := r.db.Metrics()
	var errs []string
	expect := func(name string, got, want uint64) {
		if got != want {
			errs = append(errs, fmt.Sprintf("%s = %d, want %d", name, got, want))
		}
	}
	expect("Gets", m.Gets, r.gets)
	expect("Writes", m.Writes, r.writes)
	expect("Batches", m.Batches, r.batches)
	// One writer: every synced write is its own group and fsync.
	expect("WALSyncs", m.WALSyncs, r.syncs)
	if m.MemtableHits > m.Gets {
		errs = append(errs, fmt.Sprintf("MemtableHits %d > Gets %d", m.MemtableHits, m.Gets))
	}
	if m.ImmutableMemtables > r.opts.MaxImmutableMemtables {
		errs = append(errs, fmt.Sprintf("%d immutable memtables, more than MaxImmutableMemtables %d",
			m.ImmutableMemtables, r.opts.MaxImmutableMemtables))
	}
	if m.WALBytes == 0 && r.writes > 0 {
		errs = append(errs, "WALBytes = 0 after writes")
	}
	for i, l := range m.Levels {
		if l.FilterChecks > l.TableProbes {
			errs = append(errs, fmt.Sprintf("L%d: FilterChecks %d > TableProbes %d", i, l.FilterChecks, l.TableProbes))
		}
		if l.FilterNegatives+l.FilterPositives != l.FilterChecks {
			errs = append(errs, fmt.Sprintf("L%d: FilterNegatives %d + FilterPositives %d != FilterChecks %d",
				i, l.FilterNegatives, l.FilterPositives, l.FilterChecks))
		}
		if l.PrefixFilterNegatives+l.PrefixSought != l.PrefixProbes {
			errs = append(errs, fmt.Sprintf("L%d: PrefixFilterNegatives %d + PrefixSought %d != PrefixProbes %d",
				i, l.PrefixFilterNegatives, l.PrefixSought, l.PrefixProbes))
		}
		if l.TruePositives > l.FilterPositives {
			errs = append(errs, fmt.Sprintf("L%d: TruePositives %d > FilterPositives %d", i, l.TruePositives, l.FilterPositives))
		}
		// Below L0 a Get probes at most one table per level.
		if i > 0 && l.TableProbes > m.Gets {
			errs = append(errs, fmt.Sprintf("L%d: TableProbes %d > Gets %d", i, l.TableProbes, m.Gets))
		}
		if l.Tables > 0 && l.Bytes == 0 {
			errs = append(errs, fmt.Sprintf("L%d: %d tables of 0 bytes", i, l.Tables))
		}
		if math.IsNaN(l.FilterBitsPerKey) || l.FilterBitsPerKey < 0 {
			errs = append(errs, fmt.Sprintf("L%d: FilterBitsPerKey %v", i, l.FilterBitsPerKey))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("Metrics:\n  %s\n%v", strings.Join(errs, "\n  "), m)
	}
	return nil
}

// TestDBArgumentErrors checks that bad arguments get an *ArgumentError
// naming the argument, and change nothing.
func TestDBArgumentErrors(t *testing.T) {
	bigKey := bytes.Repeat([]byte{'k'}, MaxKeySize+1)
	okKey := bytes.Repeat([]byte{'k'}, MaxKeySize)
	t.Run("options", func(t *testing.T) {
		for _, tc := range []struct {
			arg  string
			opts Options
		}{
			{"opts.MemtableSize", Options{MemtableSize: 1 << 10}},
			{"opts.MemtableSize", Options{MemtableSize: 2 << 30}},
			{"opts.MaxImmutableMemtables", Options{MaxImmutableMemtables: -1}},
			{"opts.BlockSize", Options{BlockSize: 100}},
			{"opts.BlockSize", Options{BlockSize: 2 << 20}},
			{"opts.Compression", Options{Compression: 99}},
			{"opts.BitsPerKey", Options{BitsPerKey: math.NaN()}},
			{"opts.BitsPerKey", Options{BitsPerKey: 0.5}},
			{"opts.BitsPerKey", Options{BitsPerKey: 1000}},
		} {
			tc.opts.FS = vfs.NewMem()
			d, err := Open("db", &tc.opts)
			if ae := (*ArgumentError)(nil); !errors.As(err, &ae) || ae.Arg != tc.arg {
				if d != nil {
					d.Close()
				}
				t.Errorf("Open(%+v) = %v; want an *ArgumentError for %s", tc.opts, err, tc.arg)
			}
		}
	})

	t.Run("writes", func(t *testing.T) {
		d, err := Open("db", &Options{FS: vfs.NewMem()})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Put(okKey, []byte("the largest key"), nil); err != nil {
			t.Fatalf("Put of a MaxKeySize key: %v", err)
		}
		bigValue := make([]byte, MaxValueSize+1)
		bad := func() *Batch {
			b := NewBatch()
			b.Set([]byte("x"), []byte("y"))
			return b
		}
		for _, tc := range []struct {
			name, arg string
			call      func() error
		}{
			{"Put key", "key", func() error { return d.Put(bigKey, []byte("v"), nil) }},
			{"Put value", "value", func() error { return d.Put([]byte("k"), bigValue, nil) }},
			{"Delete key", "key", func() error { return d.Delete(bigKey, NoSync) }},
			{"Batch.Set key", "key", func() error { return bad().Set(bigKey, nil) }},
			{"Batch.Set value", "value", func() error { return bad().Set([]byte("k"), bigValue) }},
			{"Batch.Delete key", "key", func() error { return bad().Delete(bigKey) }},
		} {
			if ae := (*ArgumentError)(nil); !errors.As(tc.call(), &ae) || ae.Arg != tc.arg {
				t.Errorf("%s: want an *ArgumentError for %s", tc.name, tc.arg)
			}
		}
		want := kvModel{string(okKey): "the largest key"}
		if got, err := readAll(d); err != nil || diffModels(got, want) != "" {
			t.Fatalf("after refused writes: %v %s", err, diffModels(got, want))
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := checkGet(d, okKey, want); err != nil {
			t.Fatalf("the largest key, from a table: %v", err)
		}
		if m := d.Metrics(); m.Writes != 1 || m.Batches != 1 || m.Gets != 1 {
			t.Errorf("refused writes were counted: Writes %d, Batches %d, Gets %d; want 1, 1, 1", m.Writes, m.Batches, m.Gets)
		}
	})
}

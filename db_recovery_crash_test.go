package bloomkv

// Crashes at every file system operation of a workload: the DB recovers
// every acknowledged write and nothing else (crashWorkload).

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// crashPoint is the file system a crash left, and what it must hold: the
// first j writes of the history for some j in [lo, hi]. lo counts the
// writes acknowledged as durable before the crash; hi those started.
type crashPoint struct {
	fs     *vfs.MemFS
	lo, hi int
	where  string
}

// crashWorkload runs a random workload on a MemFS and takes crash points
// along the way: between calls, right after flushes, and at random file
// system operations — in the WAL, in flushes and manifest updates, in
// recovery on reopen — through an Injecting that fails nothing.
type crashWorkload struct {
	seed uint64
	rng  *rand.Rand // the workload's, used by the test's goroutine only
	opts Options    // FS unset
	ks   *keySpace
	mem  *vfs.MemFS

	history [][]kvOp     // every write started, in order; the test's goroutine only
	started atomic.Int64 // len(history), for the crash sampler
	durable atomic.Int64 // writes acknowledged durable

	mu       sync.Mutex // guards what follows; the sampler runs in the DB's goroutines too
	crashRng *rand.Rand
	budget   int // crash points left to take at file system operations
	pending  []crashPoint

	// gate, while set, holds every table creation — so flushes — until
	// it is closed, so that full memtables pile up waiting for theirs.
	gate atomic.Pointer[chan struct{}]

	stats struct{ crashes, inRecovery, flushes, piledUp, ingests, txns int }
}

// crashPointsPerCycle bounds the crash points one workload takes at file
// system operations; it takes about as many more between calls.
const crashPointsPerCycle = 30

func newCrashWorkload(seed uint64) *crashWorkload {
	rng := rand.New(rand.NewPCG(seed, 0xc4a54))
	w := &crashWorkload{
		seed:     seed,
		rng:      rng,
		opts:     randOptions(rng),
		mem:      vfs.NewMem(),
		crashRng: rand.New(rand.NewPCG(seed, 0x5a3)),
		budget:   crashPointsPerCycle,
	}
	separateByParity(&w.opts, seed, rng)
	w.opts.MemtableSize = int64(64<<10 + rng.IntN(64<<10))
	w.ks = newKeySpace(rng, 200)
	return w
}

// crash records the file system a crash now would leave. lo is read before
// the clone and hi after, so that writes acknowledged or started while it
// is taken only widen [lo, hi].
func (w *crashWorkload) crash(where string, torn bool, seed uint64) {
	lo := int(w.durable.Load())
	fs := w.mem.CrashClone(vfs.CrashOptions{TornWrites: torn, Seed: seed})
	hi := int(w.started.Load())
	w.mu.Lock()
	w.pending = append(w.pending, crashPoint{fs: fs, lo: lo, hi: hi, where: fmt.Sprintf("%s (torn writes %v)", where, torn)})
	w.mu.Unlock()
}

// crashNow takes a crash point from the test's goroutine.
func (w *crashWorkload) crashNow(where string) {
	w.crash(where, w.rng.IntN(2) == 0, w.rng.Uint64())
}

// policy is the Injecting's: it fails nothing, and takes a crash point
// just before some operations — more often outside the WALs, so that
// flushes, manifest updates and recoveries are crashed mid-way.
func (w *crashWorkload) policy(op vfs.Op) bool {
	if g := w.gate.Load(); g != nil && op.Kind == vfs.OpCreate && strings.HasSuffix(op.Name, ".sst") {
		<-*g
	}
	p := 0.08
	if strings.HasSuffix(op.Name, ".log") {
		p = 0.008
	}
	w.mu.Lock()
	take := w.budget > 0 && w.crashRng.Float64() < p
	torn, seed := w.crashRng.IntN(2) == 0, w.crashRng.Uint64()
	if take {
		w.budget--
	}
	w.mu.Unlock()
	if take {
		w.crash("before "+op.String(), torn, seed)
	}
	return false
}

func (w *crashWorkload) dbOptions(fs vfs.FS) *Options {
	o := w.opts
	o.FS = fs
	return &o
}

// write commits one random Put, Delete or batch, durable or not.
func (w *crashWorkload) write(d *DB, live kvModel) error {
	idx := len(w.history)
	ops := randOps(w.rng, w.ks, fmt.Sprint("w", idx))
	w.history = append(w.history, ops)
	w.started.Store(int64(idx + 1))
	wo, sync := w.writeOptions()
	if err := applyOps(d, ops, wo); err != nil {
		return fmt.Errorf("write %d %v: %w", idx, ops, err)
	}
	live.apply(ops)
	if sync {
		w.durable.Store(int64(idx + 1))
	}
	return nil
}

// writeOptions picks how a write is committed: durable (the default
// options, or Sync), or not (NoSync), and says which.
func (w *crashWorkload) writeOptions() (wo *WriteOptions, durable bool) {
	switch w.rng.IntN(4) {
	case 0:
		return nil, true
	case 1:
		return Sync, true
	}
	return NoSync, false
}

// txn runs an update transaction: a Get, checked against the model, then
// randOps's writes and a Set of a value made from what the Get read,
// committed as write commits a batch (durable or not) — one write of the
// history, all of it or none. The workload is one goroutine, so no commit
// conflicts.
func (w *crashWorkload) txn(d *DB, live kvModel) error {
	idx := len(w.history)
	txn, err := d.NewTransaction(true)
	if err != nil {
		return err
	}
	defer txn.Discard()
	read := w.ks.pick(w.rng)
	v, err := txn.Get(read)
	want, ok := live[string(read)]
	if ok && (err != nil || string(v) != want) || !ok && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("transaction %d: Get(%s) = %s, %v; want %s (present %v)", idx, shortKey(string(read)), shortKey(string(v)), err, shortKey(want), ok)
	}
	ops := randOps(w.rng, w.ks, fmt.Sprint("t", idx))
	ops = append(ops, kvOp{key: string(w.ks.pick(w.rng)), value: fmt.Sprintf("t%d|read %d bytes", idx, len(v))})
	for _, op := range ops {
		if err := op.addTo(txn); err != nil {
			return fmt.Errorf("transaction %d %v: %w", idx, op, err)
		}
	}
	w.history = append(w.history, ops)
	w.started.Store(int64(idx + 1))
	wo, sync := w.writeOptions()
	if err := txn.Commit(wo); err != nil {
		return fmt.Errorf("transaction %d %v: Commit: %w", idx, ops, err)
	}
	live.apply(ops)
	if sync {
		w.durable.Store(int64(idx + 1))
	}
	w.stats.txns++
	return nil
}

// ingest writes one to three tables (randomIngestTables) straight to the
// file system, where no crash point is taken, and ingests them: one
// write of the history, durable with every write before it once Ingest
// returns.
func (w *crashWorkload) ingest(d *DB, live kvModel) error {
	idx := len(w.history)
	tables := randomIngestTables(w.rng, w.ks, idx)
	var paths []string
	var ops []kvOp
	for j, t := range tables {
		path := fmt.Sprintf("/ingest/%d-%d.sst", idx, j)
		if err := writeIngestFile(w.mem, path, t); err != nil {
			return err
		}
		paths = append(paths, path)
		ops = append(ops, t...)
	}
	w.history = append(w.history, ops)
	w.started.Store(int64(idx + 1))
	if err := d.Ingest(paths); err != nil {
		return fmt.Errorf("ingest %d %v: %w", idx, tables, err)
	}
	live.apply(ops)
	w.allDurable()
	w.stats.ingests++
	return nil
}

// allDurable records that every write acknowledged so far is durable: a
// Flush or Close returned nil.
func (w *crashWorkload) allDurable() { w.durable.Store(int64(len(w.history))) }

// run runs the workload, verifying each crash point as soon as it is
// taken.
func (w *crashWorkload) run(writes int) error {
	inj := vfs.NewInjecting(w.mem, w.policy)
	d, err := Open("db", w.dbOptions(inj))
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	live := kvModel{}
	for len(w.history) < writes {
		switch x := w.rng.IntN(100); {
		case x < 2: // a sequence of flushes, with memtables waiting for theirs
			for range 2 + w.rng.IntN(3) {
				for range 5 + w.rng.IntN(40) {
					if err := w.write(d, live); err != nil {
						return err
					}
				}
				if err := d.Flush(); err != nil {
					return fmt.Errorf("Flush: %w", err)
				}
				w.allDurable()
				w.stats.flushes++
			}
			w.crashNow("after a sequence of flushes")
		case x < 3: // memtables pile up behind a held flush, then flush one after another
			if err := w.pileUp(d, live); err != nil {
				return err
			}
		case x < 5:
			if err := d.Flush(); err != nil {
				return fmt.Errorf("Flush: %w", err)
			}
			w.allDurable()
			w.stats.flushes++
			if w.rng.IntN(2) == 0 {
				w.crashNow("right after Flush")
			}
		case x < 6:
			err := d.Close()
			d = nil
			if err != nil {
				return fmt.Errorf("Close: %w", err)
			}
			w.allDurable()
			if w.rng.IntN(2) == 0 {
				w.crashNow("after Close")
			}
			if d, err = Open("db", w.dbOptions(inj)); err != nil {
				return fmt.Errorf("reopen: %w", err)
			}
			if got, err := readAll(d); err != nil || diffModels(got, live) != "" {
				return fmt.Errorf("after reopen: %v %s", err, diffModels(got, live))
			}
		case x < 7:
			if err := w.ingest(d, live); err != nil {
				return err
			}
		case x < 12:
			if err := w.txn(d, live); err != nil {
				return err
			}
		default:
			if err := w.write(d, live); err != nil {
				return err
			}
			if w.rng.IntN(10) == 0 {
				k := w.ks.pick(w.rng)
				if err := checkGet(d, k, live); err != nil {
					return err
				}
			}
		}
		if w.rng.IntN(50) == 0 {
			w.crashNow("between calls")
		}
		if err := w.verifyPending(); err != nil {
			return err
		}
	}
	err = d.Close()
	d = nil
	if err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	w.allDurable()
	w.crashNow("after the final Close")
	return w.verifyPending()
}

// pileUp holds flushes while it writes until MaxImmutableMemtables full
// memtables wait for their flush (no more, or the next rotation would wait
// for a flush that cannot happen), then lets them flush: crash points
// taken meanwhile see several flushes pending and then in progress.
//
// Writes wait for compaction when L0 holds L0StopTrigger tables, and the
// gate holds compactions too: pileUp runs only if L0 stays below that even
// with the table of a flush in progress, since no other can be added.
func (w *crashWorkload) pileUp(d *DB, live kvModel) error {
	if d.Metrics().Levels[0].Tables+1 >= d.opts.L0StopTrigger {
		return nil
	}
	gate := make(chan struct{})
	w.gate.Store(&gate)
	defer func() {
		if w.gate.Load() != nil {
			w.gate.Store(nil)
			close(gate)
		}
	}()
	for d.Metrics().ImmutableMemtables < w.opts.MaxImmutableMemtables {
		if err := w.write(d, live); err != nil {
			return err
		}
		if w.rng.IntN(100) == 0 {
			w.crashNow("with flushes held")
		}
	}
	w.crashNow("with memtables waiting for their flushes")
	w.stats.piledUp++
	w.gate.Store(nil)
	close(gate)
	return nil
}

func (w *crashWorkload) verifyPending() error {
	return verifyCrashPoints(&w.mu, &w.pending, w.verify, &w.stats.crashes)
}

// verifyCrashPoints takes the crash points *pending holds (under mu) and
// checks each with verify, counting them in *verified; it returns the first
// failure, naming the crash point.
func verifyCrashPoints(mu *sync.Mutex, pending *[]crashPoint, verify func(crashPoint) error, verified *int) error {
	mu.Lock()
	points := *pending
	*pending = nil
	mu.Unlock()
	for _, cp := range points {
		if err := verify(cp); err != nil {
			return fmt.Errorf("crash %s, after %d writes (%d durable):\n%w", cp.where, cp.hi, cp.lo, err)
		}
		*verified++
	}
	return nil
}

// verify opens the file system a crash left and checks that it holds a
// prefix of the history, at least every durable write; that a crash in the
// middle of that recovery loses nothing; and that the recovered DB takes
// new writes, which survive Close and a crash after it.
func (w *crashWorkload) verify(cp crashPoint) error {
	// Everything in a clone is durable, so a clone of it is an identical
	// copy: each step below starts from the same crashed state.
	fsA := cp.fs.CrashClone(vfs.CrashOptions{})
	counter := vfs.NewInjecting(fsA, nil)
	d, err := Open("db", w.dbOptions(counter))
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	recoveryOps := counter.Ops()
	got, err := readAll(d)
	if err != nil {
		return err
	}
	j, ok := findPrefix(w.history, cp.lo, cp.hi, got)
	if !ok {
		return prefixError(w.history, cp.lo, cp.hi, got)
	}

	// A crash in the middle of recovery: the recovery after it must find
	// the same writes.
	if recoveryOps > 0 {
		at, torn, seed := w.rng.Int64N(recoveryOps), w.rng.IntN(2) == 0, w.rng.Uint64()
		fsB := cp.fs.CrashClone(vfs.CrashOptions{})
		var nested *vfs.MemFS
		var nestedOp vfs.Op
		inj := vfs.NewInjecting(fsB, func(op vfs.Op) bool {
			if op.Index == at {
				nested, nestedOp = fsB.CrashClone(vfs.CrashOptions{TornWrites: torn, Seed: seed}), op
			}
			return false
		})
		dB, err := Open("db", w.dbOptions(inj))
		if err != nil {
			return fmt.Errorf("Open of an identical copy: %w", err)
		}
		dB.Close()
		if nested != nil {
			w.stats.inRecovery++
			dC, err := Open("db", w.dbOptions(nested))
			if err != nil {
				return fmt.Errorf("after a crash in recovery, before %s (torn writes %v): Open: %w", nestedOp, torn, err)
			}
			gotC, err := readAll(dC)
			dC.Close()
			if err != nil || diffModels(gotC, got) != "" {
				return fmt.Errorf("after a crash in recovery, before %s (torn writes %v): %v %s", nestedOp, torn, err, diffModels(gotC, got))
			}
		}
	}

	// The recovered DB goes on.
	m := got
	for i := range 5 + w.rng.IntN(20) {
		ops := randOps(w.rng, w.ks, fmt.Sprintf("after-crash-%d.%d", j, i))
		if err := applyOps(d, ops, []*WriteOptions{nil, NoSync}[w.rng.IntN(2)]); err != nil {
			return fmt.Errorf("a write after recovery: %w", err)
		}
		m.apply(ops)
		if w.rng.IntN(10) == 0 {
			if err := d.Flush(); err != nil {
				return fmt.Errorf("a Flush after recovery: %w", err)
			}
		}
	}
	if got, err := readAll(d); err != nil || diffModels(got, m) != "" {
		return fmt.Errorf("after writes on the recovered DB: %v %s", err, diffModels(got, m))
	}
	err = d.Close()
	d = nil
	if err != nil {
		return fmt.Errorf("Close of the recovered DB: %w", err)
	}
	// Close made everything durable: a crash now loses nothing.
	d2, err := Open("db", w.dbOptions(fsA.CrashClone(vfs.CrashOptions{TornWrites: true, Seed: w.rng.Uint64()})))
	if err != nil {
		return fmt.Errorf("Open after Close and a crash: %w", err)
	}
	defer d2.Close()
	if got, err := readAll(d2); err != nil || diffModels(got, m) != "" {
		return fmt.Errorf("after Close and a crash: %v %s", err, diffModels(got, m))
	}
	return nil
}

// TestDBRecoveryCrash crashes random workloads of durable and non-durable
// writes, batches and flushes at many points (see crashWorkload) and
// checks each crash's recovery (see crashWorkload.verify). Each cycle is a
// workload with its own seed and options; -db.crashcycles runs more, and
// -db.seed=N only cycle N.
func TestDBRecoveryCrash(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	writes := 1500
	if testing.Short() {
		writes = 500
	}
	for _, seed := range testSeeds(race.Size("db.crashcycles", *dbCrashCycles, 2), 2, testing.Short()) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel() // each cycle is the length of most tests
			w := newCrashWorkload(seed)
			if err := w.run(writes); err != nil {
				t.Fatalf("seed %d, options %s:\n%v\nrerun: go test -run 'TestDBRecoveryCrash$' -db.seed=%d",
					seed, describeOptions(w.opts), err, seed)
			}
			t.Logf("options %s: %d writes (%d ingests, %d transactions), %d flushes, %d pile-ups, %d crashes verified, %d of them crashed again in recovery",
				describeOptions(w.opts), len(w.history), w.stats.ingests, w.stats.txns, w.stats.flushes, w.stats.piledUp, w.stats.crashes, w.stats.inRecovery)
		})
	}
}

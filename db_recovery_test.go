package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestDBRecoveryReopen writes in rounds, closing and reopening the DB after
// each, and checks that everything written is there — from the WAL alone,
// from tables alone, and mixed — and that a reopen leaves no obsolete file
// behind.
func TestDBRecoveryReopen(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	for _, tc := range []struct {
		name  string
		os    bool // the OS file system in t.TempDir(), rather than a MemFS
		opts  Options
		flush bool // flush before each Close
	}{
		{name: "WAL only", opts: Options{}},
		{name: "flushed", opts: Options{}, flush: true},
		{name: "rotations", opts: Options{MemtableSize: 64 << 10, MaxImmutableMemtables: 1}},
		{name: "zstd no filters", opts: Options{MemtableSize: 64 << 10, Compression: ZstdCompression, DisableFilters: true, BlockSize: 256}, flush: true},
		{name: "no cache", opts: Options{MemtableSize: 100 << 10, BlockCacheSize: -1, BitsPerKey: 3}},
		{name: "OS", os: true, opts: Options{MemtableSize: 64 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			dir, opts := "db", tc.opts
			if tc.os {
				dir, opts.FS = t.TempDir(), vfs.Default
			} else {
				opts.FS = vfs.NewMem()
			}
			ks := newKeySpace(rng, 300)
			m := kvModel{}
			for round := range 5 {
				d, err := Open(dir, &opts)
				if err != nil {
					t.Fatalf("round %d: Open: %v", round, err)
				}
				if _, err := checkState(d, ks, m); err != nil {
					d.Close()
					t.Fatalf("round %d, after reopening: %v", round, err)
				}
				if err := checkDirFiles(opts.FS, dir, d); err != nil {
					d.Close()
					t.Fatalf("round %d, after reopening: %v", round, err)
				}
				for i := range 400 {
					ops := randOps(rng, ks, fmt.Sprintf("r%d.%d", round, i))
					wo := []*WriteOptions{nil, Sync, NoSync, NoSync}[rng.IntN(4)]
					if err := applyOps(d, ops, wo); err != nil {
						d.Close()
						t.Fatalf("round %d: write: %v", round, err)
					}
					m.apply(ops)
				}
				if tc.flush {
					if err := d.Flush(); err != nil {
						t.Fatalf("round %d: Flush: %v", round, err)
					}
				}
				if _, err := checkState(d, ks, m); err != nil {
					d.Close()
					t.Fatalf("round %d, before closing: %v", round, err)
				}
				if err := d.Close(); err != nil {
					t.Fatalf("round %d: Close: %v", round, err)
				}
			}
			// Other options read what the first ones wrote.
			opts.BlockSize, opts.Compression, opts.DisableFilters, opts.BitsPerKey = 16<<10, SnappyCompression, false, 20
			d, err := Open(dir, &opts)
			if err != nil {
				t.Fatalf("Open with other options: %v", err)
			}
			defer d.Close()
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after reopening with other options: %v", err)
			}
		})
	}
}

// randOps returns the writes of one Put, Delete or batch of up to 6 writes
// on keys of ks, with values tagged with tag and the write's index, so that
// every value written is unique.
func randOps(rng *rand.Rand, ks *keySpace, tag string) []kvOp {
	n := 1
	if rng.IntN(4) == 0 {
		n = 2 + rng.IntN(5)
	}
	ops := make([]kvOp, n)
	for i := range ops {
		ops[i].key = string(ks.pick(rng))
		if rng.IntN(4) == 0 {
			ops[i].del = true
			continue
		}
		n := rng.IntN(600)
		if rng.IntN(60) == 0 {
			n = 10<<10 + rng.IntN(60<<10) // a WAL record over several 32 KiB blocks
		}
		ops[i].value = string(fillValue(rng, fmt.Appendf(nil, "%s.%d|", tag, i), n))
	}
	return ops
}

// checkDirFiles checks that a DB just opened left no obsolete file in its
// directory: one manifest, one WAL, no temporary file, every table the
// version lists and no other older than the WAL (a table newer than the
// WAL may be a flush's output in progress).
//
// It looks while no compaction runs and no memtable waits for its flush,
// and holds the DB's mutex so that none starts: a running compaction
// keeps the version it read, and with it the tables a compaction beside
// it has just made obsolete, until it ends — a table obsolete but not yet
// removed, rightly; and a memtable waiting for its flush keeps its WAL.
func checkDirFiles(fs vfs.FS, dir string, d *DB) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for (len(d.mu.compactions) > 0 || len(d.mu.imm) > 0) && d.mu.bgErr == nil {
		d.mu.cond.Wait()
	}
	if d.mu.bgErr != nil {
		return d.mu.bgErr
	}
	current := d.mu.current
	names, err := fs.List(dir)
	if err != nil {
		return err
	}
	counts := map[manifest.FileType]int{}
	var walNum uint64
	tables := map[uint64]bool{}
	for _, name := range names {
		t, num, ok := manifest.ParseFilename(name)
		if !ok {
			continue
		}
		counts[t]++
		switch t {
		case manifest.FileTypeWAL:
			walNum = num
		case manifest.FileTypeTable:
			tables[num] = true
		}
	}
	if counts[manifest.FileTypeManifest] != 1 || counts[manifest.FileTypeTemp] != 0 || counts[manifest.FileTypeWAL] != 1 {
		return fmt.Errorf("directory holds %v; want 1 manifest, 1 WAL, no temporary file", names)
	}
	for num := range current.FileNums() {
		if !tables[num] {
			return fmt.Errorf("directory holds %v, without table %06d of the version", names, num)
		}
		delete(tables, num)
	}
	for num := range tables {
		if num < walNum {
			return fmt.Errorf("directory holds %v, with table %06d, which no version lists", names, num)
		}
	}
	return nil
}

// findPrefix returns a j in [lo, hi] such that the writes history[:j],
// applied to an empty DB, give got; ok is false if there is none. Values
// are unique, so a batch applied in part matches no prefix.
func findPrefix(history [][]kvOp, lo, hi int, got kvModel) (j int, ok bool) {
	m := kvModel{}
	for _, ops := range history[:lo] {
		m.apply(ops)
	}
	same := func(k string) bool {
		mv, mok := m[k]
		gv, gok := got[k]
		return mok == gok && mv == gv
	}
	mismatches := 0
	for k := range m {
		if !same(k) {
			mismatches++
		}
	}
	for k := range got {
		if _, ok := m[k]; !ok {
			mismatches++
		}
	}
	for j = lo; ; j++ {
		if mismatches == 0 {
			return j, true
		}
		if j >= hi {
			return -1, false
		}
		for _, op := range history[j] {
			before := same(op.key)
			m.apply([]kvOp{op})
			switch after := same(op.key); {
			case before && !after:
				mismatches++
			case !before && after:
				mismatches--
			}
		}
	}
}

// modelAfter returns the model after the writes history[:j].
func modelAfter(history [][]kvOp, j int) kvModel {
	m := kvModel{}
	for _, ops := range history[:j] {
		m.apply(ops)
	}
	return m
}

// prefixError describes a recovered state that is no prefix of history
// between lo and hi.
func prefixError(history [][]kvOp, lo, hi int, got kvModel) error {
	return fmt.Errorf("recovered %d keys, which are not the first j of %d writes for any j in [%d, %d]\n"+
		"against the first %d (every write acknowledged durable): %s\nagainst the first %d (every write started): %s",
		len(got), len(history), lo, hi, lo, diffModels(got, modelAfter(history, lo)), hi, diffModels(got, modelAfter(history, hi)))
}

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

	stats struct{ crashes, inRecovery, flushes, piledUp, ingests int }
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
	wo, sync := NoSync, false
	switch w.rng.IntN(4) {
	case 0:
		wo, sync = nil, true
	case 1:
		wo, sync = Sync, true
	}
	if err := applyOps(d, ops, wo); err != nil {
		return fmt.Errorf("write %d %v: %w", idx, ops, err)
	}
	live.apply(ops)
	if sync {
		w.durable.Store(int64(idx + 1))
	}
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
	for _, seed := range testSeeds(*dbCrashCycles, 2, testing.Short()) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel() // each cycle is the length of most tests
			w := newCrashWorkload(seed)
			if err := w.run(writes); err != nil {
				t.Fatalf("seed %d, options %s:\n%v\nrerun: go test -run 'TestDBRecoveryCrash$' -db.seed=%d",
					seed, describeOptions(w.opts), err, seed)
			}
			t.Logf("options %s: %d writes (%d ingests), %d flushes, %d pile-ups, %d crashes verified, %d of them crashed again in recovery",
				describeOptions(w.opts), len(w.history), w.stats.ingests, w.stats.flushes, w.stats.piledUp, w.stats.crashes, w.stats.inRecovery)
		})
	}
}

// TestDBRecoveryLocked checks that a second Open of a directory in use
// fails with ErrLocked, on the OS file system and on a MemFS, and that
// Close releases the directory.
func TestDBRecoveryLocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  func(t *testing.T) string
	}{
		{"OS", vfs.Default, func(t *testing.T) string { return t.TempDir() }},
		{"MemFS", vfs.NewMem(), func(*testing.T) string { return "db" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			d, err := Open(dir, &Options{FS: tc.fs})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Put([]byte("k"), []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				d2, err := Open(dir, &Options{FS: tc.fs})
				if !errors.Is(err, ErrLocked) {
					if d2 != nil {
						d2.Close()
					}
					t.Fatalf("second Open: %v, want ErrLocked", err)
				}
			}
			// The failed Opens changed nothing.
			if err := checkGet(d, []byte("k"), kvModel{"k": "v"}); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d, err = Open(dir, &Options{FS: tc.fs})
			if err != nil {
				t.Fatalf("Open after Close: %v", err)
			}
			defer d.Close()
			if err := checkGet(d, []byte("k"), kvModel{"k": "v"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// injectedRun is one run of TestDBRecoveryErrorInjection's workload with
// one failing file system operation.
type injectedRun struct {
	history [][]kvOp
	lo, hi  int // after a crash the DB holds the first j writes, lo ≤ j ≤ hi
	live    kvModel
	calls   []string // every call that returned an error, and the error
	// bgErrors are the background errors the EventListener was told of:
	// a failed background flush is retried, and may surface nowhere else.
	bgErrors []string
	failed   *vfs.Op // the operation that failed, if any
	// failedReadOnly reports that the operation failed was on a file
	// opened for reading.
	failedReadOnly bool
	// problems are violations seen while running.
	problems []string
}

func (r *injectedRun) problemf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// runInjected runs a small workload — open, durable and non-durable writes,
// a flush, reads, more writes, close, reopen, more of the same — on mem
// through an Injecting that fails operation fail, and checks each call's
// outcome as it goes.
//
// It runs no compaction: a background compaction may straddle Close, which
// drops its failure by design (a failed compaction loses nothing), so
// whether a failure surfaced would depend on timing. The compaction tests
// inject their own failures.
func runInjected(mem *vfs.MemFS, fail int64, cfg injectedConfig) *injectedRun {
	r := &injectedRun{live: kvModel{}}
	var mu sync.Mutex
	readOnly := map[string]bool{} // whether the name's latest handle was opened with Open
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		mu.Lock()
		defer mu.Unlock()
		switch op.Kind {
		case vfs.OpOpen, vfs.OpCreate:
			readOnly[op.Name] = op.Kind == vfs.OpOpen
		}
		if op.Index != fail {
			return false
		}
		r.failed, r.failedReadOnly = &op, readOnly[op.Name]
		return true
	})
	listener := &EventListener{BackgroundError: func(info BackgroundErrorInfo) {
		mu.Lock()
		defer mu.Unlock()
		r.bgErrors = append(r.bgErrors, fmt.Sprintf("%s: %v", info.Op, info.Err))
		if !errors.Is(info.Err, vfs.ErrInjected) {
			r.problemf("background error %v, which is not the injected error", info.Err)
		}
	}}
	dbOpts := &Options{FS: inj, MemtableSize: cfg.memtableSize, BlockSize: 512, L0CompactionTrigger: noCompaction, EventListener: listener}
	d, err := Open("db", dbOpts)
	if err != nil {
		r.calls = append(r.calls, fmt.Sprintf("Open: %v", err))
		if !errors.Is(err, vfs.ErrInjected) {
			r.problemf("Open: %v, which is not the injected error", err)
		}
		return r
	}
	writeFailed := false
	var refused []int // writes that failed since the last one that succeeded
	// A write, Delete or batch; a failure must be the injected one. A
	// failure in a WAL is sticky: every later write fails too (writes stop
	// until Resume, which this workload never calls). Any other failure —
	// a write refused because the flush it would wait for is failing — may
	// be followed by writes that succeed, and must then have had no
	// effect: the history records it as an empty batch, which the
	// recovered prefix is checked against.
	write := func(wo *WriteOptions, ops ...kvOp) {
		idx := len(r.history)
		for i := range ops {
			if !ops[i].del {
				ops[i].value = fmt.Sprintf("%s@%d.%d|%s", ops[i].value, idx, i, strings.Repeat("v", cfg.valueSize))
			}
		}
		r.history = append(r.history, ops)
		err := applyOps(d, ops, wo)
		if err != nil {
			r.calls = append(r.calls, fmt.Sprintf("write %d %v: %v", idx, ops, err))
			if !errors.Is(err, vfs.ErrInjected) {
				r.problemf("write %d: %v, which is not the injected error", idx, err)
			}
			if !writeFailed {
				r.hi = idx + 1 // the failed write may have reached the WAL; no later one may
			}
			writeFailed = true
			refused = append(refused, idx)
			return
		}
		if writeFailed && walDamaged(*r.failed) {
			r.problemf("write %d succeeded after a write failed in the WAL: the error is not sticky", idx)
		}
		for _, i := range refused {
			r.history[i] = nil
		}
		refused, writeFailed = nil, false
		r.live.apply(ops)
		r.hi = idx + 1
		if wo.sync() {
			r.lo = idx + 1
		}
	}
	// A Flush; a failure must be the injected one. A failed flush is
	// retried in the background, so writes may go on after it — unless the
	// failure was in the WAL, which the writes then report.
	flush := func() {
		if err := d.Flush(); err != nil {
			r.calls = append(r.calls, fmt.Sprintf("Flush: %v", err))
			if !errors.Is(err, vfs.ErrInjected) {
				r.problemf("Flush: %v, which is not the injected error", err)
			}
			return
		}
		if writeFailed && walDamaged(*r.failed) {
			r.problemf("Flush succeeded after a write failed in the WAL")
		}
		r.lo = len(r.history)
	}
	// Reads fail with the injected error or agree with the writes
	// acknowledged.
	get := func(k string) {
		v, err := d.Get([]byte(k))
		want, ok := r.live[k]
		switch {
		case err != nil && !errors.Is(err, ErrNotFound):
			r.calls = append(r.calls, fmt.Sprintf("Get(%q): %v", k, err))
			if !errors.Is(err, vfs.ErrInjected) {
				r.problemf("Get(%q): %v, which is not the injected error", k, err)
			}
		case errors.Is(err, ErrNotFound) && ok, err == nil && (!ok || string(v) != want):
			r.problemf("Get(%q) = %q, %v; want %q (present %v)", k, v, err, want, ok)
		}
	}
	scan := func() {
		got, err := readAll(d)
		if err != nil {
			r.calls = append(r.calls, fmt.Sprintf("scan: %v", err))
			if !errors.Is(err, vfs.ErrInjected) {
				r.problemf("scan: %v, which is not the injected error", err)
			}
			return
		}
		if diff := diffModels(got, r.live); diff != "" {
			r.problemf("scan: %s", diff)
		}
	}
	set := func(k string) kvOp { return kvOp{key: k, value: k} }
	del := func(k string) kvOp { return kvOp{key: k, del: true} }

	write(nil, set("a"))
	write(Sync, set("b"))
	write(Sync, set("c"), del("a"), set("d"))
	write(NoSync, set("e"))
	write(NoSync, del("b"))
	write(Sync, set("f"))
	flush()
	get("c")
	get("a")
	get("zz")
	scan()
	write(Sync, set("g"))
	write(NoSync, set("c"), set("h"), del("d"))
	write(NoSync, set("a"))
	get("c")
	get("f")
	scan()
	// Close, and recover from the manifest, the tables and the WAL.
	closeDB := func() bool {
		if err := d.Close(); err != nil {
			r.calls = append(r.calls, fmt.Sprintf("Close: %v", err))
			if !errors.Is(err, vfs.ErrInjected) {
				r.problemf("Close: %v, which is not the injected error", err)
			}
			return false
		}
		if len(r.calls) == 0 {
			r.lo = len(r.history) // Close synced the WAL
		}
		return true
	}
	if !closeDB() || len(r.calls) > 0 {
		// After a failure the outcome of the failed write is unknown: the
		// crash and recovery that follow check it.
		return r
	}
	if d, err = Open("db", dbOpts); err != nil {
		r.calls = append(r.calls, fmt.Sprintf("reopen: %v", err))
		if !errors.Is(err, vfs.ErrInjected) {
			r.problemf("reopen: %v, which is not the injected error", err)
		}
		return r
	}
	get("c")
	get("e")
	write(nil, del("f"))
	write(NoSync, set("i"))
	scan()
	closeDB()
	return r
}

// noCompaction is an L0CompactionTrigger no test workload reaches.
const noCompaction = 1000

// injectedConfig sizes TestDBRecoveryErrorInjection's workload.
type injectedConfig struct {
	memtableSize int64
	valueSize    int
}

// TestDBRecoveryErrorInjection runs a small workload once for every file
// system operation it makes, failing that operation, and checks that the
// failure surfaces as an error of some call or a background error event
// (a failed flush is retried), that a failed write makes
// every later write fail, that reads never return a wrong value, and that
// after a crash the DB opens and holds every write acknowledged durable
// and nothing after a failed write. With a small memtable, memtables
// rotate and flush in the background too.
func TestDBRecoveryErrorInjection(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  injectedConfig
	}{
		{"flushes on demand", injectedConfig{memtableSize: 1 << 20}},
		{"background flushes", injectedConfig{memtableSize: 64 << 10, valueSize: 20 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fail int64
			for ; ; fail++ {
				if fail > 5000 {
					t.Fatal("the workload still meets an injected failure after 5000 operations")
				}
				mem := vfs.NewMem()
				r := runInjected(mem, fail, tc.cfg)
				if r.failed == nil {
					if len(r.calls) > 0 || len(r.problems) > 0 {
						t.Fatalf("without a failure: errors %v, problems %v", r.calls, r.problems)
					}
					break
				}
				checkInjectedRun(t, mem, r, fail, tc.cfg)
			}
			t.Logf("failed each of %d operations in turn", fail)
		})
	}
}

// checkInjectedRun checks one run of the workload with operation fail
// failing: what the run saw, then a crash and recovery.
func checkInjectedRun(t *testing.T, mem *vfs.MemFS, r *injectedRun, fail int64, cfg injectedConfig) {
	t.Helper()
	where := fmt.Sprintf("failing %s", r.failed)
	for _, p := range r.problems {
		t.Errorf("%s: %s", where, p)
	}
	if len(r.calls) == 0 && len(r.bgErrors) == 0 && !benignFailure(*r.failed, r.failedReadOnly) {
		t.Errorf("%s: the failure surfaced in no call and no background error", where)
	}
	// A crash now, then recovery on the plain file system.
	crashed := mem.CrashClone(vfs.CrashOptions{TornWrites: fail%2 == 1, Seed: uint64(fail)})
	d, err := Open("db", &Options{FS: crashed, MemtableSize: cfg.memtableSize, L0CompactionTrigger: noCompaction})
	if err != nil {
		t.Errorf("%s (errors: %v): Open after a crash: %v", where, r.calls, err)
		return
	}
	defer d.Close()
	if err := checkDirFiles(crashed, "db", d); err != nil {
		t.Errorf("%s: after a crash and Open: %v", where, err)
	}
	got, err := readAll(d)
	if err != nil {
		t.Errorf("%s: scan after a crash: %v", where, err)
	} else if _, ok := findPrefix(r.history, r.lo, r.hi, got); !ok {
		t.Errorf("%s (errors: %v): %v", where, r.calls, prefixError(r.history, r.lo, r.hi, got))
	}
	// The recovered DB takes writes.
	if err := d.Put([]byte("after"), []byte("crash"), nil); err != nil {
		t.Errorf("%s: Put after recovery: %v", where, err)
	}
}

// walDamaged reports whether a failed operation leaves a WAL that may end
// in a torn record: a write or sync of it. Writes then stop until Resume.
// A WAL that fails to be created leaves the old one in use, intact.
func walDamaged(op vfs.Op) bool {
	return strings.HasSuffix(op.Name, ".log") && (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync)
}

// benignFailure reports whether a failed operation may go unreported:
// deleting obsolete files (and listing the directory to find them) is
// best-effort, retried after the next flush and on the next Open, which
// checkDirFiles checks; and closing a file opened only to read it loses
// nothing.
func benignFailure(op vfs.Op, readOnly bool) bool {
	return op.Kind == vfs.OpRemove || op.Kind == vfs.OpList || op.Kind == vfs.OpClose && readOnly
}

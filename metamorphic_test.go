package bloomkv

// The metamorphic test: one generated history of operations, run against a
// map model and against the DB under several randomized option sets; every
// observable output (Get results, iterator positions, scans) goes into a
// transcript, and every configuration's transcript must equal the model's.
// Options change how data is laid out — filters, blocks, compression, how
// many tables and levels — never what a read returns.
//
// Long form: go test -count=1 -run TestMetamorphic -meta.seeds=200 -meta.configs=8 .
// A failure prints its seed and configuration; -meta.seed=S reruns one seed.

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

var (
	metaSeeds   = flag.Int("meta.seeds", 2, "histories TestMetamorphic generates (-race, left at its default: 1)")
	metaConfigs = flag.Int("meta.configs", 4, "randomized option sets TestMetamorphic runs each history under, besides the defaults (-race, left at its default: 2)")
	metaSeed    = flag.Int64("meta.seed", -1, "run only this history seed of TestMetamorphic")
	metaOps     = flag.Int("meta.ops", 1500, "operations per TestMetamorphic history")
)

type metaKind int

const (
	mWrite metaKind = iota // a Put, Delete or batch
	mGet
	mIter
	mNewSnap
	mCloseSnap
	mFlush
	mCompact
	mReopen
	mAdvance // the clock moves on, expiring what lived until then
	mIngest  // tables of sets, deletes and range deletions, ingested at once
	// mTxnBegin begins an update transaction, if fewer than metaMaxTxns
	// are open; mTxn reads and writes in an open one and may commit it.
	// Its Commit conflicts only by the history: single-threaded, a
	// transaction's commit is checked against exactly the writes, commits
	// and ingests the history made since it began (metaRunner.conflicts).
	mTxnBegin
	mTxn
)

// metaMaxTxns is how many transactions a history keeps open at most.
const metaMaxTxns = 3

// metaOp is one operation of a history. Which snapshot an op reads is an
// index into the live snapshots (-1: the DB), taken modulo their number.
type metaOp struct {
	kind   metaKind
	ops    []kvOp // mWrite
	key    []byte // mGet
	snap   int
	bounds *IterOptions  // mIter; mReopen's kept iterator
	moves  []metaMove    // mIter; mReopen's kept iterator (never 'X')
	lo, hi []byte        // mCompact
	by     time.Duration // mAdvance
	tables [][]kvOp      // mIngest
	reads  [][]byte      // mTxn: keys it Gets, before its writes (ops)
	scan   bool          // mTxn: a full scan within bounds, after reads
	commit bool          // mTxn: Commit after the writes
	// keep, on mReopen, keeps an iterator of the DB open across the Close
	// and the Open, to be walked (bounds, moves) at the next reopen or at
	// the end of the history, by when the new DB's compactions may have
	// deleted every table it reads.
	keep bool
}

type metaMove struct {
	op  byte // 'F' First, 'L' Last, 'G' SeekGE, 'T' SeekLT, 'X' SeekPrefixGE, 'N' Next, 'P' Prev
	key []byte
}

// metaPrefix returns the prefix extractor of history seed: the configs
// with Options.Prefix use it (the transcript of a prefix seek depends on
// Split), the others show the same prefix mode made of plain moves
// (metaPrefixIter), and the model reads prefixes with it.
func metaPrefix(seed uint64) *PrefixExtractor {
	if n := int(seed % 7); n > 0 {
		return fixedPrefix(fmt.Sprintf("meta.fixed%d", n), n)
	}
	return slashPrefix("meta.slash")
}

func genHistory(seed uint64, n int) []metaOp {
	rng := rand.New(rand.NewPCG(seed, 0x3e7a))
	ks := newKeySpace(rng, 300)
	var h []metaOp
	for i := range n {
		var op metaOp
		switch r := rng.IntN(1000); {
		case r < 560:
			op.kind, op.ops = mWrite, randMetaWrites(rng, ks, i, 1+rng.IntN(4)*rng.IntN(3))
		case r < 572:
			op.kind = mTxnBegin
		case r < 600:
			op.kind, op.snap = mTxn, rng.IntN(metaMaxTxns)
			for range rng.IntN(4) {
				op.reads = append(op.reads, ks.probe(rng))
			}
			if op.scan = rng.IntN(4) == 0; op.scan {
				op.bounds = randBounds(rng, ks)
			}
			op.ops = randMetaWrites(rng, ks, i, rng.IntN(4))
			op.commit = rng.IntN(2) == 0
		case r < 785:
			op.kind, op.key, op.snap = mGet, ks.probe(rng), rng.IntN(4)-1
		case r < 800:
			op.kind, op.by = mAdvance, time.Duration(1+rng.IntN(2))*ttlTick
		case r < 900:
			op.kind, op.bounds, op.snap = mIter, randBounds(rng, ks), rng.IntN(4)-1
			op.moves = randMoves(rng, ks, "FLGTXXNNNPP")
		case r < 930:
			op.kind = mNewSnap
		case r < 950:
			op.kind, op.snap = mCloseSnap, rng.IntN(4)
		case r < 962:
			op.kind = mFlush
		case r < 970:
			op.kind, op.tables = mIngest, randomIngestTables(rng, ks, i)
		case r < 990:
			op.kind = mCompact
			if rng.IntN(3) > 0 {
				op.lo = ks.probe(rng)
			}
			if rng.IntN(3) > 0 {
				op.hi = ks.probe(rng)
			}
		default:
			op.kind = mReopen
			if op.keep = rng.IntN(2) == 0; op.keep {
				// No prefix seek: without Options.Prefix one is made of
				// new iterators (metaPrefixIter), which a closed DB refuses.
				op.bounds, op.moves = randBounds(rng, ks), randMoves(rng, ks, "FLGTNNNPP")
			}
		}
		h = append(h, op)
	}
	return h
}

// randMetaWrites returns n writes of op i of a history: sets, with a
// time-to-live or not, deletes, merges and now and then a range deletion.
func randMetaWrites(rng *rand.Rand, ks *keySpace, i, n int) []kvOp {
	var ops []kvOp
	for range n {
		if rng.IntN(25) == 0 {
			ops = append(ops, randRangeDel(rng, ks))
			continue
		}
		k := string(ks.pick(rng))
		switch rng.IntN(10) {
		case 0, 1:
			ops = append(ops, kvOp{del: true, key: k})
		case 2, 3:
			ops = append(ops, kvOp{merge: true, key: k, value: fmt.Sprintf("+%d.", i)})
		case 4:
			ops = append(ops, kvOp{key: k, value: string(randValue(rng, fmt.Sprint(i))), ttl: randTTL(rng)})
		default:
			ops = append(ops, kvOp{key: k, value: string(randValue(rng, fmt.Sprint(i)))})
		}
	}
	return ops
}

// randMoves returns an iterator's moves, drawn from ops (a multiset of
// metaMove.op letters), now and then followed by full scans both ways.
func randMoves(rng *rand.Rand, ks *keySpace, ops string) []metaMove {
	var moves []metaMove
	for range 1 + rng.IntN(30) {
		m := metaMove{op: ops[rng.IntN(len(ops))]}
		if m.op == 'G' || m.op == 'T' || m.op == 'X' {
			m.key = ks.probe(rng)
		}
		moves = append(moves, m)
	}
	if rng.IntN(5) == 0 {
		moves = append(moves, metaMove{op: 'S'})
	}
	return moves
}

// metaConfig returns option set c of history seed: c == 0 is the defaults
// (with a MemFS); the others are random, with tiny memtables, levels and
// tables to force many flushes and compactions.
func metaConfig(seed uint64, c int) Options {
	if c == 0 {
		return Options{Merger: AppendMerger()} // the model folds as it does (kvModel.apply)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(c)))
	o := randOptions(rng)
	o.Merger = AppendMerger()
	o.FilterAllocation = []FilterAllocation{UniformAllocation, OptimalAllocation}[rng.IntN(2)]
	if rng.IntN(6) == 0 {
		o.DisableFilters, o.BitsPerKey = true, 0
	}
	o.BaseLevelSize = uint64(1<<10 + rng.IntN(128<<10))
	o.TargetFileSize = uint64(1<<10 + rng.IntN(64<<10))
	o.L0CompactionTrigger = 1 + rng.IntN(4)
	if o.L0SlowdownTrigger > 0 { // randOptions chose low thresholds: keep them above the trigger
		o.L0SlowdownTrigger = o.L0CompactionTrigger + rng.IntN(3)
		o.L0StopTrigger = o.L0SlowdownTrigger + 1 + rng.IntN(4)
	}
	o.LevelMultiplier = 2 + rng.IntN(9)
	// randOptions chose whether there are prefix filters; the history
	// chooses the extractor, as the transcript depends on it.
	if o.Prefix != nil {
		o.Prefix = metaPrefix(seed)
	}
	if o.DisableFilters {
		o.Prefix, o.LevelFilters = nil, nil // no filter to hold them
	}
	// Every history runs with values in blob files and with values inline.
	separateByParity(&o, uint64(c), rng)
	return o
}

func describeMetaConfig(o Options) string {
	return fmt.Sprintf("%s FilterAllocation:%v BaseLevelSize:%d TargetFileSize:%d L0CompactionTrigger:%d LevelMultiplier:%d",
		describeOptions(o), o.FilterAllocation, o.BaseLevelSize, o.TargetFileSize, o.L0CompactionTrigger, o.LevelMultiplier)
}

// metaRunner runs a history and writes its transcript. db is nil for the
// model.
type metaRunner struct {
	db    *DB
	dir   string
	opts  Options
	ext   *PrefixExtractor // the history's (metaPrefix)
	model kvModel
	snaps []*Snapshot
	snapM []kvModel
	// clock is the DB's, moved by mAdvance; exp the expiries of model's
	// keys, snapE of each snapM's: reads see a model less what expired.
	clock *testClock
	exp   kvExpiries
	snapE []kvExpiries
	// kept are the iterators mReopen keeps open across a Close (nil its
	// for the model), each with the model as it was made.
	kept []metaKeptIter
	// txns are the open transactions, oldest first; history is every
	// commit's writes in commit order (an ingest's: a range deletion over
	// each table's keys, as the DB records it), which their commits are
	// checked against; committed and conflicts count their commits.
	txns       []*metaTxn
	history    [][]kvOp
	txnCount   int
	committed  int
	conflicted int
	out        []string
}

// metaTxn is an open transaction of a history (txn nil for the model)
// and what the model knows of it: its view, the snapshot under its own
// writes, with the expiries exp of the view's keys.
type metaTxn struct {
	txn *Transaction
	id  int
	m   modelTxn
	exp kvExpiries
}

type metaKeptIter struct {
	it *Iterator
	m  kvModel
	op metaOp // the mReopen that made it: its bounds and moves
	at int    // the op's index
}

func (r *metaRunner) printf(format string, args ...any) {
	r.out = append(r.out, fmt.Sprintf(format, args...))
}

func (r *metaRunner) reader(i int) (dbReader, kvModel, string) {
	now := r.clock.nanos()
	if i < 0 || len(r.snapM) == 0 {
		if r.db == nil {
			return nil, liveAt(r.model, r.exp, now), "db"
		}
		return r.db, liveAt(r.model, r.exp, now), "db"
	}
	i %= len(r.snapM)
	if r.db == nil {
		return nil, liveAt(r.snapM[i], r.snapE[i], now), fmt.Sprintf("snap%d", i)
	}
	return r.snaps[i], liveAt(r.snapM[i], r.snapE[i], now), fmt.Sprintf("snap%d", i)
}

// discardTxns discards the open transactions.
func (r *metaRunner) discardTxns() {
	for _, t := range r.txns {
		if t.txn != nil {
			t.txn.Discard()
		}
	}
	r.txns = nil
}

// conflicts reports whether t's Commit must fail with ErrConflict: it
// writes, and a commit since it began wrote what it read.
func (r *metaRunner) conflicts(t *metaTxn) bool {
	if len(t.m.own) == 0 {
		return false // a Commit with nothing to write checks nothing
	}
	for _, ops := range r.history[t.m.begun:] {
		for _, op := range ops {
			if t.m.touches(op) {
				return true
			}
		}
	}
	return false
}

// ingestSpans returns the range deletions that stand, in the record of
// commits, for tables ingested: [smallest, largest] key of each.
func ingestSpans(tables [][]kvOp) []kvOp {
	var spans []kvOp
	for _, ops := range tables {
		lo, hi := ops[0].key, ops[0].key
		for _, op := range ops {
			lo, hi = min(lo, op.key), max(hi, op.key, op.end)
		}
		spans = append(spans, kvOp{rangeDel: true, key: lo, end: hi + "\x00"})
	}
	return spans
}

func (r *metaRunner) closeSnaps() {
	for _, s := range r.snaps {
		if s != nil {
			s.Close()
		}
	}
	r.snaps, r.snapM, r.snapE = nil, nil, nil
}

func (r *metaRunner) run(h []metaOp) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic at transcript line %d: %v", len(r.out), p)
		}
	}()
	for i, op := range h {
		if err := r.step(i, op); err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
	}
	return r.walkKept()
}

// walkKept walks and closes the iterators kept open across a Close.
func (r *metaRunner) walkKept() error {
	for _, k := range r.kept {
		var lo, hi []byte
		if k.op.bounds != nil {
			lo, hi = k.op.bounds.LowerBound, k.op.bounds.UpperBound
		}
		r.printf("kept %d: NewIter[%q, %q)", k.at, lo, hi)
		if r.db == nil {
			r.walkModel(k.m, k.op.bounds, k.op.moves)
			continue
		}
		if err := r.walkDB(nil, k.it, k.op.bounds, k.op.moves); err != nil {
			return err
		}
	}
	r.kept = nil
	return nil
}

// closeKept closes the iterators kept open across a Close, unwalked.
func (r *metaRunner) closeKept() {
	for _, k := range r.kept {
		if k.it != nil {
			k.it.Close()
		}
	}
	r.kept = nil
}

func (r *metaRunner) step(i int, op metaOp) error {
	switch op.kind {
	case mAdvance:
		r.clock.advance(op.by)
	case mWrite:
		r.history = append(r.history, op.ops)
		r.model.apply(op.ops)
		applyExpiries(r.exp, op.ops, r.clock.nanos())
		if r.db != nil {
			if err := applyOps(r.db, op.ops, NoSync); err != nil {
				return err
			}
		}
	case mGet:
		rd, m, name := r.reader(op.snap)
		if r.db == nil {
			if v, ok := m[string(op.key)]; ok {
				r.printf("%d %s.Get(%q) = %q", i, name, op.key, v)
			} else {
				r.printf("%d %s.Get(%q) not found", i, name, op.key)
			}
			break
		}
		v, err := rd.Get(op.key)
		switch {
		case err == nil:
			r.printf("%d %s.Get(%q) = %q", i, name, op.key, v)
		case err == ErrNotFound:
			r.printf("%d %s.Get(%q) not found", i, name, op.key)
		default:
			r.printf("%d %s.Get(%q) error %v", i, name, op.key, err)
		}
	case mIter:
		rd, m, name := r.reader(op.snap)
		var lo, hi []byte
		if op.bounds != nil {
			lo, hi = op.bounds.LowerBound, op.bounds.UpperBound
		}
		r.printf("%d %s.NewIter[%q, %q)", i, name, lo, hi)
		if r.db == nil {
			r.walkModel(m, op.bounds, op.moves)
			break
		}
		it, err := rd.NewIter(op.bounds)
		if err != nil {
			return err
		}
		return r.walkDB(rd, it, op.bounds, op.moves)
	case mNewSnap:
		r.snapM = append(r.snapM, r.model.clone())
		r.snapE = append(r.snapE, maps.Clone(r.exp))
		if r.db != nil {
			s, err := r.db.NewSnapshot()
			if err != nil {
				return err
			}
			r.snaps = append(r.snaps, s)
		}
	case mCloseSnap:
		if len(r.snapM) == 0 {
			break
		}
		j := op.snap % len(r.snapM)
		r.snapM = append(r.snapM[:j], r.snapM[j+1:]...)
		r.snapE = append(r.snapE[:j], r.snapE[j+1:]...)
		if r.db != nil {
			if err := r.snaps[j].Close(); err != nil {
				return err
			}
			r.snaps = append(r.snaps[:j], r.snaps[j+1:]...)
		}
	case mFlush:
		if r.db != nil {
			return r.db.Flush()
		}
	case mIngest:
		r.history = append(r.history, ingestSpans(op.tables))
		for _, ops := range op.tables {
			r.model.apply(ops)
			applyExpiries(r.exp, ops, r.clock.nanos())
		}
		if r.db != nil {
			var paths []string
			for j, ops := range op.tables {
				path := fmt.Sprintf("/ingest/%d-%d.sst", i, j)
				if err := writeIngestFile(r.opts.FS, path, ops); err != nil {
					return err
				}
				paths = append(paths, path)
			}
			return r.db.Ingest(paths)
		}
	case mCompact:
		if r.db != nil {
			return r.db.Compact(op.lo, op.hi)
		}
	case mTxnBegin:
		if len(r.txns) == metaMaxTxns {
			break
		}
		t := &metaTxn{id: r.txnCount, exp: maps.Clone(r.exp), m: modelTxn{view: r.model.clone(), begun: len(r.history), reads: map[string]bool{}}}
		r.txnCount++
		if r.db != nil {
			txn, err := r.db.NewTransaction(true)
			if err != nil {
				return err
			}
			t.txn = txn
		}
		r.txns = append(r.txns, t)
	case mTxn:
		if len(r.txns) == 0 {
			break
		}
		return r.txnStep(i, op, op.snap%len(r.txns))
	case mReopen:
		if err := r.walkKept(); err != nil {
			return err
		}
		if op.keep {
			k := metaKeptIter{m: liveAt(r.model, r.exp, r.clock.nanos()), op: op, at: i} // expiries judged at its creation
			if r.db != nil {
				it, err := r.db.NewIter(op.bounds)
				if err != nil {
					return err
				}
				k.it = it
			}
			r.kept = append(r.kept, k)
		}
		r.closeSnaps()
		r.discardTxns()
		if r.db != nil {
			if err := r.db.Close(); err != nil {
				return err
			}
			d, err := Open(r.dir, &r.opts)
			if err != nil {
				return err
			}
			r.db = d
		}
	}
	return nil
}

// txnStep runs mTxn op (index i of the history) in the open transaction
// j: its Gets and scan, shown in the transcript, its writes, and its
// Commit, whose outcome the transcript shows too.
func (r *metaRunner) txnStep(i int, op metaOp, j int) error {
	t := r.txns[j]
	now := r.clock.nanos()
	view := liveAt(t.m.view, t.exp, now)
	for _, k := range op.reads {
		own := false
		for _, w := range t.m.own {
			own = own || w.covers(string(k)) && !w.merge // a merge reads on below it
		}
		if !own {
			t.m.reads[string(k)] = true
		}
		v, ok := view[string(k)]
		var err error
		if r.db != nil {
			var got []byte
			got, err = t.txn.Get(k)
			v, ok = string(got), err == nil
		}
		switch {
		case ok:
			r.printf("%d txn%d.Get(%q) = %q", i, t.id, k, v)
		case r.db == nil || err == ErrNotFound:
			r.printf("%d txn%d.Get(%q) not found", i, t.id, k)
		default:
			r.printf("%d txn%d.Get(%q) error %v", i, t.id, k, err)
		}
	}
	if op.scan {
		var lo, hi []byte
		if op.bounds != nil {
			lo, hi = op.bounds.LowerBound, op.bounds.UpperBound
		}
		// A full scan reads from its lower bound to its upper, both
		// included, in whichever order they are (docs/transactions.md).
		sp := modelSpan{lo: string(lo), hi: string(hi), inf: hi == nil}
		if !sp.inf && sp.hi < sp.lo {
			sp.lo, sp.hi = sp.hi, sp.lo
		}
		t.m.spans = append(t.m.spans, sp)
		r.printf("%d txn%d.NewIter[%q, %q)", i, t.id, lo, hi)
		moves := []metaMove{{op: 'S'}}
		if r.db == nil {
			r.walkModel(view, op.bounds, moves)
		} else {
			it, err := t.txn.NewIter(op.bounds)
			if err != nil {
				return err
			}
			if err := r.walkDB(nil, it, op.bounds, moves); err != nil {
				return err
			}
		}
	}
	for _, w := range op.ops {
		if t.txn != nil {
			if err := w.addTo(t.txn); err != nil {
				return err
			}
		}
		t.m.own = append(t.m.own, w)
		t.m.view.apply([]kvOp{w})
		// The transaction's own set with a time-to-live does not expire
		// before its commit: its reads see a plain set.
		w.ttl = 0
		applyExpiries(t.exp, []kvOp{w}, now)
	}
	if !op.commit {
		return nil
	}
	r.txns = append(r.txns[:j], r.txns[j+1:]...)
	conflict := r.conflicts(t)
	if !conflict && len(t.m.own) > 0 {
		r.history = append(r.history, t.m.own)
		r.model.apply(t.m.own)
		applyExpiries(r.exp, t.m.own, now)
	}
	var err error
	if t.txn != nil {
		err = t.txn.Commit(NoSync)
	} else if conflict {
		err = ErrConflict
	}
	switch {
	case err == nil:
		r.committed++
		r.printf("%d txn%d.Commit() ok", i, t.id)
	case err == ErrConflict:
		r.conflicted++
		r.printf("%d txn%d.Commit() conflict", i, t.id)
	default:
		r.printf("%d txn%d.Commit() error %v", i, t.id, err)
	}
	return nil
}

// walkModel prints what an iterator over m within bounds shows at each of
// moves.
func (r *metaRunner) walkModel(m kvModel, bounds *IterOptions, moves []metaMove) {
	var lo, hi []byte
	if bounds != nil {
		lo, hi = bounds.LowerBound, bounds.UpperBound
	}
	keys, values := m.sorted(lo, hi)
	po := newPrefixOracle(r.ext, m, bounds)
	for _, mv := range moves {
		var ok bool
		switch mv.op {
		case 'F':
			ok = po.leave().first()
		case 'L':
			ok = po.leave().last()
		case 'G':
			ok = po.leave().seekGE(mv.key)
		case 'T':
			ok = po.leave().seekLT(mv.key)
		case 'X':
			ok = po.seekPrefixGE(mv.key)
		case 'N':
			ok = po.cur.next()
		case 'P':
			ok = po.cur.prev()
		case 'S':
			var sb strings.Builder
			for j := range keys {
				fmt.Fprintf(&sb, "%q=%q ", keys[j], values[j])
			}
			r.printf("  scan %s", sb.String())
			sb.Reset()
			for j := len(keys) - 1; j >= 0; j-- {
				fmt.Fprintf(&sb, "%q=%q ", keys[j], values[j])
			}
			r.printf("  rscan %s", sb.String())
			po.leave().state = oracleBefore // the backward scan ran off the start
			continue
		}
		if o := po.cur; ok {
			r.printf("  %c%q -> %q=%q", mv.op, mv.key, o.keys[o.i], o.values[o.i])
		} else {
			r.printf("  %c%q -> invalid", mv.op, mv.key)
		}
	}
}

// walkDB prints what main, an iterator of rd within bounds, shows at each
// of moves, then closes it. rd makes the iterators of prefix seeks without
// Options.Prefix (metaPrefixIter); it is nil for moves without 'X'.
func (r *metaRunner) walkDB(rd dbReader, main *Iterator, bounds *IterOptions, moves []metaMove) error {
	// Without Options.Prefix, prefix mode is made of plain moves.
	var emu *metaPrefixIter
	if r.opts.Prefix == nil {
		emu = &metaPrefixIter{r: rd, ext: r.ext, bounds: bounds}
	}
	it := main // the iterator shown: emu.it in emulated prefix mode
	for _, mv := range moves {
		var ok bool
		switch mv.op {
		case 'F', 'L', 'G', 'T', 'S':
			it = main
		}
		switch mv.op {
		case 'F':
			ok = it.First()
		case 'L':
			ok = it.Last()
		case 'G':
			ok = it.SeekGE(mv.key)
		case 'T':
			ok = it.SeekLT(mv.key)
		case 'X':
			if emu == nil {
				ok = it.SeekPrefixGE(mv.key)
				break
			}
			var err error
			if ok, err = emu.seekPrefixGE(mv.key); err != nil {
				main.Close()
				return err
			}
			it = emu.it
		case 'N':
			if ok = it.Next(); it == emu.current() {
				ok = emu.pass(ok, it.Next)
			}
		case 'P':
			if ok = it.Prev(); it == emu.current() {
				ok = emu.pass(ok, it.Prev)
			}
		case 'S':
			var sb strings.Builder
			for ok := it.First(); ok; ok = it.Next() {
				fmt.Fprintf(&sb, "%q=%q ", it.Key(), it.Value())
			}
			r.printf("  scan %s", sb.String())
			sb.Reset()
			for ok := it.Last(); ok; ok = it.Prev() {
				fmt.Fprintf(&sb, "%q=%q ", it.Key(), it.Value())
			}
			r.printf("  rscan %s", sb.String())
			continue
		}
		if err := it.Error(); err != nil {
			r.printf("  %c%q -> error %v", mv.op, mv.key, err)
		} else if ok != it.Valid() {
			r.printf("  %c%q -> returned %v but Valid %v", mv.op, mv.key, ok, it.Valid())
		} else if ok {
			r.printf("  %c%q -> %q=%q", mv.op, mv.key, it.Key(), it.Value())
		} else {
			r.printf("  %c%q -> invalid", mv.op, mv.key)
		}
	}
	if err := main.Close(); err != nil {
		r.printf("  Close error %v", err)
	}
	if err := emu.close(); err != nil {
		r.printf("  Close error %v", err)
	}
	return nil
}

func TestMetamorphic(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	seeds := make([]uint64, race.Size("meta.seeds", *metaSeeds, 1))
	base := uint64(time.Now().UnixNano())
	for i := range seeds {
		seeds[i] = base + uint64(i)
	}
	if *metaSeed >= 0 {
		seeds = []uint64{uint64(*metaSeed)}
	}
	ops := *metaOps
	if testing.Short() {
		ops = min(ops, 500)
	}
	start := time.Now()
	runs, separated, lines, ttlWrites, clockSteps, ingests, txns, txnCommits, txnConflicts := 0, 0, 0, 0, 0, 0, 0, 0, 0
	var flushes, compactions uint64 // since each run's last reopen
	for _, seed := range seeds {
		h := genHistory(seed, ops)
		for _, op := range h {
			clockSteps += b2i(op.kind == mAdvance)
			ingests += b2i(op.kind == mIngest)
			for _, w := range op.ops {
				ttlWrites += b2i(w.ttl > 0)
			}
		}
		model := &metaRunner{model: kvModel{}, ext: metaPrefix(seed), clock: newTestClock(), exp: kvExpiries{}}
		if err := model.run(h); err != nil {
			t.Fatalf("seed %d: the model: %v", seed, err)
		}
		txns, txnCommits, txnConflicts = txns+model.txnCount, txnCommits+model.committed, txnConflicts+model.conflicted
		for c := 0; c <= race.Size("meta.configs", *metaConfigs, 2); c++ {
			o := metaConfig(seed, c)
			o.FS = vfs.NewMem()
			r := &metaRunner{dir: "/meta", opts: o, model: kvModel{}, ext: metaPrefix(seed), clock: newTestClock(), exp: kvExpiries{}}
			r.opts.Clock = r.clock
			d, err := Open(r.dir, &r.opts)
			if err != nil {
				t.Fatalf("seed %d config %d %s: Open: %v", seed, c, describeMetaConfig(o), err)
			}
			r.db = d
			err = r.run(h)
			r.closeKept()
			r.closeSnaps()
			r.discardTxns()
			m := r.db.Metrics()
			flushes += m.Flushes
			compactions += m.Compactions
			if cerr := r.db.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("Close: %w", cerr)
			}
			repro := fmt.Sprintf("go test -run 'TestMetamorphic$' -meta.seed=%d -meta.configs=%d -meta.ops=%d .", seed, c, ops)
			if err != nil {
				t.Fatalf("seed %d config %d %s: %v\nreproduce: %s", seed, c, describeMetaConfig(o), err, repro)
			}
			if i, ok := firstDiff(r.out, model.out); !ok {
				t.Fatalf("seed %d config %d %s: transcript line %d differs from the model's:\n%s\nreproduce: %s",
					seed, c, describeMetaConfig(o), i, transcriptContext(r.out, model.out, i), repro)
			}
			runs++
			if o.ValueSeparation.MinSize > 0 {
				separated++
			}
			lines += len(r.out)
		}
	}
	t.Logf("%d histories of %d ops (%d writes with a time-to-live, %d clock steps, %d ingests, %d transactions: %d commits, %d conflicts) × %d configurations (+ the model): %d runs (%d with values separated), %d transcript lines compared, ≥ %d flushes and %d compactions, in %v",
		len(seeds), ops, ttlWrites, clockSteps, ingests, txns, txnCommits, txnConflicts, *metaConfigs+1, runs, separated, lines, flushes, compactions, time.Since(start).Round(time.Millisecond))
}

// metaPrefixIter is prefix mode made of plain moves, for a DB without
// Options.Prefix, to show what SeekPrefixGE would: an iterator of its own
// for each prefix seek, bounded to the prefix's range within the
// iterator's bounds, whose moves pass over the keys without the prefix.
// It relies on nothing but that a key starts with its prefix.
type metaPrefixIter struct {
	r      dbReader
	ext    *PrefixExtractor
	bounds *IterOptions
	it     *Iterator // of the last prefix seek; nil before the first
	prefix []byte
}

// seekPrefixGE is SeekPrefixGE(key).
func (e *metaPrefixIter) seekPrefixGE(key []byte) (bool, error) {
	if err := e.close(); err != nil {
		return false, err
	}
	e.prefix = bytes.Clone(e.ext.Prefix(key))
	o := IterOptions{LowerBound: e.prefix, UpperBound: appendPrefixEnd(nil, e.prefix)}
	if b := e.bounds; b != nil {
		if b.LowerBound != nil && bytes.Compare(b.LowerBound, o.LowerBound) > 0 {
			o.LowerBound = b.LowerBound
		}
		if b.UpperBound != nil && (o.UpperBound == nil || bytes.Compare(b.UpperBound, o.UpperBound) < 0) {
			o.UpperBound = b.UpperBound
		}
	}
	it, err := e.r.NewIter(&o)
	if err != nil {
		return false, err
	}
	e.it = it
	return e.pass(it.SeekGE(key), it.Next), nil
}

// pass makes more moves with move while the iterator is at a key without
// the prefix; ok is what the last move returned.
func (e *metaPrefixIter) pass(ok bool, move func() bool) bool {
	for ok && !bytes.Equal(e.ext.Prefix(e.it.Key()), e.prefix) {
		ok = move()
	}
	return ok
}

// current returns the iterator of the last prefix seek, or nil.
func (e *metaPrefixIter) current() *Iterator {
	if e == nil {
		return nil
	}
	return e.it
}

// close closes the current iterator, if any, and returns its error.
func (e *metaPrefixIter) close() error {
	if e == nil || e.it == nil {
		return nil
	}
	err := e.it.Close()
	e.it = nil
	return err
}

func firstDiff(a, b []string) (int, bool) {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i, false
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b)), false
	}
	return 0, true
}

func transcriptContext(got, want []string, i int) string {
	var b bytes.Buffer
	clip := func(s string) string {
		if len(s) > 300 {
			return s[:300] + "…"
		}
		return s
	}
	for j := max(0, i-5); j < i; j++ {
		fmt.Fprintf(&b, "   %s\n", clip(want[j]))
	}
	if i < len(got) {
		fmt.Fprintf(&b, "got  %s\n", clip(got[i]))
	}
	if i < len(want) {
		fmt.Fprintf(&b, "want %s\n", clip(want[i]))
	}
	return b.String()
}

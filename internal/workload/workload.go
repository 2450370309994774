package workload

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Store is what a workload needs of an engine. Adapters implement it for
// bloomkv (package cmd/bloomkv/benchstore) and, in the bench module, for
// the peer stores.
type Store interface {
	// Put sets key to value, through the engine's write-ahead log but
	// without an fsync per write. It must not keep key or value after it
	// returns: the workloads reuse both buffers for the next write.
	Put(key, value []byte) error
	// Get returns key's value, found = false (and no error) when absent.
	// The value may be retained by the engine; the caller only reads it.
	Get(key []byte) (value []byte, found bool, err error)
	// Scan reads up to n entries in key order from the first key ≥ start
	// and returns how many it read.
	Scan(start []byte, n int) (int, error)
	Close() error
}

// MultiGetBatch is how many keys one operation of the multiget workload
// asks for.
const MultiGetBatch = 64

// MultiGetter is a Store that reads a batch of keys in one call: the
// values in the keys' order, nil for a key that is absent (bloomkv's
// DB.MultiGet).
type MultiGetter interface {
	MultiGet(keys [][]byte) ([][]byte, error)
}

// KeyScanner is a Store that can scan keys without reading their values,
// as the scankeys workload does: ScanKeys is Scan, reading each entry's
// key only.
type KeyScanner interface {
	ScanKeys(start []byte, n int) (int, error)
}

// Settler is a Store that can bring itself to a steady state after a fill:
// memtables flushed and background compactions finished, so reads measure
// the tree and not the moment. The bench calls Settle after each fill.
type Settler interface {
	Settle() error
}

// Workload names a workload (see the package doc).
type Workload string

// The workloads.
const (
	FillSeq       Workload = "fillseq"
	FillRandom    Workload = "fillrandom"
	FillOverwrite Workload = "filloverwrite"
	ReadRandom    Workload = "readrandom"
	ReadMissing   Workload = "readmissing"
	ReadMixed     Workload = "readmixed"
	Scan          Workload = "scan"
	// ScanKeys is Scan reading keys only: it needs a KeyScanner.
	ScanKeys Workload = "scankeys"
	// MultiGet reads present keys MultiGetBatch at a time: it needs a
	// MultiGetter.
	MultiGet Workload = "multiget"

	// The prefix workloads (their keys: see prefix.go): they need a
	// PrefixSeeker.
	FillPrefix        Workload = "fillprefix"
	SeekPrefix        Workload = "seekprefix"
	SeekPrefixMissing Workload = "seekprefixmissing"
)

// All lists the workloads in the order of the package doc.
var All = append([]Workload{FillSeq, FillRandom, FillOverwrite, ReadRandom, ReadMissing, ReadMixed, Scan, ScanKeys, MultiGet, FillPrefix, SeekPrefix, SeekPrefixMissing,
	YCSBLoad, YCSBA, YCSBB, YCSBC, YCSBD, YCSBE, YCSBF, FillRange}, rangeWorkloads...)

// IsFill reports whether w writes a store from empty (the YCSB load too).
func (w Workload) IsFill() bool {
	return w == FillSeq || w == FillRandom || w == FillOverwrite || w == FillPrefix || w == YCSBLoad || w == FillRange
}

// IsPrefixSeek reports whether w is made of prefix seeks.
func (w Workload) IsPrefixSeek() bool { return w == SeekPrefix || w == SeekPrefixMissing }

// IsGet reports whether w is made of point lookups.
func (w Workload) IsGet() bool { return w == ReadRandom || w == ReadMissing || w == ReadMixed }

// Parse parses a comma-separated list of workload names.
func Parse(list string) ([]Workload, error) {
	var ws []Workload
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		ok := false
		for _, w := range All {
			if string(w) == name {
				ws, ok = append(ws, w), true
				break
			}
		}
		if !ok {
			names := make([]string, len(All))
			for i, w := range All {
				names[i] = string(w)
			}
			return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("no workload in %q", list)
	}
	return ws, nil
}

// DefaultWritesPerKey is how many times filloverwrite writes each key.
const DefaultWritesPerKey = 3

// MaxWritesPerKey bounds Config.WritesPerKey: each write of a key before
// its last is told apart by one byte, 0x80 plus the write's number, which
// no value of Keys.Value holds (see overwrittenValue), and the counts of
// writes done per key fit a byte.
const MaxWritesPerKey = 128

// Config is one run's sizes: the keys, how many operations each read
// workload does, and how many writes of each key filloverwrite does.
type Config struct {
	Keys       *Keys
	Reads      int     // Gets of each read workload; scan does Reads/ScanLength scans
	MissRatio  float64 // readmixed's share of missing keys, in [0, 1]
	ScanLength int     // entries per scan
	PrefixKeys int     // keys per prefix of the prefix workloads; 0: DefaultPrefixKeys
	// WritesPerKey is how many times filloverwrite writes each key, in
	// [1, MaxWritesPerKey]; 0: DefaultWritesPerKey.
	WritesPerKey int
	// Threads is how many goroutines run each workload's operations at
	// once (0 or 1: one). The Store must be safe for concurrent use.
	// filloverwrite runs on one only.
	Threads int
	// RangeReuse makes each thread of a range scan workload scan through
	// one cursor (RangeReuser) rather than a new iterator per scan; the
	// store must be a RangeReuser.
	RangeReuse bool
	// YCSB is a comma-separated list of YCSB properties (name=value, YCSB's
	// names: see YCSB.SetProperty) that override every YCSB workload's own;
	// recordcount defaults to Keys.N and operationcount to Reads.
	YCSB string

	records *ycsbRecords // the YCSB records, from the last ycsb-load
}

// writesPerKey returns filloverwrite's writes per key, the default for 0.
func (c *Config) writesPerKey() int {
	if c.WritesPerKey == 0 {
		return DefaultWritesPerKey
	}
	return c.WritesPerKey
}

// checkOverwrite reports why filloverwrite cannot run under c, if it
// cannot.
func (c *Config) checkOverwrite() error {
	w := c.writesPerKey()
	switch {
	case w < 1 || w > MaxWritesPerKey:
		return fmt.Errorf("workload: %d writes per key is outside [1, %d]", w, MaxWritesPerKey)
	case w > 1 && c.Keys.ValueSize < 1:
		return fmt.Errorf("workload: %s needs values of at least 1 byte to tell a key's %d writes apart", FillOverwrite, w)
	case uint64(c.Keys.N) > math.MaxUint32 || uint64(c.Keys.N)*uint64(w) > math.MaxInt: // see overwriteOrder
		return fmt.Errorf("workload: %s of %d keys %d times each is too many writes", FillOverwrite, c.Keys.N, w)
	}
	return nil
}

// Ops returns how many operations workload w does.
func (c *Config) Ops(w Workload) int {
	switch {
	case w == FillOverwrite:
		return c.Keys.N * c.writesPerKey()
	case w.IsYCSB():
		y, err := c.ycsb(w)
		if err != nil {
			return 0
		}
		if w == YCSBLoad {
			return int(y.RecordCount)
		}
		return int(y.OperationCount)
	case w.IsFill():
		return c.Keys.N
	case w == Scan || w == ScanKeys:
		return max(1, c.Reads/max(1, c.ScanLength))
	case w == MultiGet:
		return max(1, c.Reads/MultiGetBatch) // as many keys read as readrandom's Gets
	}
	if width, empty, ok := w.RangeScan(); ok && !empty {
		return max(1, c.Reads/width) // as many keys read as a read workload's Gets
	}
	return c.Reads
}

// LiveBytes returns the user bytes — keys and values, at their sizes when
// written — that fill w leaves in a store it filled from empty: the
// denominator of space amplification. 0 for a workload that is not a
// fill.
func (c *Config) LiveBytes(w Workload) int64 {
	switch {
	case w == YCSBLoad:
		y, err := c.ycsb(w)
		if err != nil {
			return 0
		}
		return y.loadBytes()
	case w.IsFill():
		return int64(c.Keys.N) * int64(c.Keys.KeySize+c.Keys.ValueSize)
	}
	return 0
}

// WrittenBytes returns the user bytes — keys and values — that fill w
// writes: LiveBytes, but each of filloverwrite's writes counted: the
// denominator of write amplification. 0 for a workload that is not a fill.
func (c *Config) WrittenBytes(w Workload) int64 {
	if w == FillOverwrite {
		return c.LiveBytes(w) * int64(c.writesPerKey())
	}
	return c.LiveBytes(w)
}

// Result is what one workload did.
type Result struct {
	Workload Workload
	Ops      int           // operations done
	Elapsed  time.Duration // wall-clock time of them all
	Latency  Histogram     // of each operation
	Missing  int           // Gets of missing keys (readmissing, readmixed) or seeks of missing prefixes
	Threads  int           // goroutines that ran the operations
	// Kinds counts a YCSB workload's operations by kind (OpRead …
	// OpReadModifyWrite; the load's are all inserts).
	Kinds [NumOpKinds]int
}

// OpsPerSec returns the throughput.
func (r *Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// progressEvery is how many operations pass between progress calls.
const progressEvery = 1024

// plan is what a workload's threads share, read-only but for the YCSB
// records' counters.
type plan struct {
	w      Workload
	ops    int
	order  *permutation // fillrandom, fillprefix, fillrange: the keys in their order
	writes []uint32     // filloverwrite's writes, key by key
	layout prefixLayout
	seeker PrefixSeeker
	getter MultiGetter // multiget's
	// keyScanner is scankeys'.
	keyScanner KeyScanner
	ycsb       *ycsbRun
	// The range workloads': the layout, and the store's bounded scans.
	ranges  rangeLayout
	scanner RangeScanner
}

// newPlan checks that w can run on s under c and plans it.
func (c *Config) newPlan(s Store, w Workload) (*plan, error) {
	k := c.Keys
	p := &plan{w: w, ops: c.Ops(w)}
	r := k.rng(string(w))
	switch {
	case w == FillSeq:
	case w == FillRandom:
		p.order = newPermutation(r, k.N)
	case w == FillOverwrite:
		if err := c.checkOverwrite(); err != nil {
			return nil, err
		}
		if c.threads() > 1 {
			return nil, fmt.Errorf("workload: %s runs on one thread: its reads check that each key's last write won, which needs one order of the writes", w)
		}
		p.writes = overwriteOrder(r, k.N, c.writesPerKey())
	case w == ReadRandom || w == ReadMissing || w == ReadMixed || w == Scan:
	case w == ScanKeys:
		var ok bool
		if p.keyScanner, ok = s.(KeyScanner); !ok {
			return nil, fmt.Errorf("workload: %s needs scans of keys only, which the store %T does not offer", w, s)
		}
	case w == MultiGet:
		var ok bool
		if p.getter, ok = s.(MultiGetter); !ok {
			return nil, fmt.Errorf("workload: %s needs batched reads, which the store %T does not offer", w, s)
		}
	case w == FillPrefix || w.IsPrefixSeek():
		var err error
		if p.layout, err = k.prefixLayout(c.PrefixKeys); err != nil {
			return nil, err
		}
		if w == FillPrefix {
			p.order = newPermutation(r, k.N)
			break
		}
		var ok bool
		if p.seeker, ok = s.(PrefixSeeker); !ok {
			return nil, fmt.Errorf("workload: %s needs prefix seeks, which the store %T does not offer", w, s)
		}
	case w.IsYCSB():
		var err error
		if p.ycsb, err = c.newYCSBRun(w); err != nil {
			return nil, err
		}
	case w == FillRange || w.IsRangeScan():
		var err error
		if p.ranges, err = k.rangeLayout(); err != nil {
			return nil, err
		}
		if w == FillRange {
			p.order = newPermutation(r, k.N)
			break
		}
		var ok bool
		if p.scanner, ok = s.(RangeScanner); !ok {
			return nil, fmt.Errorf("workload: %s needs bounded scans, which the store %T does not offer", w, s)
		}
		if _, ok = s.(RangeReuser); c.RangeReuse && !ok {
			return nil, fmt.Errorf("workload: %s with RangeReuse needs a reusable cursor, which the store %T does not offer", w, s)
		}
	default:
		return nil, fmt.Errorf("workload: unknown workload %q", w)
	}
	return p, nil
}

// threads returns Threads, at least 1.
func (c *Config) threads() int { return max(c.Threads, 1) }

// Run runs workload w against s on Config.Threads goroutines, each doing
// an equal share of the operations (fills: a contiguous share of the
// keys' order; reads: draws of their own generator, the first thread's
// the one a run on one thread uses), and returns their result: the wall
// time from the start of the first to the end of the last, and the
// latency of every operation. If progress is not nil it is called, from
// one goroutine, now and then with the operations done so far. A read
// that gets a wrong answer (a present key not found, a missing key found,
// a present key's value other than Keys.Value, the value every fill
// leaves it with) stops the run with an error.
func (c *Config) Run(s Store, w Workload, progress func(done int)) (*Result, error) {
	p, err := c.newPlan(s, w)
	if err != nil {
		return nil, err
	}
	n := c.threads()
	threads := make([]*thread, n)
	for i := range threads {
		name := string(w)
		if i > 0 {
			name = fmt.Sprintf("%s#%d", w, i)
		}
		threads[i] = &thread{c: c, p: p, s: s, r: c.Keys.rng(name), lo: i * p.ops / n, hi: (i + 1) * p.ops / n}
		if p.ycsb != nil {
			threads[i].ycsb = p.ycsb.thread(threads[i].r, c.Keys.values)
		}
		if w == FillOverwrite {
			threads[i].written = make([]uint8, c.Keys.N)
		}
	}
	var done atomic.Int64
	var failed atomic.Bool
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i, t := range threads {
		var pr func(int)
		if i == 0 {
			pr = progress
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = t.run(pr, &done, &failed); errs[i] != nil {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	res := &Result{Workload: w, Ops: p.ops, Elapsed: time.Since(start), Threads: n}
	for i, t := range threads {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", w, errs[i])
		}
		res.Latency.Merge(&t.latency)
		res.Missing += t.missing
		for k, x := range t.kinds {
			res.Kinds[k] += x
		}
	}
	if progress != nil {
		progress(p.ops)
	}
	return res, nil
}

// thread is one goroutine of a run: operations lo … hi−1 of its plan.
type thread struct {
	c      *Config
	p      *plan
	s      Store
	r      *rand.Rand
	lo, hi int
	key    []byte
	upper  []byte      // a range scan's upper bound
	cursor RangeCursor // under RangeReuse, the range scans' once opened
	ycsb   *ycsbThread
	// filloverwrite: the writes done so far of each key, and the buffer of
	// the values of the writes before a key's last.
	written     []uint8
	overwritten []byte
	// multiget: the batch's keys and their indexes.
	batch    [][]byte
	batchIdx []int

	latency Histogram
	missing int
	kinds   [NumOpKinds]int
}

// run does the thread's operations, stopping early when another thread
// has failed. pr, if not nil, is called with done's count.
func (t *thread) run(pr func(int), done *atomic.Int64, failed *atomic.Bool) (err error) {
	t.key = make([]byte, 0, t.c.Keys.KeySize)
	defer func() {
		if t.cursor != nil {
			if cerr := t.cursor.Close(); err == nil {
				err = cerr
			}
		}
	}()
	for op := t.lo; op < t.hi; op++ {
		if (op-t.lo)%progressEvery == 0 {
			if op > t.lo {
				done.Add(progressEvery)
			}
			if failed.Load() {
				return nil
			}
			if pr != nil {
				pr(int(done.Load()))
			}
		}
		t0 := time.Now()
		err := t.op(op)
		t.latency.Record(time.Since(t0))
		if err != nil {
			return err
		}
	}
	return nil
}

// op does operation i of the plan.
func (t *thread) op(i int) error {
	c, k, p, s, r := t.c, t.c.Keys, t.p, t.s, t.r
	switch p.w {
	case FillSeq, FillRandom:
		if p.order != nil {
			i = p.order.at(i)
		}
		t.key = k.Present(t.key, i)
		return s.Put(t.key, k.Value(i))
	case FillOverwrite:
		i := int(p.writes[i])
		t.key = k.Present(t.key, i)
		v := k.Value(i)
		if j := int(t.written[i]); j < c.writesPerKey()-1 {
			t.overwritten = k.overwrittenValue(t.overwritten, i, j)
			v = t.overwritten
		}
		t.written[i]++
		return s.Put(t.key, v)
	case FillPrefix:
		i = p.order.at(i)
		t.key = p.layout.key(t.key, i)
		return s.Put(t.key, k.Value(i))
	case FillRange:
		i = p.order.at(i)
		t.key = k.RangeKey(t.key, i)
		return s.Put(t.key, k.Value(i))
	case SeekPrefix, SeekPrefixMissing:
		g := r.IntN(p.layout.groups)
		missing := p.w == SeekPrefixMissing
		t.key = p.layout.appendPrefix(t.key, 2*uint64(g)+uint64(btoi(missing)))
		want := p.layout.groupKeys(k.N, g)
		if missing {
			want = 0
			t.missing++
		}
		n, err := p.seeker.SeekPrefix(t.key, p.layout.perPrefix+1)
		if err == nil && n != want {
			err = fmt.Errorf("prefix %q: %d keys, want %d (was the store filled with fillprefix?)", t.key, n, want)
		}
		return err
	case Scan, ScanKeys:
		t.key = k.Present(t.key, r.IntN(k.N))
		scan := s.Scan
		if p.w == ScanKeys {
			scan = p.keyScanner.ScanKeys
		}
		n, err := scan(t.key, c.ScanLength)
		if err == nil && n == 0 {
			err = fmt.Errorf("scan from %q read nothing", t.key)
		}
		return err
	case MultiGet:
		return t.multiGet()
	case ReadRandom, ReadMissing, ReadMixed:
		i := r.IntN(k.N)
		missing := p.w == ReadMissing || (p.w == ReadMixed && r.Float64() < c.MissRatio)
		if missing {
			t.key = k.Missing(t.key, i)
			t.missing++
		} else {
			t.key = k.Present(t.key, i)
		}
		v, found, err := s.Get(t.key)
		switch {
		case err != nil:
		case missing && found:
			err = fmt.Errorf("missing key %q found", t.key)
		case !missing && !found:
			err = fmt.Errorf("present key %q not found (was the store filled?)", t.key)
		case found && len(v) != k.ValueSize:
			err = fmt.Errorf("key %q has a value of %d bytes, want %d", t.key, len(v), k.ValueSize)
		case found && !bytes.Equal(v, k.Value(i)):
			err = fmt.Errorf("key %q has a value other than its last write's (was the store filled with these keys' seed?)", t.key)
		}
		return err
	}
	if width, empty, ok := p.w.RangeScan(); ok {
		return t.rangeScan(width, empty)
	}
	kind, err := t.ycsb.op(s)
	t.kinds[kind]++
	return err
}

// multiGet reads MultiGetBatch random present keys in one call and checks
// every value.
func (t *thread) multiGet() error {
	k := t.c.Keys
	if t.batch == nil {
		t.batch, t.batchIdx = make([][]byte, MultiGetBatch), make([]int, MultiGetBatch)
	}
	for j := range t.batch {
		t.batchIdx[j] = t.r.IntN(k.N)
		t.batch[j] = k.Present(t.batch[j][:0], t.batchIdx[j])
	}
	values, err := t.p.getter.MultiGet(t.batch)
	if err != nil {
		return err
	}
	if len(values) != len(t.batch) {
		return fmt.Errorf("multiget of %d keys returned %d values", len(t.batch), len(values))
	}
	for j, v := range values {
		if !bytes.Equal(v, k.Value(t.batchIdx[j])) {
			return fmt.Errorf("multiget: key %q has value %.16q, want its last write's (was the store filled?)", t.batch[j], v)
		}
	}
	return nil
}

// overwriteOrder returns filloverwrite's writes as the key each one writes:
// every one of the n keys perKey times, in one order shuffled by r
// (Fisher–Yates), so that a key's writes are spread over the whole fill
// and each of its rewrites meets it in another table, as overwrites do.
// Keys are uint32s, half an int's memory: the order is the largest thing
// the workload holds, perKey·4 bytes per key.
func overwriteOrder(r *rand.Rand, n, perKey int) []uint32 {
	order := make([]uint32, n*perKey)
	for i := range order {
		order[i] = uint32(i / perKey)
	}
	for i := len(order) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	return order
}

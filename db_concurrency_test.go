package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/vfs"
)

// concWorld is the key universe of TestDBConcurrent: each writer owns its
// keys, so the final state is known, and every value names its key and its
// version, so a reader can tell a value some writer wrote from any other.
//
// A value is "<key>#<n>|<batch>|<padding>": n counts the writes the owner
// started on the key (sets and deletes alike), so a newer version has a
// larger n; batch lists "key=n" of every write of the batch the value was
// written by, if any; padding is a function of n.
type concWorld struct {
	writers, keysPerWriter int
	// issued[w][k] is the number of writes writer w started on its key k:
	// a value read must have n below it.
	issued [][]atomic.Int64
}

// stableKeys is how many keys of each writer, from the end, are never
// deleted: batches writing only them let readers check atomicity, since a
// key of a visible batch that is missing can only be a batch applied in
// part.
const stableKeys = 16

func (cw *concWorld) key(w, k int) string { return fmt.Sprintf("w%d/k%03d", w, k) }

// parseKey returns the owner and index of a key of the world.
func (cw *concWorld) parseKey(key string) (w, k int, ok bool) {
	if _, err := fmt.Sscanf(key, "w%d/k%03d", &w, &k); err != nil || cw.key(w, k) != key {
		return 0, 0, false
	}
	return w, k, w >= 0 && w < cw.writers && k >= 0 && k < cw.keysPerWriter
}

func concValue(key string, n int64, batch string) string {
	pad := strings.Repeat(string(rune('a'+n%26)), int(n*37%300))
	return fmt.Sprintf("%s#%d|%s|%s", key, n, batch, pad)
}

// checkValue checks that value is one the key's writer wrote, and returns
// its version and the batch it came with.
func (cw *concWorld) checkValue(key, value string) (n int64, batch string, err error) {
	w, k, ok := cw.parseKey(key)
	if !ok {
		return 0, "", fmt.Errorf("key %q was never written", key)
	}
	rest, ok := strings.CutPrefix(value, key+"#")
	parts := strings.SplitN(rest, "|", 3)
	if !ok || len(parts) != 3 {
		return 0, "", fmt.Errorf("key %q has value %s, not one of its own", key, shortKey(value))
	}
	n, err = strconv.ParseInt(parts[0], 10, 64)
	if err != nil || concValue(key, n, parts[1]) != value {
		return 0, "", fmt.Errorf("key %q has value %s, which no writer wrote", key, shortKey(value))
	}
	if issued := cw.issued[w][k].Load(); n >= issued {
		return 0, "", fmt.Errorf("key %q has version %d, but only %d were written", key, n, issued)
	}
	return n, parts[1], nil
}

// checkView checks a consistent view (an iterator's scan, a snapshot's):
// every value one its writer wrote, and every batch seen whole — each key
// of a batch present there at that version or a newer one.
func (cw *concWorld) checkView(view kvModel) error {
	for key, value := range view {
		_, batch, err := cw.checkValue(key, value)
		if err != nil {
			return err
		}
		if batch == "" {
			continue
		}
		for _, kn := range strings.Split(batch, ",") {
			bk, bn, _ := strings.Cut(kn, "=")
			want, _ := strconv.ParseInt(bn, 10, 64)
			v, ok := view[bk]
			if !ok {
				return fmt.Errorf("%s shows a write of batch [%s] but not its write of %s", key, batch, bk)
			}
			if n, _, err := cw.checkValue(bk, v); err != nil || n < want {
				return fmt.Errorf("%s shows a write of batch [%s] but %s is at an older version: %s", key, batch, bk, shortKey(v))
			}
		}
	}
	return nil
}

// concReader is one reading goroutine's state.
type concReader struct {
	cw  *concWorld
	rng *rand.Rand
	// seen is the newest version this reader has seen of each key: a later
	// read must not show an older one.
	seen map[string]int64
	gets int
}

func (r *concReader) saw(key, value string) error {
	n, _, err := r.cw.checkValue(key, value)
	if err != nil {
		return err
	}
	if prev, ok := r.seen[key]; ok && n < prev {
		return fmt.Errorf("key %q went back from version %d to %d", key, prev, n)
	}
	r.seen[key] = n
	return nil
}

func (r *concReader) randKey() string {
	return r.cw.key(r.rng.IntN(r.cw.writers), r.rng.IntN(r.cw.keysPerWriter))
}

func (r *concReader) get(d *DB) error {
	key := r.randKey()
	r.gets++
	v, err := d.Get([]byte(key))
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("Get(%q): %w", key, err)
	}
	return r.saw(key, string(v))
}

// scan checks an iterator with random bounds, forward or backward: keys
// sorted without duplicates, within bounds, values valid; a full forward
// scan is also checked as a consistent view.
func (r *concReader) scan(d *DB) error {
	var opts IterOptions
	if r.rng.IntN(3) > 0 {
		opts.LowerBound = []byte(r.randKey())
		opts.UpperBound = []byte(r.randKey())
		if bytes.Compare(opts.LowerBound, opts.UpperBound) > 0 {
			opts.LowerBound, opts.UpperBound = opts.UpperBound, opts.LowerBound
		}
	}
	it, err := d.NewIter(&opts)
	if err != nil {
		return fmt.Errorf("NewIter: %w", err)
	}
	forward := r.rng.IntN(2) == 0
	view := kvModel{}
	var prev []byte
	ok, step := it.Last(), it.Prev
	if forward {
		ok, step = it.First(), it.Next
	}
	for ; ok; ok = step() {
		k := it.Key()
		if prev != nil && (forward && bytes.Compare(prev, k) >= 0 || !forward && bytes.Compare(prev, k) <= 0) {
			it.Close()
			return fmt.Errorf("iterator (forward %v) shows %q after %q", forward, k, prev)
		}
		if opts.LowerBound != nil && bytes.Compare(k, opts.LowerBound) < 0 || opts.UpperBound != nil && bytes.Compare(k, opts.UpperBound) >= 0 {
			it.Close()
			return fmt.Errorf("iterator over [%q, %q) shows %q", opts.LowerBound, opts.UpperBound, k)
		}
		prev = append(prev[:0], k...)
		view[string(k)] = string(it.Value())
		if err := r.saw(string(k), string(it.Value())); err != nil {
			it.Close()
			return fmt.Errorf("iterator: %w", err)
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("iterator: %w", err)
	}
	if opts.LowerBound == nil && forward {
		return r.cw.checkView(view)
	}
	return nil
}

// TestDBConcurrent runs writers (Put, Delete, Apply, each on its own keys),
// readers (Gets and iterators), a snapshot checker and a flusher at once
// on a small memtable, so that rotations and flushes race with everything.
// Readers check that every value read is one its key's writer wrote, never
// older than one they saw before, that iterators are sorted without
// duplicates and show batches whole, and snapshots that two reads of one
// snapshot agree. At the end the DB must hold exactly the writers' last
// writes, before and after a reopen.
func TestDBConcurrent(t *testing.T) {
	const (
		writers       = 4
		readers       = 2
		keysPerWriter = 60
	)
	opsPerWriter := 1200
	if testing.Short() {
		opsPerWriter = 300
	}
	cw := &concWorld{writers: writers, keysPerWriter: keysPerWriter, issued: make([][]atomic.Int64, writers)}
	for w := range cw.issued {
		cw.issued[w] = make([]atomic.Int64, keysPerWriter)
	}
	opts := &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, MaxImmutableMemtables: 2, BlockSize: 1024, BlockCacheSize: 128 << 10}
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()

	var (
		wg, readersWG sync.WaitGroup // writers; readers and the snapshot checker
		done          atomic.Bool    // the writers are done
		errMu         sync.Mutex
		errs          []error
		gets          atomic.Int64
		writes        atomic.Int64
		batches       atomic.Int64
	)
	fail := func(who string, err error) {
		errMu.Lock()
		errs = append(errs, fmt.Errorf("%s: %w", who, err))
		errMu.Unlock()
	}
	failed := func() bool {
		errMu.Lock()
		defer errMu.Unlock()
		return len(errs) > 0
	}
	ticks := make(chan struct{}, 100) // writers ask the flusher for a flush
	finals := make([]kvModel, writers)

	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 0xc0))
			m := kvModel{}
			finals[w] = m
			next := func(k int) kvOp { // a set of key k's next version
				key := cw.key(w, k)
				return kvOp{key: key, value: concValue(key, cw.issued[w][k].Add(1)-1, "")}
			}
			for i := range opsPerWriter {
				if failed() {
					return
				}
				var ops []kvOp
				switch x := rng.IntN(10); {
				case x < 5:
					ops = []kvOp{next(rng.IntN(keysPerWriter))}
				case x < 6:
					k := rng.IntN(keysPerWriter - stableKeys)
					cw.issued[w][k].Add(1)
					ops = []kvOp{{del: true, key: cw.key(w, k)}}
				case x < 8: // a batch of stable keys, which readers check is atomic
					keys := rng.Perm(stableKeys)[:2+rng.IntN(4)]
					ns := make([]int64, len(keys))
					var batch []string
					for j, k := range keys {
						keys[j] = keysPerWriter - stableKeys + k
						ns[j] = cw.issued[w][keys[j]].Add(1) - 1
						batch = append(batch, fmt.Sprintf("%s=%d", cw.key(w, keys[j]), ns[j]))
					}
					for j, k := range keys {
						key := cw.key(w, k)
						ops = append(ops, kvOp{key: key, value: concValue(key, ns[j], strings.Join(batch, ","))})
					}
				default: // a batch of sets and deletes of any keys
					for range 2 + rng.IntN(5) {
						k := rng.IntN(keysPerWriter - stableKeys)
						if rng.IntN(3) == 0 {
							cw.issued[w][k].Add(1)
							ops = append(ops, kvOp{del: true, key: cw.key(w, k)})
						} else {
							ops = append(ops, next(k))
						}
					}
				}
				wo := []*WriteOptions{nil, Sync, NoSync, NoSync}[rng.IntN(4)]
				if err := applyOps(d, ops, wo); err != nil {
					fail(fmt.Sprintf("writer %d", w), err)
					return
				}
				m.apply(ops)
				writes.Add(int64(len(ops)))
				batches.Add(1)
				if i%60 == 59 {
					select {
					case ticks <- struct{}{}:
					default:
					}
				}
			}
		}()
	}

	// The flusher flushes when asked, concurrently with everything.
	flushes := 0
	var flusherWG sync.WaitGroup
	flusherWG.Add(1)
	go func() {
		defer flusherWG.Done()
		for range ticks {
			if err := d.Flush(); err != nil {
				fail("flusher", err)
				return
			}
			flushes++
		}
	}()

	rdrs := make([]*concReader, readers)
	for i := range readers {
		r := &concReader{cw: cw, rng: rand.New(rand.NewPCG(uint64(i), 0x4ead)), seen: map[string]int64{}}
		rdrs[i] = r
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			for rounds := 0; !done.Load() || rounds < 10; rounds++ {
				if failed() {
					return
				}
				var err error
				if r.rng.IntN(8) == 0 {
					err = r.scan(d)
				} else {
					err = r.get(d)
				}
				if err != nil {
					fail(fmt.Sprintf("reader %d", i), err)
					return
				}
			}
		}()
	}

	// The snapshot checker: two reads of one snapshot agree, and each is a
	// consistent view.
	snapshots := 0
	readersWG.Add(1)
	go func() {
		defer readersWG.Done()
		rng := rand.New(rand.NewPCG(7, 7))
		for ; !done.Load() || snapshots < 3; snapshots++ {
			if failed() {
				return
			}
			if err := checkSnapshotStable(d, cw, rng, &gets); err != nil {
				fail("snapshot checker", err)
				return
			}
		}
	}()

	// The writers finish, then the flusher, then the readers.
	wg.Wait()
	close(ticks)
	flusherWG.Wait()
	done.Store(true)
	readersWG.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	want := kvModel{}
	for _, m := range finals {
		for k, v := range m {
			want[k] = v
		}
	}
	var allKeys [][]byte
	for w := range writers {
		for k := range keysPerWriter {
			allKeys = append(allKeys, []byte(cw.key(w, k)))
		}
	}
	ks := &keySpace{keys: allKeys}
	finalGets, err := checkState(d, ks, want)
	if err != nil {
		t.Fatalf("final state: %v", err)
	}
	m := d.Metrics()
	for _, r := range rdrs {
		gets.Add(int64(r.gets))
	}
	gets.Add(int64(finalGets))
	if m.Writes != uint64(writes.Load()) || m.Batches != uint64(batches.Load()) || m.Gets != uint64(gets.Load()) {
		t.Errorf("Metrics: Writes %d, Batches %d, Gets %d; want %d, %d, %d",
			m.Writes, m.Batches, m.Gets, writes.Load(), batches.Load(), gets.Load())
	}
	tables := 0
	for _, l := range m.Levels {
		tables += l.Tables
	}
	t.Logf("%d writes in %d batches, %d flushes asked, %d done, %d snapshots checked, %d gets; %d tables",
		writes.Load(), batches.Load(), flushes, m.Flushes, snapshots, m.Gets, tables)
	err = d.Close()
	d = nil
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d, err = Open("db", opts); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if _, err := checkState(d, ks, want); err != nil {
		t.Fatalf("after reopening: %v", err)
	}
}

// checkSnapshotStable takes a snapshot, reads it fully, makes some Gets,
// reads it fully again, and checks that the reads agree and form a
// consistent view.
func checkSnapshotStable(d *DB, cw *concWorld, rng *rand.Rand, gets *atomic.Int64) error {
	s, err := d.NewSnapshot()
	if err != nil {
		return err
	}
	defer s.Close()
	first, err := readAll(s)
	if err != nil {
		return err
	}
	if err := cw.checkView(first); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	for range 20 {
		key := cw.key(rng.IntN(cw.writers), rng.IntN(cw.keysPerWriter))
		gets.Add(1)
		if err := checkGet(s, []byte(key), first); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	second, err := readAll(s)
	if err != nil {
		return err
	}
	if diff := diffModels(second, first); diff != "" {
		return fmt.Errorf("a snapshot read twice changed: %s", diff)
	}
	return nil
}

// slowSyncFS delays every File.Sync, as a disk does, so that concurrent
// writers queue behind a leader's fsync.
type slowSyncFS struct {
	vfs.FS
	delay time.Duration
}

func (fs slowSyncFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{f, fs.delay}, nil
}

type slowSyncFile struct {
	vfs.File
	delay time.Duration
}

func (f slowSyncFile) Sync() error {
	time.Sleep(f.delay)
	return f.File.Sync()
}

// TestDBConcurrentGroupCommit checks that concurrent durable writers share
// fsyncs — fewer WAL syncs than batches — and that every write is there
// after a reopen.
func TestDBConcurrentGroupCommit(t *testing.T) {
	const goroutines, perGoroutine = 8, 50
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  func(*testing.T) string
	}{
		{"OS", vfs.Default, func(t *testing.T) string { return t.TempDir() }},
		{"MemFS with slow syncs", slowSyncFS{vfs.NewMem(), time.Millisecond}, func(*testing.T) string { return "db" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			opts := &Options{FS: tc.fs}
			d, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if d != nil {
					d.Close()
				}
			}()
			var wg sync.WaitGroup
			errs := make([]error, goroutines)
			want := kvModel{}
			for g := range goroutines {
				for i := range perGoroutine {
					want[fmt.Sprintf("g%d/%03d", g, i)] = fmt.Sprintf("value %d of goroutine %d", i, g)
				}
			}
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perGoroutine {
						k := fmt.Sprintf("g%d/%03d", g, i)
						wo := Sync
						if i%2 == 1 {
							wo = nil // nil is durable too
						}
						if err := d.Put([]byte(k), []byte(want[k]), wo); err != nil {
							errs[g] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			m := d.Metrics()
			t.Logf("%d batches, %d WAL syncs", m.Batches, m.WALSyncs)
			if m.Batches != goroutines*perGoroutine {
				t.Errorf("Batches = %d, want %d", m.Batches, goroutines*perGoroutine)
			}
			if m.WALSyncs == 0 || m.WALSyncs >= m.Batches {
				t.Errorf("WALSyncs = %d for %d durable batches: want group commit to share syncs", m.WALSyncs, m.Batches)
			}
			err = d.Close()
			d = nil
			if err != nil {
				t.Fatal(err)
			}
			if d, err = Open(dir, opts); err != nil {
				t.Fatal(err)
			}
			if got, err := readAll(d); err != nil || diffModels(got, want) != "" {
				t.Fatalf("after reopening: %v %s", err, diffModels(got, want))
			}
		})
	}
}

package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/vfs"
)

// bgWorkload is the deterministic workload of the background-failure
// tests: puts of keys k0000… with values tagged by round, some durable.
type bgWorkload struct {
	m      kvModel // every acknowledged write
	synced kvModel // every write acknowledged durable, and those before it
}

func newBGWorkload() *bgWorkload { return &bgWorkload{m: kvModel{}, synced: kvModel{}} }

// write puts n keys from first, tagged round; it stops at the first error.
func (w *bgWorkload) write(d *DB, round, first, n int) error {
	for i := first; i < first+n; i++ {
		k, v := fmt.Sprintf("k%04d", i), fmt.Sprintf("r%d.%d|%s", round, i, bytes.Repeat([]byte{'v'}, 100))
		wo := NoSync
		if i%4 == 0 {
			wo = Sync
		}
		if err := d.Put([]byte(k), []byte(v), wo); err != nil {
			return err
		}
		w.m[k] = v
		if wo == Sync {
			w.synced = w.m.clone()
		}
	}
	return nil
}

// check compares d with every acknowledged write.
func (w *bgWorkload) check(d *DB) error {
	got, err := readAll(d)
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	if diff := diffModels(got, w.m); diff != "" {
		return fmt.Errorf("scan: %s", diff)
	}
	for k := range w.m {
		if err := checkGet(d, []byte(k), w.m); err != nil {
			return err
		}
	}
	return nil
}

// bgErrorLog records the background errors and recoveries an
// EventListener is told of.
type bgErrorLog struct {
	mu        sync.Mutex
	errors    []BackgroundErrorInfo
	recovered []RecoveryInfo
}

func (l *bgErrorLog) listener() *EventListener {
	return &EventListener{
		BackgroundError: func(info BackgroundErrorInfo) {
			l.mu.Lock()
			l.errors = append(l.errors, info)
			l.mu.Unlock()
		},
		Recovered: func(info RecoveryInfo) {
			l.mu.Lock()
			l.recovered = append(l.recovered, info)
			l.mu.Unlock()
		},
	}
}

// untilNoError calls f until it returns nil, for at most five seconds: the
// DB retries a failed flush or compaction after a backoff of at most a
// second.
func untilNoError(f func() error) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBackgroundFailureAtEveryOperation fails, in turn, each file-system
// operation of a flush and of a compaction, with values inline and with
// them in blob files, and of a blob rewrite (a compaction that leaves blob
// files half dead, and the background compactions that relocate their live
// values), once, and checks that the DB gets over it — by itself for a flush or compaction, after Resume for a
// WAL — with no acknowledged write lost and none applied twice: the DB
// equals the model of acknowledged writes after the failure, after more
// writes, after a reopen, and after a crash (at least every durable write).
func TestBackgroundFailureAtEveryOperation(t *testing.T) {
	// The failing runs must replay the first one's operations, removals
	// included, in the same order: each obsolete file is removed where it
	// is queued, not by the deleter's goroutine at its own time.
	deleteInline.Store(true)
	t.Cleanup(func() { deleteInline.Store(false) })
	for _, tc := range []struct {
		job      string
		separate bool
	}{
		{"flush", false}, {"flush", true}, {"compaction", false}, {"compaction", true}, {"blob rewrite", true},
	} {
		job := tc.job
		t.Run(fmt.Sprintf("%s/separated=%v", job, tc.separate), func(t *testing.T) {
			// run does the workload, failing operation fail (-1: none), and
			// returns the operation range of the job.
			run := func(fail int64) (lo, hi int64, failedOp string) {
				mem := vfs.NewMem()
				fo := &failOne{at: fail}
				inj := vfs.NewInjecting(mem, fo.policy)
				var log bgErrorLog
				// Values in blob files or inline; reclaimed only in the
				// blob rewrite job, one compaction at a time, so that the
				// operations come in the same order every run.
				opts := &Options{FS: inj, MemtableSize: 1 << 20, L0CompactionTrigger: noCompaction, EventListener: log.listener(),
					ValueSeparation: ValueSeparation{MinSize: ValueSeparationOff}}
				if tc.separate {
					opts.ValueSeparation = ValueSeparation{MinSize: 64, DeadShare: 1}
				}
				relocated := 0
				if job == "blob rewrite" {
					opts.ValueSeparation.DeadShare, opts.MaxConcurrentCompactions = 0.3, 1
					opts.EventListener.BlobFileCreated = func(info TableCreateInfo) {
						if info.Reason == "compaction" {
							relocated++
						}
					}
				}
				d, err := Open("db", opts)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if d != nil {
						d.Close()
					}
				}()
				w := newBGWorkload()
				var jobErr error
				for round := range 3 {
					if err := w.write(d, round, round*50, 100); err != nil {
						t.Fatal(err)
					}
					if job != "flush" || round == 2 {
						lo = inj.Ops()
						jobErr = d.Flush()
						if jobErr != nil && job != "flush" {
							t.Fatal(jobErr)
						}
					}
				}
				switch job {
				case "compaction":
					lo = inj.Ops()
					jobErr = d.Compact(nil, nil)
				case "blob rewrite":
					// The compaction drops the overwritten values' handles:
					// the first two rounds' blob files are half dead, and
					// the background rewrites their table to relocate them,
					// at once: the job is both.
					lo = inj.Ops()
					if jobErr = d.Compact(nil, nil); jobErr == nil {
						d.waitForCompactions(t)
					}
				}
				hi = inj.Ops()
				if job == "blob rewrite" && fail < 0 && relocated == 0 {
					t.Fatalf("no blob rewrite: %+v", d.Metrics().Blobs)
				}
				failed, failedReadOnly := fo.failed()
				where := fmt.Sprintf("failing %v", failed)
				if failed == nil {
					if jobErr != nil {
						t.Fatalf("%s with no failure: %v", job, jobErr)
					}
					return lo, hi, ""
				}
				if jobErr != nil && !errors.Is(jobErr, vfs.ErrInjected) {
					t.Errorf("%s: %s: %v, which is not the injected error", where, job, jobErr)
				}
				if err := w.check(d); err != nil {
					t.Fatalf("%s: reads during the failure: %v", where, err)
				}
				// The DB gets over it: by itself, or, for a WAL, by Resume.
				if walDamaged(*failed) {
					if err := d.Resume(); err != nil {
						t.Fatalf("%s: Resume: %v", where, err)
					}
				}
				redo := d.Flush
				switch job {
				case "compaction":
					redo = func() error { return d.Compact(nil, nil) }
				case "blob rewrite":
					redo = func() error {
						if err := d.Compact(nil, nil); err != nil {
							return err
						}
						d.waitForCompactions(t)
						return nil
					}
				}
				if err := untilNoError(redo); err != nil {
					t.Fatalf("%s: %s never succeeds again: %v", where, job, err)
				}
				if err := untilNoError(func() error { return w.write(d, 9, 140, 20) }); err != nil {
					t.Fatalf("%s: writes do not resume: %v", where, err)
				}
				if err := w.check(d); err != nil {
					t.Fatalf("%s: after recovery: %v", where, err)
				}
				log.mu.Lock()
				nErrors := len(log.errors)
				log.mu.Unlock()
				if jobErr == nil && nErrors == 0 && !benignFailure(*failed, failedReadOnly) {
					t.Errorf("%s: the failure surfaced nowhere: no error, no BackgroundError event", where)
				}
				crashed := mem.CrashClone(vfs.CrashOptions{})
				if err := d.Close(); err != nil {
					t.Fatalf("%s: Close: %v", where, err)
				}
				d = nil
				for _, fs := range []vfs.FS{mem, crashed} {
					d2, err := Open("db", &Options{FS: fs, MemtableSize: 1 << 20, L0CompactionTrigger: noCompaction})
					if err != nil {
						t.Fatalf("%s: reopen: %v", where, err)
					}
					got, err := readAll(d2)
					d2.Close()
					if err != nil {
						t.Fatal(err)
					}
					want := w.m
					if fs == vfs.FS(crashed) {
						// The crash keeps every durable write and maybe later
						// ones: every key holds its durable value or a later.
						for k, v := range w.synced {
							if g, ok := got[k]; !ok || g != v && g != w.m[k] {
								t.Errorf("%s: after a crash %s = %q (present %v); want %q or %q", where, k, g, ok, v, w.m[k])
							}
						}
						continue
					}
					if diff := diffModels(got, want); diff != "" {
						t.Fatalf("%s: after reopen: %s", where, diff)
					}
				}
				return lo, hi, failed.String()
			}
			lo, hi, _ := run(-1)
			if hi-lo < 5 {
				t.Fatalf("the %s made only %d operations", job, hi-lo)
			}
			for fail := lo; fail < hi; fail++ {
				run(fail)
			}
			t.Logf("failed each of the %d operations of the %s in turn", hi-lo, job)
		})
	}
}

// TestBackgroundCompactionRetry fails the background compaction's first
// attempts and checks that it is retried, with a backoff, until it
// succeeds, while writes go on.
func TestBackgroundCompactionRetry(t *testing.T) {
	mem := vfs.NewMem()
	var mu sync.Mutex
	failures := 0
	outputs := map[string]bool{} // the tables compactions create
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		mu.Lock()
		defer mu.Unlock()
		// The first three tables a compaction writes fail to sync.
		if op.Kind == vfs.OpSync && outputs[op.Name] && failures < 3 {
			failures++
			return true
		}
		return false
	})
	var log bgErrorLog
	listener := log.listener()
	listener.TableCreated = func(info TableCreateInfo) {
		if info.Reason == "compaction" {
			mu.Lock()
			outputs[info.Path] = true
			mu.Unlock()
		}
	}
	// Wait for the recovery itself, not for the first compaction to end:
	// CompactionEnd is told before the loop, holding d.mu again, clears the
	// failure and reports the recovery.
	recovered := make(chan struct{})
	var once sync.Once
	logRecovered := listener.Recovered
	listener.Recovered = func(info RecoveryInfo) {
		logRecovered(info)
		once.Do(func() { close(recovered) })
	}
	d, err := Open("db", &Options{FS: inj, MemtableSize: 64 << 10, L0CompactionTrigger: 2, EventListener: listener})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w := newBGWorkload()
	for round := range 4 {
		if err := w.write(d, round, 0, 300); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-recovered:
	case <-time.After(10 * time.Second):
		t.Fatal("no recovery reported within 10 s of the flushes")
	}
	if err := w.check(d); err != nil {
		t.Fatal(err)
	}
	if got := d.Metrics().BackgroundErrors; got != 3 {
		t.Errorf("Metrics.BackgroundErrors = %d; want 3", got)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.errors) != 3 {
		t.Fatalf("%d background errors; want the 3 injected", len(log.errors))
	}
	for i, e := range log.errors {
		if e.Op != "compaction" || !errors.Is(e.Err, vfs.ErrInjected) || e.RetryIn <= 0 || e.WritesStopped {
			t.Errorf("background error %d: %+v; want a compaction's injected error, retried, writes going on", i, e)
		}
		if want := minRetryDelay << i; e.RetryIn != want {
			t.Errorf("background error %d: retry in %v; want %v (the backoff doubles)", i, e.RetryIn, want)
		}
	}
	if len(log.recovered) == 0 || log.recovered[0].Op != "compaction" {
		t.Errorf("recoveries %+v; want the compaction's", log.recovered)
	}
}

// TestWALFailureResume fails a WAL write and checks that writes stop, with
// the error, until Resume; that Resume retires the damaged WAL; and that no
// acknowledged write is lost, across a reopen and a crash.
func TestWALFailureResume(t *testing.T) {
	mem := vfs.NewMem()
	var armed sync.Mutex
	failNext := false
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		armed.Lock()
		defer armed.Unlock()
		if failNext && op.Kind == vfs.OpSync && strings.HasSuffix(op.Name, ".log") {
			failNext = false
			return true
		}
		return false
	})
	var log bgErrorLog
	d, err := Open("db", &Options{FS: inj, EventListener: log.listener()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.Close() }()
	w := newBGWorkload()
	if err := w.write(d, 0, 0, 100); err != nil {
		t.Fatal(err)
	}
	armed.Lock()
	failNext = true
	armed.Unlock()
	err = w.write(d, 1, 0, 100)
	if !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("the write whose WAL sync fails: %v; want the injected error", err)
	}
	// Its outcome is unknown (its record may be in the WAL): the workload
	// drops what it had not acknowledged, and later writes must fail.
	for range 3 {
		if err := d.Put([]byte("later"), []byte("x"), nil); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("a write after the WAL failed: %v; want the WAL's error", err)
		}
	}
	if err := w.check(d); err != nil {
		t.Fatalf("reads after the WAL failed: %v", err)
	}
	if err := d.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := w.write(d, 2, 50, 100); err != nil {
		t.Fatalf("a write after Resume: %v", err)
	}
	if err := w.check(d); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	if len(log.errors) != 1 || log.errors[0].Op != "WAL" || !log.errors[0].WritesStopped || log.errors[0].RetryIn != 0 {
		t.Errorf("background errors %+v; want one WAL error, writes stopped, not retried by itself", log.errors)
	}
	if len(log.recovered) == 0 || log.recovered[len(log.recovered)-1].Op != "WAL" {
		t.Errorf("recoveries %+v; want the WAL's", log.recovered)
	}
	log.mu.Unlock()
	crashed := mem.CrashClone(vfs.CrashOptions{})
	d.Close()
	for _, fs := range []vfs.FS{mem, crashed} {
		d, err = Open("db", &Options{FS: fs})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		got, err := readAll(d)
		if err != nil {
			t.Fatal(err)
		}
		want := w.m
		if fs == vfs.FS(crashed) {
			want = w.synced
			// Writes after the last durable one may survive too.
			for k, v := range got {
				if w.synced[k] != v && w.m[k] == v {
					want = want.clone()
					want[k] = v
				}
			}
		}
		if diff := diffModels(got, want); diff != "" {
			t.Errorf("after reopen: %s", diff)
		}
		if fs == vfs.FS(mem) {
			d.Close()
		}
	}
}

// TestCompactionCorruptionNotRetried damages a table and checks that the
// compaction that finds it reports ErrCorruption naming the table, once,
// that writes then fail with it, that Resume cannot clear it, and that
// reads of undamaged data go on.
func TestCompactionCorruptionNotRetried(t *testing.T) {
	mem := vfs.NewMem()
	var mu sync.Mutex
	begins := 0
	var log bgErrorLog
	listener := log.listener()
	listener.CompactionBegin = func(CompactionInfo) {
		mu.Lock()
		begins++
		mu.Unlock()
	}
	opts := &Options{FS: mem, L0CompactionTrigger: noCompaction, Compression: NoCompression, EventListener: listener}
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	w := newBGWorkload()
	for round := range 2 {
		if err := w.write(d, round, round*100, 200); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	// Damage the first data block of the oldest table.
	names, _ := mem.List("db")
	var victim string
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			victim = "db/" + n
			break
		}
	}
	flipByte(t, mem, victim, 100)

	opts.L0CompactionTrigger = 2
	d, err = Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		log.mu.Lock()
		n := len(log.errors)
		log.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // time for retries, were there any
	log.mu.Lock()
	errs := log.errors
	log.mu.Unlock()
	if len(errs) != 1 || !errors.Is(errs[0].Err, ErrCorruption) || errs[0].RetryIn != 0 || !errs[0].WritesStopped {
		t.Fatalf("background errors %+v; want one corruption, not retried, writes stopped", errs)
	}
	if !strings.Contains(errs[0].Err.Error(), victim) {
		t.Errorf("the corruption does not name the table %s: %v", victim, errs[0].Err)
	}
	mu.Lock()
	if begins != 1 {
		t.Errorf("%d compactions began; want 1: a corruption is not retried", begins)
	}
	mu.Unlock()
	if err := d.Put([]byte("x"), []byte("y"), nil); !errors.Is(err, ErrCorruption) {
		t.Errorf("a write after the corruption: %v; want ErrCorruption", err)
	}
	if err := d.Resume(); !errors.Is(err, ErrCorruption) {
		t.Errorf("Resume after a corruption: %v; want ErrCorruption", err)
	}
	// Keys of the undamaged table read as written.
	if err := checkGet(d, []byte("k0299"), w.m); err != nil {
		t.Error(err)
	}
}

// flipByte inverts the byte at off of the file name in mem.
func flipByte(t *testing.T, mem *vfs.MemFS, name string, off int64) {
	t.Helper()
	f, err := mem.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	b := make([]byte, info.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b[off] ^= 0xff
	writeFile(t, mem, name, string(b))
}

// TestResumeAfterFlushFailure checks that Resume retries a failing flush at
// once, and that it does not leave later WAL failures to recover by
// themselves: a WAL failure other than a full disk still waits for its own
// Resume.
func TestResumeAfterFlushFailure(t *testing.T) {
	var mu sync.Mutex
	fail := "" // the suffix of the file whose next sync fails
	inj := vfs.NewInjecting(vfs.NewMem(), func(op vfs.Op) bool {
		mu.Lock()
		defer mu.Unlock()
		if fail != "" && op.Kind == vfs.OpSync && strings.HasSuffix(op.Name, fail) {
			fail = ""
			return true
		}
		return false
	})
	arm := func(suffix string) {
		mu.Lock()
		fail = suffix
		mu.Unlock()
	}
	d, err := Open("db", &Options{FS: inj})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w := newBGWorkload()
	if err := w.write(d, 0, 0, 50); err != nil {
		t.Fatal(err)
	}
	arm(".sst")
	if err := d.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush with a failing table sync: %v; want the injected error", err)
	}
	if err := d.Resume(); err != nil {
		t.Fatalf("Resume after a failed flush: %v", err)
	}
	if m := d.Metrics(); m.ImmutableMemtables != 0 {
		t.Fatalf("after Resume, %d memtables wait for their flush", m.ImmutableMemtables)
	}
	arm(".log")
	if err := w.write(d, 1, 0, 50); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("a write whose WAL sync fails: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // past the first backoff
	if err := d.Put([]byte("x"), []byte("y"), nil); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("a write after a WAL failure, with no Resume: %v; want the WAL's error", err)
	}
	if err := d.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := w.write(d, 2, 0, 50); err != nil {
		t.Fatal(err)
	}
	if err := w.check(d); err != nil {
		t.Fatal(err)
	}
}

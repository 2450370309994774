package bloomkv

// A failure of each file system operation of a workload: the DB reports
// it, goes on or stops as the failure demands, and loses no acknowledged
// write (runInjected).

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

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
	fail     *failOne // the failing operation, and which it was once it ran
	// problems are violations seen while running.
	problems []string

	// The workload's state: the DB, the size of its values, whether the
	// last write failed, and the writes refused since the last one that
	// succeeded.
	d           *DB
	valueSize   int
	writeFailed bool
	refused     []int
}

// problemf records a violation.
func (r *injectedRun) problemf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// runInjected runs a small workload — open, durable and non-durable writes,
// a flush, reads, more writes, close, reopen, more of the same — on mem
// through an Injecting that fails operation fail, and checks each call's
// outcome as it goes (injectedRun's write, flush, get, scan and closeDB).
//
// It runs no compaction: a background compaction may straddle Close, which
// drops its failure by design (a failed compaction loses nothing), so
// whether a failure surfaced would depend on timing. The compaction tests
// inject their own failures.
func runInjected(mem *vfs.MemFS, fail int64, cfg injectedConfig) *injectedRun {
	r := &injectedRun{live: kvModel{}, valueSize: cfg.valueSize, fail: &failOne{at: fail}}
	var mu sync.Mutex
	inj := vfs.NewInjecting(mem, r.fail.policy)
	listener := &EventListener{BackgroundError: func(info BackgroundErrorInfo) {
		mu.Lock()
		defer mu.Unlock()
		r.bgErrors = append(r.bgErrors, fmt.Sprintf("%s: %v", info.Op, info.Err))
		if !errors.Is(info.Err, vfs.ErrInjected) {
			r.problemf("background error %v, which is not the injected error", info.Err)
		}
	}}
	dbOpts := &Options{FS: inj, MemtableSize: cfg.memtableSize, BlockSize: 512, L0CompactionTrigger: noCompaction, EventListener: listener}
	var err error
	if r.d, err = Open("db", dbOpts); !r.succeeded("Open", err) {
		return r
	}
	set := func(k string) kvOp { return kvOp{key: k, value: k} }
	del := func(k string) kvOp { return kvOp{key: k, del: true} }

	r.write(nil, set("a"))
	r.write(Sync, set("b"))
	r.write(Sync, set("c"), del("a"), set("d"))
	r.write(NoSync, set("e"))
	r.write(NoSync, del("b"))
	r.write(Sync, set("f"))
	r.flush()
	r.get("c")
	r.get("a")
	r.get("zz")
	r.scan()
	r.write(Sync, set("g"))
	r.write(NoSync, set("c"), set("h"), del("d"))
	r.write(NoSync, set("a"))
	r.get("c")
	r.get("f")
	r.scan()
	// Close, and recover from the manifest, the tables and the WAL.
	if !r.closeDB() || len(r.calls) > 0 {
		// After a failure the outcome of the failed write is unknown: the
		// crash and recovery that follow check it.
		return r
	}
	if r.d, err = Open("db", dbOpts); !r.succeeded("reopen", err) {
		return r
	}
	r.get("c")
	r.get("e")
	r.write(nil, del("f"))
	r.write(NoSync, set("i"))
	r.scan()
	r.closeDB()
	return r
}

// succeeded reports whether err, of the call what, is nil; if not, it
// records the call and checks that err is the injected error.
func (r *injectedRun) succeeded(what string, err error) bool {
	if err == nil {
		return true
	}
	r.calls = append(r.calls, fmt.Sprintf("%s: %v", what, err))
	if !errors.Is(err, vfs.ErrInjected) {
		r.problemf("%s: %v, which is not the injected error", what, err)
	}
	return false
}

// write applies a write, Delete or batch of ops; a failure must be the
// injected one. A failure in a WAL is sticky: every later write fails too
// (writes stop until Resume, which this workload never calls). Any other
// failure — a write refused because the flush it would wait for is
// failing — may be followed by writes that succeed, and must then have had
// no effect: the history records it as an empty batch, which the
// recovered prefix is checked against.
func (r *injectedRun) write(wo *WriteOptions, ops ...kvOp) {
	idx := len(r.history)
	for i := range ops {
		if !ops[i].del {
			ops[i].value = fmt.Sprintf("%s@%d.%d|%s", ops[i].value, idx, i, strings.Repeat("v", r.valueSize))
		}
	}
	r.history = append(r.history, ops)
	if !r.succeeded(fmt.Sprintf("write %d %v", idx, ops), applyOps(r.d, ops, wo)) {
		if !r.writeFailed {
			r.hi = idx + 1 // the failed write may have reached the WAL; no later one may
		}
		r.writeFailed = true
		r.refused = append(r.refused, idx)
		return
	}
	if r.writeFailed && r.failedInWAL() {
		r.problemf("write %d succeeded after a write failed in the WAL: the error is not sticky", idx)
	}
	for _, i := range r.refused {
		r.history[i] = nil
	}
	r.refused, r.writeFailed = nil, false
	r.live.apply(ops)
	r.hi = idx + 1
	if wo.sync() {
		r.lo = idx + 1
	}
}

// flush makes a Flush; a failure must be the injected one. A failed flush
// is retried in the background, so writes may go on after it — unless the
// failure was in the WAL, which the writes then report.
func (r *injectedRun) flush() {
	if !r.succeeded("Flush", r.d.Flush()) {
		return
	}
	if r.writeFailed && r.failedInWAL() {
		r.problemf("Flush succeeded after a write failed in the WAL")
	}
	r.lo = len(r.history)
}

// get reads k: it fails with the injected error or agrees with the writes
// acknowledged.
func (r *injectedRun) get(k string) {
	v, err := r.d.Get([]byte(k))
	want, ok := r.live[k]
	switch {
	case err != nil && !errors.Is(err, ErrNotFound):
		r.succeeded(fmt.Sprintf("Get(%q)", k), err)
	case errors.Is(err, ErrNotFound) && ok, err == nil && (!ok || string(v) != want):
		r.problemf("Get(%q) = %q, %v; want %q (present %v)", k, v, err, want, ok)
	}
}

// scan reads the whole DB: it fails with the injected error or agrees with
// the writes acknowledged.
func (r *injectedRun) scan() {
	got, err := readAll(r.d)
	if !r.succeeded("scan", err) {
		return
	}
	if diff := diffModels(got, r.live); diff != "" {
		r.problemf("scan: %s", diff)
	}
}

// closeDB closes the DB and reports whether Close succeeded; a Close after
// no failed call synced the WAL.
func (r *injectedRun) closeDB() bool {
	if !r.succeeded("Close", r.d.Close()) {
		return false
	}
	if len(r.calls) == 0 {
		r.lo = len(r.history) // Close synced the WAL
	}
	return true
}

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
				if op, _ := r.fail.failed(); op == nil {
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
	failed, failedReadOnly := r.fail.failed()
	where := fmt.Sprintf("failing %s", failed)
	for _, p := range r.problems {
		t.Errorf("%s: %s", where, p)
	}
	if len(r.calls) == 0 && len(r.bgErrors) == 0 && !benignFailure(*failed, failedReadOnly) {
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

// failedInWAL reports that the failed operation damaged the WAL
// (walDamaged), which makes the write error sticky.
func (r *injectedRun) failedInWAL() bool {
	op, _ := r.fail.failed()
	return op != nil && walDamaged(*op)
}

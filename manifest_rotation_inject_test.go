package bloomkv

// A failure of each step of a manifest rotation: the DB goes on, retries
// the rotation, and loses no acknowledged write.

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

var dbRotationAll = flag.Bool("db.rotationall", false, "TestManifestRotationErrorInjection fails every step of every rotation, not just of the first in a Flush and the first in a Compact")

// rotationInjectRounds is the length of TestManifestRotationErrorInjection's
// deterministic workload: writes, then a Flush, each round, and a Compact
// every second, with background compaction off, so that every run makes the
// same file system operations in the same order, up to the failure.
const rotationInjectRounds = 40

// rotationInjected is one run of that workload with one failing operation.
type rotationInjected struct {
	ops       []vfs.Op // every operation, in order
	calls     []int    // calls[i]: the number of operations before call i
	callNames []string // and what it was
	history   [][]kvOp
	lo, hi    int // a crash leaves the first j writes, lo ≤ j ≤ hi
	live      kvModel
	// failedCall is the index of the first call that failed, or -1; errs
	// are the errors of the calls that did. sticky reports that every
	// call after the first failure failed too.
	failedCall int
	sticky     bool
	errs       []string
	// bgErrors are the background errors the EventListener heard of, and
	// stopped those of them that stopped writes; warnings counts the
	// failed rotations logged.
	bgErrors []string
	stopped  int
	warnings int
	problems []string
	// rotatedAfter reports that the live manifest at the end is newer than
	// every one created before the failure.
	rotatedAfter bool
	closed       bool // Close returned nil
	mem          *vfs.MemFS
	opts         *Options
	// crashes are crash points taken after the call in which the failure
	// happened and after the Flush that follows.
	crashes []crashPoint
}

func (r *rotationInjected) problemf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// runRotationInjected runs the workload on a new MemFS, failing operation
// fail (none if negative).
func runRotationInjected(fail int64) *rotationInjected {
	r := &rotationInjected{mem: vfs.NewMem(), live: kvModel{}, failedCall: -1}
	var mu sync.Mutex
	var lastManifestBefore uint64 // the newest manifest created before the failure
	inj := vfs.NewInjecting(r.mem, func(op vfs.Op) bool {
		mu.Lock()
		defer mu.Unlock()
		r.ops = append(r.ops, op)
		if op.Index < fail && op.Kind == vfs.OpCreate {
			if t, num, ok := manifest.ParseFilename(op.Name[strings.LastIndexByte(op.Name, '/')+1:]); ok && t == manifest.FileTypeManifest {
				lastManifestBefore = num
			}
		}
		return op.Index == fail
	})
	listener := &EventListener{BackgroundError: func(info BackgroundErrorInfo) {
		mu.Lock()
		defer mu.Unlock()
		r.bgErrors = append(r.bgErrors, fmt.Sprintf("%s: %v", info.Op, info.Err))
		if info.WritesStopped {
			r.stopped++
		}
		if !errors.Is(info.Err, vfs.ErrInjected) {
			r.problemf("background error %v, which is not the injected error", info.Err)
		}
	}}
	r.opts = &Options{
		FS: inj, MemtableSize: 1 << 20, BlockSize: 512, MaxManifestFileSize: minMaxManifestFileSize,
		L0CompactionTrigger: noCompaction, EventListener: listener,
		Logger: slog.New(countingHandler{&mu, &r.warnings}),
	}
	d, err := Open("db", r.opts)
	if err != nil {
		r.errs = append(r.errs, fmt.Sprintf("Open: %v", err))
		r.failedCall = 0
		return r
	}
	rng := rand.New(rand.NewPCG(5, 5))
	currentBad := false
	var refused []int // writes that failed since the last one that succeeded
	call := func(name string, f func() error) bool {
		mu.Lock()
		r.calls = append(r.calls, len(r.ops))
		r.callNames = append(r.callNames, name)
		mu.Unlock()
		err := f()
		// CURRENT always names a manifest that is there, crash or not.
		if nums, current, err := dirManifests(r.mem, "db"); !currentBad && (err != nil || !slices.Contains(nums, current)) {
			r.problemf("after %s: manifests %v, CURRENT naming %d (%v)", name, nums, current, err)
			currentBad = true // said once
		}
		mu.Lock()
		passed := fail >= 0 && int64(len(r.ops)) > fail
		mu.Unlock()
		if passed && (len(r.crashes) == 0 || len(r.crashes) == 1 && strings.HasSuffix(name, "Flush")) {
			r.crashes = append(r.crashes, crashPoint{fs: r.mem.CrashClone(vfs.CrashOptions{}), lo: r.lo, hi: len(r.history), where: "after " + name})
		}
		if err == nil {
			if r.failedCall >= 0 {
				r.sticky = false
			}
			// A write refused while a later one succeeds had no effect.
			for _, i := range refused {
				r.history[i] = nil
			}
			refused = nil
			return true
		}
		r.errs = append(r.errs, fmt.Sprintf("%s: %v", name, err))
		if !errors.Is(err, vfs.ErrInjected) {
			r.problemf("%s: %v, which is not the injected error", name, err)
		}
		if r.failedCall < 0 {
			r.failedCall, r.sticky = len(r.calls)-1, true
		}
		return false
	}
	for round := range rotationInjectRounds {
		for i := range 6 {
			idx := len(r.history)
			ops := []kvOp{{key: fmt.Sprintf("k%03d", rng.IntN(60)), value: fmt.Sprintf("%d.%d|%s", round, i, strings.Repeat("v", rng.IntN(300)))}}
			if i == 5 {
				ops = append(ops, kvOp{key: fmt.Sprintf("k%03d", rng.IntN(60)), del: true})
			}
			wo := []*WriteOptions{Sync, NoSync}[i%2]
			r.history = append(r.history, ops)
			if call(fmt.Sprintf("write %d", idx), func() error { return applyOps(d, ops, wo) }) {
				r.live.apply(ops)
				r.hi = idx + 1
				if wo.sync() {
					r.lo = idx + 1
				}
			} else {
				refused = append(refused, idx)
				r.hi = max(r.hi, idx+1) // the failed write may have reached the WAL
			}
		}
		if call(fmt.Sprintf("round %d: Flush", round), d.Flush) {
			r.lo = len(r.history)
		}
		if round%2 == 1 {
			call(fmt.Sprintf("round %d: Compact", round), func() error { return d.Compact(nil, nil) })
		}
	}
	r.rotatedAfter = d.liveManifest() > lastManifestBefore
	if call("Close", d.Close) {
		r.lo, r.closed = len(r.history), true
	}
	return r
}

// rotationWindow is the operations of one rotation of the failure-free run:
// from the write of the edit that triggered it to the removal of the old
// manifest.
type rotationWindow struct {
	editWrite, create, rename, remove int
	old                               string // the old manifest's name
}

// rotationWindows finds the rotations among ops.
func rotationWindows(ops []vfs.Op) []rotationWindow {
	var ws []rotationWindow
	first := true // Open's manifest is no rotation
	lastEdit, lastManifest := -1, ""
	for i, op := range ops {
		isManifest := strings.Contains(op.Name, "MANIFEST-")
		switch {
		case op.Kind == vfs.OpWrite && isManifest && op.Name == lastManifest && (lastEdit < 0 || i > lastEdit+1):
			lastEdit = i
		case op.Kind == vfs.OpCreate && isManifest:
			if !first && lastEdit >= 0 {
				ws = append(ws, rotationWindow{editWrite: lastEdit, create: i, rename: -1, remove: -1, old: lastManifest})
			}
			first = false
			lastManifest, lastEdit = op.Name, -1
		case op.Kind == vfs.OpRename && strings.HasSuffix(op.NewName, "CURRENT") && len(ws) > 0 && ws[len(ws)-1].rename < 0:
			ws[len(ws)-1].rename = i
		case op.Kind == vfs.OpRemove && len(ws) > 0 && ws[len(ws)-1].remove < 0 && op.Name == ws[len(ws)-1].old:
			ws[len(ws)-1].remove = i
		}
	}
	return ws
}

// TestManifestRotationErrorInjection fails, one run each, every operation of
// rotations of a deterministic workload (see rotationWindow) and checks the
// outcome against manifest.Create's contract:
//
//   - from the new manifest's creation to the rename over CURRENT: the DB
//     goes on with the old manifest — no call fails, no background error,
//     one warning logged — and a later rotation succeeds;
//   - the directory sync after the rename: a sticky error, writes stopped
//     and every later call failing;
//   - closing or removing the old manifest, once CURRENT names the new one:
//     the DB goes on, no call fails;
//   - the triggering edit's write or sync: the failure surfaces (a call or
//     a background error); what follows is background.go's business;
//
// and, every time, that CURRENT names a manifest that is there after every
// call, that a crash right after the failure, after the next Flush and at
// the end loses no write acknowledged durable and keeps none not written,
// and that the DB reopens. It fails the steps of the first rotation in a
// Flush and of the first in a Compact; -db.rotationall those of every
// rotation.
func TestManifestRotationErrorInjection(t *testing.T) {
	// The failing runs must replay the first one's operations, removals
	// included, in the same order.
	deleteInline.Store(true)
	t.Cleanup(func() { deleteInline.Store(false) })
	base := runRotationInjected(-1)
	if len(base.errs) > 0 || len(base.problems) > 0 || len(base.bgErrors) > 0 || base.warnings > 0 {
		t.Fatalf("without a failure: errors %v, background errors %v, problems %v, %d warnings", base.errs, base.bgErrors, base.problems, base.warnings)
	}
	windows := rotationWindows(base.ops)
	if len(windows) < 3 {
		t.Fatalf("the workload rotated %d times; want at least 3", len(windows))
	}
	if !*dbRotationAll {
		// The first rotation a flush's edit triggers and the first a
		// compaction's does: they run in different goroutines.
		var picked []rotationWindow
		for _, kind := range []string{"Flush", "Compact"} {
			for _, w := range windows {
				c := sort.Search(len(base.calls), func(i int) bool { return base.calls[i] > w.create }) - 1
				if strings.HasSuffix(base.callNames[c], kind) {
					picked = append(picked, w)
					break
				}
			}
		}
		if len(picked) != 2 {
			t.Fatal("the workload has no rotation in a Flush or none in a Compact")
		}
		windows = picked
	}
	runs, sticky, continued := 0, 0, 0
	for _, w := range windows {
		if w.rename < 0 || w.remove < 0 {
			t.Fatalf("a rotation at op %d with no rename or removal: %+v", w.create, w)
		}
		for i := w.editWrite; i <= w.remove; i++ {
			want := base.ops[i]
			r := runRotationInjected(int64(i))
			runs++
			if len(r.ops) <= i || r.ops[i].Kind != want.Kind || r.ops[i].Name != want.Name {
				t.Fatalf("op %d is %v in the failing run, %v in the first: the workload is not deterministic", i, r.ops[min(i, len(r.ops)-1)], want)
			}
			where := fmt.Sprintf("failing %s (rotation from %s)", want, w.old)
			for _, p := range r.problems {
				t.Errorf("%s: %s", where, p)
			}
			var mustStick, mustContinue, mustRetry, mustSurface bool
			switch {
			case i < w.create:
				mustSurface = want.Name == w.old && (want.Kind == vfs.OpWrite || want.Kind == vfs.OpSync)
			case i <= w.rename:
				mustContinue, mustRetry = true, true
			case want.Kind == vfs.OpSyncDir:
				mustStick = true
			case want.Name == w.old && (want.Kind == vfs.OpClose || want.Kind == vfs.OpRemove):
				mustContinue = true
			}
			if r.sticky {
				sticky++
			} else {
				continued++
			}
			switch {
			case mustStick && (!r.sticky || r.stopped == 0):
				t.Errorf("%s: calls failing %v, %d background errors stopping writes; want a sticky error (errors %v)", where, r.sticky, r.stopped, r.errs)
			case mustContinue && (r.failedCall >= 0 || len(r.bgErrors) > 0):
				t.Errorf("%s: the DB stopped (errors %v, background errors %v); want it to go on with the old manifest", where, r.errs, r.bgErrors)
			case mustRetry && !r.rotatedAfter:
				t.Errorf("%s: the DB never rotated again", where)
			case mustRetry && r.warnings != 1:
				t.Errorf("%s: %d warnings of a failed rotation logged, want 1", where, r.warnings)
			case mustSurface && r.failedCall < 0 && len(r.bgErrors) == 0:
				t.Errorf("%s: the failure surfaced nowhere", where)
			}
			checkRotationInjected(t, where, r, int64(i))
		}
	}
	t.Logf("%d rotations, %d runs: %d with a sticky error, %d going on", len(windows), runs, sticky, continued)
}

// checkRotationInjected checks the crash points of run r and what a crash
// at its end leaves, and, if it closed cleanly, what the closed DB holds.
func checkRotationInjected(t *testing.T, where string, r *rotationInjected, fail int64) {
	t.Helper()
	opts := *r.opts
	opts.EventListener, opts.Logger = nil, nil
	check := func(cp crashPoint) {
		t.Helper()
		opts.FS = cp.fs
		d, err := Open("db", &opts)
		if err != nil {
			t.Errorf("%s (errors %v): a crash %s: Open: %v", where, r.errs, cp.where, err)
			return
		}
		defer d.Close()
		got, err := readAll(d)
		if err != nil {
			t.Errorf("%s: a crash %s: scan: %v", where, cp.where, err)
		} else if _, ok := findPrefix(r.history, cp.lo, cp.hi, got); !ok {
			t.Errorf("%s (errors %v): a crash %s: %v", where, r.errs, cp.where, prefixError(r.history, cp.lo, cp.hi, got))
		}
		if err := checkDirFiles(cp.fs, "db", d); err != nil {
			t.Errorf("%s: a crash %s, then Open: %v", where, cp.where, err)
		}
	}
	for _, cp := range r.crashes {
		check(cp)
	}
	check(crashPoint{fs: r.mem.CrashClone(vfs.CrashOptions{TornWrites: fail%2 == 1, Seed: uint64(fail)}), lo: r.lo, hi: r.hi, where: "at the end"})
	if !r.closed {
		return
	}
	// Closed cleanly: everything is there.
	opts.FS = r.mem
	d, err := Open("db", &opts)
	if err != nil {
		t.Errorf("%s: reopen: %v", where, err)
		return
	}
	defer d.Close()
	if got, err := readAll(d); err != nil || diffModels(got, r.live) != "" {
		t.Errorf("%s: after reopening: %v %s", where, err, diffModels(got, r.live))
	}
}

package bloomkv

// Tests of manifest rotation (manifest_rotation.go): rotations happen and
// leave one manifest, CURRENT naming it; file numbers stay unique; a crash
// at any step of a rotation, or a failure of any step, loses no
// acknowledged write.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

var (
	dbRotationSeeds = flag.Int("db.rotationseeds", 2, "workloads TestManifestRotationCrash crashes at every step of every rotation of (-short, or -race left at its default: 1)")
	dbRotationAll   = flag.Bool("db.rotationall", false, "TestManifestRotationErrorInjection fails every step of every rotation, not just of the first in a Flush and the first in a Compact")
)

// dirManifests returns the numbers of the manifests in dir, ascending, and
// the number of the one CURRENT names (0 if there is no CURRENT).
func dirManifests(fs vfs.FS, dir string) (nums []uint64, current uint64, err error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, 0, err
	}
	for _, name := range names {
		if t, num, ok := manifest.ParseFilename(name); ok && t == manifest.FileTypeManifest {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	f, err := fs.Open(fs.PathJoin(dir, "CURRENT"))
	if err != nil {
		return nums, 0, nil
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nums, 0, err
	}
	t, num, ok := manifest.ParseFilename(strings.TrimSuffix(string(b), "\n"))
	if !ok || t != manifest.FileTypeManifest || !strings.HasSuffix(string(b), "\n") {
		return nums, 0, fmt.Errorf("CURRENT holds %q", b)
	}
	return nums, num, nil
}

// fileNums checks, as an Injecting's policy, that no two files created get
// one number — but CURRENT's temporary file, numbered after the manifest
// it names — and counts the manifests created.
type fileNums struct {
	mu        sync.Mutex
	kind      map[uint64]manifest.FileType
	manifests int
	problems  []string
}

func newFileNums() *fileNums { return &fileNums{kind: map[uint64]manifest.FileType{}} }

func (r *fileNums) policy(op vfs.Op) bool {
	if op.Kind != vfs.OpCreate {
		return false
	}
	t, num, ok := manifest.ParseFilename(op.Name[strings.LastIndexByte(op.Name, '/')+1:])
	if !ok || num == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, seen := r.kind[num]
	switch {
	case t == manifest.FileTypeTemp && prev == manifest.FileTypeManifest:
	case seen:
		r.problems = append(r.problems, fmt.Sprintf("%s: number %d was a %v's already", op, num, prev))
	default:
		r.kind[num] = t
	}
	if t == manifest.FileTypeManifest {
		r.manifests++
	}
	return false
}

func (r *fileNums) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.problems {
		t.Error(p)
	}
}

// liveManifest returns the number of the DB's live manifest.
func (d *DB) liveManifest() uint64 {
	d.manifestMu.Lock()
	defer d.manifestMu.Unlock()
	return d.manifest.FileNum()
}

// TestMaxManifestFileSizeOption checks the option's default and range.
func TestMaxManifestFileSizeOption(t *testing.T) {
	for _, tc := range []struct {
		in, want int64
		ok       bool
	}{
		{0, defaultMaxManifestFileSize, true},
		{minMaxManifestFileSize, minMaxManifestFileSize, true},
		{1 << 40, 1 << 40, true},
		{minMaxManifestFileSize - 1, 0, false},
		{-1, 0, false},
	} {
		o, err := (&Options{MaxManifestFileSize: tc.in}).withDefaults()
		var ae *ArgumentError
		switch {
		case tc.ok && (err != nil || o.MaxManifestFileSize != tc.want):
			t.Errorf("MaxManifestFileSize %d: %d, %v; want %d", tc.in, o.MaxManifestFileSize, err, tc.want)
		case !tc.ok && (!errors.As(err, &ae) || ae.Arg != "opts.MaxManifestFileSize"):
			t.Errorf("MaxManifestFileSize %d: error %v, want an ArgumentError for opts.MaxManifestFileSize", tc.in, err)
		}
	}
}

// TestManifestRotation runs flushes and compactions with the smallest
// MaxManifestFileSize and checks, each time the DB is idle, that the
// directory holds exactly one manifest, that CURRENT names it, that it is the
// live one and its number never goes back; that it rotated many times and
// stayed small; that no file number went to two files; that every manifest
// created was reported to the EventListener; and that the data, after a
// reopen, is what was written.
func TestManifestRotation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		os     bool
		rounds int
	}{
		{"MemFS", false, 60},
		{"OS", true, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, base := "db", vfs.FS(vfs.NewMem())
			if tc.os {
				dir, base = t.TempDir(), vfs.Default
			}
			nums := newFileNums()
			var created atomic.Int64
			opts := &Options{
				FS:                  vfs.NewInjecting(base, nums.policy),
				EventListener:       &EventListener{ManifestCreated: func(ManifestCreateInfo) { created.Add(1) }},
				MemtableSize:        64 << 10,
				BlockSize:           512,
				MaxManifestFileSize: minMaxManifestFileSize,
				L0CompactionTrigger: noCompaction, // compactions only by Compact, so that the DB is idle between calls
			}
			d, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if d != nil {
					d.Close()
				}
			}()
			rng := rand.New(rand.NewPCG(7, 7))
			ks := newKeySpace(rng, 200)
			m := kvModel{}
			last, rotations, maxSize := d.liveManifest(), 0, int64(0)
			check := func(where string) {
				t.Helper()
				got, current, err := dirManifests(base, dir)
				live := d.liveManifest()
				switch {
				case err != nil:
					t.Fatalf("%s: %v", where, err)
				case len(got) != 1 || got[0] != current || current != live:
					t.Fatalf("%s: manifests %v, CURRENT names %d, the live one is %d; want exactly the live one, named by CURRENT", where, got, current, live)
				case live < last:
					t.Fatalf("%s: the live manifest went from %d back to %d", where, last, live)
				case live > last:
					rotations++
				}
				last = live
				st, err := base.Stat(manifest.MakeFilepath(base, dir, manifest.FileTypeManifest, live))
				if err != nil {
					t.Fatal(err)
				}
				maxSize = max(maxSize, st.Size())
			}
			for round := range tc.rounds {
				for i := range 20 {
					ops := randOps(rng, ks, fmt.Sprintf("r%d.%d", round, i))
					if err := applyOps(d, ops, []*WriteOptions{Sync, NoSync}[rng.IntN(2)]); err != nil {
						t.Fatal(err)
					}
					m.apply(ops)
				}
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("round %d, after Flush", round))
				if round%6 == 5 {
					if err := d.Compact(nil, nil); err != nil {
						t.Fatal(err)
					}
					check(fmt.Sprintf("round %d, after Compact", round))
				}
			}
			// A rotation every few edits, and the manifest kept within a
			// few times the limit (its snapshot holds a few tables).
			if rotations < tc.rounds/15 || maxSize > 16*minMaxManifestFileSize {
				t.Fatalf("%d rotations in %d rounds, the manifest up to %d bytes", rotations, tc.rounds, maxSize)
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatal(err)
			}
			err = d.Close()
			d = nil
			if err != nil {
				t.Fatal(err)
			}
			if d, err = Open(dir, opts); err != nil {
				t.Fatalf("reopen: %v", err)
			}
			if _, err := checkState(d, ks, m); err != nil {
				t.Fatalf("after reopening: %v", err)
			}
			if err := checkDirFiles(base, dir, d); err != nil {
				t.Fatalf("after reopening: %v", err)
			}
			last = 0
			check("after reopening")
			nums.check(t)
			if int(created.Load()) != nums.manifests {
				t.Errorf("%d ManifestCreated events for %d manifests created", created.Load(), nums.manifests)
			}
			t.Logf("%d rounds: %d rotations, manifests up to %d bytes", tc.rounds, rotations, maxSize)
		})
	}
}

// TestManifestRotationConcurrent rotates the manifest while writers write
// and background flushes and compactions append edits, racing each other
// for it: no call fails, the manifest rotates, no file number goes to two
// files, and a reopen finds every write.
func TestManifestRotationConcurrent(t *testing.T) {
	mem := vfs.NewMem()
	nums := newFileNums()
	opts := &Options{
		FS:                  vfs.NewInjecting(mem, nums.policy),
		MemtableSize:        64 << 10,
		BlockSize:           512,
		MaxManifestFileSize: minMaxManifestFileSize,
		L0CompactionTrigger: 2,
		BaseLevelSize:       64 << 10,
		TargetFileSize:      16 << 10,
	}
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const writers, writes = 4, 600
	models := make([]kvModel, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	var done atomic.Bool
	for w := range writers {
		models[w] = kvModel{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for i := range writes {
				k := fmt.Sprintf("w%d-%03d", w, rng.IntN(100))
				v := string(fillValue(rng, fmt.Appendf(nil, "%d.%d|", w, i), rng.IntN(800)))
				if err := d.Put([]byte(k), []byte(v), []*WriteOptions{Sync, NoSync}[i%2]); err != nil {
					errs <- err
					return
				}
				models[w][k] = v
			}
		}()
	}
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		for !done.Load() {
			if err := d.Flush(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	done.Store(true)
	<-flushed
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	nums.check(t)
	if nums.manifests < 4 {
		t.Fatalf("%d manifests created, the one of Open included; want rotations", nums.manifests)
	}
	d, err = Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := kvModel{}
	for _, m := range models {
		for k, v := range m {
			want[k] = v
		}
	}
	got, err := readAll(d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffModels(got, want); diff != "" {
		t.Fatalf("after reopening: %s", diff)
	}
	if err := checkDirFiles(mem, "db", d); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d manifests created", nums.manifests)
}

// rotationCrash is a workload that takes a crash point before every file
// system operation of every rotation: from the write of the edit that
// triggers it to the removal of the old manifest, and the operation after
// that.
type rotationCrash struct {
	opts Options // FS unset
	mem  *vfs.MemFS
	rng  *rand.Rand // the test goroutine's
	ks   *keySpace

	history [][]kvOp // the test goroutine's
	started atomic.Int64
	durable atomic.Int64

	mu sync.Mutex // guards what follows; the policy runs in the DB's goroutines
	// armed is set while the workload runs (not in Open or Close).
	armed bool
	// edit holds the crash points of the latest edit's append, kept if a
	// rotation follows it.
	edit       []crashPoint
	lastSynced bool // the latest manifest write was synced: the next write starts an edit
	inRotation bool
	// afterRemoval: the old manifest was just removed; the next operation
	// takes one more crash point.
	afterRemoval bool
	crashSeed    uint64
	pending      []crashPoint

	stats struct{ rotations, crashes, mid, namedOld, namedNew int }
}

func (w *rotationCrash) crashPoint(where string) crashPoint {
	w.crashSeed++
	lo := int(w.durable.Load())
	fs := w.mem.CrashClone(vfs.CrashOptions{TornWrites: w.crashSeed%2 == 0, Seed: w.crashSeed})
	hi := int(w.started.Load())
	return crashPoint{fs: fs, lo: lo, hi: hi, where: where}
}

func (w *rotationCrash) policy(op vfs.Op) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.armed {
		return false
	}
	isManifest := strings.Contains(op.Name, "MANIFEST-")
	if w.afterRemoval {
		w.pending = append(w.pending, w.crashPoint("just after a rotation, before "+op.String()))
		w.afterRemoval = false
	}
	switch {
	case w.inRotation:
		w.pending = append(w.pending, w.crashPoint("in a rotation, before "+op.String()))
		if op.Kind == vfs.OpRemove && isManifest {
			w.inRotation, w.afterRemoval = false, true
		}
	case op.Kind == vfs.OpCreate && isManifest:
		w.stats.rotations++
		w.pending = append(w.pending, w.edit...)
		w.edit = nil
		w.pending = append(w.pending, w.crashPoint("at the start of a rotation, before "+op.String()))
		w.inRotation = true
	case op.Kind == vfs.OpWrite && isManifest:
		if w.lastSynced {
			w.edit = nil
		}
		w.edit = append(w.edit, w.crashPoint("in the append of an edit, before "+op.String()))
		w.lastSynced = false
	case op.Kind == vfs.OpSync && isManifest:
		w.edit = append(w.edit, w.crashPoint("in the append of an edit, before "+op.String()))
		w.lastSynced = true
	}
	return false
}

func (w *rotationCrash) dbOptions(fs vfs.FS) *Options {
	o := w.opts
	o.FS = fs
	return &o
}

// run writes, flushes and compacts, verifying the crash points as they
// come.
func (w *rotationCrash) run(rounds int) error {
	d, err := Open("db", w.dbOptions(vfs.NewInjecting(w.mem, w.policy)))
	if err != nil {
		return err
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	for round := range rounds {
		for range 5 + w.rng.IntN(20) {
			idx := len(w.history)
			ops := randOps(w.rng, w.ks, fmt.Sprint("w", idx))
			w.history = append(w.history, ops)
			w.started.Store(int64(idx + 1))
			sync := w.rng.IntN(2) == 0
			if err := applyOps(d, ops, []*WriteOptions{NoSync, Sync}[b2i(sync)]); err != nil {
				return fmt.Errorf("write %d: %w", idx, err)
			}
			if sync {
				w.durable.Store(int64(idx + 1))
			}
		}
		if err := d.Flush(); err != nil {
			return fmt.Errorf("round %d: Flush: %w", round, err)
		}
		w.durable.Store(int64(len(w.history)))
		if err := w.verifyPending(); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.armed = false
	w.mu.Unlock()
	err = d.Close()
	d = nil
	if err != nil {
		return err
	}
	return w.verifyPending()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (w *rotationCrash) verifyPending() error {
	return verifyCrashPoints(&w.mu, &w.pending, w.verify, &w.stats.crashes)
}

// verify opens what a crash left: Open succeeds, the DB holds a prefix of
// the writes with every durable one, and the directory is tidy.
func (w *rotationCrash) verify(cp crashPoint) error {
	nums, current, err := dirManifests(cp.fs, "db")
	if err != nil {
		return err
	}
	if len(nums) > 1 {
		w.stats.mid++
		if current == nums[len(nums)-1] {
			w.stats.namedNew++
		} else {
			w.stats.namedOld++
		}
	}
	if !slices.Contains(nums, current) {
		return fmt.Errorf("CURRENT names manifest %d, not in the directory's %v", current, nums)
	}
	// No compaction, which would race checkDirFiles.
	o := w.dbOptions(cp.fs)
	o.L0CompactionTrigger, o.BaseLevelSize = noCompaction, 0
	d, err := Open("db", o)
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	defer d.Close()
	got, err := readAll(d)
	if err != nil {
		return err
	}
	if _, ok := findPrefix(w.history, cp.lo, cp.hi, got); !ok {
		return prefixError(w.history, cp.lo, cp.hi, got)
	}
	return checkDirFiles(cp.fs, "db", d)
}

// TestManifestRotationCrash crashes before every file system operation of
// every rotation of a workload of writes, flushes and background
// compactions (see rotationCrash), with and without torn writes, and
// checks each crash's recovery: Open succeeds and finds every write
// acknowledged durable, and no write it did not start. -db.rotationseeds
// runs more workloads; -db.seed=N only workload N.
func TestManifestRotationCrash(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others

	const rounds = 25 // three or four rotations
	for _, seed := range testSeeds(race.Size("db.rotationseeds", *dbRotationSeeds, 1), 1, testing.Short()) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x707a7e))
			w := &rotationCrash{
				mem: vfs.NewMem(),
				rng: rng,
				ks:  newKeySpace(rng, 150),
				opts: Options{
					MemtableSize:        int64(64<<10 + rng.IntN(32<<10)),
					BlockSize:           512,
					MaxManifestFileSize: minMaxManifestFileSize,
					L0CompactionTrigger: 1 + rng.IntN(3),
					BaseLevelSize:       64 << 10,
					TargetFileSize:      16 << 10,
				},
			}
			// The manifest grows with the background compactions, whose
			// number shifts with the machine's load: a workload that has
			// not rotated twice goes on, a bounded number of times.
			for run := 0; run == 0 || w.stats.rotations < 2 && run < 4; run++ {
				if err := w.run(rounds); err != nil {
					t.Fatalf("seed %d: %v\nrerun: go test -run 'TestManifestRotationCrash$' -db.seed=%d", seed, err, seed)
				}
			}
			s := w.stats
			if s.rotations < 2 || s.namedOld == 0 || s.namedNew == 0 {
				t.Fatalf("%d rotations, %d crashes with two manifests (CURRENT naming the old one %d times, the new one %d): the crash points miss the rotations",
					s.rotations, s.mid, s.namedOld, s.namedNew)
			}
			t.Logf("%d rotations, %d crashes verified, %d with two manifests (CURRENT naming the old one %d times, the new one %d)",
				s.rotations, s.crashes, s.mid, s.namedOld, s.namedNew)
		})
	}
}

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

// countingHandler is a slog.Handler that counts the records at Warn.
type countingHandler struct {
	mu    *sync.Mutex
	warns *int
}

func (h countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h countingHandler) Handle(_ context.Context, rec slog.Record) error {
	if rec.Level == slog.LevelWarn && strings.Contains(rec.Message, "manifest rotation failed") {
		h.mu.Lock()
		*h.warns++
		h.mu.Unlock()
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

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

// TestManifestRotationRetry makes every rotation fail for a while, at the
// creation of the new manifest: the DB goes on with the old one, each
// attempt comes only once the manifest has grown by another eighth since
// the last (so not at every edit), each logs one warning, and once the
// failures stop the next attempt succeeds and leaves one manifest.
func TestManifestRotationRetry(t *testing.T) {
	mem := vfs.NewMem()
	var mu sync.Mutex
	failing := false
	var attempts []int64 // the old manifest's size at each failed attempt
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		if op.Kind != vfs.OpCreate || !strings.Contains(op.Name, "MANIFEST-") {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if !failing {
			return false
		}
		nums, current, _ := dirManifests(mem, "db")
		if len(nums) != 1 || nums[0] != current {
			t.Errorf("at a rotation: manifests %v, CURRENT naming %d", nums, current)
		}
		st, err := mem.Stat(manifest.MakeFilepath(mem, "db", manifest.FileTypeManifest, current))
		if err != nil {
			t.Error(err)
		} else {
			attempts = append(attempts, st.Size())
		}
		return true
	})
	warnings := 0
	d, err := Open("db", &Options{
		FS: inj, MemtableSize: 1 << 20, MaxManifestFileSize: minMaxManifestFileSize, L0CompactionTrigger: noCompaction,
		Logger: slog.New(countingHandler{&mu, &warnings}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	m := kvModel{}
	flushes := func(n int) {
		t.Helper()
		for i := range n {
			k, v := fmt.Sprintf("k%03d", i%50), fmt.Sprintf("%d|%s", len(m), strings.Repeat("x", i%200))
			if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
			m[k] = v
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	flushes(5)
	mu.Lock()
	failing = true
	mu.Unlock()
	first := d.liveManifest()
	const failingFlushes = 150
	flushes(failingFlushes)
	mu.Lock()
	failing = false
	n, w := len(attempts), warnings
	mu.Unlock()
	if d.liveManifest() != first {
		t.Fatal("the manifest rotated while every rotation failed")
	}
	if n < 3 || n > failingFlushes/4 || w != n {
		t.Fatalf("%d failed rotations (%d warnings) in %d flushes; want a few, spaced out, each logged once", n, w, failingFlushes)
	}
	for i := 1; i < n; i++ {
		if attempts[i] < attempts[i-1]+attempts[i-1]/8 {
			t.Fatalf("attempt %d at %d bytes, after one at %d: sooner than an eighth more", i, attempts[i], attempts[i-1])
		}
	}
	flushes(40)
	if d.liveManifest() == first {
		t.Fatal("no rotation once the failures stopped")
	}
	if nums, current, err := dirManifests(mem, "db"); err != nil || len(nums) != 1 || nums[0] != current {
		t.Fatalf("after the rotation: manifests %v, CURRENT naming %d (%v)", nums, current, err)
	}
	err = d.Close()
	d = nil
	if err != nil {
		t.Fatal(err)
	}
	d2, err := Open("db", &Options{FS: mem.CrashClone(vfs.CrashOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if got, err := readAll(d2); err != nil || diffModels(got, m) != "" {
		t.Fatalf("after a crash: %v %s", err, diffModels(got, m))
	}
	t.Logf("%d failed rotations in %d flushes, at manifest sizes %v", n, failingFlushes, attempts)
}

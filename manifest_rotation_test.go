package bloomkv

// Tests of manifest rotation (manifest_rotation.go): rotations happen and
// leave one manifest, CURRENT naming it; file numbers stay unique (here);
// a crash at any step of a rotation (manifest_rotation_crash_test.go), or
// a failure of any step (manifest_rotation_inject_test.go), loses no
// acknowledged write; a rotation that keeps failing is retried
// (manifest_rotation_retry_test.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
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
				d.deleter.wait() // the old manifests are gone
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

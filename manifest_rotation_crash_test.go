package bloomkv

// Crashes at every step of a manifest rotation: no acknowledged write is
// lost, and the DB opens on what the crash left.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

var dbRotationSeeds = flag.Int("db.rotationseeds", 2, "workloads TestManifestRotationCrash crashes at every step of every rotation of (-short, or -race left at its default: 1)")

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

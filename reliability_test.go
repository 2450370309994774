package bloomkv

// Regression tests of bugs the reliability suites (crash_test.go,
// corruption_test.go, metamorphic_test.go) found.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestCorruptionManifestLastEdit: a bit flip in the last edit of a closed
// DB's manifest makes that edit read as a torn tail, which recovery drops as
// it would an edit a crash cut short. But a crash never tears an edit whose
// Append returned, and the DB acts on one that did: after a flush edit it
// deletes the WALs the edit retired, after a compaction edit the input
// tables. Were Open to recover the version before the edit regardless, a
// dropped flush would lose every write of the flushed memtable without an
// error (wrong values), a dropped compaction fail with a plain "file does
// not exist" instead of ErrCorruption. Both must be ErrCorruption naming the
// manifest.
func TestCorruptionManifestLastEdit(t *testing.T) {
	for _, last := range []string{"flush", "compaction"} {
		t.Run(last, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := &Options{FS: fs, BlockCacheSize: -1}
			d, err := Open("/db", opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if err := d.Put(fmt.Appendf(nil, "k%03d", i), []byte("old"), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if err := d.Put(fmt.Appendf(nil, "k%03d", i), []byte("new"), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			if last == "compaction" {
				if err := d.Compact(nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}

			// Flip a bit in the payload of the manifest's last record.
			names, _ := fs.List("/db")
			var name string
			for _, n := range names {
				if ft, _, ok := manifest.ParseFilename(n); ok && ft == manifest.FileTypeManifest {
					name = n
				}
			}
			path := fs.PathJoin("/db", name)
			f, err := fs.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r := record.NewReader(f, path)
			var lastOff int64
			for {
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				lastOff = r.Offset()
			}
			f.Close()
			if err := flipBit(fs, path, (lastOff+record.HeaderSize+1)*8); err != nil {
				t.Fatal(err)
			}

			d, err = Open("/db", opts)
			if err == nil {
				v, gerr := d.Get([]byte("k050"))
				d.Close()
				t.Fatalf("Open succeeded; Get(k050) = %q, %v", v, gerr)
			}
			if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), name) {
				t.Fatalf("Open: %v; want ErrCorruption naming %s", err, name)
			}
		})
	}
}

var reliabilityGens = flag.Int("reliability.gens", 3000, "generations each writer of TestReliabilityConcurrentCompaction writes (-race: 1,000; -short: 500)")

// TestReliabilityConcurrentCompaction runs writers, readers with live
// iterators and snapshots, flushes, manual compactions and (with a tiny
// tree) background compactions at once. Each writer rewrites all its keys
// in one batch per generation, so any consistent point in time shows every
// key of a writer at one generation: an iterator or snapshot that mixes
// generations saw no single point in time. A snapshot must read the same
// values before and after the compactions that run while it is open, and
// the generations a reader sees never go back.
func TestReliabilityConcurrentCompaction(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	const (
		writers = 2
		keys    = 20
	)
	gens := race.Size("reliability.gens", *reliabilityGens, 1000)
	if testing.Short() {
		gens = 500
	}
	opts := &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, BaseLevelSize: 32 << 10, TargetFileSize: 16 << 10,
		L0CompactionTrigger: 2, BlockSize: 512, BlockCacheSize: 64 << 10}
	d, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	key := func(w, k int) []byte { return fmt.Appendf(nil, "w%d/k%02d", w, k) }
	value := func(w, g, k int) []byte {
		return fmt.Appendf(nil, "%d|%s", g, strings.Repeat(string(rune('a'+(g+k+w)%26)), 150+(g*7+k)%200))
	}
	// view checks one consistent view: every writer's keys at one
	// generation (or all absent), and returns the generations.
	view := func(kv kvModel) ([]int, error) {
		out := make([]int, writers)
		for w := range writers {
			out[w] = -1
			for k := range keys {
				v, ok := kv[string(key(w, k))]
				g := -1
				if ok {
					if _, err := fmt.Sscanf(v, "%d|", &g); err != nil || v != string(value(w, g, k)) {
						return nil, fmt.Errorf("%s = %q, which no writer wrote", key(w, k), shortKey(v))
					}
				}
				if k == 0 {
					out[w] = g
				} else if g != out[w] {
					return nil, fmt.Errorf("writer %d: %s at generation %d, %s at %d: not one point in time", w, key(w, 0), out[w], key(w, k), g)
				}
			}
		}
		if len(kv) != 0 && len(kv) != writers*keys {
			for k := range kv {
				if !strings.HasPrefix(k, "w") {
					return nil, fmt.Errorf("unknown key %q", k)
				}
			}
		}
		return out, nil
	}

	var (
		mu   sync.Mutex
		errs []error
		done atomic.Bool
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		done.Store(true)
	}
	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			for g := 0; g < gens && !done.Load(); g++ {
				b := NewBatch()
				for k := range keys {
					b.Set(key(w, k), value(w, g, k))
				}
				if err := d.Apply(b, NoSync); err != nil {
					fail(fmt.Errorf("writer %d: %w", w, err))
					return
				}
			}
		}()
	}
	var iters, snapChecks, manual atomic.Int64
	for rd := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := make([]int, writers)
			for w := range last {
				last[w] = -1 // not written yet
			}
			for !done.Load() {
				var r dbReader = d
				var snap *Snapshot
				if rd == 1 {
					s, err := d.NewSnapshot()
					if err != nil {
						fail(err)
						return
					}
					r, snap = s, s
				}
				kv, err := readAll(r)
				if err == nil {
					var g []int
					if g, err = view(kv); err == nil {
						for w := range writers {
							if g[w] < last[w] {
								err = fmt.Errorf("writer %d went back from generation %d to %d", w, last[w], g[w])
							}
							last[w] = g[w]
						}
					}
				}
				if err == nil && snap != nil {
					// Let compactions run, then read the snapshot again.
					if err = d.Flush(); err == nil {
						_, err = checkState(snap, &keySpace{keys: [][]byte{key(0, 0), key(1, keys-1), []byte("zz")}}, kv)
					}
					if err == nil {
						var again kvModel
						if again, err = readAll(snap); err == nil {
							if diff := diffModels(again, kv); diff != "" {
								err = fmt.Errorf("the snapshot changed: %s", diff)
							}
						}
					}
					snapChecks.Add(1)
				}
				if snap != nil {
					snap.Close()
				}
				if err != nil {
					fail(fmt.Errorf("reader %d: %w", rd, err))
					return
				}
				iters.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // manual compactions of random ranges, and flushes
		defer wg.Done()
		for i := 0; !done.Load(); i++ {
			var err error
			switch i % 3 {
			case 0:
				err = d.Flush()
			case 1:
				err = d.Compact(key(i%writers, i%keys), nil)
			default:
				err = d.Compact(nil, nil)
			}
			if err != nil {
				fail(fmt.Errorf("compactor: %w", err))
				return
			}
			manual.Add(1)
		}
	}()
	writersWG.Wait()
	done.Store(true)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	kv, err := readAll(d)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := view(kv); err != nil || g[0] != gens-1 || g[1] != gens-1 {
		t.Fatalf("final state: generations %v, %v; want %d", g, err, gens-1)
	}
	m := d.Metrics()
	if m.Compactions == 0 {
		t.Fatal("no compaction ran")
	}
	t.Logf("%d full iterations (%d snapshot re-checks) while %d flushes and %d compactions ran (%d manual calls)",
		iters.Load(), snapChecks.Load(), m.Flushes, m.Compactions, manual.Load())
}

// TestReliabilityLiveReadSeqNum is the regression test of a bug
// TestReliabilityConcurrentCompaction found (an iterator saw a writer's
// generation 896 after an earlier one had seen 907): Get and NewIter loaded
// the published seqnum S before taking the read state. In between, newer
// writes could be flushed and compacted, and the compaction, which keeps
// only what snapshots need, dropped the versions S sees: the read then
// returned an older value, or none, for a key written before it began. The
// hook opens that window deterministically.
func TestReliabilityLiveReadSeqNum(t *testing.T) {
	d, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, read := range []string{"Get", "NewIter", "Explain"} {
		key := []byte("k-" + read)
		if err := d.Put(key, []byte("v1"), NoSync); err != nil {
			t.Fatal(err)
		}
		fired := false
		testHookAcquireReadState = func() {
			if fired {
				return
			}
			fired = true
			if err := d.Put(key, []byte("v2"), NoSync); err != nil {
				t.Error(err)
			}
			if err := d.Compact(nil, nil); err != nil { // drops v1: no snapshot needs it
				t.Error(err)
			}
		}
		var got string
		switch read {
		case "Get":
			v, err := d.Get(key)
			got = fmt.Sprintf("%s %v", v, err)
		case "NewIter":
			it, err := d.NewIter(&IterOptions{LowerBound: key})
			if err != nil {
				t.Fatal(err)
			}
			if it.First() && string(it.Key()) == string(key) {
				got = fmt.Sprintf("%s %v", it.Value(), it.Close())
			} else {
				got = fmt.Sprintf("missing %v", it.Close())
			}
		case "Explain":
			tr, err := d.Explain(key)
			if err != nil {
				t.Fatal(err)
			}
			got = fmt.Sprintf("%s <nil>", tr.Value)
		}
		testHookAcquireReadState = nil
		if got != "v1 <nil>" && got != "v2 <nil>" {
			t.Errorf("%s of a key written before the read began: %s; want v1 or v2", read, got)
		}
	}
}

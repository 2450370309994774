package peers

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/workload"
)

// TestShapes runs two fills, one of them filloverwrite, and a read on every
// engine with L0 sampled and the full compaction on, on a data set a few
// memtables large, and checks what each engine reports: L0 samples within
// the engine's stop, trees whose bytes add up, write amplification where
// the engine counts it, and space amplification (for the last fill only)
// where it can compact.
func TestShapes(t *testing.T) {
	const n, perKey = 20000, 3
	keys, err := workload.NewKeys(n, workload.DefaultKeySize, workload.DefaultValueSize, workload.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &workload.Config{Keys: keys, Reads: 2000, WritesPerKey: perKey}
	s := DefaultSettings
	s.CacheSize, s.MemtableSize = 1<<20, 1<<20 // several flushes per fill
	ws := []workload.Workload{workload.FillRandom, workload.FillOverwrite, workload.ReadRandom}
	m := &Measure{SampleInterval: 5 * time.Millisecond, SpaceAmp: true}
	dir := t.TempDir()
	for _, tc := range []struct {
		engine    string
		settled   bool // a workload.Settler
		counted   bool // counts WAL and table bytes
		compacts  bool // a FullCompacter
		collects  bool // a ValueLogCollector
		sublevels bool // stops writes by L0 sublevels
		stop      int
	}{
		{"bloomkv", true, true, true, false, false, 36},
		{"pebble", true, true, true, false, true, 12},
		{"goleveldb", false, false, false, false, false, 12},
		{"badger", false, false, false, true, false, 15},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			e, err := Lookup(tc.engine)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := m.Run(e, dir, s, cfg, ws)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(ws) {
				t.Fatalf("%d outcomes for %d workloads", len(outs), len(ws))
			}
			if got, want := outs[1].Ops, n*perKey; got != want {
				t.Errorf("filloverwrite: %d ops, want %d", got, want)
			}
			if r := outs[2]; r.L0 != nil || r.Tree != nil || r.Compacted != nil {
				t.Errorf("readrandom has a shape: %+v", r)
			}
			for i, o := range outs[:2] {
				w := ws[i]
				l0 := o.L0
				switch {
				case l0 == nil:
					t.Fatalf("%s: no L0 samples", w)
				case l0.Samples < 1 || l0.Interval != m.SampleInterval:
					t.Errorf("%s: %d samples every %v", w, l0.Samples, l0.Interval)
				case l0.Stop != L0Stop{N: tc.stop, Sublevels: tc.sublevels}:
					t.Errorf("%s: stop %+v, want %d (sublevels %v)", w, l0.Stop, tc.stop, tc.sublevels)
				// At its stop the engine stops writes, not the flush of the
				// memtable already full: one table (or sublevel) more.
				case l0.MaxTables < 0 || !tc.sublevels && l0.MaxTables > tc.stop+1:
					t.Errorf("%s: L0 max %d tables, stop %d", w, l0.MaxTables, tc.stop)
				case tc.sublevels && (l0.MaxSublevels > tc.stop+1 || l0.MaxSublevels > l0.MaxTables):
					t.Errorf("%s: L0 max %d sublevels, %d tables, stop %d sublevels", w, l0.MaxSublevels, l0.MaxTables, tc.stop)
				case !tc.sublevels && l0.MaxSublevels != 0:
					t.Errorf("%s: %d sublevels from an engine that does not count them", w, l0.MaxSublevels)
				}
				tr := o.Tree
				if tr == nil {
					t.Fatalf("%s: no tree", w)
				}
				if tr.Settled != tc.settled || len(tr.Levels) == 0 {
					t.Errorf("%s: settled %v, %d levels", w, tr.Settled, len(tr.Levels))
				}
				var shares float64
				for l := range tr.Levels {
					shares += tr.Share(l)
				}
				last := tr.Last()
				switch {
				case tc.settled && tr.Bytes() < int64(n)*10:
					// Settled, every key is in a table: at least its 16-byte
					// key and about half of its 100-byte value.
					t.Errorf("%s: %d table bytes for %d keys", w, tr.Bytes(), n)
				case tr.Bytes() > 0 && (math.Abs(shares-1) > 1e-9 || last < 0 || tr.Levels[last].Bytes == 0):
					t.Errorf("%s: shares add up to %v, last level %d: %+v", w, shares, last, tr.Levels)
				}
				if !tc.counted {
					if o.WriteAmp != -1 || tr.WALBytes != 0 {
						t.Errorf("%s: write amp %v, WAL bytes %d from an engine that does not count them", w, o.WriteAmp, tr.WALBytes)
					}
				} else if o.WriteAmp <= 0.2 || o.WriteAmp > 20 {
					// Compression halves the values; then each byte is
					// written once by its flush and a few times more by
					// compactions.
					t.Errorf("%s: write amp %v", w, o.WriteAmp)
				}
			}
			if _, ok := outs[0].SpaceAmp(); ok || outs[0].Compacted != nil {
				t.Error("fillrandom, not the last fill, has a space amplification")
			}
			amp, ok := outs[1].SpaceAmp()
			switch {
			case ok != tc.compacts:
				t.Errorf("space amp %v, %v; want one: %v", amp, ok, tc.compacts)
			case ok && (amp < 0.9 || amp > 5):
				t.Errorf("space amp %v", amp)
			case ok && (outs[1].CompactTime <= 0 || outs[1].Compacted.Share(outs[1].Compacted.Last()) < 0.99):
				// Compacted down the tree: all in one level.
				t.Errorf("after the full compaction, in %v: %+v", outs[1].CompactTime, outs[1].Compacted.Levels)
			}
			for i, o := range outs {
				// Only the last fill's outcome, and only a collector's, has
				// its directory measured again after a value-log collection.
				if collected := o.DiskBytesCollected > 0; collected != (tc.collects && i == 1) || o.ValueLogRewrites < 0 ||
					!collected && o.ValueLogRewrites != 0 {
					t.Errorf("%s: %d bytes on disk after %d value-log rewrites", ws[i], o.DiskBytesCollected, o.ValueLogRewrites)
				}
			}
			t.Logf("L0 %+v / %+v; write amp %.2f / %.2f; space amp %.2f; trees %+v / %+v",
				*outs[0].L0, *outs[1].L0, outs[0].WriteAmp, outs[1].WriteAmp, amp, outs[0].Tree.Levels, outs[1].Tree.Levels)
		})
	}
}

// TestTree checks Tree's sums and ratios.
func TestTree(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tree     Tree
		since    *Tree
		bytes    int64
		last     int
		lastPart float64
		amp      float64 // 0: none
	}{
		{"empty", Tree{Levels: make([]Level, 7)}, nil, 0, -1, 0, 0},
		{"bottom heavy", Tree{Levels: []Level{{1, 10}, {0, 0}, {2, 30}, {3, 60}, {0, 0}}, WALBytes: 200, TableBytes: 300}, nil, 100, 3, 0.6, 1.5},
		{"since a fill", Tree{Levels: []Level{{1, 50}}, WALBytes: 300, TableBytes: 500}, &Tree{WALBytes: 200, TableBytes: 300}, 50, 0, 1, 2},
		{"nothing written since", Tree{Levels: []Level{{1, 50}}, WALBytes: 200, TableBytes: 300}, &Tree{WALBytes: 200, TableBytes: 300}, 50, 0, 1, 0},
		{"not counted", Tree{Levels: []Level{{1, 50}}}, nil, 50, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tree
			if got := tr.Bytes(); got != tc.bytes {
				t.Errorf("Bytes = %d, want %d", got, tc.bytes)
			}
			if got := tr.Last(); got != tc.last {
				t.Errorf("Last = %d, want %d", got, tc.last)
			}
			if got := tr.Share(tc.last); math.Abs(got-tc.lastPart) > 1e-12 {
				t.Errorf("Share(%d) = %v, want %v", tc.last, got, tc.lastPart)
			}
			amp, ok := tr.WriteAmp(tc.since)
			if ok != (tc.amp > 0) || math.Abs(amp-tc.amp) > 1e-12 {
				t.Errorf("WriteAmp = %v, %v; want %v", amp, ok, tc.amp)
			}
		})
	}
	o := &Outcome{Tree: &Tree{Levels: []Level{{1, 150}}}, Compacted: &Tree{Levels: []Level{{0, 0}, {1, 100}}}}
	if amp, ok := o.SpaceAmp(); !ok || amp != 1.5 {
		t.Errorf("SpaceAmp = %v, %v; want 1.5", amp, ok)
	}
	if _, ok := (&Outcome{Tree: o.Tree}).SpaceAmp(); ok {
		t.Error("SpaceAmp without a compacted tree: ok")
	}
}

// TestSampleL0 checks the sampler against a Shaper whose L0 grows by one
// table per call: a sample every interval, one more at the finish, the
// largest kept, and an L0 error reported.
func TestSampleL0(t *testing.T) {
	f := &fakeShaper{reached: make(chan struct{}), signalAt: 5}
	p := sampleL0(f, time.Millisecond)
	<-f.reached // five samples, however long a loaded machine takes
	got, err := p.finish()
	if err != nil {
		t.Fatal(err)
	}
	if got.Samples < 5 || got.Samples != f.calls || got.MaxTables != f.calls || got.Stop.N != 7 {
		t.Errorf("%+v after %d calls", got, f.calls)
	}
	f = &fakeShaper{fail: true}
	if _, err := sampleL0(f, 0).finish(); err == nil || f.calls != 1 {
		t.Errorf("failing L0: error %v after %d calls, want one call", err, f.calls)
	}
}

type fakeShaper struct {
	calls int
	fail  bool
	// reached, if not nil, is closed by call signalAt.
	reached  chan struct{}
	signalAt int
}

func (f *fakeShaper) L0() (L0, error) {
	f.calls++
	if f.reached != nil && f.calls == f.signalAt {
		close(f.reached)
	}
	if f.fail {
		return L0{}, errFake
	}
	return L0{Tables: f.calls}, nil
}
func (f *fakeShaper) L0Stop() L0Stop      { return L0Stop{N: 7} }
func (f *fakeShaper) Tree() (Tree, error) { return Tree{}, nil }

var errFake = errors.New("fake L0 error")

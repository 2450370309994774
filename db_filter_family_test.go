package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/ribbon"
	"github.com/bloomkv/bloomkv/vfs"
)

// familyTreeOptions make a tree of four levels from under 1 MB: tables of
// about 500 keys of about 128 bytes on disk each, the entry size the
// filter allocation's projection assumes, so that the keys per table it
// plans with are about the tables' (and BestAllocation's costs the real
// ones) — and enough for fuse filters, which smaller tables replace by
// Bloom filters; levels four times apart.
func familyTreeOptions(fs vfs.FS) *Options {
	return &Options{
		FS: fs, MemtableSize: 64 << 10, BlockSize: 4 << 10, Compression: NoCompression,
		BaseLevelSize: 64 << 10, LevelMultiplier: 4, TargetFileSize: 64 << 10,
	}
}

// familyValue is the value of key n: 110 bytes, which with its key and
// the block format's few bytes make an entry of about 128 bytes in
// familyTreeOptions' uncompressed tables.
func familyValue(n int) []byte {
	v := fmt.Appendf(nil, "%08d", n)
	return append(v, bytes.Repeat([]byte{byte('a' + n%26)}, 102)...)
}

// filterLog records, for every table the DB writes or moves, the filter
// FilterForLevel gave the table (by its file number) in its level on the
// version it was planned on — for a move, the filter the table must suit,
// the level's cheaper one where it mixes two: an EventListener's
// TableCreated (flushes, compaction outputs) and CompactionBegin (trivial
// moves) ask it, from the DB's current version.
// That is the version the flush or compaction was planned on only if
// nothing else changes the tree meanwhile; writeTree keeps it so.
type filterLog struct {
	db   atomic.Pointer[DB]
	mu   sync.Mutex
	jobs map[int]int        // compaction job → its output level
	want map[uint64]placing // table → its placing
}

// placing is a table's latest placing in a level: created there, or moved
// there by a trivial move, under the filter FilterForLevel gave it there
// (for a move, the cheaper of a mix: Compaction.Filter).
type placing struct {
	level int
	want  FilterSpec
	moved bool
}

func newFilterLog() *filterLog {
	return &filterLog{jobs: map[int]int{}, want: map[uint64]placing{}}
}

func (l *filterLog) listener() *EventListener {
	return &EventListener{
		CompactionBegin: func(ci CompactionInfo) {
			plan, ok := l.planNow(ci.OutputLevel)
			want := plan.Lo
			l.mu.Lock()
			defer l.mu.Unlock()
			l.jobs[ci.JobID] = ci.OutputLevel
			if ok && ci.TrivialMove {
				for _, in := range ci.Inputs {
					l.want[in.FileNum] = placing{ci.OutputLevel, want, true}
				}
			}
		},
		TableCreated: func(ti TableCreateInfo) {
			level := 0
			if ti.Reason == "compaction" {
				l.mu.Lock()
				level = l.jobs[ti.JobID]
				l.mu.Unlock()
			}
			if plan, ok := l.planNow(level); ok {
				l.mu.Lock()
				l.want[ti.FileNum] = placing{level, plan.For(ti.FileNum), false}
				l.mu.Unlock()
			}
		},
	}
}

// planNow returns PlanForLevel(level) on the DB's current version, whose
// For of a table's number is FilterForLevel's; false while Open has not
// returned the DB yet (a WAL's recovery table).
func (l *filterLog) planNow(level int) (compaction.LevelFilter, bool) {
	d := l.db.Load()
	if d == nil {
		return compaction.LevelFilter{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return compaction.PlanForLevel(d.mu.current.Version, level, &d.opts.compaction), true
}

// openLogged opens the DB at /db on opts with the log listening.
func openLogged(t *testing.T, opts *Options, l *filterLog) *DB {
	t.Helper()
	opts.EventListener = l.listener()
	d, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	l.db.Store(d)
	return d
}

// writeTree puts familyValue(n+bump) at key(2n) for each n, in batches
// smaller than a memtable, each flushed and compacted to the end before
// the next: no flush runs beside a compaction, so the log sees each one's
// version, and the run is the same every time, under -race too.
func writeTree(t *testing.T, d *DB, ns []int, bump int) {
	t.Helper()
	const batch = 256 // of about 150 bytes of memtable each: under 64 KiB
	for i, n := range ns {
		if err := d.Put(key(2*n), familyValue(n+bump), NoSync); err != nil {
			t.Fatal(err)
		}
		if (i+1)%batch == 0 || i == len(ns)-1 {
			d.waitForCompactions(t)
		}
	}
}

// checkTableFilters checks every table of d's current version against the
// log: a table written in its level has the filter FilterForLevel gave it
// there then, and one moved there a filter that suited the level's (the
// cheaper of a mix) (the same
// family, for Bloom within a tenth in bits per key). A fuse filter is also
// met by the Bloom filter the table writer falls back to where a fuse
// filter of that width costs more (fallsBack). A Bloom filter's bits per
// key are the payload's, whole 512-bit blocks: at most one block above.
// With fixed true, the filter must also be FilterForLevel's on the current
// version (which does not depend on it). It returns the families of the
// tables.
func checkTableFilters(t *testing.T, d *DB, l *filterLog, fixed bool) map[FilterFamily]int {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	v := d.mu.current
	seen := map[FilterFamily]int{}
	for level, tables := range v.tables {
		for _, tb := range tables {
			p := tb.reader.Properties()
			seen[p.FilterFamily]++
			got := fmt.Sprintf("L%d table %06d (%d keys): %v, %d fingerprint bits, %.2f bits/key",
				level, tb.meta.FileNum, p.FilterKeys, p.FilterFamily, p.FilterFPBits, p.FilterBitsPer)
			pl, ok := l.want[tb.meta.FileNum]
			if !ok || pl.level != level {
				t.Errorf("%s: the log has it at %+v", got, pl)
				continue
			}
			want := pl.want
			if fixed {
				if now := compaction.FilterForLevel(v.Version, level, &d.opts.compaction, tb.meta.FileNum); now != want {
					t.Errorf("%s, built for %v: FilterForLevel now says %v", got, want, now)
				}
			}
			if (want.Family == FuseFamily || want.Family == RibbonFamily) && p.FilterFamily == BloomFamily && fallsBack(want, int(p.FilterKeys)) {
				continue // the writer's fallback
			}
			ok = p.FilterFamily == want.Family
			switch {
			case !ok:
			case want.Family == FuseFamily || want.Family == RibbonFamily:
				ok = p.FilterFPBits == uint64(want.Bits)
			case want.Family == BloomFamily && pl.moved:
				ok = math.Abs(p.FilterBitsPer-want.Bits) <= 0.1*want.Bits+512/float64(p.FilterKeys)
			case want.Family == BloomFamily:
				ok = p.FilterBitsPer >= want.Bits && p.FilterBitsPer < want.Bits+512/float64(p.FilterKeys)
			}
			if !ok {
				how := "written"
				if pl.moved {
					how = "moved there"
				}
				t.Errorf("%s; FilterForLevel said %v when it was %s", got, want, how)
			}
		}
	}
	return seen
}

// fallsBack reports whether the table writer builds a Bloom filter for the
// fuse or ribbon spec over n keys: where that Bloom filter is smaller,
// which FilterSpec.BitsPerKey (the smaller of the two) tells from the
// fuse or Ribbon filter's own size.
func fallsBack(spec FilterSpec, n int) bool {
	size := fuse.SizeBytes(n, int(spec.Bits))
	if spec.Family == RibbonFamily {
		size = ribbon.SizeBytes(n, int(spec.Bits))
	}
	return spec.BitsPerKey(n) < float64(size)*8/float64(n)
}

// TestFilterFamiliesPerLevel opens a DB under each allocation, and with
// fixed LevelFilters, writes a tree of four levels in random order, and
// checks that every key is found, that absent keys are not, and that each
// table has the filter FilterForLevel gave its level (checkTableFilters).
// Then it reopens the DB with another choice, overwrites and compacts some
// keys, and checks that the old tables, of other families, still read
// beside the new ones.
func TestFilterFamiliesPerLevel(t *testing.T) {
	const keys = 4_000 // 500 KB: L1–L3 take 64 KiB, 256 KiB and the rest
	mixed := []FilterSpec{Bloom(12), Fuse(14), Ribbon(10), Fuse(7)}
	for _, tc := range []struct {
		name   string
		opts   func(o *Options)
		fixed  bool             // the filters do not depend on the shape
		reopen func(o *Options) // the second open's choice
	}{
		{"uniform", func(o *Options) {}, true, func(o *Options) { o.FilterAllocation = ProgressiveAllocation }},
		{"optimal", func(o *Options) { o.FilterAllocation = OptimalAllocation }, false, func(o *Options) { o.LevelFilters = []FilterSpec{Fuse(8)} }},
		{"best", func(o *Options) { o.FilterAllocation = BestAllocation }, false, func(o *Options) { o.LevelFilters = []FilterSpec{Ribbon(10), Fuse(6)} }},
		{"progressive", func(o *Options) { o.FilterAllocation = ProgressiveAllocation }, true, func(o *Options) { o.FilterAllocation = UniformAllocation }},
		{"LevelFilters", func(o *Options) { o.LevelFilters = mixed }, true, func(o *Options) { o.FilterAllocation = BestAllocation }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := familyTreeOptions(fs)
			tc.opts(opts)
			log := newFilterLog()
			d := openLogged(t, opts, log)
			written := rand.New(rand.NewPCG(7, 7)).Perm(keys)
			writeTree(t, d, written, 0)
			deepest := 0
			for level, l := range d.Metrics().Levels {
				if l.Tables > 0 {
					deepest = level
				}
			}
			if deepest < 3 {
				t.Fatalf("the deepest level is L%d, want L3 or deeper:\n%s", deepest, d.Metrics())
			}
			checkFamilyReads(t, d, keys, nil)
			seen := checkTableFilters(t, d, log, tc.fixed)
			t.Logf("down to L%d; table filters %v; PlanForLevel by level:%s", deepest, seen, levelSpecs(d))

			// Another allocation, or LevelFilters, over the same tables:
			// overwrite some keys of the lower half of the key range and
			// compact that half, which writes new tables beside the old
			// ones of the upper half. (Overwrites all over the range would
			// make a table of every level the compaction passes span all
			// of it, and rewrite the whole tree.)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			opts = familyTreeOptions(fs)
			tc.reopen(opts)
			log.db.Store(nil)
			d = openLogged(t, opts, log)
			defer d.Close()
			var lower []int // key(2n) for n in lower is in [key(0), key(keys/2)]
			for _, n := range written[:keys/5] {
				if 2*n <= keys/2 {
					lower = append(lower, n)
				}
			}
			writeTree(t, d, lower, 1)
			if err := d.Compact(key(0), key(keys/2)); err != nil {
				t.Fatal(err)
			}
			overwritten := map[int]bool{}
			for _, n := range lower {
				overwritten[n] = true
			}
			checkFamilyReads(t, d, keys, overwritten)
			seen = checkTableFilters(t, d, log, false)
			t.Logf("after reopening: table filters %v; PlanForLevel by level:%s", seen, levelSpecs(d))
			if len(seen) < 2 {
				t.Errorf("after reopening with another choice the tables have one family: %v", seen)
			}
		})
	}
}

// checkFamilyReads checks that each key(2n), n below keys, reads its value
// — familyValue(n+1) for the overwritten, familyValue(n) for the others —
// and that every third odd key between them is not found.
func checkFamilyReads(t *testing.T, d *DB, keys int, overwritten map[int]bool) {
	t.Helper()
	for n := range keys {
		want := familyValue(n)
		if overwritten[n] {
			want = familyValue(n + 1)
		}
		got, err := d.Get(key(2 * n))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Get(%s) = %.12q, %v; want %.12q", key(2*n), got, err, want)
		}
		if n%3 > 0 {
			continue
		}
		if _, err := d.Get(key(2*n + 1)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%s) of an absent key: %v, want ErrNotFound", key(2*n+1), err)
		}
	}
}

// levelSpecs renders PlanForLevel of each level that has tables.
func levelSpecs(d *DB) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var sb strings.Builder
	for level := range manifest.NumLevels {
		if d.mu.current.NumFiles(level) > 0 {
			fmt.Fprintf(&sb, " L%d %v;", level, compaction.PlanForLevel(d.mu.current.Version, level, &d.opts.compaction))
		}
	}
	return sb.String()
}

// TestLevelFiltersOptions checks how withDefaults resolves and refuses
// LevelFilters and the allocations: the last entry stands for the levels
// below it, DisableFilters wins over LevelFilters, and each entry must be
// a valid filter.
func TestLevelFiltersOptions(t *testing.T) {
	got, err := (&Options{LevelFilters: []FilterSpec{Fuse(16), Bloom(9.5)}}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := [manifest.NumLevels]FilterSpec{Fuse(16), Bloom(9.5), Bloom(9.5), Bloom(9.5), Bloom(9.5), Bloom(9.5), Bloom(9.5)}
	if got.compaction.LevelFilters == nil || *got.compaction.LevelFilters != want {
		t.Errorf("LevelFilters resolve to %v, want %v", got.compaction.LevelFilters, want)
	}
	v := &manifest.Version{}
	for level := range manifest.NumLevels {
		if spec := compaction.FilterForLevel(v, level, &got.compaction, uint64(level)); spec != want[level] {
			t.Errorf("FilterForLevel(L%d) = %v, want %v", level, spec, want[level])
		}
	}
	// The resolved options own their copy.
	specs := []FilterSpec{Fuse(8)}
	got, _ = (&Options{LevelFilters: specs}).withDefaults()
	specs[0] = Fuse(9)
	if got.compaction.LevelFilters[6] != Fuse(8) || got.LevelFilters[0] != Fuse(8) {
		t.Errorf("a change to the caller's LevelFilters reached the DB's: %v, %v", got.LevelFilters, got.compaction.LevelFilters)
	}

	// DisableFilters wins: no filter at any level.
	got, err = (&Options{DisableFilters: true, LevelFilters: []FilterSpec{Fuse(8)}, FilterAllocation: BestAllocation}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.LevelFilters != nil || got.compaction.LevelFilters != nil || got.compaction.BitsPerKey != 0 {
		t.Errorf("DisableFilters with LevelFilters resolves to %v, %v, %v bits/key", got.LevelFilters, got.compaction.LevelFilters, got.compaction.BitsPerKey)
	}
	for level := range manifest.NumLevels {
		if spec := compaction.FilterForLevel(v, level, &got.compaction, uint64(level)); spec != (FilterSpec{}) {
			t.Errorf("DisableFilters: FilterForLevel(L%d) = %v", level, spec)
		}
	}

	for _, alloc := range []FilterAllocation{UniformAllocation, OptimalAllocation, BestAllocation, ProgressiveAllocation} {
		if _, err := (&Options{FilterAllocation: alloc}).withDefaults(); err != nil {
			t.Errorf("%v: %v", alloc, err)
		}
	}
	split := func(k []byte) int { return min(len(k), 3) }
	for _, tc := range []struct {
		opts Options
		arg  string
	}{
		{Options{FilterAllocation: ProgressiveAllocation + 1}, "opts.FilterAllocation"},
		{Options{LevelFilters: make([]FilterSpec, manifest.NumLevels+1)}, "opts.LevelFilters"},
		{Options{LevelFilters: []FilterSpec{Fuse(8), Fuse(17)}}, "opts.LevelFilters[1]"},
		{Options{LevelFilters: []FilterSpec{Bloom(0.5)}}, "opts.LevelFilters[0]"},
		{Options{LevelFilters: []FilterSpec{Bloom(10), {Family: 9, Bits: 1}}}, "opts.LevelFilters[1]"},
		{Options{LevelFilters: []FilterSpec{{Bits: 3}}}, "opts.LevelFilters[0]"},
		// An invalid entry is refused even when DisableFilters ignores it.
		{Options{DisableFilters: true, LevelFilters: []FilterSpec{Fuse(0)}}, "opts.LevelFilters[0]"},
		// The prefixes live in the filters: every level needs one.
		{Options{Prefix: &PrefixExtractor{Name: "3", Split: split}, LevelFilters: []FilterSpec{Fuse(8), {}}}, "opts.LevelFilters[1]"},
	} {
		_, err := tc.opts.withDefaults()
		var ae *ArgumentError
		if !errors.As(err, &ae) || ae.Arg != tc.arg {
			t.Errorf("%+v: error %v, want an *ArgumentError for %s", tc.opts.LevelFilters, err, tc.arg)
		}
	}
	// No filter at a level is allowed without a prefix extractor.
	if _, err := (&Options{LevelFilters: []FilterSpec{Fuse(8), {}}}).withDefaults(); err != nil {
		t.Errorf("a level without filters: %v", err)
	}
}

package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

// slashPrefix returns an extractor whose prefix of a key runs up to and
// including its first '/', or is the whole key if it has none. The '/'
// belongs to the prefix: "up to the '/'" would not make one prefix one run
// of keys ("a\x00/x", of prefix "a\x00", sorts between "a/" and "a/x", of
// prefix "a").
func slashPrefix(name string) *PrefixExtractor {
	return &PrefixExtractor{Name: name, Split: func(key []byte) int {
		if i := bytes.IndexByte(key, '/'); i >= 0 {
			return i + 1
		}
		return len(key)
	}}
}

// fixedPrefix returns an extractor whose prefix of a key is its first n
// bytes, or the whole of a shorter key.
func fixedPrefix(name string, n int) *PrefixExtractor {
	return &PrefixExtractor{Name: name, Split: func(key []byte) int { return min(n, len(key)) }}
}

// testExtractors are the extractors randOptions chooses among, each with
// a Name of its own, so that a reopen under another finds tables written
// under the one before, which prefix seeks must then read.
var testExtractors = []*PrefixExtractor{slashPrefix("slash"), fixedPrefix("fixed3", 3), fixedPrefix("fixed5", 5)}

// prefixOracle is the model of an Iterator that may be in prefix mode:
// outside it, an iterOracle of the model's keys within the bounds; in it,
// one of those keys with the prefix — the iterator's keys as if its bounds
// were the prefix's.
type prefixOracle struct {
	ext    *PrefixExtractor
	all    *iterOracle
	cur    *iterOracle // all, or the prefix's
	prefix []byte      // in prefix mode
}

func newPrefixOracle(ext *PrefixExtractor, m kvModel, opts *IterOptions) *prefixOracle {
	var lower, upper []byte
	if opts != nil {
		lower, upper = opts.LowerBound, opts.UpperBound
	}
	keys, values := m.sorted(lower, upper)
	all := &iterOracle{keys: keys, values: values}
	return &prefixOracle{ext: ext, all: all, cur: all}
}

// seekPrefixGE is SeekPrefixGE: the first key ≥ key among the model's keys
// with key's prefix.
func (o *prefixOracle) seekPrefixGE(key []byte) bool {
	o.prefix = o.ext.Prefix(key)
	pre := &iterOracle{}
	for i, k := range o.all.keys {
		if bytes.Equal(o.ext.Prefix(k), o.prefix) {
			pre.keys = append(pre.keys, k)
			pre.values = append(pre.values, o.all.values[i])
		}
	}
	o.cur = pre
	return pre.seekGE(key)
}

// leave ends prefix mode, as First, Last, SeekGE and SeekLT do.
func (o *prefixOracle) leave() *iterOracle {
	o.cur, o.prefix = o.all, nil
	return o.all
}

// prefixKeys are the keys of a prefix model test: prefixes with a '/', of
// several lengths and bytes, and now and then a key without one (its own
// prefix).
type prefixKeys struct {
	prefixes [][]byte
}

func newPrefixKeys(rng *rand.Rand, n int) *prefixKeys {
	pk := &prefixKeys{}
	seen := map[string]bool{}
	for _, p := range []string{"/", "a/", "ab/", "a\x00/", "\xff/", "\xff\xff/", "z/"} {
		seen[p] = true
		pk.prefixes = append(pk.prefixes, []byte(p))
	}
	for len(pk.prefixes) < n {
		p := fmt.Appendf(nil, "p%03d/", rng.IntN(1000))
		if rng.IntN(5) == 0 {
			p = fmt.Appendf(nil, "%c%c/", 'a'+rng.IntN(3), 'a'+rng.IntN(3))
		}
		if !seen[string(p)] {
			seen[string(p)] = true
			pk.prefixes = append(pk.prefixes, p)
		}
	}
	return pk
}

// key returns a key of a random prefix of the set (or, one time in 30, a
// key with no '/'), with a suffix from a small space so that keys repeat.
func (pk *prefixKeys) key(rng *rand.Rand) []byte {
	if rng.IntN(30) == 0 {
		return fmt.Appendf(nil, "p%03d", rng.IntN(1000)) // no '/': the whole key is its prefix
	}
	p := pk.prefixes[rng.IntN(len(pk.prefixes))]
	return fmt.Appendf(bytes.Clone(p), "%d", rng.IntN(60))
}

// seekKey returns a prefix seek's key: a key of the set, a prefix alone, a
// prefix no key has, or a key with no '/'.
func (pk *prefixKeys) seekKey(rng *rand.Rand) []byte {
	switch rng.IntN(6) {
	case 0:
		return bytes.Clone(pk.prefixes[rng.IntN(len(pk.prefixes))])
	case 1:
		return fmt.Appendf(nil, "p%03d.5/%d", rng.IntN(1000), rng.IntN(60)) // a prefix never written
	case 2:
		return fmt.Appendf(nil, "p%03d", rng.IntN(1000))
	}
	return pk.key(rng)
}

// checkPrefixMoves makes random moves, prefix seeks most of them, on an
// iterator of r within random bounds and on the oracle of m, with seek keys
// and bounds from probe, and returns the first disagreement. After one
// prefix seek in three it walks the prefix to its end with Next, and
// compares the walk too.
func checkPrefixMoves(rng *rand.Rand, r dbReader, ext *PrefixExtractor, m kvModel, probe func() []byte, steps int) error {
	var opts *IterOptions
	if rng.IntN(4) == 0 {
		opts = &IterOptions{}
		if rng.IntN(2) == 0 {
			opts.LowerBound = probe()
		}
		if rng.IntN(2) == 0 {
			opts.UpperBound = probe()
		}
	}
	it, err := r.NewIter(opts)
	if err != nil {
		return err
	}
	defer it.Close()
	o := newPrefixOracle(ext, m, opts)
	var log []string
	fail := func(format string, args ...any) error {
		if len(log) > 20 {
			log = append([]string{"…"}, log[len(log)-20:]...)
		}
		return fmt.Errorf("iterator %+v, after %s: %s", opts, strings.Join(log, " "), fmt.Sprintf(format, args...))
	}
	check := func(got, want bool) error {
		if err := it.Error(); err != nil {
			return fail("Error() = %v", err)
		}
		if got != want || it.Valid() != want {
			return fail("returned %v, Valid %v; want %v", got, it.Valid(), want)
		}
		if want && (!bytes.Equal(it.Key(), o.cur.keys[o.cur.i]) || !bytes.Equal(it.Value(), o.cur.values[o.cur.i])) {
			return fail("at %q, want %q", it.Key(), o.cur.keys[o.cur.i])
		}
		return nil
	}
	for range steps {
		var got, want bool
		switch x := rng.IntN(20); {
		case x < 7:
			k := probe()
			log = append(log, fmt.Sprintf("SeekPrefixGE(%q)", k))
			got, want = it.SeekPrefixGE(k), o.seekPrefixGE(k)
			if rng.IntN(3) == 0 {
				if err := check(got, want); err != nil {
					return err
				}
				log = append(log, "Next…")
				for got {
					got, want = it.Next(), o.cur.next()
					if err := check(got, want); err != nil {
						return err
					}
				}
			}
		case x < 13:
			log = append(log, "Next")
			got, want = it.Next(), o.cur.next()
		case x < 16:
			log = append(log, "Prev")
			got, want = it.Prev(), o.cur.prev()
		case x == 16:
			log = append(log, "First")
			got, want = it.First(), o.leave().first()
		case x == 17:
			log = append(log, "Last")
			got, want = it.Last(), o.leave().last()
		case x == 18:
			k := probe()
			log = append(log, fmt.Sprintf("SeekGE(%q)", k))
			got, want = it.SeekGE(k), o.leave().seekGE(k)
		default:
			k := probe()
			log = append(log, fmt.Sprintf("SeekLT(%q)", k))
			got, want = it.SeekLT(k), o.leave().seekLT(k)
		}
		if err := check(got, want); err != nil {
			return err
		}
	}
	return it.Close()
}

// TestPrefixSeekModel checks prefix seeks, and the moves of an iterator in
// prefix mode, against a map of the live keys, over a tree built by random
// puts, deletes, flushes and compactions through several levels, at every
// stage and on a snapshot taken half-way. The oracle knows nothing of
// tables or filters: the keys with a prefix are the model's.
func TestPrefixSeekModel(t *testing.T) {
	seeds := 3
	if testing.Short() || race.Enabled {
		seeds = 2
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x9f))
			ext := slashPrefix("slash")
			opts := &Options{
				FS:                  vfs.NewMem(),
				Prefix:              ext,
				MemtableSize:        64 << 10,
				BlockSize:           256 + rng.IntN(2048),
				BitsPerKey:          []float64{2, 6, 10}[rng.IntN(3)], // 2: many "maybe"s
				FilterAllocation:    []FilterAllocation{UniformAllocation, OptimalAllocation}[rng.IntN(2)],
				L0CompactionTrigger: 2 + rng.IntN(3),
				BaseLevelSize:       8 << 10,
				LevelMultiplier:     2 + rng.IntN(3),
				TargetFileSize:      4 << 10,
			}
			d, err := Open("/db", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			pk := newPrefixKeys(rng, 40)
			probe := func() []byte { return pk.seekKey(rng) }
			m := kvModel{}
			var snap *Snapshot
			var snapM kvModel
			const ops = 2000
			for i := range ops {
				switch x := rng.IntN(100); {
				case x < 75:
					k := pk.key(rng)
					v := fillValue(rng, fmt.Appendf(nil, "%d|", i), rng.IntN(300))
					if err := d.Put(k, v, NoSync); err != nil {
						t.Fatal(err)
					}
					m[string(k)] = string(v)
				case x < 95:
					k := pk.key(rng)
					if err := d.Delete(k, NoSync); err != nil {
						t.Fatal(err)
					}
					delete(m, string(k))
				case x < 98:
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				default:
					lo, hi := pk.key(rng), pk.key(rng)
					if bytes.Compare(lo, hi) > 0 {
						lo, hi = hi, lo
					}
					if err := d.Compact(lo, hi); err != nil {
						t.Fatal(err)
					}
				}
				if i == ops/2 {
					if snap, err = d.NewSnapshot(); err != nil {
						t.Fatal(err)
					}
					defer snap.Close()
					snapM = maps.Clone(m)
				}
				if i%250 == 249 {
					if err := checkPrefixMoves(rng, d, ext, m, probe, 60); err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
				}
			}
			for _, c := range []struct {
				name string
				r    dbReader
				m    kvModel
			}{{"DB", d, m}, {"snapshot", snap, snapM}} {
				for range 5 {
					if err := checkPrefixMoves(rng, c.r, ext, c.m, probe, 80); err != nil {
						t.Fatalf("%s at the end: %v", c.name, err)
					}
				}
			}
			// The seeks skipped tables, in L0 and below, and every table
			// they considered was either skipped or sought.
			mt := d.Metrics()
			var levels, skipped []string
			deep := 0 // levels below L0 where seeks skipped tables
			for i, l := range mt.Levels {
				if l.PrefixFilterNegatives+l.PrefixSought != l.PrefixProbes {
					t.Errorf("L%d: %d skipped + %d sought != %d prefix probes", i, l.PrefixFilterNegatives, l.PrefixSought, l.PrefixProbes)
				}
				if l.Tables > 0 {
					levels = append(levels, fmt.Sprintf("L%d:%d", i, l.Tables))
				}
				if l.PrefixFilterNegatives > 0 {
					skipped = append(skipped, fmt.Sprintf("L%d:%d/%d", i, l.PrefixFilterNegatives, l.PrefixProbes))
					if i > 0 {
						deep++
					}
				}
			}
			t.Logf("tables at the end %v; %d prefix seeks; skipped/considered %v", levels, mt.PrefixSeeks, skipped)
			if mt.Levels[0].PrefixFilterNegatives == 0 || deep < 2 {
				t.Errorf("the seeks skipped tables in L0 and %d deeper levels (%v): too few to test much", deep, skipped)
			}
		})
	}
}

// TestSeekPrefixGEWithoutPrefix checks that a prefix seek without
// Options.Prefix stops the iterator with an *ArgumentError for
// opts.Prefix, and that ExplainPrefix refuses too.
func TestSeekPrefixGEWithoutPrefix(t *testing.T) {
	d, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Put([]byte("a/1"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	isPrefixErr := func(err error) bool {
		var ae *ArgumentError
		return errors.As(err, &ae) && ae.Arg == "opts.Prefix"
	}
	if it.SeekPrefixGE([]byte("a/")) || it.Valid() || !isPrefixErr(it.Error()) {
		t.Fatalf("SeekPrefixGE without Options.Prefix: Valid %v, Error %v; want an *ArgumentError for opts.Prefix", it.Valid(), it.Error())
	}
	if it.First() || !isPrefixErr(it.Close()) {
		t.Fatal("the iterator went on after the failed prefix seek, or Close did not report it")
	}
	if tr, err := d.ExplainPrefix([]byte("a/")); tr != nil || !isPrefixErr(err) {
		t.Fatalf("ExplainPrefix without Options.Prefix: %v, %v", tr, err)
	}
}

// TestPrefixOptions checks that Open refuses an extractor with no Name or
// no Split, or one with DisableFilters, with an *ArgumentError for
// opts.Prefix, and keeps its own copy of the extractor it takes.
func TestPrefixOptions(t *testing.T) {
	for _, o := range []Options{
		{Prefix: &PrefixExtractor{Split: func([]byte) int { return 1 }}},
		{Prefix: &PrefixExtractor{Name: "x"}},
		{Prefix: slashPrefix("slash"), DisableFilters: true},
	} {
		o.FS = vfs.NewMem()
		d, err := Open("/db", &o)
		if ae := (*ArgumentError)(nil); !errors.As(err, &ae) || ae.Arg != "opts.Prefix" {
			if d != nil {
				d.Close()
			}
			t.Errorf("Open(Prefix %+v, DisableFilters %v) = %v; want an *ArgumentError for opts.Prefix", o.Prefix, o.DisableFilters, err)
		}
	}
	ext := slashPrefix("slash")
	d, err := Open("/db", &Options{FS: vfs.NewMem(), Prefix: ext})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ext.Name = "changed"
	if d.opts.Prefix.Name != "slash" || d.opts.compaction.TableOptions.Prefix != d.opts.Prefix {
		t.Fatalf("the DB's extractor is %q (tables get %p, the DB %p): want its own copy, named slash",
			d.opts.Prefix.Name, d.opts.compaction.TableOptions.Prefix, d.opts.Prefix)
	}
}

// prefixTablesDB writes n L0 tables (compactions held off) of 200 keys
// each, of even prefixes "p000/" … "p998/" drawn at random, so that every
// table's key range spans every odd prefix, which no table holds.
func prefixTablesDB(t *testing.T, fs vfs.FS, opts Options, n int, seed uint64) {
	t.Helper()
	opts.FS = fs
	opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 1000, 1000, 1000
	d, err := Open("/db", &opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for range n {
		for _, p := range []int{0, 998} { // the ends of every table's range
			if err := d.Put(fmt.Appendf(nil, "p%03d/%d", p, rng.IntN(1000)), []byte("v"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		for range 198 {
			if err := d.Put(fmt.Appendf(nil, "p%03d/%d", 2*rng.IntN(500), rng.IntN(1000)), []byte("v"), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPrefixSeekTablesSought measures what absent-prefix seeks read. Over
// n L0 tables whose key ranges all span the prefix, a seek must consider
// every one and seek only those whose filters fail to rule the prefix out:
// about n·FPR, FPR being each table's filter's expected false-positive
// rate (its formula, on its size), within four standard deviations of the
// binomial count. After a compaction into the levels the same holds of the
// one table per level whose range spans the prefix. Tables written without
// Options.Prefix, under another extractor's Name, or without filters
// cannot rule a prefix out: every table in range is then sought, exactly
// once per seek.
func TestPrefixSeekTablesSought(t *testing.T) {
	const n, seeks = 40, 500
	ext := slashPrefix("slash")
	absent := func(i int) []byte { return fmt.Appendf(nil, "p%03d/", 1+2*(i%499)) }

	// run opens the DB of fs under opts and makes the absent-prefix seeks,
	// and returns the tables in range per seek, the sought, the skipped,
	// and the sum of the in-range tables' expected FPRs.
	run := func(t *testing.T, fs vfs.FS, opts Options, compact bool) (inRange, sought, skipped uint64, fprSum, fprVar float64) {
		t.Helper()
		opts.FS = fs
		opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 1000, 1000, 1000
		d, err := Open("/db", &opts)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if compact {
			if err := d.Compact(nil, []byte("q")); err != nil {
				t.Fatal(err)
			}
			d.waitForCompactions(t) // the version stays the one the oracle reads
		}
		before := d.Metrics()
		it, err := d.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		d.mu.Lock()
		v := d.mu.current
		d.mu.Unlock()
		fpr := map[*table]float64{} // by table: its formula is slow
		for _, tables := range v.tables {
			for _, tb := range tables {
				fpr[tb] = 1
				if fl := tb.reader.Filter(); fl != nil && tb.reader.Properties().FilterPrefix == ext.Name {
					fpr[tb] = fl.ExpectedFalsePositiveRate()
				}
			}
		}
		for i := range seeks {
			p := absent(i)
			if it.SeekPrefixGE(p) {
				t.Fatalf("SeekPrefixGE(%q) found %q", p, it.Key())
			}
			// The oracle of "in range", from the tables' metadata: those
			// holding keys on both sides of the prefix. Their filters'
			// rates, from each filter's formula, make the expectation.
			for _, tables := range v.tables {
				for _, tb := range tables {
					if bytes.Compare(tb.meta.Smallest.UserKey, p) < 0 && bytes.Compare(tb.meta.Largest.UserKey, p) > 0 {
						inRange++
						f := fpr[tb]
						fprSum += f
						fprVar += f * (1 - f)
					}
				}
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		after := d.Metrics()
		if got := after.PrefixSeeks - before.PrefixSeeks; got != seeks {
			t.Errorf("PrefixSeeks counted %d, want %d", got, seeks)
		}
		var probes uint64
		for i := range after.Levels {
			a, b := after.Levels[i], before.Levels[i]
			probes += a.PrefixProbes - b.PrefixProbes
			sought += a.PrefixSought - b.PrefixSought
			skipped += a.PrefixFilterNegatives - b.PrefixFilterNegatives
		}
		if probes != inRange || sought+skipped != probes {
			t.Errorf("%d prefix probes (%d sought, %d skipped); want the %d tables in range", probes, sought, skipped, inRange)
		}
		return inRange, sought, skipped, fprSum, fprVar
	}

	for _, tc := range []struct {
		name    string
		write   Options // the options the tables are written under
		read    Options // and those the seeks are made under
		compact bool
		filters bool // the tables' filters hold the seeks' prefixes
	}{
		{"prefix filters, bloom 10", Options{Prefix: ext}, Options{Prefix: ext}, false, true},
		{"prefix filters, bloom 5", Options{Prefix: ext, BitsPerKey: 5}, Options{Prefix: ext}, false, true},
		{"prefix filters, in the levels", Options{Prefix: ext, BitsPerKey: 5}, Options{Prefix: ext, BitsPerKey: 5, BaseLevelSize: 4 << 10, TargetFileSize: 2 << 10, LevelMultiplier: 2}, true, true},
		{"written without Options.Prefix", Options{}, Options{Prefix: ext}, false, false},
		{"written under another Name", Options{Prefix: slashPrefix("other")}, Options{Prefix: ext}, false, false},
		{"written without filters", Options{DisableFilters: true}, Options{Prefix: ext}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			prefixTablesDB(t, fs, tc.write, n, 1)
			inRange, sought, skipped, fprSum, fprVar := run(t, fs, tc.read, tc.compact)
			perSeek := float64(inRange) / seeks
			t.Logf("%d absent-prefix seeks, %.2f tables in range each: %.3f sought per seek (%d in all, %d skipped); expected %.3f (mean FPR %.4f)",
				seeks, perSeek, float64(sought)/seeks, sought, skipped, fprSum/seeks, fprSum/float64(inRange))
			if !tc.compact && inRange != n*seeks {
				t.Fatalf("%d tables in range, want all %d L0 tables for each of %d seeks", inRange, n, seeks)
			}
			if !tc.filters {
				if sought != inRange || skipped != 0 {
					t.Fatalf("%d tables sought and %d skipped of %d in range; want every one sought", sought, skipped, inRange)
				}
				return
			}
			if tol := 4*math.Sqrt(fprVar) + 1; math.Abs(float64(sought)-fprSum) > tol {
				t.Fatalf("%d tables sought; want %.1f ± %.1f (in range × FPR)", sought, fprSum, tol)
			}
		})
	}
}

// TestExplainPrefixIsTheSeeksAccount checks ExplainPrefix against what the
// seek did and against the tables themselves: its key count is an
// iterator's, its steps add up to the seek's Metrics, every L0 table has
// one step, a table out of range lies outside the prefix's keys, and a
// filter's verdict is what the table's filter, asked directly, says of
// the prefix.
func TestExplainPrefixIsTheSeeksAccount(t *testing.T) {
	ext := slashPrefix("slash")
	fs := vfs.NewMem()
	prefixTablesDB(t, fs, Options{Prefix: ext, BitsPerKey: 4}, 8, 2)
	d, err := Open("/db", &Options{FS: fs, Prefix: ext, BitsPerKey: 4, L0CompactionTrigger: 1000, L0SlowdownTrigger: 1000, L0StopTrigger: 1000,
		BaseLevelSize: 4 << 10, TargetFileSize: 2 << 10, LevelMultiplier: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Compact(nil, []byte("p500")); err != nil { // half the keys into the levels
		t.Fatal(err)
	}
	for i := range 20 { // L0 tables of narrow ranges
		if err := d.Put(fmt.Appendf(nil, "p%03d/x", 100*(i%10)), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.waitForCompactions(t) // the version stays the one the checks read
	for i := range 5 {      // and the memtable
		if err := d.Put(fmt.Appendf(nil, "p%03d/y", 200*i), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	v := d.mu.current
	d.mu.Unlock()
	tables := map[uint64]*table{}
	for _, ts := range v.tables {
		for _, tb := range ts {
			tables[tb.meta.FileNum] = tb
		}
	}
	t.Logf("tables by level: %v", func() (n []int) {
		for _, ts := range v.tables {
			n = append(n, len(ts))
		}
		return n
	}())
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 200 {
		key := fmt.Appendf(nil, "p%03d/", rng.IntN(1000))
		if i%3 == 0 {
			key = fmt.Appendf(key, "%d", rng.IntN(1000))
		}
		prefix := ext.Prefix(key)
		want := 0
		it, err := d.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.SeekPrefixGE(key); ok; ok = it.Next() {
			want++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}

		before := d.Metrics()
		tr, err := d.ExplainPrefix(key)
		if err != nil {
			t.Fatal(err)
		}
		after := d.Metrics()
		if tr.Keys != want || tr.Found != (want > 0) || !bytes.Equal(tr.Prefix, prefix) {
			t.Fatalf("%q: Explain found %d keys (prefix %q), the iterator %d:\n%s", key, tr.Keys, tr.Prefix, want, tr)
		}
		var probes, sought, skipped uint64
		for l := range after.Levels {
			probes += after.Levels[l].PrefixProbes - before.Levels[l].PrefixProbes
			sought += after.Levels[l].PrefixSought - before.Levels[l].PrefixSought
			skipped += after.Levels[l].PrefixFilterNegatives - before.Levels[l].PrefixFilterNegatives
		}
		n := tr.Totals()
		inRange, l0 := 0, 0
		for _, s := range tr.Steps {
			if s.Kind != TableStep {
				continue
			}
			tb := tables[s.FileNum]
			if s.Level == 0 {
				l0++
			}
			if s.InRange {
				inRange++
			}
			end := appendPrefixEnd(nil, prefix)
			overlaps := bytes.Compare(tb.meta.Largest.UserKey, prefix) >= 0 && (end == nil || bytes.Compare(tb.meta.Smallest.UserKey, end) < 0)
			if s.InRange != overlaps {
				t.Fatalf("%q: step %+v: in range %v, but the table's range overlaps the prefix's: %v", key, s, s.InRange, overlaps)
			}
			if s.InRange && (s.Filter == FilterAbsent) == tb.reader.Filter().MayContainHash(bloom.Hash(prefix)) {
				t.Fatalf("%q: step %+v: verdict %v, but the filter asked says %v", key, s, s.Filter, !(s.Filter == FilterAbsent))
			}
			if s.Sought != (s.InRange && s.Filter != FilterAbsent) {
				t.Fatalf("%q: step %+v: sought %v", key, s, s.Sought)
			}
		}
		if l0 != len(v.tables[0]) || uint64(inRange) != probes || uint64(n.TablesSought) != sought || uint64(n.FilterNegatives) != skipped {
			t.Fatalf("%q: Explain: %d L0 steps, %d in range, %d sought, %d skipped; the seek: %d L0 tables, %d probes, %d sought, %d skipped:\n%s",
				key, l0, inRange, n.TablesSought, n.FilterNegatives, len(v.tables[0]), probes, sought, skipped, tr)
		}
		if tr.Steps[0].Kind != MemtableStep || !tr.Steps[0].Sought {
			t.Fatalf("%q: first step %+v, want the memtable, sought", key, tr.Steps[0])
		}
		if !strings.Contains(tr.String(), "summary: ") || tr.Summary() == "" {
			t.Fatalf("%q: String:\n%s", key, tr)
		}
	}
	below := 0
	for _, ts := range v.tables[1:] {
		below += len(ts)
	}
	if below == 0 {
		t.Fatalf("no tables below L0 to explain: %v", v.tables)
	}
}

// TestAppendPrefixEnd checks the end of a prefix's range: the smallest key
// after every key that starts with the prefix, nil when there is none.
func TestAppendPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"a", "b"}, {"ab/", "ab0"}, {"a\xff", "b"}, {"a\xff\xff", "b"}, {"\x00", "\x01"},
	} {
		if got := appendPrefixEnd([]byte("junk")[:0], []byte(tc.prefix)); string(got) != tc.want {
			t.Errorf("appendPrefixEnd(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
	for _, p := range []string{"", "\xff", "\xff\xff"} {
		if got := appendPrefixEnd(nil, []byte(p)); got != nil {
			t.Errorf("appendPrefixEnd(%q) = %q, want nil: no key follows them all", p, got)
		}
	}
}

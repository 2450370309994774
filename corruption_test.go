package bloomkv

// Bit flips in the files of a closed DB: Open, or the reads that touch the
// damage, must fail with ErrCorruption naming the damaged file; no read may
// ever return a wrong value, and nothing may panic.
//
// Long form: go test -count=1 -run TestCorruptionBitFlips -corrupt.flips=10000 .

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
)

var (
	corruptFlips = flag.Int("corrupt.flips", 300, "bit flips TestCorruptionBitFlips tries (-race, left at its default: 100)")
	corruptSeed  = flag.Int64("corrupt.seed", -1, "seed of TestCorruptionBitFlips (default: time-based, printed)")
)

// corruptDB is a closed DB on a MemFS with tables in several levels, a
// manifest of many edits and a WAL of unflushed writes; with its values
// separated, blob files too.
type corruptDB struct {
	fs   *vfs.MemFS
	dir  string
	opts Options
	// kinds are the kinds of file the trials flip bits of, in turn.
	kinds []manifest.FileType
	keys  [][]byte // every key ever written, and some never written
	// model is the DB's state; beforeLast its state without the last write,
	// which is the newest WAL's last record.
	model, beforeLast kvModel
	files             map[manifest.FileType][]string
	// lastWAL is the newest WAL; lastRecord the offset of its last record.
	lastWAL    string
	lastRecord int64
}

// buildCorruptDB builds the DB to damage, its values of 100 bytes and
// more (about two thirds of them) in blob files if separate, its tables'
// indexes in partitions of partitionSize (Options.IndexPartitionSize).
func buildCorruptDB(t *testing.T, separate bool, partitionSize int) *corruptDB {
	c := &corruptDB{dir: "/db", model: kvModel{},
		kinds: []manifest.FileType{manifest.FileTypeTable, manifest.FileTypeManifest, manifest.FileTypeWAL, manifest.FileTypeTable, manifest.FileTypeWAL, manifest.FileTypeCurrent}}
	mem := vfs.NewMem()
	// Bloom filters in L0 and L1, fuse filters below, all holding key
	// prefixes too, and range filters: the damage reaches every kind of
	// filter block. Fuse(16), unlike Fuse(8), costs less than its Bloom
	// stand-in over every set of 150 keys or more (sstable's fuse codec
	// falls back below), so the tables of about 300 keys that Compact
	// writes at the bottom are fuse, whatever shape the background
	// compactions, racing the writes, gave the tree before.
	c.opts = Options{FS: mem, MemtableSize: 64 << 10, BaseLevelSize: 64 << 10, TargetFileSize: 48 << 10, BlockSize: 512, BlockCacheSize: -1,
		LevelFilters:    []FilterSpec{Bloom(10), Bloom(10), Fuse(16)},
		RangeFilterBits: []float64{16, 8},
		Prefix:          &PrefixExtractor{Name: "key000", Split: func(k []byte) int { return min(len(k), 6) }},
		ValueSeparation: ValueSeparation{MinSize: ValueSeparationOff}, IndexPartitionSize: partitionSize,
		// BitsPerKey above the Bloom filters' 10: their tables get paged
		// filters of 16 bits per key, whose pages the damage reaches too;
		// the fuse filters, stronger, get none.
		BitsPerKey: 16, pagedFiltersWithoutLimit: true}
	if separate {
		// Tables of keys and handles are a fraction of the size: smaller
		// targets keep the tree as deep.
		c.opts.ValueSeparation.MinSize = 100
		c.opts.BaseLevelSize, c.opts.TargetFileSize = 16<<10, 8<<10
		c.kinds = append(c.kinds, manifest.FileTypeBlob, manifest.FileTypeTable, manifest.FileTypeBlob)
	}
	d, err := Open(c.dir, &c.opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	const nkeys = 700
	key := func(i int) string { return fmt.Sprintf("key%05d", i) }
	for i := range nkeys + 50 { // the last 50 are never written
		c.keys = append(c.keys, []byte(key(i)))
	}
	write := func(n int, wo *WriteOptions) {
		for i := range n {
			var ops []kvOp
			for range 1 + rng.IntN(3) {
				k := key(rng.IntN(nkeys))
				if rng.IntN(8) == 0 {
					ops = append(ops, kvOp{del: true, key: k})
				} else {
					ops = append(ops, kvOp{key: k, value: string(fillValue(rng, []byte(k+"#"+fmt.Sprint(i)+"|"), rng.IntN(300)))})
				}
			}
			c.beforeLast = c.model.clone()
			c.model.apply(ops)
			if err := applyOps(d, ops, wo); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(2500, NoSync) // several levels, then all at the bottom, rewritten:
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	write(250, NoSync) // an L0 table or two
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	write(40, Sync) // the WAL
	families := map[sstable.FilterFamily]int{}
	partitioned, paged := 0, 0
	d.mu.Lock()
	for _, tables := range d.mu.current.tables {
		for _, tb := range tables {
			families[tb.reader.Properties().FilterFamily]++
			if tb.reader.Properties().IndexPartitions > 0 {
				partitioned++
			}
			if tb.reader.PagedFilterBitsPerKey() > 0 {
				paged++
			}
		}
	}
	d.mu.Unlock()
	if families[sstable.BloomFamily] == 0 || families[sstable.FuseFamily] == 0 {
		t.Fatalf("tables by filter family %v: want both families\n%s", families, d.Metrics())
	}
	if paged == 0 {
		t.Fatalf("no table has a paged filter: tables by filter family %v", families)
	}
	if (partitioned > 0) != (partitionSize > 0) {
		t.Fatalf("%d tables with partitioned indexes under IndexPartitionSize %d", partitioned, partitionSize)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Everything is durable now; the clone drops nothing but is a file
	// system no handle refers to.
	c.fs = mem.CrashClone(vfs.CrashOptions{})
	names, err := c.fs.List(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	c.files = map[manifest.FileType][]string{}
	for _, name := range names {
		if ft, _, ok := manifest.ParseFilename(name); ok {
			c.files[ft] = append(c.files[ft], name)
		}
	}
	wals := c.files[manifest.FileTypeWAL]
	if len(wals) == 0 || len(c.files[manifest.FileTypeTable]) < 4 || len(c.files[manifest.FileTypeManifest]) != 1 || separate != (len(c.files[manifest.FileTypeBlob]) > 0) {
		t.Fatalf("unexpected files: %v", names)
	}
	slices.Sort(wals)
	c.lastWAL = wals[len(wals)-1]
	f, err := c.fs.Open(c.fs.PathJoin(c.dir, c.lastWAL))
	if err != nil {
		t.Fatal(err)
	}
	r := record.NewReader(f, c.lastWAL)
	records := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		c.lastRecord = r.Offset()
		records++
	}
	f.Close()
	if records != 40 {
		t.Fatalf("the newest WAL %s holds %d records, want 40", c.lastWAL, records)
	}
	m := mustOpenMetrics(t, c)
	t.Logf("DB to damage: %d tables (per level %v), blob files %v, WALs %v, manifest %v", len(c.files[manifest.FileTypeTable]), m, c.files[manifest.FileTypeBlob], wals, c.files[manifest.FileTypeManifest])
	return c
}

// mustOpenMetrics opens an undamaged copy and returns its table counts per
// level, checking that it holds the model.
func mustOpenMetrics(t *testing.T, c *corruptDB) []int {
	opts := c.opts
	opts.FS = c.fs.CrashClone(vfs.CrashOptions{})
	d, err := Open(c.dir, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := checkState(d, &keySpace{keys: c.keys}, c.model); err != nil {
		t.Fatal(err)
	}
	var levels []int
	for _, l := range d.Metrics().Levels {
		levels = append(levels, int(l.Tables))
	}
	return levels
}

// flipBit flips bit bit of file name in fs.
func flipBit(fs vfs.FS, name string, bit int64) error {
	f, err := fs.Open(name)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return err
	}
	data[bit/8] ^= 1 << (bit % 8)
	w, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Sync(); err != nil {
		return err
	}
	return w.Close()
}

func fileSize(fs vfs.FS, name string) (int64, error) {
	info, err := fs.Stat(name)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// corruptStats are what TestCorruptionBitFlips counts.
type corruptStats struct {
	flips                      map[string]int
	openFailed, readFailed     int
	tornTailDropped, undamaged int
	reads                      int
}

func TestCorruptionBitFlips(t *testing.T) {
	t.Parallel() // one of the package's longest: it runs beside the others
	seed := uint64(time.Now().UnixNano())
	if *corruptSeed >= 0 {
		seed = uint64(*corruptSeed)
	}
	flips := race.Size("corrupt.flips", *corruptFlips, 100)
	// The tables' indexes in partitions of a size the seed picks for each
	// DB, from one per data block (1) to a dozen blocks' (256 bytes), or
	// whole (-1). Not larger: a table the final Compact writes, of about
	// 300 keys, has an index of one to a few KiB, so that under 1 KiB
	// partitions some seeds' tables are all written whole, and the check
	// that the DB's tables are partitioned as asked would not hold.
	sizes := []int{1, 64, 256, -1}
	inline, separated := sizes[seed%4], sizes[seed/4%4]
	t.Logf("seed %d (-corrupt.seed=%d reproduces), %d flips, index partitions of %d and %d bytes", seed, seed, flips, inline, separated)
	// Every other trial damages the DB whose values are in blob files.
	dbs := []*corruptDB{buildCorruptDB(t, false, inline), buildCorruptDB(t, true, separated)}
	rng := rand.New(rand.NewPCG(seed, 0xf11b))
	st := corruptStats{flips: map[string]int{}}
	start := time.Now()
	for trial := range flips {
		c := dbs[trial%2]
		kind := c.kinds[trial/2%len(c.kinds)]
		names := c.files[kind]
		name := names[rng.IntN(len(names))]
		fs := c.fs.CrashClone(vfs.CrashOptions{})
		path := fs.PathJoin(c.dir, name)
		size, err := fileSize(fs, path)
		if err != nil {
			t.Fatal(err)
		}
		bit := rng.Int64N(size * 8)
		if err := flipBit(fs, path, bit); err != nil {
			t.Fatal(err)
		}
		label := kind.String()
		if trial%2 == 1 {
			label = "separated " + label
		}
		st.flips[label]++
		if err := c.check(fs, name, bit, &st); err != nil {
			t.Fatalf("trial %d (seed %d): bit %d (byte %d) of %s (%d bytes): %v", trial, seed, bit, bit/8, name, size, err)
		}
	}
	t.Logf("%d bit flips in %v (%v): Open failed with ErrCorruption %d times, a read failed with it %d times, a torn WAL tail dropped the last write %d times, no effect %d times; %d reads checked; no wrong value, no panic",
		flips, time.Since(start).Round(time.Millisecond), st.flips, st.openFailed, st.readFailed, st.tornTailDropped, st.undamaged, st.reads)
}

// check opens the damaged copy fs and reads everything.
func (c *corruptDB) check(fs vfs.FS, name string, bit int64, st *corruptStats) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	isCorruption := func(err error) bool {
		return errors.Is(err, ErrCorruption) && strings.Contains(err.Error(), name)
	}
	opts := c.opts
	opts.FS = fs
	d, err := Open(c.dir, &opts)
	if err != nil {
		if !isCorruption(err) {
			return fmt.Errorf("Open: %v; want an error wrapping ErrCorruption naming %s", err, name)
		}
		st.openFailed++
		return nil
	}
	defer d.Close()

	// A flip in the last record of the newest WAL makes it a torn tail:
	// recovery drops it, as it would a write cut short by a crash. Nothing
	// else may go missing, and no other damage may pass unreported.
	allowed := []kvModel{c.model}
	if name == c.lastWAL && bit/8 >= c.lastRecord {
		allowed = append(allowed, c.beforeLast)
	}
	var want kvModel
	failed := false
	// A scan first, forward and backward: it may stop with ErrCorruption,
	// but every key it shows must be right, in order, none skipped.
	for _, forward := range []bool{true, false} {
		it, err := d.NewIter(nil)
		if err != nil {
			return fmt.Errorf("NewIter: %v", err)
		}
		var got []string
		ok, step := it.First(), it.Next
		if !forward {
			ok, step = it.Last(), it.Prev
		}
		for ; ok; ok = step() {
			k, v := it.Key(), it.Value()
			if v == nil {
				break // the value's blob failed to read: Error says why
			}
			got = append(got, string(k), string(v))
		}
		ierr := it.Error()
		if cerr := it.Close(); ierr == nil {
			ierr = cerr
		}
		if ierr != nil && !isCorruption(ierr) {
			return fmt.Errorf("scan (forward %v): %v; want an error wrapping ErrCorruption naming %s", forward, ierr, name)
		}
		matched := false
		for _, m := range allowed {
			keys, values := m.sorted(nil, nil)
			if !forward {
				slices.Reverse(keys)
				slices.Reverse(values)
			}
			var exp []string
			for i := range keys {
				exp = append(exp, string(keys[i]), string(values[i]))
			}
			if ierr == nil && slices.Equal(got, exp) || ierr != nil && len(got) <= len(exp) && slices.Equal(got, exp[:len(got)]) {
				if ierr == nil && want == nil {
					want = m
				}
				matched = true
				break
			}
		}
		if !matched {
			return fmt.Errorf("scan (forward %v, error %v) shows %d keys that match no allowed state (%d allowed states)", forward, ierr, len(got)/2, len(allowed))
		}
		failed = failed || ierr != nil
	}
	// Short bounded scans, which ask the range filters: each shows the
	// settled state's keys of its range, or fails with ErrCorruption.
	for i := 0; i+8 < len(c.keys); i += 37 {
		st.reads++
		lo, hi := c.keys[i], c.keys[i+1+i%8]
		var got []string
		err := d.Scan(lo, hi, func(k, v []byte) error {
			got = append(got, string(k), string(v))
			return nil
		})
		if err != nil {
			if !isCorruption(err) {
				return fmt.Errorf("Scan(%q, %q): %v; want an error wrapping ErrCorruption naming %s", lo, hi, err, name)
			}
			failed = true
			continue
		}
		if want == nil {
			continue // the full scans failed: no settled state to compare with
		}
		keys, values := want.sorted(lo, hi)
		var exp []string
		for j := range keys {
			exp = append(exp, string(keys[j]), string(values[j]))
		}
		if !slices.Equal(got, exp) {
			return fmt.Errorf("Scan(%q, %q) shows %d keys, want %d", lo, hi, len(got)/2, len(keys))
		}
	}
	for _, k := range c.keys {
		st.reads++
		v, err := d.Get(k)
		if err != nil && !errors.Is(err, ErrNotFound) {
			if !isCorruption(err) {
				return fmt.Errorf("Get(%q): %v; want an error wrapping ErrCorruption naming %s", k, err, name)
			}
			failed = true
			continue
		}
		if !allowedRead(allowed, want, k, v, err == nil) {
			return fmt.Errorf("Get(%q) = %q, %v: a wrong value (want %q)", k, shortKey(string(v)), err, shortKey(c.model[string(k)]))
		}
	}
	// MultiGet of every key: an error wrapping ErrCorruption, or for each
	// key what one allowed state holds.
	st.reads++
	values, err := d.MultiGet(c.keys)
	switch {
	case err != nil && !isCorruption(err):
		return fmt.Errorf("MultiGet: %v; want an error wrapping ErrCorruption naming %s", err, name)
	case err != nil:
		failed = true
	default:
		for i, k := range c.keys {
			if !allowedRead(allowed, want, k, values[i], values[i] != nil) {
				return fmt.Errorf("MultiGet: %q = %q: a wrong value (want %q)", k, shortKey(string(values[i])), shortKey(c.model[string(k)]))
			}
		}
	}
	switch {
	case failed:
		st.readFailed++
	case want != nil && !mapsEqualPtr(want, c.model):
		st.tornTailDropped++
	default:
		st.undamaged++
	}
	return nil
}

// allowedRead reports whether a read of k that found value (found false:
// not found) is what one of the allowed states holds — want alone, once a
// scan has settled on it.
func allowedRead(allowed []kvModel, want kvModel, k, value []byte, found bool) bool {
	for _, m := range allowed {
		if want != nil && !mapsEqualPtr(m, want) {
			continue
		}
		wv, present := m[string(k)]
		if present == found && (!present || bytes.Equal(value, []byte(wv))) {
			return true
		}
	}
	return false
}

// mapsEqualPtr reports whether a and b are the same map.
func mapsEqualPtr(a, b kvModel) bool {
	return fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
}

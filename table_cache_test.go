package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// fdFS is an FS that keeps count of the files open through it: those
// opened for reading with Open per kind (vfs.DefaultClassify), as a table
// cache opens tables, and all, Create's too, with the most ever open at
// once; and the Open calls per file. It flags a file closed twice, closed while a
// ReadAt on it is in progress, or read after its Close: what a table cache
// must never do.
type fdFS struct {
	vfs.FS
	// readHook, if set, runs inside every ReadAt of a file it was set for
	// before the file was opened, between the read's start and its end.
	readHook func(name string)

	mu       sync.Mutex
	open     map[string]int // kind → files open now through Open
	maxOpen  map[string]int // kind → most open at once through Open
	total    int            // files open now, through Open or Create
	maxTotal int
	opens    map[string]int       // name → Open calls
	openNow  map[string]int       // name → handles of it open now
	problems []string             // misuse seen
	files    map[*fdFile]struct{} // open now
}

func newFDFS(fs vfs.FS) *fdFS {
	return &fdFS{FS: fs, open: map[string]int{}, maxOpen: map[string]int{}, opens: map[string]int{},
		openNow: map[string]int{}, files: map[*fdFile]struct{}{}}
}

type fdFile struct {
	vfs.File
	fs      *fdFS
	name    string
	reader  bool // opened with Open
	hook    func(string)
	reading atomic.Int32
	closed  atomic.Bool
}

func (fs *fdFS) track(name string, f vfs.File, reader bool) *fdFile {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	kind := vfs.DefaultClassify(name)
	if reader {
		fs.open[kind]++
		fs.maxOpen[kind] = max(fs.maxOpen[kind], fs.open[kind])
	}
	fs.total++
	fs.maxTotal = max(fs.maxTotal, fs.total)
	fs.openNow[name]++
	ff := &fdFile{File: f, fs: fs, name: name, reader: reader, hook: fs.readHook}
	fs.files[ff] = struct{}{}
	return ff
}

func (fs *fdFS) problemf(format string, args ...any) {
	fs.mu.Lock()
	fs.problems = append(fs.problems, fmt.Sprintf(format, args...))
	fs.mu.Unlock()
}

func (fs *fdFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return fs.track(name, f, false), nil
}

func (fs *fdFS) Open(name string) (vfs.File, error) {
	fs.mu.Lock()
	fs.opens[name]++
	fs.mu.Unlock()
	f, err := fs.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return fs.track(name, f, true), nil
}

func (f *fdFile) ReadAt(p []byte, off int64) (int, error) {
	f.reading.Add(1)
	defer f.reading.Add(-1)
	if f.closed.Load() {
		f.fs.problemf("ReadAt of %s after its Close", f.name)
	}
	if f.hook != nil {
		f.hook(f.name)
	}
	return f.File.ReadAt(p, off)
}

func (f *fdFile) Close() error {
	if f.closed.Swap(true) {
		f.fs.problemf("%s closed twice", f.name)
		return f.File.Close()
	}
	if f.reading.Load() > 0 {
		f.fs.problemf("%s closed during a ReadAt", f.name)
	}
	f.fs.mu.Lock()
	if f.reader {
		f.fs.open[vfs.DefaultClassify(f.name)]--
	}
	f.fs.total--
	f.fs.openNow[f.name]--
	delete(f.fs.files, f)
	f.fs.mu.Unlock()
	return f.File.Close()
}

// snapshot returns the names open now, with the handles of each, and the
// problems seen.
func (fs *fdFS) snapshot() (open map[string]int, problems []string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	open = map[string]int{}
	for name, n := range fs.openNow {
		if n != 0 {
			open[name] = n
		}
	}
	return open, slices.Clone(fs.problems)
}

func (fs *fdFS) openCount(kind string) (now, most int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.open[kind], fs.maxOpen[kind]
}

// resetMax makes the most open at once the number open now.
func (fs *fdFS) resetMax() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	maps.Copy(fs.maxOpen, fs.open)
	fs.maxTotal = fs.total
}

func (fs *fdFS) checkProblems(t *testing.T) {
	t.Helper()
	if _, problems := fs.snapshot(); len(problems) > 0 {
		t.Fatalf("file misuse:\n%v", problems)
	}
}

// cacheFixture is n table-named files of distinct contents on an fdFS over
// a MemFS, and a tableCache of capacity over it with a tableFile each.
type cacheFixture struct {
	fs       *fdFS
	cache    *tableCache
	names    []string
	contents [][]byte
	files    []*tableFile
}

func newCacheFixture(t *testing.T, n, capacity int) *cacheFixture {
	t.Helper()
	mem := vfs.NewMem()
	x := &cacheFixture{fs: newFDFS(mem)}
	for i := range n {
		name := fmt.Sprintf("/%06d.sst", i+1)
		content := bytes.Repeat([]byte{byte('a' + i%26)}, 64+i)
		f, err := mem.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(content); err != nil {
			t.Fatal(err)
		}
		f.Close()
		x.names, x.contents = append(x.names, name), append(x.contents, content)
	}
	x.cache = newTableCache(x.fs, capacity)
	for _, name := range x.names {
		x.files = append(x.files, x.cache.newFile(name))
	}
	return x
}

// read reads all of file i through its tableFile and checks the bytes.
func (x *cacheFixture) read(i int) error {
	want := x.contents[i]
	got := make([]byte, len(want))
	n, err := x.files[i].ReadAt(got, 0)
	if err != nil {
		return fmt.Errorf("ReadAt of %s: %w", x.names[i], err)
	}
	if n != len(want) || !bytes.Equal(got, want) {
		return fmt.Errorf("ReadAt of %s = %d bytes %.8q…, want %d bytes %.8q…", x.names[i], n, got, len(want), want)
	}
	return nil
}

// closeAll closes every tableFile for good, and checks that no file is left
// open.
func (x *cacheFixture) closeAll(t *testing.T) {
	t.Helper()
	for _, f := range x.files {
		if err := f.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	if open, _ := x.fs.snapshot(); len(open) > 0 {
		t.Errorf("after closing every table, files still open: %v", open)
	}
	if st := x.cache.stats(); st.open != 0 {
		t.Errorf("after closing every table, the cache counts %d handles", st.open)
	}
	x.fs.checkProblems(t)
}

// TestTableCacheLRU reads random files through a cache of capacity 3 and
// checks, after every read, the files open and the Open calls made against
// a model LRU: a list of at most three names, most recent first.
func TestTableCacheLRU(t *testing.T) {
	const n, capacity = 8, 3
	x := newCacheFixture(t, n, capacity)
	rng := rand.New(rand.NewPCG(7, 8))
	var model []int // most recently used first
	wantOpens := map[string]int{}
	var hits, misses, evictions uint64
	for step := range 600 {
		i := rng.IntN(n)
		// Sometimes a run of one file, so that the head of the list is hit.
		if step%10 == 0 && len(model) > 0 {
			i = model[0]
		}
		if err := x.read(i); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if at := slices.Index(model, i); at >= 0 {
			hits++
			model = slices.Delete(model, at, at+1)
		} else {
			misses++
			wantOpens[x.names[i]]++
			if len(model) == capacity {
				model = model[:capacity-1]
				evictions++
			}
		}
		model = slices.Insert(model, 0, i)

		open, _ := x.fs.snapshot()
		wantOpen := map[string]int{}
		for _, j := range model {
			wantOpen[x.names[j]] = 1
		}
		if !maps.Equal(open, wantOpen) {
			t.Fatalf("step %d (read %s): open files %v, want %v (LRU %v)", step, x.names[i], open, wantOpen, model)
		}
		x.fs.mu.Lock()
		gotOpens := maps.Clone(x.fs.opens)
		x.fs.mu.Unlock()
		if !maps.Equal(gotOpens, wantOpens) {
			t.Fatalf("step %d: Open calls %v, want %v", step, gotOpens, wantOpens)
		}
	}
	st := x.cache.stats()
	if st.open != capacity || st.hits != hits || st.misses != misses || st.evictions != evictions {
		t.Errorf("stats %+v, want open %d, hits %d, misses %d, evictions %d", st, capacity, hits, misses, evictions)
	}
	if _, most := x.fs.openCount(vfs.KindTable); most != capacity {
		t.Errorf("at most %d files open at once, want %d", most, capacity)
	}
	x.closeAll(t)
}

// TestTableCacheInUseNotClosed holds a read of file 0 inside its ReadAt
// while other reads evict file 0's handle, and closes the table for good
// meanwhile: the handle must stay open until the read returns, and be
// closed then, once.
func TestTableCacheInUseNotClosed(t *testing.T) {
	for _, closeForGood := range []bool{false, true} {
		t.Run(fmt.Sprintf("close=%v", closeForGood), func(t *testing.T) {
			x := newCacheFixture(t, 4, 1)
			inRead, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			x.fs.readHook = func(name string) {
				if name == x.names[0] {
					once.Do(func() { close(inRead); <-release })
				}
			}
			done := make(chan error)
			go func() { done <- x.read(0) }()
			<-inRead
			for i := 1; i < 4; i++ {
				if err := x.read(i); err != nil {
					t.Fatal(err)
				}
			}
			if closeForGood {
				if err := x.files[0].close(); err != nil {
					t.Fatalf("close during a read: %v", err)
				}
			}
			open, _ := x.fs.snapshot()
			if open[x.names[0]] != 1 {
				t.Fatalf("during its read, %s is open %d times, want 1 (open: %v)", x.names[0], open[x.names[0]], open)
			}
			if st := x.cache.stats(); st.open != 1 || st.evictions != 3 {
				t.Fatalf("stats %+v, want 1 handle cached and 3 evictions", st)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			open, _ = x.fs.snapshot()
			if open[x.names[0]] != 0 {
				t.Fatalf("after its read returned, the evicted %s is still open", x.names[0])
			}
			if closeForGood {
				if _, err := x.files[0].ReadAt(make([]byte, 1), 0); err == nil {
					t.Fatal("ReadAt of a closed table succeeded")
				}
			}
			x.closeAll(t)
		})
	}
}

// TestTableCacheConcurrent has goroutines read random files through a
// small cache, some reads slowed down inside ReadAt, and checks every read's
// bytes, that no handle is closed under a read or twice, and that open
// files never exceed the capacity plus the reads in flight.
func TestTableCacheConcurrent(t *testing.T) {
	const n, capacity, readers = 24, 4, 8
	reads := 400
	if testing.Short() {
		reads = 100
	}
	x := newCacheFixture(t, n, capacity)
	var slow atomic.Int64
	x.fs.readHook = func(string) {
		if slow.Add(1)%7 == 0 {
			for range 50 {
				// A few scheduling points inside the read: a window for a
				// wrong close.
				_ = x.cache.stats()
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for range reads {
				// A skewed choice, for hits as well as misses.
				i := min(rng.IntN(n), rng.IntN(n))
				if err := x.read(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	x.fs.checkProblems(t)
	now, most := x.fs.openCount(vfs.KindTable)
	st := x.cache.stats()
	if now != st.open || now > capacity {
		t.Errorf("at rest, %d files open, the cache counts %d, capacity %d", now, st.open, capacity)
	}
	// Each reader has one read in flight at most, and may be opening a
	// file as well.
	if most > capacity+readers {
		t.Errorf("%d files open at once, more than capacity %d + %d readers", most, capacity, readers)
	}
	if st.hits == 0 || st.evictions == 0 || st.hits+st.misses != uint64(readers*reads) {
		t.Errorf("stats %+v after %d reads: want hits, evictions, and hits+misses = reads", st, readers*reads)
	}
	x.closeAll(t)
}

// failingOpenFS returns a MemFS holding n table files, /000001.sst on,
// file i holding content(i); an fdFS over it counting their descriptors;
// an Injecting over that which fails every Open while the returned flag
// is set; and the flag.
func failingOpenFS(n int, content func(i int) string) (*vfs.MemFS, *fdFS, *vfs.Injecting, *atomic.Bool) {
	mem := vfs.NewMem()
	fds := newFDFS(mem)
	failOpens := new(atomic.Bool)
	inj := vfs.NewInjecting(fds, func(op vfs.Op) bool { return op.Kind == vfs.OpOpen && failOpens.Load() })
	for i := range n {
		f, _ := mem.Create(fmt.Sprintf("/%06d.sst", i+1))
		f.Write([]byte(content(i)))
		f.Close()
	}
	return mem, fds, inj, failOpens
}

// TestTableCacheReopenErrors checks what a reopen reports: a table file
// gone is corruption, naming it; another error is returned wrapped, and is
// not corruption. After a failed reopen the cache counts the handles open
// (the slot it had made room with is given back), and the next read
// retries.
func TestTableCacheReopenErrors(t *testing.T) {
	mem, fds, inj, failOpens := failingOpenFS(2, func(int) string { return "table" })
	c := newTableCache(inj, 1)
	a, b := c.newFile("/000001.sst"), c.newFile("/000002.sst")
	buf := make([]byte, 5)
	read := func(f *tableFile) error {
		clear(buf)
		_, err := f.ReadAt(buf, 0)
		if err == nil && string(buf) != "table" {
			err = fmt.Errorf("read %q, want %q", buf, "table")
		}
		return err
	}
	checkCount := func(when string) {
		t.Helper()
		now, _ := fds.openCount(vfs.KindTable)
		if st := c.stats(); st.open != now || now > 1 {
			t.Errorf("%s: the cache counts %d handles, %d are open, capacity 1", when, st.open, now)
		}
	}
	for _, f := range []*tableFile{a, b} { // b evicts a
		if err := read(f); err != nil {
			t.Fatal(err)
		}
	}

	failOpens.Store(true)
	err := read(a)
	if !errors.Is(err, vfs.ErrInjected) || errors.Is(err, ErrCorruption) {
		t.Errorf("reopen failing with an I/O error: %v, want it wrapped, and not corruption", err)
	}
	checkCount("after a failed reopen")
	failOpens.Store(false)
	if err := read(a); err != nil {
		t.Errorf("reopen after the error cleared: %v", err)
	}
	checkCount("after a reopen")

	if err := mem.Remove("/000002.sst"); err != nil { // a is cached, b not
		t.Fatal(err)
	}
	err = read(b)
	if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), "000002.sst") {
		t.Errorf("reopen of a table file gone: %v, want corruption naming it", err)
	}
	checkCount("after a reopen of a file gone")
	a.close()
	b.close()
	checkCount("after closing both")
	fds.checkProblems(t)
}

// TestTableCacheKeepOpen checks keepOpen, which DB.Close calls for the
// tables a reader still reads: a kept file leaves the LRU (the cache counts
// it no more, and no eviction closes it), reads through the handle it had
// or one opened then, even once the file is removed, and is closed by
// close alone. A file that cannot be kept open makes its reads fail with an
// error wrapping fs.ErrClosed, never ErrCorruption.
func TestTableCacheKeepOpen(t *testing.T) {
	mem, fds, inj, failOpens := failingOpenFS(4, func(i int) string { return fmt.Sprintf("table%d", i+1) })
	c := newTableCache(inj, 1)
	files := make([]*tableFile, 4)
	for i := range files {
		files[i] = c.newFile(fmt.Sprintf("/%06d.sst", i+1))
	}
	a, b, x, y := files[0], files[1], files[2], files[3]
	read := func(f *tableFile) error {
		buf := make([]byte, 6)
		_, err := f.ReadAt(buf, 0)
		if want := "table" + f.path[len(f.path)-5:len(f.path)-4]; err == nil && string(buf) != want {
			err = fmt.Errorf("%s: read %q, want %q", f.path, buf, want)
		}
		return err
	}
	for _, f := range []*tableFile{a, b} { // b evicts a
		if err := read(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.keepOpen(); err != nil { // opened anew
		t.Fatal(err)
	}
	if err := b.keepOpen(); err != nil { // the cached handle, taken off the LRU
		t.Fatal(err)
	}
	if err := b.keepOpen(); err != nil { // a second call changes nothing
		t.Fatal(err)
	}
	if st := c.stats(); st.open != 0 {
		t.Errorf("after keeping both: the cache counts %d handles, want 0", st.open)
	}
	for _, name := range []string{"/000001.sst", "/000002.sst"} {
		if err := mem.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	// x's read takes the cache's one slot, and y's evicts x: neither
	// touches the kept files.
	for _, f := range []*tableFile{x, y, a, b, a, b} {
		if err := read(f); err != nil {
			t.Errorf("read after the kept files were removed: %v", err)
		}
	}
	if now, _ := fds.openCount(vfs.KindTable); now != 3 {
		t.Errorf("%d table files open, want 3: the two kept and y's cached", now)
	}

	failOpens.Store(true)
	if err := x.keepOpen(); !errors.Is(err, iofs.ErrClosed) || errors.Is(err, ErrCorruption) {
		t.Errorf("keepOpen failing to open: %v, want an error wrapping fs.ErrClosed, and not corruption", err)
	}
	failOpens.Store(false)
	err := read(x) // kept without a handle: reads fail, without retrying
	if !errors.Is(err, iofs.ErrClosed) || !errors.Is(err, vfs.ErrInjected) || errors.Is(err, ErrCorruption) ||
		!strings.Contains(err.Error(), "000003.sst") {
		t.Errorf("read of a table that could not be kept open: %v, want fs.ErrClosed and the cause, naming the file, not corruption", err)
	}
	for _, f := range files {
		if err := f.close(); err != nil {
			t.Errorf("close %s: %v", f.path, err)
		}
	}
	if now, _ := fds.openCount(vfs.KindTable); now != 0 {
		t.Errorf("%d table files open after closing every table, want 0", now)
	}
	if err := read(a); !errors.Is(err, iofs.ErrClosed) || errors.Is(err, ErrCorruption) {
		t.Errorf("read of a kept table after its close: %v, want fs.ErrClosed, not corruption", err)
	}
	fds.checkProblems(t)
}

// TestTableCacheCapacityOption checks MaxOpenFiles's defaulting and
// validation, and the capacity it gives the cache.
func TestTableCacheCapacityOption(t *testing.T) {
	for _, tc := range []struct {
		maxOpenFiles int
		limit        uint64
		want         int
	}{
		{defaultMaxOpenFiles, 0, 990}, // an unset MaxOpenFiles: see withDefaults (options.go)
		{1000, 1 << 20, 990},
		{1000, 256, 118}, // half the limit, less the ten
		{20, 0, 10},
		{16, 0, 6},
		{16, 8, 6}, // never below the minimum's share
		{5000, 1 << 20, 4990},
	} {
		if got := tableCacheCapacity(tc.maxOpenFiles, tc.limit); got != tc.want {
			t.Errorf("tableCacheCapacity(%d, %d) = %d, want %d", tc.maxOpenFiles, tc.limit, got, tc.want)
		}
	}
	for _, bad := range []int{-1, 1, 15} {
		_, err := Open("db", &Options{FS: vfs.NewMem(), MaxOpenFiles: bad})
		var ae *ArgumentError
		if !errors.As(err, &ae) || ae.Arg != "opts.MaxOpenFiles" {
			t.Errorf("MaxOpenFiles %d: Open returned %v, want an *ArgumentError for opts.MaxOpenFiles", bad, err)
		}
	}
	o, err := (&Options{}).withDefaults()
	if err != nil || o.MaxOpenFiles != defaultMaxOpenFiles {
		t.Errorf("default MaxOpenFiles = %d, %v; want %d", o.MaxOpenFiles, err, defaultMaxOpenFiles)
	}
	d, err := Open("db", &Options{FS: vfs.NewMem(), MaxOpenFiles: minMaxOpenFiles})
	if err != nil {
		t.Fatalf("MaxOpenFiles %d: %v", minMaxOpenFiles, err)
	}
	d.Close()
}

// tableCount returns the number of tables of d's current version.
func tableCount(d *DB) int {
	n := 0
	for _, l := range d.Metrics().Levels {
		n += l.Tables
	}
	return n
}

// checkModel checks every key of keys with Get, and a full scan, against m.
func checkModel(d *DB, keys []string, m kvModel) error {
	for _, k := range keys {
		if err := checkGet(d, []byte(k), m); err != nil {
			return err
		}
	}
	got, err := readAll(d)
	if err != nil {
		return err
	}
	if diff := diffModels(got, m); diff != "" {
		return fmt.Errorf("scan: %s", diff)
	}
	return nil
}

// TestDBTableCacheManyTables writes a DB of far more tables than its
// MaxOpenFiles of 20 allows open, checks it against a model — every key
// with Get, a full scan — before and after a reopen, and checks through an
// FS that counts open files that the DB never held more than the cache's
// ten table files open at once (twenty files in all), that its cache did
// close and reopen tables, and that Close left no file open.
//
// Without compaction every table stays in L0 and reads are made one at a
// time, so the ten is strict; with compaction, which reads tables while
// the test does, the bound is MaxOpenFiles: the cache's ten, plus the reads
// in flight on evicted handles, plus the WAL, the manifest and the table
// being written.
func TestDBTableCacheManyTables(t *testing.T) {
	const maxOpenFiles = 20
	tableLimit := tableCacheCapacity(maxOpenFiles, 0)
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compaction=%v", compact), func(t *testing.T) {
			fs := newFDFS(vfs.NewMem())
			opts := &Options{FS: fs, MaxOpenFiles: maxOpenFiles, MemtableSize: 64 << 10, BlockSize: 512}
			if compact {
				opts.L0CompactionTrigger, opts.BaseLevelSize, opts.TargetFileSize = 2, 4<<10, 1<<10
			} else {
				opts.L0CompactionTrigger = noCompaction
			}
			d, err := Open("db", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if d != nil {
					d.Close()
				}
			}()
			rng := rand.New(rand.NewPCG(11, 12))
			keys := make([]string, 800)
			for i := range keys {
				keys[i] = fmt.Sprintf("key%05d", i)
			}
			m := kvModel{}
			const batches = 200
			for b := range batches {
				var ops []kvOp
				for j := range 4 + rng.IntN(4) {
					k := keys[rng.IntN(len(keys))]
					if rng.IntN(5) == 0 {
						ops = append(ops, kvOp{del: true, key: k})
					} else {
						ops = append(ops, kvOp{key: k, value: string(fillValue(rng, fmt.Appendf(nil, "%s@%d.%d|", k, b, j), rng.IntN(300)))})
					}
				}
				if err := applyOps(d, ops, NoSync); err != nil {
					t.Fatal(err)
				}
				m.apply(ops)
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
				if b%50 == 49 { // reads while the tree grows, too
					if err := checkModel(d, keys, m); err != nil {
						t.Fatalf("after batch %d: %v", b, err)
					}
				}
			}
			if compact {
				d.waitForCompactions(t)
			}
			n := tableCount(d)
			if n < 5*tableLimit {
				t.Fatalf("%d tables, want far more than the cache's %d", n, tableLimit)
			}
			if err := checkModel(d, keys, m); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				_, most := fs.openCount(vfs.KindTable)
				fs.mu.Lock()
				mostTotal := fs.maxTotal
				fs.mu.Unlock()
				if !compact && most > tableLimit {
					t.Errorf("%s: %d table files open at once, want at most %d", when, most, tableLimit)
				}
				if mostTotal > maxOpenFiles {
					t.Errorf("%s: %d files open at once, want at most MaxOpenFiles = %d", when, mostTotal, maxOpenFiles)
				}
				fs.checkProblems(t)
			}
			check("writing and reading")
			st := d.tableCache.stats()
			if st.evictions == 0 || st.hits == 0 {
				t.Fatalf("table cache stats %+v: want evictions and hits", st)
			}
			t.Logf("%d tables, %d table files open at most, stats %+v", n, func() int { _, m := fs.openCount(vfs.KindTable); return m }(), st)

			err = d.Close()
			d = nil
			if err != nil {
				t.Fatal(err)
			}
			if open, _ := fs.snapshot(); len(open) > 0 {
				t.Fatalf("after Close, files still open: %v", open)
			}
			fs.resetMax()
			if d, err = Open("db", opts); err != nil {
				t.Fatal(err)
			}
			if got := tableCount(d); got != n {
				t.Fatalf("after reopen, %d tables, want %d", got, n)
			}
			if err := checkModel(d, keys, m); err != nil {
				t.Fatalf("after reopen: %v", err)
			}
			check("after reopen")
		})
	}
}

package bloomkv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
	"github.com/klauspost/compress/s2"
)

// blobTestOptions separate values of 64 bytes and more in a small tree.
func blobTestOptions(fs vfs.FS) *Options {
	o := smallTreeOptions(fs)
	o.ValueSeparation = ValueSeparation{MinSize: 64}
	return o
}

// blobFilesOnDisk returns the numbers of the blob files in dir.
func blobFilesOnDisk(t *testing.T, fs vfs.FS, dir string) []uint64 {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var nums []uint64
	for _, name := range names {
		if ft, num, ok := manifest.ParseFilename(name); ok && ft == manifest.FileTypeBlob {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	return nums
}

// versionBlobs returns the numbers of the current version's blob files.
func (d *DB) versionBlobs() []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var nums []uint64
	for _, b := range d.mu.current.Blobs {
		nums = append(nums, b.FileNum)
	}
	return nums
}

// TestValueSeparationModel writes, overwrites, deletes and range-deletes
// keys with values on both sides of MinSize, and checks Get, MultiGet and
// iterators against a map after flushes, compactions, a snapshot and a
// reopen.
func TestValueSeparationModel(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", blobTestOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(37, 1))
	ks := newKeySpace(rng, 600)
	m := kvModel{}
	var snap *Snapshot
	var snapModel kvModel
	for i := range 6000 {
		var ops []kvOp
		switch r := rng.IntN(100); {
		case r < 5:
			lo, hi := ks.pick(rng), ks.pick(rng)
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			if bytes.Equal(lo, hi) {
				continue
			}
			ops = []kvOp{{rangeDel: true, key: string(lo), end: string(hi)}}
		case r < 15:
			ops = []kvOp{{del: true, key: string(ks.pick(rng))}}
		default:
			ops = []kvOp{{key: string(ks.pick(rng)), value: string(randValue(rng, fmt.Sprint(i)))}}
		}
		m.apply(ops)
		if err := applyOps(d, ops, NoSync); err != nil {
			t.Fatal(err)
		}
		if i == 3000 {
			if snap, err = d.NewSnapshot(); err != nil {
				t.Fatal(err)
			}
			snapModel = m.clone()
		}
	}
	d.waitForCompactions(t)
	if got := d.Metrics().Blobs; got.Files == 0 || got.LiveBytes == 0 {
		t.Fatalf("no blob files: %+v", got)
	}
	for _, r := range []struct {
		name string
		r    dbReader
		m    kvModel
	}{{"DB", d, m}, {"snapshot", snap, snapModel}} {
		if _, err := checkState(r.r, ks, r.m); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if err := checkIter(rng, r.r, r.m, ks, 300); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened with separation off: the blob files stay readable.
	o := blobTestOptions(fs)
	o.ValueSeparation.MinSize = ValueSeparationOff
	if d, err = Open("/db", o); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := checkState(d, ks, m); err != nil {
		t.Fatalf("reopened: %v", err)
	}
}

// snappyBlobRecordLen is the oracle of the length of value's record in a
// blob file of a DB of snappy compression (the default): after a 4-byte
// checksum, the stored length's uvarint and a compression byte, its snappy
// encoding if that saves at least len/8 of it, else the value (package
// blob's doc).
func snappyBlobRecordLen(value []byte) uint64 {
	n := len(s2.EncodeSnappy(nil, value))
	if n > len(value)-len(value)/8 {
		n = len(value)
	}
	return uint64(4 + len(binary.AppendUvarint(nil, uint64(n))) + 1 + n)
}

// TestBlobReads checks what reads cost: a present key's Get reads its
// value's record once, and Explain shows it as a step of its own; an
// absent key's and a keys-only scan read no blob.
func TestBlobReads(t *testing.T) {
	d, err := Open("/db", blobTestOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	value := bytes.Repeat([]byte("v"), 1000)
	for i := range 200 {
		if err := d.Put(fmt.Appendf(nil, "key%04d", i), value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Put([]byte("small"), []byte("x"), NoSync); err != nil {
		t.Fatal(err)
	}
	d.waitForCompactions(t)
	record := snappyBlobRecordLen(value)

	before := d.Metrics().Blobs
	got, err := d.Get([]byte("key0100"))
	if err != nil || !bytes.Equal(got, value) {
		t.Fatalf("Get = %d bytes, %v", len(got), err)
	}
	if _, err := d.Get([]byte("small")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get([]byte("key9999")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an absent key: %v", err)
	}
	after := d.Metrics().Blobs
	if after.Reads-before.Reads != 1 || after.BytesRead-before.BytesRead != record {
		t.Fatalf("three Gets, one of a separated value, read %d blobs of %d bytes; want 1 of %d",
			after.Reads-before.Reads, after.BytesRead-before.BytesRead, record)
	}

	tr, err := d.Explain([]byte("key0100"))
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Steps[len(tr.Steps)-1]
	if last.Kind != BlobStep || last.BytesRead != int64(record) || !bytes.Equal(tr.Value, value) || !strings.HasSuffix(last.Place(), ".blob") {
		t.Fatalf("Explain's last step %+v, want the blob read of %d bytes\n%s", last, record, tr)
	}
	if n := tr.Totals(); n.BlobReads != 1 || n.BlobBytesRead != int64(record) {
		t.Fatalf("Totals %+v", n)
	}

	before = d.Metrics().Blobs
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := 0
	for ok := it.First(); ok; ok = it.Next() {
		keys++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if after := d.Metrics().Blobs; keys != 201 || after.Reads != before.Reads {
		t.Fatalf("a keys-only scan of %d keys read %d blobs", keys, after.Reads-before.Reads)
	}

	values, err := d.MultiGet([][]byte{[]byte("key0001"), []byte("nope"), []byte("small"), []byte("key0199")})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(values[0], value) || values[1] != nil || string(values[2]) != "x" || !bytes.Equal(values[3], value) {
		t.Fatalf("MultiGet = %q", values)
	}
}

// TestBlobFullScanReadsAhead scans, reading every value, a DB filled at
// random into 150 blob files, more than an Iterator's read-aheads would
// cover at one a file of a fixed few: every value is the one written, and
// the scan reads each file ahead in passes. A read ahead reads at least 4
// KiB, four whole records of these values, so a file of v values, which
// the scan asks for in file order, takes at most ⌈v/4⌉ reads, and its
// footer one: the scan makes at most values/4 + 2·files reads, where one
// read per value (3,000) is what read-aheads lost to other files cost.
func TestBlobFullScanReadsAhead(t *testing.T) {
	fs := vfs.NewCounting(vfs.NewMem(), func(name string) string {
		if strings.HasSuffix(name, ".blob") {
			return "blob"
		}
		return vfs.DefaultClassify(name)
	})
	d, err := Open("/db", &Options{FS: fs, MemtableSize: 1 << 20, ValueSeparation: ValueSeparation{MinSize: 64}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const files, perFile = 150, 20
	value := func(i int) []byte { return append(fmt.Appendf(nil, "%06d", i), bytes.Repeat([]byte{byte(i)}, 994)...) }
	rng := rand.New(rand.NewPCG(37, 4))
	for j, i := range rng.Perm(files * perFile) {
		if err := d.Put(fmt.Appendf(nil, "key%06d", i), value(i), NoSync); err != nil {
			t.Fatal(err)
		}
		if j%perFile == perFile-1 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.waitForCompactions(t)
	if blobs, err := d.BlobFiles(); err != nil || len(blobs) != files {
		t.Fatalf("%d blob files (%v), want %d", len(blobs), err, files)
	}
	before := fs.Kind("blob").ReadAts
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if want := fmt.Sprintf("key%06d", n); string(it.Key()) != want || !bytes.Equal(it.Value(), value(n)) {
			t.Fatalf("entry %d: %q = %d bytes, want %s's value", n, it.Key(), len(it.Value()), want)
		}
		n++
	}
	if err := it.Close(); err != nil || n != files*perFile {
		t.Fatalf("scanned %d entries (%v), want %d", n, err, files*perFile)
	}
	reads := fs.Kind("blob").ReadAts - before
	if limit := int64(n/4 + 2*files); reads > limit {
		t.Fatalf("a scan of %d values in %d blob files read them %d times, want at most %d", n, files, reads, limit)
	}
	t.Logf("a scan of %d values in %d blob files: %d reads", n, files, reads)
}

// TestBlobReclaim overwrites every key twice and deletes some, without
// asking the DB for anything: once the compactions are done, no blob file
// referenced from below L0 has a dead share at DeadShare, the files on
// disk are the version's, and they hold at most 1/(1−DeadShare) of the
// live values plus what L0 references.
func TestBlobReclaim(t *testing.T) {
	fs := vfs.NewMem()
	o := blobTestOptions(fs)
	// A flush and compactions report files at once: counted atomically.
	var createdN, deletedN atomic.Int64
	o.EventListener = &EventListener{
		BlobFileCreated: func(TableCreateInfo) { createdN.Add(1) },
		BlobFileDeleted: func(info TableDeleteInfo) {
			if info.Err == nil {
				deletedN.Add(1)
			}
		},
	}
	d, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(37, 2))
	const keys = 2000
	for pass := range 3 {
		for _, i := range rng.Perm(keys) {
			k := fmt.Appendf(nil, "key%05d", i)
			if pass == 2 && i%4 == 0 {
				if err := d.Delete(k, NoSync); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := d.Put(k, fillValue(rng, nil, 500), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.waitForCompactions(t)

	d.mu.Lock()
	v := d.mu.current.Version
	inL0 := map[uint64]bool{}
	for _, f := range v.Levels[0] {
		for _, r := range f.BlobRefs {
			inL0[r.FileNum] = true
		}
	}
	var l0Bytes, size, live uint64
	for _, b := range v.Blobs {
		size += b.Size
		live += b.LiveBytes
		if inL0[b.FileNum] {
			l0Bytes += b.Size
			continue
		}
		if b.DeadShare() >= d.opts.ValueSeparation.DeadShare {
			d.mu.Unlock()
			t.Fatalf("blob file %06d, referenced below L0 only, is %.0f%% dead", b.FileNum, 100*b.DeadShare())
		}
	}
	d.mu.Unlock()
	// 1/(1−0.2) of the live values (DeadShare's default), and the record
	// overhead: 5 bytes of 500.
	if bound := float64(live)*1.25*1.01 + float64(l0Bytes); float64(size) > bound {
		t.Fatalf("blob files of %d bytes hold %d live bytes: above %.0f", size, live, bound)
	}
	if got, want := blobFilesOnDisk(t, fs, "/db"), d.versionBlobs(); !slices.Equal(got, want) {
		t.Fatalf("blob files on disk %v, in the version %v", got, want)
	}
	created, deleted := int(createdN.Load()), int(deletedN.Load())
	if deleted == 0 || created-deleted != len(v.Blobs) {
		t.Fatalf("%d blob files created, %d deleted, %d in the version", created, deleted, len(v.Blobs))
	}
	t.Logf("%d blob files created, %d deleted; %d left of %d bytes, %d live (%d in files L0 references)", created, deleted, len(v.Blobs), size, live, l0Bytes)
}

// TestBlobFileKeptForReaders holds an iterator and a checkpoint's source
// version over blob files that compactions make obsolete: the files stay
// until the iterator closes, and the checkpoint opens with every value.
func TestBlobFileKeptForReaders(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", blobTestOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	value := func(i, pass int) []byte {
		return fmt.Appendf(nil, "%04d-%d-%s", i, pass, bytes.Repeat([]byte("z"), 200))
	}
	for i := range 300 {
		if err := d.Put(fmt.Appendf(nil, "k%04d", i), value(i, 0), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	first := d.versionBlobs()
	it, err := d.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for pass := 1; pass <= 3; pass++ {
		for i := range 300 {
			if err := d.Put(fmt.Appendf(nil, "k%04d", i), value(i, pass), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	d.waitForCompactions(t)
	if slices.Contains(d.versionBlobs(), first[0]) {
		t.Fatalf("blob file %06d still in the version after its values were overwritten and compacted", first[0])
	}
	if !slices.Contains(blobFilesOnDisk(t, fs, "/db"), first[0]) {
		t.Fatalf("blob file %06d deleted under an open iterator", first[0])
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Value(), value(n, 0)) {
			t.Fatalf("iterator's key %q = %q", it.Key(), it.Value())
		}
		n++
	}
	if err := it.Close(); err != nil || n != 300 {
		t.Fatalf("iterator: %d keys, %v", n, err)
	}
	d.deleter.wait() // the iterator's release queued the file
	if slices.Contains(blobFilesOnDisk(t, fs, "/db"), first[0]) {
		t.Fatalf("blob file %06d left on disk after the iterator closed", first[0])
	}

	if err := d.Checkpoint("/cp", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := blobFilesOnDisk(t, fs, "/cp"), d.versionBlobs(); !slices.Equal(got, want) {
		t.Fatalf("checkpoint's blob files %v, the DB's %v", got, want)
	}
	cp, err := Open("/cp", &Options{FS: fs, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for i := range 300 {
		if got, err := cp.Get(fmt.Appendf(nil, "k%04d", i)); err != nil || !bytes.Equal(got, value(i, 3)) {
			t.Fatalf("checkpoint: Get(k%04d) = %q, %v", i, got, err)
		}
	}
}

// TestBlobFileMissing removes a blob file the version lists: Open fails
// naming it, and deletes nothing.
func TestBlobFileMissing(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("/db", blobTestOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put([]byte("k"), bytes.Repeat([]byte("v"), 100), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	nums := d.versionBlobs()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	name := manifest.MakeFilename(manifest.FileTypeBlob, nums[0])
	if err := fs.Remove("/db/" + name); err != nil {
		t.Fatal(err)
	}
	before, _ := fs.List("/db")
	if _, err := Open("/db", blobTestOptions(fs)); err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("Open without %s: %v", name, err)
	}
	if after, _ := fs.List("/db"); len(after) != len(before) {
		t.Fatalf("Open changed the directory: %v → %v", before, after)
	}
}

// TestBlobFileHandlesBounded reads values of ten blob files and ten
// tables from four goroutines at once with room for six open files (the
// table cache's, which blob files share, at MaxOpenFiles 16): every value
// is right, handles were closed to make room, and no more than six stay
// open.
func TestBlobFileHandlesBounded(t *testing.T) {
	d, err := Open("/db", &Options{FS: vfs.NewMem(), ValueSeparation: ValueSeparation{MinSize: 64}, L0CompactionTrigger: noCompaction,
		L0SlowdownTrigger: noCompaction + 1, L0StopTrigger: noCompaction + 2, MaxOpenFiles: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	value := func(i int) []byte { return fmt.Appendf(nil, "%03d%s", i, bytes.Repeat([]byte("x"), 100)) }
	for i := range 10 {
		if err := d.Put(fmt.Appendf(nil, "k%03d", i), value(i), NoSync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(d.versionBlobs()); n != 10 {
		t.Fatalf("%d blob files, want 10", n)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for j := range 200 {
				i := (g*7 + j*3) % 10
				if v, err := d.Get(fmt.Appendf(nil, "k%03d", i)); err != nil || !bytes.Equal(v, value(i)) {
					errs <- fmt.Errorf("Get(k%03d) = %q, %v", i, v, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	capacity := tableCacheCapacity(16, 0)
	if st := d.tableCache.stats(); st.open > capacity || st.evictions == 0 {
		t.Fatalf("%d files open, %d evicted; want at most %d open, some evicted", st.open, st.evictions, capacity)
	}
}

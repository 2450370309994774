package bloomkv

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/vfs"
)

// The table cache: a DB's open tables keep their filters and indexes in
// memory for their lives (sstable.Open reads them once), but not their
// file handles. Blob files (blob_files.go) read through it too, each a
// tableFile of its own. A table reads its data blocks through a tableFile, an
// io.ReaderAt that borrows the table's handle from the DB's tableCache, an
// LRU of at most a few hundred or thousand open files, and reopens the file
// when the cache had closed it. Without it, a DB held one descriptor per
// table for its life, and a DB of more tables than the process's
// RLIMIT_NOFILE could not be opened at all.

const (
	// defaultMaxOpenFiles is Options.MaxOpenFiles's default, LevelDB's
	// and Pebble's.
	defaultMaxOpenFiles = 1000
	// minMaxOpenFiles is the smallest Options.MaxOpenFiles: it leaves the
	// table cache minMaxOpenFiles − numNonTableCacheFiles handles.
	minMaxOpenFiles = 16
	// numNonTableCacheFiles is how many of MaxOpenFiles the table cache
	// leaves to the DB's other files — the WAL, the manifest, the LOCK
	// file, the table a flush or compaction writes, a WAL being replayed,
	// directories being synced — as LevelDB and Pebble leave ten.
	numNonTableCacheFiles = 10
)

// tableCacheCapacity returns how many table files a DB keeps open:
// maxOpenFiles (as Options.withDefaults resolved it), at most half of
// fileLimit, the process's RLIMIT_NOFILE (0 if unknown), less
// numNonTableCacheFiles. The cap leaves the other half of the descriptors
// to the application and to the DB's other files, so that a DB of
// thousands of tables opens with the default options under a limit of a
// few hundred.
func tableCacheCapacity(maxOpenFiles int, fileLimit uint64) int {
	n := maxOpenFiles
	if fileLimit > 0 && fileLimit/2 < uint64(n) {
		n = int(fileLimit / 2)
	}
	return max(n-numNonTableCacheFiles, minMaxOpenFiles-numNonTableCacheFiles)
}

// tableCache is the LRU of a DB's open table files, keyed by table (each
// tableFile is one file number). A read of a table whose handle is cached
// touches the LRU under the mutex and takes a reference on the handle; a
// read of a table whose handle is not reopens the file, evicting the least
// recently used handle if the cache is full. Files are opened and closed
// outside the mutex.
//
// INVARIANT: c.mu.n is the number of tableFiles on c.mu.lru — exactly those
// whose handle is not nil — plus the misses reserved a slot for, between
// their reservation and their file's open. A miss reserves its slot, and
// evicts, before it opens a file, so that handles cached or being opened
// number at most capacity, unless more than capacity misses are in flight
// at once (a miss never waits for a slot).
//
// INVARIANT: a handle's refs are one for the cache (for its tableFile, once
// kept: see keepOpen) while a tableFile holds it, plus one for each read
// using it. refs is raised only under c.mu and
// only while a tableFile holds the handle, so never from zero; whoever
// drops it to zero closes the file. So a handle is closed exactly once, never
// under a read in progress, and a handle evicted while in use stays open
// until its last read returns: open table files number at most capacity
// plus the reads in flight on evicted handles.
type tableCache struct {
	fs       vfs.FS
	capacity int
	mu       struct {
		sync.Mutex
		// lru is the sentinel of a circular list of the tableFiles that hold
		// a handle: lru.next is the most recently used, lru.prev the least.
		lru tableFile
		n   int
		// hits and misses count the reads that found the handle cached and
		// those that opened the file (a table's first open included);
		// evictions the handles the cache closed to make room.
		hits, misses, evictions uint64
	}
}

// newTableCache returns an empty cache of capacity handles (at least one)
// of files of fs.
func newTableCache(fs vfs.FS, capacity int) *tableCache {
	c := &tableCache{fs: fs, capacity: max(capacity, 1)}
	c.mu.lru.prev, c.mu.lru.next = &c.mu.lru, &c.mu.lru
	return c
}

// newFile returns the reader of the table file at path, without opening it:
// its first read opens it.
func (c *tableCache) newFile(path string) *tableFile {
	return &tableFile{cache: c, path: path}
}

// newMappedFile is newFile for a file read through a mapping of it while
// its handle is open, where the file system can map it (vfs.Mapper);
// otherwise it is read as newFile's are.
func (c *tableCache) newMappedFile(path string) *tableFile {
	return &tableFile{cache: c, path: path, mapped: true}
}

// tableCacheStats are a tableCache's counters and its number of handles.
type tableCacheStats struct {
	open                    int // handles cached or being opened
	hits, misses, evictions uint64
}

func (c *tableCache) stats() tableCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tableCacheStats{open: c.mu.n, hits: c.mu.hits, misses: c.mu.misses, evictions: c.mu.evictions}
}

// unlinkLocked takes f, which holds a handle, off the LRU list.
func (c *tableCache) unlinkLocked(f *tableFile) {
	f.prev.next, f.next.prev = f.next, f.prev
	f.prev, f.next = nil, nil
}

// pushFrontLocked puts f first on the LRU list.
func (c *tableCache) pushFrontLocked(f *tableFile) {
	root := &c.mu.lru
	f.prev, f.next = root, root.next
	root.next.prev = f
	root.next = f
}

// evictLocked drops the least recently used handle while the cache is over
// capacity and has one to drop. It returns the one handle dropped, if its
// last reference went with it, for the caller to close once c.mu is
// released; an insertion is over capacity by one at most, so one is all it
// drops unless misses in flight exceeded capacity.
func (c *tableCache) evictLocked() (toClose *tableHandle) {
	for c.mu.n > c.capacity && c.mu.lru.prev != &c.mu.lru {
		victim := c.mu.lru.prev
		c.unlinkLocked(victim)
		h := victim.handle
		victim.handle = nil
		c.mu.n--
		c.mu.evictions++
		if h.refs.Add(-1) == 0 {
			if toClose != nil {
				toClose.close()
			}
			toClose = h
		}
	}
	return toClose
}

// tableHandle is one open file of a table, and its mapping if it is read
// through one.
type tableHandle struct {
	file vfs.File
	// mapping, if not nil, is the file mapped (tableFile.mapped): reads
	// copy from it rather than call file.ReadAt. It is unmapped when the
	// last reference goes, so never under a read.
	mapping *vfs.Mapping
	refs    atomic.Int32 // see tableCache's INVARIANT
}

// readAt reads from the handle's mapping, or its file.
func (h *tableHandle) readAt(p []byte, off int64) (int, error) {
	if h.mapping != nil {
		return h.mapping.ReadAt(p, off)
	}
	return h.file.ReadAt(p, off)
}

// unref drops a reference and closes the file with the last one. A read
// handle's close error says nothing about data, so only table.close, which
// reported it before the cache existed, returns it.
func (h *tableHandle) unref() error {
	if h.refs.Add(-1) == 0 {
		return h.close()
	}
	return nil
}

// close unmaps the file, if mapped, and closes it.
func (h *tableHandle) close() error {
	var unmapErr error
	if h.mapping != nil {
		unmapErr = h.mapping.Close()
	}
	return errors.Join(unmapErr, h.file.Close())
}

// tableFile is the io.ReaderAt an sstable.Reader reads one table through:
// each ReadAt borrows the table's handle from the cache, opening the file
// if the cache holds no handle of it.
//
// INVARIANT: handle, prev, next, closed, kept and keptErr are guarded by
// cache.mu; handle is not nil exactly while f is on the cache's LRU list or
// kept is set and keeping the file open did not fail.
type tableFile struct {
	cache *tableCache
	path  string
	// mapped is set for a file read through a mapping of it (newMappedFile).
	mapped bool

	handle     *tableHandle
	prev, next *tableFile
	// closed is set by close: the table is gone for good, and f caches no
	// handle again.
	closed bool
	// kept is set by keepOpen, when the table's DB closes while a reader
	// still reads the table: f holds its handle itself, off the LRU, until
	// close, so no eviction can close the file under the reader. keptErr is
	// why the file could not be kept open, if it could not.
	kept    bool
	keptErr error
}

// ReadAt implements io.ReaderAt: it reads from the table's cached handle,
// held by a reference for the read's length, or from the file reopened.
func (f *tableFile) ReadAt(p []byte, off int64) (int, error) {
	h, err := f.acquire()
	if err != nil {
		return 0, err
	}
	n, err := h.readAt(p, off)
	h.unref()
	return n, err
}

// Prefetch asks the system to start reading [off, off+n) of the table
// (vfs.Prefetcher), through its cached handle or the file reopened.
func (f *tableFile) Prefetch(off, n int64) error {
	h, err := f.acquire()
	if err != nil {
		return err
	}
	err = vfs.Prefetch(h.file, off, n)
	h.unref()
	return err
}

// acquire returns the table's handle with a reference for the caller, to
// drop with unref: the cached one, touched in the LRU, or the file opened
// anew, cached unless the table was closed meanwhile. A file missing is
// damage: the manifest lists it, and a listed table is deleted only once
// closed for good.
func (f *tableFile) acquire() (*tableHandle, error) {
	c := f.cache
	c.mu.Lock()
	if h := f.handle; h != nil {
		h.refs.Add(1)
		if !f.kept && c.mu.lru.next != f {
			c.unlinkLocked(f)
			c.pushFrontLocked(f)
		}
		c.mu.hits++
		c.mu.Unlock()
		return h, nil
	}
	if f.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("bloomkv: read of %s after it was closed: %w", f.path, iofs.ErrClosed)
	}
	if f.kept {
		err := f.keptErr
		c.mu.Unlock()
		return nil, err
	}
	c.mu.misses++
	c.mu.n++ // the slot of the file about to be opened
	victim := c.evictLocked()
	c.mu.Unlock()
	if victim != nil {
		victim.close()
	}

	h, err := f.open()
	if err != nil {
		c.mu.Lock()
		c.mu.n--
		c.mu.Unlock()
		return nil, f.openError(err)
	}
	h.refs.Store(1) // the caller's

	c.mu.Lock()
	if f.handle != nil || f.closed || f.kept {
		// A concurrent miss cached its handle first, or the table was
		// closed, or kept open without a handle (keepOpen failed): this one
		// serves this read only and gives its slot back.
		c.mu.n--
		theirs := f.handle
		if theirs != nil {
			theirs.refs.Add(1)
		}
		c.mu.Unlock()
		if theirs != nil {
			h.close()
			return theirs, nil
		}
		return h, nil
	}
	h.refs.Add(1) // the cache's
	f.handle = h
	c.pushFrontLocked(f)
	c.mu.Unlock()
	return h, nil
}

// open opens the table's file for reading, and maps it if f is read
// through a mapping and its file system can map it; a file that cannot be
// mapped is read with ReadAt. Lookups read single blocks: no read-ahead.
// The readers that go through a table in order read large chunks
// themselves.
func (f *tableFile) open() (*tableHandle, error) {
	file, err := f.cache.fs.Open(f.path)
	if err != nil {
		return nil, err
	}
	_ = vfs.AdviseRandom(file)
	h := &tableHandle{file: file}
	if f.mapped {
		if m, err := vfs.Map(file); err == nil {
			h.mapping = m
		}
	}
	return h, nil
}

// openError is the error of a failed open of the table's file. While a DB
// is open, a table it lists is deleted only once closed for good, and
// keepOpen holds a closed DB's tables open, so a listed table missing is
// damage, not an I/O error to retry.
func (f *tableFile) openError(err error) error {
	if errors.Is(err, iofs.ErrNotExist) {
		return base.Corruptf(f.path, 0, "the manifest lists the file, but it does not exist")
	}
	return fmt.Errorf("bloomkv: open %s: %w", f.path, err)
}

// keepOpen takes the table's file out of the cache's keeping into f's own,
// until close: the handle cached, or the file opened now. DB.Close calls it
// for each table a reader still reads, so that what the reader reads stays
// readable whatever the cache's size — the cache closes no kept file, and
// an Open after Close may delete the table's file, which an open handle
// still reads. If the file cannot be opened (too many open files, say),
// the table's reads report why, wrapping fs.ErrClosed, and keepOpen
// returns that error.
func (f *tableFile) keepOpen() error {
	c := f.cache
	c.mu.Lock()
	if f.closed || f.kept {
		c.mu.Unlock()
		return nil
	}
	if f.handle != nil {
		c.unlinkLocked(f)
		c.mu.n--
		f.kept = true
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()

	h, err := f.open()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case f.closed || f.kept:
		// Closed, or kept by a concurrent call, meanwhile.
	case f.handle != nil:
		// A concurrent miss cached a handle meanwhile: keep that one.
		c.unlinkLocked(f)
		c.mu.n--
		f.kept = true
	case err != nil:
		f.kept = true
		if errors.Is(err, iofs.ErrNotExist) {
			f.keptErr = f.openError(err) // missing while its DB was open
		} else {
			f.keptErr = fmt.Errorf("bloomkv: read of %s after its DB was closed, which could not keep the file open: %w (%w)",
				f.path, iofs.ErrClosed, err)
		}
		return f.keptErr
	default:
		h.refs.Store(1) // f's
		f.handle = h
		f.kept = true
		return nil
	}
	if h != nil {
		h.close()
	}
	return nil
}

// close closes the table's file for good: its cached or kept handle is
// dropped and closed, now or, if a read is using it, when that read
// returns. It returns the error of a close made now.
func (f *tableFile) close() error {
	c := f.cache
	c.mu.Lock()
	f.closed = true
	h := f.handle
	if h != nil {
		if !f.kept {
			c.unlinkLocked(f)
			c.mu.n--
		}
		f.handle = nil
	}
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.unref()
}

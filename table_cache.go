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
// file handles. A table reads its data blocks through a tableFile, an
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
// INVARIANT: a handle's refs are one for the cache while a tableFile holds
// it, plus one for each read using it. refs is raised only under c.mu and
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
				toClose.file.Close()
			}
			toClose = h
		}
	}
	return toClose
}

// tableHandle is one open file of a table.
type tableHandle struct {
	file vfs.File
	refs atomic.Int32 // see tableCache's INVARIANT
}

// unref drops a reference and closes the file with the last one. A read
// handle's close error says nothing about data, so only table.close, which
// reported it before the cache existed, returns it.
func (h *tableHandle) unref() error {
	if h.refs.Add(-1) == 0 {
		return h.file.Close()
	}
	return nil
}

// tableFile is the io.ReaderAt an sstable.Reader reads one table through:
// each ReadAt borrows the table's handle from the cache, opening the file
// if the cache holds no handle of it.
//
// INVARIANT: handle, prev, next and closed are guarded by cache.mu; handle
// is not nil exactly while f is on the cache's LRU list.
type tableFile struct {
	cache *tableCache
	path  string

	handle     *tableHandle
	prev, next *tableFile
	// closed is set by close: the table is gone for good, and f caches no
	// handle again.
	closed bool
}

// ReadAt implements io.ReaderAt: it reads from the table's cached handle,
// held by a reference for the read's length, or from the file reopened.
func (f *tableFile) ReadAt(p []byte, off int64) (int, error) {
	h, err := f.acquire()
	if err != nil {
		return 0, err
	}
	n, err := h.file.ReadAt(p, off)
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
		if c.mu.lru.next != f {
			c.unlinkLocked(f)
			c.pushFrontLocked(f)
		}
		c.mu.hits++
		c.mu.Unlock()
		return h, nil
	}
	if f.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("bloomkv: read of table %s after it was closed: %w", f.path, iofs.ErrClosed)
	}
	c.mu.misses++
	c.mu.n++ // the slot of the file about to be opened
	victim := c.evictLocked()
	c.mu.Unlock()
	if victim != nil {
		victim.file.Close()
	}

	file, err := c.fs.Open(f.path)
	if err != nil {
		c.mu.Lock()
		c.mu.n--
		c.mu.Unlock()
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, base.Corruptf(f.path, 0, "the manifest lists the table, but it does not exist")
		}
		return nil, fmt.Errorf("bloomkv: open table: %w", err)
	}
	// Lookups read single blocks: no read-ahead. The readers that go
	// through a table in order read large chunks themselves.
	_ = vfs.AdviseRandom(file)
	h := &tableHandle{file: file}
	h.refs.Store(1) // the caller's

	c.mu.Lock()
	if f.handle != nil || f.closed {
		// A concurrent miss cached its handle first, or the table was
		// closed: this one serves this read only and gives its slot back.
		c.mu.n--
		theirs := f.handle
		if theirs != nil {
			theirs.refs.Add(1)
		}
		c.mu.Unlock()
		if theirs != nil {
			file.Close()
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

// close closes the table's file for good: its cached handle is dropped and
// closed, now or, if a read is using it, when that read returns. It returns
// the error of a close made now.
func (f *tableFile) close() error {
	c := f.cache
	c.mu.Lock()
	f.closed = true
	h := f.handle
	if h != nil {
		c.unlinkLocked(f)
		f.handle = nil
		c.mu.n--
	}
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.unref()
}

package vfs

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// Counting is an FS that passes every call to the FS it wraps and counts the
// file I/O, per file kind. It is how the store proves a lookup read nothing
// from a table its filter excluded. Every call is counted whether or not it
// succeeds — a test of "no read happened" must see attempts too — and bytes
// are counted as the wrapped FS reports them transferred.
//
// Counting is safe for concurrent use; the counters are atomic.
type Counting struct {
	fs       FS
	classify func(name string) string

	mu    sync.Mutex
	kinds map[string]*counters
}

// Counts are the I/O counters of one file kind.
type Counts struct {
	Creates      int64 // FS.Create calls
	Opens        int64 // FS.Open calls
	Reads        int64 // File.Read calls
	ReadAts      int64 // File.ReadAt calls
	BytesRead    int64 // bytes returned by Read and ReadAt
	Writes       int64 // File.Write calls
	BytesWritten int64 // bytes accepted by Write
	Syncs        int64 // File.Sync calls
}

// ReadCalls returns the number of read calls of either sort.
func (c Counts) ReadCalls() int64 { return c.Reads + c.ReadAts }

// counters is the live, atomic form of Counts.
type counters struct {
	creates, opens, reads, readAts, bytesRead, writes, bytesWritten, syncs atomic.Int64
}

// NewCounting returns a Counting over fs that files each name under the kind
// classify returns for it; a nil classify means DefaultClassify. A nil fs
// gives a Counting whose every operation fails.
func NewCounting(fs FS, classify func(name string) string) *Counting {
	if fs == nil {
		fs = errFS{"NewCounting"}
	}
	if classify == nil {
		classify = DefaultClassify
	}
	return &Counting{fs: fs, classify: classify, kinds: map[string]*counters{}}
}

// counters returns the counters of name's kind. Files resolve them once, at
// open, so the I/O path touches only atomics.
func (c *Counting) counters(name string) *counters {
	kind := c.classify(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.kinds[kind]
	if k == nil {
		k = &counters{}
		c.kinds[kind] = k
	}
	return k
}

// Kind returns the counts of one file kind; a kind never seen counts zero.
func (c *Counting) Kind(kind string) Counts {
	c.mu.Lock()
	k := c.kinds[kind]
	c.mu.Unlock()
	if k == nil {
		return Counts{}
	}
	return k.load()
}

// Snapshot returns the counts of every kind seen since NewCounting (a kind
// stays listed after Reset, with zero counts). Each counter is read
// atomically, but not all at one instant: I/O running concurrently may be
// counted in some fields of the snapshot and not yet in others.
func (c *Counting) Snapshot() map[string]Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]Counts, len(c.kinds))
	for kind, k := range c.kinds {
		out[kind] = k.load()
	}
	return out
}

// Reset sets every counter to zero, with the same caveat as Snapshot for I/O
// running concurrently.
func (c *Counting) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.kinds {
		for _, v := range []*atomic.Int64{&k.creates, &k.opens, &k.reads, &k.readAts, &k.bytesRead, &k.writes, &k.bytesWritten, &k.syncs} {
			v.Store(0)
		}
	}
}

func (k *counters) load() Counts {
	return Counts{
		Creates:      k.creates.Load(),
		Opens:        k.opens.Load(),
		Reads:        k.reads.Load(),
		ReadAts:      k.readAts.Load(),
		BytesRead:    k.bytesRead.Load(),
		Writes:       k.writes.Load(),
		BytesWritten: k.bytesWritten.Load(),
		Syncs:        k.syncs.Load(),
	}
}

// Create implements FS.
func (c *Counting) Create(name string) (File, error) {
	k := c.counters(name)
	k.creates.Add(1)
	f, err := c.fs.Create(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{f: f, k: k}, nil
}

// Open implements FS.
func (c *Counting) Open(name string) (File, error) {
	k := c.counters(name)
	k.opens.Add(1)
	f, err := c.fs.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{f: f, k: k}, nil
}

// Remove implements FS.
func (c *Counting) Remove(name string) error { return c.fs.Remove(name) }

// Rename implements FS.
func (c *Counting) Rename(oldname, newname string) error { return c.fs.Rename(oldname, newname) }

// List implements FS.
func (c *Counting) List(dir string) ([]string, error) { return c.fs.List(dir) }

// MkdirAll implements FS.
func (c *Counting) MkdirAll(dir string) error { return c.fs.MkdirAll(dir) }

// Stat implements FS.
func (c *Counting) Stat(name string) (os.FileInfo, error) { return c.fs.Stat(name) }

// Lock implements FS.
func (c *Counting) Lock(name string) (io.Closer, error) { return c.fs.Lock(name) }

// LockShared implements FS.
func (c *Counting) LockShared(name string) (io.Closer, error) { return c.fs.LockShared(name) }

// SyncDir implements FS.
func (c *Counting) SyncDir(dir string) error { return c.fs.SyncDir(dir) }

// PathJoin implements FS.
func (c *Counting) PathJoin(elem ...string) string { return c.fs.PathJoin(elem...) }

// PathBase implements FS.
func (c *Counting) PathBase(path string) string { return c.fs.PathBase(path) }

// PathDir implements FS.
func (c *Counting) PathDir(path string) string { return c.fs.PathDir(path) }

// countingFile counts the I/O of one open file into its kind's counters.
type countingFile struct {
	f File
	k *counters
}

func (f *countingFile) Read(p []byte) (int, error) {
	f.k.reads.Add(1)
	n, err := f.f.Read(p)
	f.k.bytesRead.Add(int64(n))
	return n, err
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.k.readAts.Add(1)
	n, err := f.f.ReadAt(p, off)
	f.k.bytesRead.Add(int64(n))
	return n, err
}

func (f *countingFile) Write(p []byte) (int, error) {
	f.k.writes.Add(1)
	n, err := f.f.Write(p)
	f.k.bytesWritten.Add(int64(n))
	return n, err
}

func (f *countingFile) Sync() error {
	f.k.syncs.Add(1)
	return f.f.Sync()
}

// AdviseRandom passes the advice on (RandomAdviser); it is not counted.
func (f *countingFile) AdviseRandom() error { return AdviseRandom(f.f) }

func (f *countingFile) Stat() (os.FileInfo, error) { return f.f.Stat() }

func (f *countingFile) Close() error { return f.f.Close() }

// Prefetch passes the advice on (Prefetcher); it is not counted, and no
// fault is injected into it.
func (f *countingFile) Prefetch(off, n int64) error { return Prefetch(f.f, off, n) }

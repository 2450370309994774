// Package benchstore adapts a bloomkv DB to the workloads of package
// internal/workload: the store that `bloomkv bench`, the peers runner of
// the bench module and the root package's benchmarks run them on. It lives
// outside internal/ so that nothing there imports the root package.
package benchstore

import (
	"errors"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// Bloomkv adapts a bloomkv DB to workload.Store, workload.Settler and the
// workloads' optional interfaces (MultiGetter, KeyScanner, PrefixSeeker,
// RangeScanner, RangeReuser).
type Bloomkv struct {
	DB *bloomkv.DB
}

// Open opens (or creates) the bloomkv database in dir.
func Open(dir string, opts *bloomkv.Options) (*Bloomkv, error) {
	db, err := bloomkv.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &Bloomkv{DB: db}, nil
}

// Put writes through the WAL without an fsync (bloomkv.NoSync).
func (b *Bloomkv) Put(key, value []byte) error { return b.DB.Put(key, value, bloomkv.NoSync) }

// Get looks key up.
func (b *Bloomkv) Get(key []byte) ([]byte, bool, error) {
	v, err := b.DB.Get(key)
	if errors.Is(err, bloomkv.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// MultiGet reads keys in one DB.MultiGet (workload.MultiGetter).
func (b *Bloomkv) MultiGet(keys [][]byte) ([][]byte, error) { return b.DB.MultiGet(keys) }

// Scan reads n entries from start with an iterator.
func (b *Bloomkv) Scan(start []byte, n int) (int, error) {
	it, err := b.DB.NewIter(nil)
	if err != nil {
		return 0, err
	}
	return readN(it, it.SeekGE(start), n, true)
}

// ScanKeys is Scan reading keys only: no blob file is read.
func (b *Bloomkv) ScanKeys(start []byte, n int) (int, error) {
	it, err := b.DB.NewIter(nil)
	if err != nil {
		return 0, err
	}
	return readN(it, it.SeekGE(start), n, false)
}

// readN reads up to n entries of it, which ok says is at its first — their
// keys, and their values if values — and closes it.
func readN(it *bloomkv.Iterator, ok bool, n int, values bool) (int, error) {
	read := 0
	for ; ok && read < n; ok = it.Next() {
		_ = it.Key()
		if values {
			_ = it.Value()
		}
		read++
	}
	return read, it.Close()
}

// SeekPrefix reads up to n entries with prefix, from the first, after an
// Iterator.SeekPrefixGE: the DB must have been opened with a prefix
// extractor whose prefixes are the prefix workloads' (PrefixExtractor).
func (b *Bloomkv) SeekPrefix(prefix []byte, n int) (int, error) {
	it, err := b.DB.NewIter(nil)
	if err != nil {
		return 0, err
	}
	return readN(it, it.SeekPrefixGE(prefix), n, true)
}

// ScanRange reads every entry of [lo, hi) with an iterator bounded on
// both sides: one whose range the tables' range filters may rule out
// (Options.RangeFilterBits).
func (b *Bloomkv) ScanRange(lo, hi []byte) (int, error) {
	it, err := b.DB.NewIter(&bloomkv.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	return readN(it, it.First(), int(^uint(0)>>1), true)
}

// PrefixExtractor returns the prefix extractor of the prefix workloads'
// keys, for bloomkv.Options.Prefix: a key's prefix is everything up to and
// including its first workload.PrefixSeparator (workload.PrefixLen).
func PrefixExtractor() *bloomkv.PrefixExtractor {
	return &bloomkv.PrefixExtractor{Name: "workload.prefix-to-slash", Split: workload.PrefixLen}
}

// Settle flushes the memtable and waits until background compaction has
// nothing left to do (Metrics.CompactionPending is false) and the files
// it made obsolete are deleted (Metrics.ObsoleteFilesPending is 0).
func (b *Bloomkv) Settle() error {
	if err := b.DB.Flush(); err != nil {
		return err
	}
	for {
		m := b.DB.Metrics()
		if !m.CompactionPending && m.ImmutableMemtables == 0 && m.ObsoleteFilesPending == 0 {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Close closes the DB.
func (b *Bloomkv) Close() error { return b.DB.Close() }

// NewRangeCursor returns a cursor over one Iterator, re-bounded for each
// scan.
func (b *Bloomkv) NewRangeCursor() (workload.RangeCursor, error) {
	it, err := b.DB.NewIter(nil)
	if err != nil {
		return nil, err
	}
	return &bloomkvCursor{it: it}, nil
}

// bloomkvCursor is Bloomkv's RangeCursor.
type bloomkvCursor struct{ it *bloomkv.Iterator }

// ScanRange reads every entry of [lo, hi) after SetBounds(lo, hi) and
// First: the same range scan ScanRange makes, with the iterator's stack
// (and the table it has open, if the range is within it) kept.
func (c *bloomkvCursor) ScanRange(lo, hi []byte) (int, error) {
	c.it.SetBounds(lo, hi)
	n := 0
	for ok := c.it.First(); ok; ok = c.it.Next() {
		_, _ = c.it.Key(), c.it.Value()
		n++
	}
	return n, c.it.Error()
}

func (c *bloomkvCursor) Close() error { return c.it.Close() }

var (
	_ workload.Settler      = (*Bloomkv)(nil)
	_ workload.MultiGetter  = (*Bloomkv)(nil)
	_ workload.PrefixSeeker = (*Bloomkv)(nil)
	_ workload.RangeReuser  = (*Bloomkv)(nil)
)

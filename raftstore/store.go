package raftstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
)

// ErrKeyNotFound is returned by Store.Get and Store.GetUint64 for a key never
// Set. Its text is exactly "not found": raft recognizes a missing term or vote
// by that text (as with raft-boltdb's error of the same name), so a fresh
// node starts instead of failing.
var ErrKeyNotFound = errors.New("not found")

// The key spaces of a Store in its DB; see the package documentation.
var (
	logPrefix    = []byte("raft/log/")
	stablePrefix = []byte("raft/stable/")
	// logUpper is the first key after every log key: logPrefix with its
	// last byte incremented.
	logUpper = []byte("raft/log0")
)

// Store is raft's LogStore and StableStore on a bloomkv DB. Every write is
// one synced, atomic batch. It is safe for concurrent use, as raft uses it.
type Store struct {
	db    *bloomkv.DB
	owned bool // Close closes db

	// writeMu orders the writes to the log key space with the updates of
	// first and last that follow them.
	writeMu sync.Mutex
	// INVARIANT: first and last are the smallest and largest index stored
	// under logPrefix (0 and 0 with no log), as of the last write that
	// returned. They are loaded at New and kept by StoreLogs and DeleteRange,
	// so FirstIndex and LastIndex read memory. This holds because the Store
	// is the only writer of its key space.
	first, last atomic.Uint64
}

var (
	_ raft.LogStore    = (*Store)(nil)
	_ raft.StableStore = (*Store)(nil)
)

// Open opens (creating it if missing) the bloomkv DB in dir and returns a
// Store on it that owns it: Close closes the DB. A nil opts means bloomkv's
// defaults.
func Open(dir string, opts *bloomkv.Options) (*Store, error) {
	db, err := bloomkv.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	s, err := New(db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New returns a Store on db, which stays the caller's: Close leaves it open.
// The DB may hold other data, outside the Store's key spaces (keys starting
// "raft/log/" and "raft/stable/"), which no one else may write.
func New(db *bloomkv.DB) (*Store, error) {
	if db == nil {
		return nil, &bloomkv.ArgumentError{Arg: "db", Reason: "nil"}
	}
	s := &Store{db: db}
	if err := s.loadBounds(); err != nil {
		return nil, err
	}
	return s, nil
}

// DB returns the DB the Store writes to.
func (s *Store) DB() *bloomkv.DB { return s.db }

// Close closes the DB if Open opened it (the Store is unusable afterwards);
// a Store from New leaves its DB open, and Close does nothing.
func (s *Store) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

func logKey(index uint64) []byte {
	k := make([]byte, len(logPrefix)+8)
	copy(k, logPrefix)
	binary.BigEndian.PutUint64(k[len(logPrefix):], index)
	return k
}

// logIndex returns the index of a log key, or an error for a key in the log
// space that is not prefix + 8 bytes (which the Store never writes).
func logIndex(key []byte) (uint64, error) {
	if len(key) != len(logPrefix)+8 || !bytes.HasPrefix(key, logPrefix) {
		return 0, fmt.Errorf("raftstore: key %q in the log key space is not a log key: %w", key, bloomkv.ErrCorruption)
	}
	return binary.BigEndian.Uint64(key[len(logPrefix):]), nil
}

// loadBounds sets first and last from the DB: one seek at each end of the log
// key space.
func (s *Store) loadBounds() error {
	it, err := s.db.NewIter(&bloomkv.IterOptions{LowerBound: logPrefix, UpperBound: logUpper})
	if err != nil {
		return err
	}
	var first, last uint64
	if it.First() {
		if first, err = logIndex(it.Key()); err == nil && it.Last() {
			last, err = logIndex(it.Key())
		}
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.first.Store(first)
	s.last.Store(last)
	return nil
}

// FirstIndex returns the smallest index stored, 0 for an empty log.
func (s *Store) FirstIndex() (uint64, error) { return s.first.Load(), nil }

// LastIndex returns the largest index stored, 0 for an empty log.
func (s *Store) LastIndex() (uint64, error) { return s.last.Load(), nil }

// GetLog reads the entry at index into log, or returns raft.ErrLogNotFound.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	v, err := s.db.Get(logKey(index))
	if errors.Is(err, bloomkv.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return err
	}
	return decodeLog(index, v, log)
}

// StoreLog stores one entry, durably.
func (s *Store) StoreLog(log *raft.Log) error { return s.StoreLogs([]*raft.Log{log}) }

// StoreLogs stores entries in one atomic, synced batch: after a crash either
// all of them are there or none. An entry stored again at its index replaces
// the old one. A nil entry or one of index 0 is refused with an
// *bloomkv.ArgumentError, and nothing is stored.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	b := bloomkv.NewBatch()
	lo, hi := ^uint64(0), uint64(0)
	var buf []byte
	for _, l := range logs {
		switch {
		case l == nil:
			return &bloomkv.ArgumentError{Arg: "logs", Reason: "holds a nil *raft.Log"}
		case l.Index == 0:
			// Index 0 is raft's "no entry": FirstIndex and LastIndex
			// could not tell a log holding it from an empty one.
			return &bloomkv.ArgumentError{Arg: "logs", Reason: "holds an entry of index 0; raft's indexes start at 1"}
		}
		buf = appendLog(buf[:0], l)
		if err := b.Set(logKey(l.Index), buf); err != nil {
			return fmt.Errorf("raftstore: log %d: %w", l.Index, err)
		}
		lo, hi = min(lo, l.Index), max(hi, l.Index)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.db.Apply(b, bloomkv.Sync); err != nil {
		return err
	}
	if f := s.first.Load(); f == 0 || lo < f {
		s.first.Store(lo)
	}
	if hi > s.last.Load() {
		s.last.Store(hi)
	}
	return nil
}

// DeleteRange deletes the entries with index in [min, max].
//
// It writes one range tombstone over their keys, synced, whatever the
// number of entries: raft's log compaction (a prefix) and its truncation
// of a conflicting suffix are each one atomic write, and cost the same for
// ten entries as for ten million. Reads stop seeing the entries at once;
// bloomkv's compactions reclaim their space.
func (s *Store) DeleteRange(min, max uint64) error {
	if min > max {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	upper := logUpper
	if max < ^uint64(0) {
		upper = logKey(max + 1)
	}
	if err := s.db.DeleteRange(logKey(min), upper, bloomkv.Sync); err != nil {
		// A failed write may still have been applied; reload the bounds to
		// match what the DB holds.
		if lerr := s.loadBounds(); lerr != nil {
			return errors.Join(err, lerr)
		}
		return err
	}
	return s.loadBounds()
}

func stableKey(k []byte) []byte {
	return append(append(make([]byte, 0, len(stablePrefix)+len(k)), stablePrefix...), k...)
}

// Set stores val under key in the stable key space, durably.
func (s *Store) Set(key, val []byte) error {
	return s.db.Put(stableKey(key), val, bloomkv.Sync)
}

// Get returns the value Set under key, or ErrKeyNotFound.
func (s *Store) Get(key []byte) ([]byte, error) {
	v, err := s.db.Get(stableKey(key))
	if errors.Is(err, bloomkv.ErrNotFound) {
		return nil, ErrKeyNotFound
	}
	return v, err
}

// SetUint64 stores val under key as 8 big-endian bytes, durably.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns the value SetUint64 stored under key, ErrKeyNotFound, or
// an error wrapping bloomkv.ErrCorruption for a value that is not 8 bytes.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raftstore: stable key %q holds %d bytes, not a uint64's 8: %w", key, len(v), bloomkv.ErrCorruption)
	}
	return binary.BigEndian.Uint64(v), nil
}

package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/base"
)

// Snapshot is a fixed point in the DB's history: Get and iterators on it see
// the writes committed before NewSnapshot and none after. A snapshot keeps
// the versions it needs from being discarded by compaction until Close.
type Snapshot struct {
	db     *DB
	seq    base.SeqNum
	closed bool // guarded by db.mu
}

// NewSnapshot returns a snapshot of the DB now. Close it when done.
func (d *DB) NewSnapshot() (*Snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	s := &Snapshot{db: d, seq: base.SeqNum(d.visibleSeq.Load())}
	d.mu.snapshots[s] = struct{}{}
	return s, nil
}

// Get returns the value key had when the snapshot was taken.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.db.get(key, s.seq)
}

// MultiGet is DB.MultiGet at the snapshot: the values of keys as they
// were when it was taken.
func (s *Snapshot) MultiGet(keys [][]byte) ([][]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.db.multiGet(keys, s.seq, nil)
}

// NewIter returns an iterator over the DB as it was when the snapshot was
// taken. opts may be nil.
func (s *Snapshot) NewIter(opts *IterOptions) (*Iterator, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.db.newIter(s.seq, opts)
}

// Close releases the snapshot. Later calls on it return ErrClosed.
func (s *Snapshot) Close() error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	delete(s.db.mu.snapshots, s)
	return nil
}

func (s *Snapshot) check() error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if s.closed || s.db.mu.closed {
		return ErrClosed
	}
	return nil
}

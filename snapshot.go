package bloomkv

import (
	"iter"

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

// NewIter returns an iterator over the DB as of now, within opts' bounds
// (nil: all keys). It sees a consistent point in time: writes committed
// after it was created are invisible to it. Close it when done.
func (d *DB) NewIter(opts *IterOptions) (*Iterator, error) {
	return d.newIter(liveSeq, opts)
}

// Scan returns the key/value pairs of [lower, upper) in key order, for a
// range loop; nil bounds are open. The slices are valid only until the loop
// moves on. An error stops the loop and is reported by errp, which may be
// nil only if the caller does not care:
//
//	var err error
//	for k, v := range db.Scan(nil, nil, &err) { ... }
//	if err != nil { ... }
func (d *DB) Scan(lower, upper []byte, errp *error) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
		if err == nil {
			for k, v := range it.All() {
				if !yield(k, v) {
					break
				}
			}
			err = it.Close()
		}
		if errp != nil {
			*errp = err
		}
	}
}

// newIter builds the iterator stack over the read state: one child per
// memtable and L0 table, one level iterator per deeper level.
func (d *DB) newIter(seq base.SeqNum, opts *IterOptions) (*Iterator, error) {
	var o IterOptions
	if opts != nil {
		o = *opts
	}
	rs, err := d.acquireReadState()
	if err != nil {
		return nil, err
	}
	if seq == liveSeq {
		seq = rs.seq
	}
	children := []internalIterator{rs.mem.NewIter()}
	for _, m := range rs.imm {
		children = append(children, m.NewIter())
	}
	for _, t := range rs.version.tables[0] {
		children = append(children, t.reader.NewIterator())
	}
	for level := 1; level < len(rs.version.tables); level++ {
		tables := rs.version.tables[level]
		if len(tables) == 0 {
			continue
		}
		files := make([]levelFile, len(tables))
		for i, t := range tables {
			files[i] = levelFile{
				smallest: t.meta.Smallest.UserKey,
				largest:  t.meta.Largest.UserKey,
				open:     func() (internalIterator, error) { return t.reader.NewIterator(), nil },
			}
		}
		children = append(children, newLevelIter(files, o.LowerBound, o.UpperBound))
	}
	release := func() error {
		d.releaseReadState(rs)
		return nil
	}
	return newIterator(newMergingIter(children...), seq, o, release), nil
}

package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/iterator"
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

// Scan calls fn with each key/value pair of [lower, upper) in key order, as
// of now; nil bounds are open. The slices are valid only during the call.
// It stops at the first error, fn's or its own (a read that failed), and
// returns it, so that no error goes unreported; nil once every pair in the
// range has been seen. For more control — backward, seeks, a loop that
// breaks — use NewIter.
func (d *DB) Scan(lower, upper []byte, fn func(key, value []byte) error) error {
	it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for k, v := range it.All() {
		if err = fn(k, v); err != nil {
			break
		}
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return err
}

// newIter builds the iterator stack over the read state: one child per
// memtable and L0 table, one level iterator per deeper level, each over
// the version's metadata of the level and opening its open tables, index
// for index, only when the iterator reaches them.
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
	v := rs.version
	children := make([]iterator.Iterator, 0, 1+len(rs.imm)+len(v.tables[0])+len(v.tables)-1)
	children = append(children, rs.mem.NewIter())
	for _, m := range rs.imm {
		children = append(children, m.NewIter())
	}
	for _, t := range v.tables[0] {
		children = append(children, t.reader.NewIterator())
	}
	for level := 1; level < len(v.tables); level++ {
		tables := v.tables[level]
		if len(tables) == 0 {
			continue
		}
		open := func(i int) (iterator.Iterator, error) { return tables[i].reader.NewIterator(), nil }
		children = append(children, iterator.NewLevelIter(v.Levels[level], open, o.LowerBound, o.UpperBound))
	}
	release := func() error {
		d.releaseReadState(rs)
		return nil
	}
	return newIterator(iterator.NewMergingIter(children...), seq, o, release), nil
}

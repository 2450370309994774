package bloomkv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
)

// Merge: a write that says how to change a key's value rather than what
// it is (RocksDB's merge operator, Pebble's Merger). DB.Merge and
// Batch.Merge write a merge operand, a version of kind base.KindMerge;
// every read folds the operands it meets, newest to oldest, over the
// key's base value — the newest Set below them (one with a time-to-live
// while it lasts, without its expiry), or none where a tombstone, range
// tombstone or expired Set, or the bottom of the tree, comes first —
// with Options.Merger, and a compaction folds the operands no snapshot
// separates (see package internal/compaction). A counter then costs one
// blind write per increment, where a read-modify-write costs a Get too.

// Merger is a named, associative merge operator: Options.Merger.
//
// Merge returns what the operand newer makes of older, the key's value
// (or the fold of older operands) below it. It must be associative —
// Merge(Merge(a, b), c) = Merge(a, Merge(b, c)) — because a compaction
// folds operands into one before their base is known, and a read folds
// that over the base later; and deterministic, because the same operands
// are folded again by every read until a compaction keeps the result.
// Operands without a base fold from the oldest operand: the value of a
// key that only merges ever wrote is the fold of its operands. Merge may
// modify older's bytes (append to them) and return them; it must neither
// modify nor keep newer. An error from Merge fails the read that folds
// (wrapped with the key), and a compaction that meets it keeps the
// operands as they were.
//
// Name identifies the operator: the DB records it in its manifest when it
// is first opened with a Merger, and Open refuses another name, or none,
// from then on (a DB written with one operator must never be read with
// another). CheckOperand, if not nil, is asked of every operand a write
// carries before anything is committed; an operand it refuses fails the
// write with an *ArgumentError.
type Merger struct {
	Name         string
	Merge        func(key, older, newer []byte) ([]byte, error)
	CheckOperand func(operand []byte) error
}

// Int64AddMerger returns the merger "bloomkv.int64add": each value and
// operand is a signed 64-bit integer, 8 bytes little-endian (EncodeInt64),
// and an operand adds itself to the value, wrapping around on overflow as
// Go's int64 addition does. An operand of another length is refused at
// the write; a base value of another length (a Put of something else) is
// an error at the read that folds over it.
func Int64AddMerger() *Merger {
	return &Merger{
		Name: "bloomkv.int64add",
		Merge: func(key, older, newer []byte) ([]byte, error) {
			if len(older) != 8 {
				return nil, fmt.Errorf("int64add: the value below is %d bytes, not an 8-byte integer", len(older))
			}
			if len(newer) != 8 {
				return nil, fmt.Errorf("int64add: operand of %d bytes, not an 8-byte integer", len(newer))
			}
			sum := binary.LittleEndian.Uint64(older) + binary.LittleEndian.Uint64(newer)
			binary.LittleEndian.PutUint64(older, sum)
			return older, nil
		},
		CheckOperand: func(operand []byte) error {
			if len(operand) != 8 {
				return fmt.Errorf("%d bytes, not an 8-byte integer (EncodeInt64)", len(operand))
			}
			return nil
		},
	}
}

// EncodeInt64 returns v as Int64AddMerger's values and operands hold it:
// 8 bytes, little-endian.
func EncodeInt64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

// DecodeInt64 returns the integer an Int64AddMerger value holds, or an
// error if b is not 8 bytes long.
func DecodeInt64(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("bloomkv: %d bytes are not an 8-byte integer", len(b))
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// AppendMerger returns the merger "bloomkv.append": an operand appends
// its bytes to the value, so a key's value is its base followed by its
// operands, oldest first. Any bytes are an operand.
func AppendMerger() *Merger {
	return &Merger{
		Name:  "bloomkv.append",
		Merge: func(key, older, newer []byte) ([]byte, error) { return append(older, newer...), nil },
	}
}

// Merger returns the DB's merger (a copy of Options.Merger), nil if it
// has none.
func (d *DB) Merger() *Merger {
	if d.opts.Merger == nil {
		return nil
	}
	m := *d.opts.Merger
	return &m
}

// ErrNoMerger is returned by a Merge, or an Apply of a batch holding
// one, on a DB opened without Options.Merger.
var ErrNoMerger = errors.New("bloomkv: merge needs Options.Merger")

// checkMerger checks Options.Merger and makes it the DB's own copy.
func checkMerger(o *Options) error {
	switch m := o.Merger; {
	case m == nil:
	case m.Name == "":
		return argError("opts.Merger", "the merger has no Name (the DB records it, and opens only with the same)")
	case m.Merge == nil:
		return argError("opts.Merger", "the merger %q has no Merge", m.Name)
	default:
		c := *m
		o.Merger = &c
	}
	return nil
}

// MergerMismatchError is Open's error for a DB whose manifest records a
// merger other than Options.Merger, or one where Options.Merger is nil:
// a tool that knows the recorded merger by its name (Recorded) can open
// the DB with it.
type MergerMismatchError struct {
	Recorded string // the merger the DB was written with
	Given    string // Options.Merger's name; empty for none
}

func (e *MergerMismatchError) Error() string {
	if e.Given == "" {
		return fmt.Sprintf("bloomkv: open: the DB was written with merger %q: set Options.Merger to it", e.Recorded)
	}
	return fmt.Sprintf("bloomkv: open: Options.Merger is %q, but the DB was written with merger %q", e.Given, e.Recorded)
}

// checkMergerName compares the merger recorded in the manifest with
// Options.Merger's, at Open.
func checkMergerName(recorded string, m *Merger) error {
	switch {
	case recorded == "":
		return nil
	case m == nil:
		return &MergerMismatchError{Recorded: recorded}
	case m.Name != recorded:
		return &MergerMismatchError{Recorded: recorded, Given: m.Name}
	}
	return nil
}

// Merge writes a merge operand for key: reads then see key's value as
// Options.Merger makes it of the value below and operand. With a nil or
// Sync WriteOptions it returns once the write is durable. It returns
// ErrNoMerger without Options.Merger, and an *ArgumentError for a key or
// operand over its limit or an operand the merger's CheckOperand refuses.
func (d *DB) Merge(key, operand []byte, opts *WriteOptions) error {
	w := getSingleWrite()
	defer putSingleWrite(w)
	if err := w.batch.Merge(key, operand); err != nil {
		return err
	}
	return d.apply(&w.batch, &w.req, opts)
}

// Merge adds a merge operand for key (see DB.Merge). It returns an
// *ArgumentError, and adds nothing, for a key or operand over its limit;
// the merger is checked when the batch is applied.
func (b *Batch) Merge(key, operand []byte) error {
	if err := checkKeyValue(key, operand); err != nil {
		return err
	}
	if err := b.add(base.KindMerge, key, operand); err != nil {
		return err
	}
	b.merges++
	return nil
}

// Merge writes a merge operand for key in the transaction. Reading key
// in the transaction folds it over what the transaction sees below it; a
// merge is a write only, so a transaction that merges without reading
// the key never conflicts on it.
func (t *Transaction) Merge(key, operand []byte) error {
	return t.write(key, operand, (*Batch).Merge)
}

// checkMerges checks the merge operands of b before it is committed:
// that the DB has a merger, and that its CheckOperand takes each.
func (d *DB) checkMerges(b *Batch) error {
	if b.merges == 0 {
		return nil
	}
	m := d.opts.Merger
	if m == nil {
		return ErrNoMerger
	}
	if m.CheckOperand == nil {
		return nil
	}
	p := b.data[batchrepr.HeaderLen:]
	for range b.count {
		kind, key, value, rest, err := batchrepr.DecodeEntry(p)
		if err != nil {
			return fmt.Errorf("bloomkv: a batch's own entry does not decode: %w", err)
		}
		if kind == base.KindMerge {
			if err := m.CheckOperand(value); err != nil {
				return argError("operand", "%v, for key %q (merger %q)", err, key, m.Name)
			}
		}
		p = rest
	}
	return nil
}

// mergeOperands collects the operands a read meets, copied into one
// buffer, in the order met.
type mergeOperands struct {
	buf  []byte
	ends []int
	list [][]byte
}

func (o *mergeOperands) add(v []byte) {
	o.buf = append(o.buf, v...)
	o.ends = append(o.ends, len(o.buf))
}

func (o *mergeOperands) len() int { return len(o.ends) }

func (o *mergeOperands) reset() { o.buf, o.ends = o.buf[:0], o.ends[:0] }

// oldestFirst returns the operands, oldest first: reversed when they were
// met newest first (newestFirst).
func (o *mergeOperands) oldestFirst(newestFirst bool) [][]byte {
	o.list = o.list[:0]
	start := 0
	for _, end := range o.ends {
		o.list = append(o.list, o.buf[start:end:end])
		start = end
	}
	if newestFirst {
		slices.Reverse(o.list)
	}
	return o.list
}

// fold folds ops (met newest first unless !newestFirst) over the base
// version a read found below them — a Set's value (a separated value
// already read), or kind base.KindDelete, or hasBase false for none —
// with the DB's merger, and counts the operands folded.
func (d *DB) fold(key []byte, ops *mergeOperands, newestFirst bool, value []byte, hasBase bool) ([]byte, error) {
	if d == nil || d.opts.Merger == nil {
		return nil, fmt.Errorf("bloomkv: key %q has merge operands: %w", key, ErrNoMerger)
	}
	m := d.opts.Merger
	v, err := base.Fold(m.Merge, key, value, hasBase, ops.oldestFirst(newestFirst))
	if err != nil {
		return nil, fmt.Errorf("bloomkv: merger %q: %w", m.Name, err)
	}
	d.counters.mergesFoldedByReads.Add(uint64(ops.len()))
	return v, nil
}

// foldAnswer is a lookup's answer for key where it met the operands ops,
// newest first, above the version value, kind — a Set's value (read from
// its blob file if separated), or a deletion: no base — or, with kind
// base.KindDelete and no value, above nothing at all. tr, if not nil,
// records the fold as a step.
func (d *DB) foldAnswer(key []byte, ops *mergeOperands, value []byte, kind base.Kind, tr lookupTracer) ([]byte, error) {
	v, err := d.fold(key, ops, true, value, kind.IsSet())
	if tr != nil {
		tr.merged(ops.len(), err)
	}
	return v, err
}

// getOver reads key through the indexed batch x over snapshot s: the
// batch's own answer if it has one, its merge operands of key folded over
// what is below them — the rest of the batch, then the DB at s — or else
// the DB's value at s. readDB, if not nil, is called before the DB is
// read (a transaction records the read); its error ends the read.
func (x *batchIndex) getOver(s *Snapshot, key []byte, readDB func() error) ([]byte, error) {
	var ops *mergeOperands
	for seq := base.SeqNumMax; ; {
		value, kind, vseq, found := x.get(key, seq)
		if !found {
			break
		}
		if kind != base.KindMerge {
			if ops == nil {
				return answer(bytes.Clone(value), kind)
			}
			return s.db.foldAnswer(key, ops, value, kind, nil)
		}
		if ops == nil {
			ops = new(mergeOperands)
		}
		ops.add(value)
		seq = vseq - 1
	}
	if readDB != nil {
		if err := readDB(); err != nil {
			return nil, err
		}
	}
	rs, seq, err := s.db.acquireReadStateAt(s.seq)
	if err != nil {
		return nil, err
	}
	defer s.db.releaseReadState(rs)
	s.db.counters.gets.Add(1)
	return s.db.lookupBelow(rs, key, seq, nil, ops, nil, &readClock{d: s.db})
}

package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// Get returns the value of key, or ErrNotFound. The value is the caller's
// to keep and modify.
func (d *DB) Get(key []byte) ([]byte, error) {
	return d.get(key, liveSeq)
}

// get is the point read behind DB.Get and Snapshot.Get: it pins the current
// read state (memtables and version) for the read's length and looks key up
// at seq, liveSeq meaning the read state's own sequence number; see lookup.
func (d *DB) get(key []byte, seq base.SeqNum) ([]byte, error) {
	rs, seq, err := d.acquireReadStateAt(seq)
	if err != nil {
		return nil, err
	}
	defer d.releaseReadState(rs)
	return d.lookup(rs, key, seq, nil)
}

// lookup is the point read: memtables newest first, then L0 tables newest
// first (those whose key range holds the key), then at most one table per
// deeper level, found by binary search; the first version at or below seq
// found (a tombstone means not found) is the answer. A table's filter, in
// sstable.Reader.Get, skips most tables that do not hold the key without a
// read.
//
// Get and Explain share it: Get passes a nil tr, so each trace hook costs
// a nil check and nothing else; Explain passes its Trace, which records
// every place consulted, so that the explanation is this code's own
// account of what it did.
func (d *DB) lookup(rs *readState, key []byte, seq base.SeqNum, tr lookupTracer) ([]byte, error) {
	d.counters.gets.Add(1)

	if value, kind, found := memtablesGet(rs, key, seq, tr); found {
		d.counters.memtableHits.Add(1)
		return answer(bytes.Clone(value), kind)
	}

	lk := sstable.MakeLookupKey(key, seq) // hashed once for every filter
	try := func(level int, t *table) ([]byte, bool, error) {
		value, kind, found, err := d.getFromTable(level, t, lk, tr)
		if err != nil || !found {
			return nil, false, err
		}
		value, err = answer(value, kind)
		return value, true, err
	}
	// L0 tables may overlap: every one whose range holds the key, newest
	// first. The range check costs no filter probe and no read.
	for _, t := range rs.version.tables[0] {
		if t.meta.ContainsUserKey(key) {
			if value, done, err := try(0, t); done || err != nil {
				return value, err
			}
		} else if tr != nil {
			tr.outOfRange(0, t)
		}
	}
	// Deeper levels do not overlap: at most one table each.
	for level := 1; level < manifest.NumLevels; level++ {
		if t := rs.version.findTable(level, key); t != nil {
			if value, done, err := try(level, t); done || err != nil {
				return value, err
			}
		} else if n := len(rs.version.tables[level]); n > 0 && tr != nil {
			tr.noTable(level, n)
		}
	}
	return nil, ErrNotFound
}

// memtablesGet looks key up in rs's memtables, newest first: the first
// version at or below seq is the answer (its value aliases the memtable's
// arena). tr, if not nil, records each memtable searched.
func memtablesGet(rs *readState, key []byte, seq base.SeqNum, tr lookupTracer) ([]byte, base.Kind, bool) {
	value, kind, _, found := rs.mem.Get(key, seq)
	if tr != nil {
		tr.memtable(0, found, kind)
	}
	for i := 0; !found && i < len(rs.imm); i++ {
		value, kind, _, found = rs.imm[i].Get(key, seq)
		if tr != nil {
			tr.memtable(i+1, found, kind)
		}
	}
	return value, kind, found
}

// getFromTable looks key up in one table and counts what that cost; tr,
// if not nil, records it.
func (d *DB) getFromTable(level int, t *table, lk sstable.LookupKey, tr lookupTracer) ([]byte, base.Kind, bool, error) {
	var stats sstable.LookupStats
	value, kind, found, err := t.reader.Get(lk, &stats)
	d.counters.levels[level].record(&stats)
	if tr != nil {
		tr.table(level, t, stats, found, kind, err) // stats by value: a pointer through an interface would move it to the heap for every Get
	}
	return value, kind, found, err
}

// lookupTracer records what lookup consulted, step by step. Explain's
// Trace is the one implementation; read.go knows only these hooks, so the
// read path does not depend on how an explanation is kept or printed.
type lookupTracer interface {
	// memtable: memtable i (0 the mutable one, then the immutable ones,
	// newest first) was searched.
	memtable(i int, found bool, kind base.Kind)
	// outOfRange: an L0 table's key range rules the key out.
	outOfRange(level int, t *table)
	// table: a table was searched, at the cost stats says.
	table(level int, t *table, stats sstable.LookupStats, found bool, kind base.Kind, err error)
	// noTable: none of the level's tables holds the key's range.
	noTable(level, tables int)
}

// answer turns the version found into Get's result: the value, which must
// be the caller's own copy — a memtable's value aliases its arena, freed
// with the memtable, so lookup clones it; a table's Get returns a copy
// already, its block being released — or ErrNotFound for a tombstone.
func answer(value []byte, kind base.Kind) ([]byte, error) {
	if kind == base.KindDelete {
		return nil, ErrNotFound
	}
	return value, nil
}

package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/rangedel"
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
// found (a tombstone means not found, and so does a version whose
// time-to-live has ended: readClock.unexpired) is the answer. A table's filter
// skips most tables that do not hold the key without a read.
//
// The places past the memtables are planned a batch at a time (plan):
// the batch's tables found, and all their filters asked, before any
// verdict is acted on. Once filters and indexes outgrow the CPU's caches,
// each filter's probe is a miss to memory; asked one after another, with
// the decision on each in between, a missing key's lookup paid those
// misses in turn, and asked together, independent loads, they overlap.
// Then the batch is walked in order, as before, each verdict taken as
// the table's filter's (sstable.Reader.GetFiltered), so that nothing
// else changes: only a table whose filter does not rule the key out is
// read, and the walk stops at the first answer.
//
// Range tombstones are asked first at each place, memtable or table, in
// memory: a filter's "absent" says nothing of a table's range tombstones.
// A tombstone the read sees that covers the key deletes the versions below
// its seqnum, so at the place where one is met only a newer version there
// is an answer, and if there is none the key is deleted — the places after
// hold only older versions, so the lookup ends there, reading no data block
// of older tables.
//
// INVARIANT (older places hold older versions): of the versions and range
// tombstones of one user key, those of a memtable are newer than those of
// the memtables after it and of every table, those of an L0 table newer
// than those of the L0 tables after it and of the deeper levels, and those
// of a level newer than those of the levels below. A table's key bounds
// include its range tombstones' extents, so compactions, which move tables
// down with everything their bounds overlap, keep this true of tombstones
// as of versions.
//
// Get and Explain share it: Get passes a nil tr, so each trace hook costs
// a nil check and nothing else; Explain passes its Trace, which records
// every place consulted, so that the explanation is this code's own
// account of what it did.
//
// A merge operand (base.KindMerge) found is no answer yet: the lookup
// keeps it and goes on below it, at its seqnum − 1 in the same place and
// then the places after, until the first version that is not an operand
// — the base the operands fold over, or a deletion: none — or the end;
// then it folds (see merge.go). So it reads the places the operands are
// in and the base's, and none further.
func (d *DB) lookup(rs *readState, key []byte, seq base.SeqNum, tr lookupTracer) ([]byte, error) {
	d.counters.gets.Add(1)
	return d.lookupBelow(rs, key, seq, tr, nil, nil, &readClock{d: d})
}

// lookupBelow is lookup, without counting a Get, for a read that has met
// the merge operands ops (nil: none) above seq already: an indexed
// batch's, or MultiGet's. from, if not nil, is where a MultiGet's walk
// met its operand, a table (L0's table from.i, or level from.level's):
// the lookup starts there, past the memtables, the table counted as
// probed already. clock judges the expiries of the versions it finds: an
// expired one ends it as a deletion would, a live one is found without
// its expiry.
func (d *DB) lookupBelow(rs *readState, key []byte, seq base.SeqNum, tr lookupTracer, ops *mergeOperands, from *placeCursor, clock *readClock) ([]byte, error) {
	for m := 0; from == nil; {
		value, kind, vseq, at, found := memtablesGet(rs, key, seq, m, tr)
		if !found {
			break
		}
		if kind != base.KindMerge {
			value, kind, err := clock.unexpired(key, value, kind, tr)
			if err != nil {
				return nil, err
			}
			if ops == nil {
				d.counters.memtableHits.Add(1)
				return answer(bytes.Clone(value), kind)
			}
			return d.foldAnswer(key, ops, value, kind, tr)
		}
		if ops == nil {
			ops = new(mergeOperands)
		}
		ops.add(value)
		seq, m = vseq-1, at
	}

	lk := sstable.MakeLookupKey(key, seq) // hashed once for every filter
	v := rs.version
	var (
		batch   [placeBatch]place
		next    placeCursor
		resumed bool
	)
	if from != nil {
		next, resumed = *from, true
	}
	for !next.done() {
		for _, p := range batch[:v.plan(key, lk.Hash, &next, &batch)] {
			p.probed, resumed = resumed, false
			switch {
			case p.t == nil:
				if tr != nil {
					tr.noTable(p.level, len(v.tables[p.level]))
				}
			case !p.inRange: // an L0 table: the range check costs no probe and no read
				if tr != nil {
					tr.outOfRange(p.level, p.t)
				}
			default:
				for {
					value, kind, vseq, found, err := d.getFromTable(&p, &lk, tr)
					if err == nil && found {
						value, kind, err = clock.unexpired(key, value, kind, tr)
					}
					if err == nil && kind == base.KindSetBlob {
						value, err = d.resolveBlob(value, tr)
					}
					switch {
					case err != nil:
						return nil, err
					case !found:
					case kind != base.KindMerge && ops == nil:
						return answer(value, kind)
					case kind != base.KindMerge:
						return d.foldAnswer(key, ops, value, kind, tr)
					default:
						if ops == nil {
							ops = new(mergeOperands)
						}
						ops.add(value)
						lk.Seq = vseq - 1 // the versions below it, here and in the places after
						continue
					}
					break
				}
			}
		}
	}
	if ops != nil {
		return d.foldAnswer(key, ops, nil, base.KindDelete, tr)
	}
	return nil, ErrNotFound
}

// lookupRangeDel is a range tombstone a point lookup (Get, MultiGet,
// Explain) met at one place, covering its key and seen by its read: the fragment and its newest seqnum the read
// sees. decided reports that it deleted the key: the place held no newer
// version. The zero value means none was met.
type lookupRangeDel struct {
	frag    *rangedel.Fragment
	seq     base.SeqNum
	decided bool
}

// rangeDelAt returns the range tombstone of l that covers key for a read at
// seq, if any.
func rangeDelAt(l rangedel.List, key []byte, seq base.SeqNum) lookupRangeDel {
	if len(l) == 0 {
		return lookupRangeDel{}
	}
	if f := l.Find(key); f != nil {
		if s := f.Visible(seq); s > 0 {
			return lookupRangeDel{frag: f, seq: s}
		}
	}
	return lookupRangeDel{}
}

// memtablesGet looks key up in rs's memtables, newest first from memtable
// from (0 the mutable one, i the immutable rs.imm[i−1]): the first
// version at or below seq is the answer (its value aliases the memtable's
// arena), with its seqnum and the memtable's number, unless a range
// tombstone of the same memtable covers it — then, as when a memtable's
// range tombstone covers a key it holds no version of, the answer is a
// deletion (kind base.KindDelete, as lookup explains). tr, if not nil,
// records each memtable searched.
func memtablesGet(rs *readState, key []byte, seq base.SeqNum, from int, tr lookupTracer) ([]byte, base.Kind, base.SeqNum, int, bool) {
	for i := from; i <= len(rs.imm); i++ {
		m := rs.mem
		if i > 0 {
			m = rs.imm[i-1]
		}
		var (
			hit   lookupRangeDel
			value []byte
			kind  base.Kind
			vseq  base.SeqNum
			found bool
		)
		// An empty memtable — the mutable one, just after a flush — holds
		// nothing the read sees: a write is counted in it before its
		// seqnum is published, and this read's seqnum was published
		// before it began. Its search is left out.
		if !m.Empty() {
			hit = rangeDelAt(m.RangeDels(), key, seq)
			value, kind, vseq, found = m.Get(key, seq)
		}
		if hit.seq > 0 && (!found || vseq < hit.seq) {
			value, kind, found, hit.decided = nil, base.KindDelete, true, true
		}
		if tr != nil {
			tr.memtable(i, found, kind, hit)
		}
		if found {
			return value, kind, vseq, i, true
		}
	}
	return nil, 0, 0, 0, false
}

// getFromTable looks key up in the table of p, whose filter's verdict
// plan found, and counts what that cost; tr, if not nil, records it. It
// returns the version found and its seqnum. The
// table's range tombstones come first: one covering the key sets
// lk.Covered, and if the table holds no newer version, the answer is a
// deletion (found, base.KindDelete), without a data block read when the
// filter rules the key out. Where the filter rules the key out and the
// table has no range tombstones, nothing of the table but its reader's
// address is loaded (and the table, for a trace).
func (d *DB) getFromTable(p *place, lk *sstable.LookupKey, tr lookupTracer) ([]byte, base.Kind, base.SeqNum, bool, error) {
	var hit lookupRangeDel
	if p.probe.rangeDels {
		hit = rangeDelAt(p.probe.reader.RangeDels(), lk.UserKey, lk.Seq)
	}
	lk.Covered = hit.seq // 0, or the newest so far: lookup stops at the first
	var stats sstable.LookupStats
	value, kind, found, err := p.probe.reader.GetFiltered(*lk, p.maybe, &stats)
	if p.probed {
		d.counters.levels[p.level].recordBlocks(&stats)
	} else {
		d.counters.levels[p.level].record(&stats)
	}
	p.probed = true
	if err == nil && !found && hit.seq > 0 {
		kind, found, hit.decided = base.KindDelete, true, true
	}
	if tr != nil {
		tr.table(p.level, p.t, stats, found, kind, hit, err) // stats by value: a pointer through an interface would move it to the heap for every Get
	}
	return value, kind, stats.FoundSeq, found, err
}

// resolveBlob returns the value the encoded handle enc of a version found
// locates, read from its blob file; tr, if not nil, records the read.
func (d *DB) resolveBlob(enc []byte, tr lookupTracer) ([]byte, error) {
	if tr == nil {
		return d.readBlob(nil, enc, nil)
	}
	var rec blobRead
	value, err := d.readBlob(nil, enc, &rec)
	tr.blob(rec)
	return value, err
}

// lookupTracer records what lookup consulted, step by step. Explain's
// Trace is the one implementation; read.go knows only these hooks, so the
// read path does not depend on how an explanation is kept or printed.
type lookupTracer interface {
	// memtable: memtable i (0 the mutable one, then the immutable ones,
	// newest first) was searched; hit is the range tombstone it met.
	memtable(i int, found bool, kind base.Kind, hit lookupRangeDel)
	// outOfRange: an L0 table's key range rules the key out.
	outOfRange(level int, t *table)
	// table: a table was searched, at the cost stats says; hit is the
	// range tombstone it met.
	table(level int, t *table, stats sstable.LookupStats, found bool, kind base.Kind, hit lookupRangeDel, err error)
	// noTable: none of the level's tables holds the key's range.
	noTable(level, tables int)
	// blob: the version found was a handle, and its value was read.
	blob(rec blobRead)
	// merged: the lookup folded the operands it found, above the version
	// found last (or none), with the DB's merger; err is the merger's.
	merged(operands int, err error)
	// expiry: the version found expires at expiry, and the clock read
	// now (both Unix nanoseconds); it has expired if now ≥ expiry.
	expiry(expiry, now int64)
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

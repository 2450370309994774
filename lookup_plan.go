package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// placeBatch is how many places past the memtables a lookup plans at
// once: enough for every deeper level and a few L0 tables, so that a
// lookup of a settled tree plans once.
const placeBatch = 8

// tableProbe is what a lookup needs of a table before it reads anything:
// its filter, its reader, and whether it has range tombstones. The version
// keeps them per level, index for index with its tables, side by side: a
// missing key's lookup, which its filters end at every table, then finds
// its probes' addresses, and the verdicts' consequences, without a load
// of each table and reader on the way.
type tableProbe struct {
	filter    sstable.Filter // nil for a table without one
	reader    *sstable.Reader
	rangeDels bool // the table has range tombstones
}

// newTableProbe returns t's tableProbe.
func newTableProbe(t *table) tableProbe {
	r := t.reader
	return tableProbe{filter: r.Filter(), reader: r, rangeDels: len(r.RangeDels()) > 0}
}

// place is one place past the memtables that a lookup consults, in the
// order it must: an L0 table, or a deeper level's one table whose range
// holds the key, or the word that the level has none.
type place struct {
	level int
	// t is the table; nil for a deeper level none of whose tables holds
	// the key's range. A negative verdict of its filter needs nothing of
	// it but for a trace.
	t *table
	// probe is t's, when inRange.
	probe *tableProbe
	// inRange reports that t's key range holds the key: false only for
	// an L0 table, whose range is checked table by table.
	inRange bool
	// maybe is t's filter's verdict on the key when inRange: false only
	// when the filter rules the key out (a table without one: true).
	maybe bool
	// probed reports that the lookup has looked in t already and is back
	// for the versions below a merge operand it found there: the table
	// is counted as probed once.
	probed bool
}

// placeCursor is where a lookup's next batch of places starts: L0's table
// i while level is 0, then level by level.
type placeCursor struct {
	level, i int
}

// done reports that every place has been planned.
func (c *placeCursor) done() bool { return c.level == manifest.NumLevels }

// plan fills batch with the next places, after next, of a lookup of key
// (bloom.Hash h), advancing next, and returns how many; a deeper level
// with no table at all is no place. It asks the filters of every table
// of the batch whose range holds the key, one after another and before
// the caller acts on any verdict: the probes' loads, each into a filter
// that may be far from the CPU's caches, depend on none of the verdicts,
// so the CPU has them in flight at once (Go has no prefetch; independent
// loads are one). The filters come from the version's tableProbes.
func (v *version) plan(key []byte, h uint64, next *placeCursor, batch *[placeBatch]place) int {
	n := 0
	if next.level == 0 {
		l0 := v.tables[0]
		for ; next.i < len(l0) && n < placeBatch; next.i++ {
			t := l0[next.i]
			batch[n] = place{t: t, inRange: t.meta.ContainsUserKey(key), probe: &v.probes[0][next.i]}
			n++
		}
		if next.i < len(l0) {
			return v.probe(h, batch[:n])
		}
		next.level, next.i = 1, 0
	}
	for ; next.level < manifest.NumLevels && n < placeBatch; next.level++ {
		if len(v.tables[next.level]) == 0 {
			continue
		}
		p := place{level: next.level}
		if i := v.bounds[next.level].find(key); i >= 0 {
			p.t, p.inRange, p.probe = v.tables[next.level][i], true, &v.probes[next.level][i]
		}
		batch[n] = p
		n++
	}
	return v.probe(h, batch[:n])
}

// probe sets the verdicts of places, the tables found for a lookup of
// the key whose bloom.Hash is h, from their filters, and returns how many
// places there are.
func (*version) probe(h uint64, places []place) int {
	for i := range places {
		p := &places[i]
		if p.inRange {
			f := p.probe.filter
			p.maybe = f == nil || f.MayContainHash(h)
		}
	}
	return len(places)
}

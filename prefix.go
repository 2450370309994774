package bloomkv

import (
	"bytes"

	"github.com/bloomkv/bloomkv/sstable"
)

// SeekPrefixGE moves to the first key ≥ key (and ≥ the lower bound) whose
// prefix under Options.Prefix is key's prefix, and puts the iterator in
// prefix mode (Pebble's SeekPrefixGE, here in both directions): until the
// next First, Last, SeekGE or SeekLT, it shows only the keys with that
// prefix, as if its bounds were the prefix's (within its own). Next is
// false once the prefix's keys run out, Prev once they run out backward; a
// Prev after Next ran off the prefix's end moves to its last key, a Next
// after Prev ran off its start to its first key; another SeekPrefixGE
// starts another prefix. It returns false if no key ≥ key has the prefix.
// key is not retained.
//
// The point is what the seek does not read. Each table written under
// Options.Prefix holds the hashes of its keys' prefixes in its filter, so
// the seek asks the filter of each table whose key range overlaps the
// prefix's keys, and a table whose filter rules the prefix out is neither
// opened nor sought: most of them, for a prefix absent from a table, but
// for the filter's false positives. Memtables are always searched; tables
// with no filter, or written without Options.Prefix or under an extractor
// of another Name, always sought. Metrics counts the seeks and, per level,
// the tables considered, skipped and sought (LevelMetrics.PrefixProbes);
// DB.ExplainPrefix shows one seek's account.
//
// The keys shown are the keys ≥ key with the prefix, up to the first key
// without it, which under the extractor's contract (one prefix is one
// contiguous run of keys, see PrefixExtractor) are all of them.
//
// Without Options.Prefix there is no prefix: SeekPrefixGE stops the
// iterator with an *ArgumentError for opts.Prefix, which Error and Close
// return, so that the mistake is not taken for an absent prefix.
func (it *Iterator) SeekPrefixGE(key []byte) bool {
	if it.iterState == nil || it.err != nil {
		return false
	}
	ps := it.ps
	if ps == nil || ps.extractor == nil {
		it.err, it.pos = argError("opts.Prefix", "nil: SeekPrefixGE needs a prefix extractor"), posNone
		return false
	}
	ps.setPrefix(ps.extractor.Prefix(key))
	it.inPrefix = true
	// The prefix's keys all start with it, so they lie in [prefix, end):
	// the bounds of prefix mode, within the iterator's own.
	it.lower, it.upper = it.userLower, it.userUpper
	if it.lower == nil || bytes.Compare(it.lower, ps.prefix) < 0 {
		it.lower = ps.prefix
	}
	if ps.end != nil && (it.upper == nil || bytes.Compare(ps.end, it.upper) < 0) {
		it.upper = ps.end
	}
	ps.restrict(skipPrefix, it.lower, it.upper)
	if bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	ok := it.inner.SeekGE(key)
	ps.traceUnreached()
	it.readFrom(key)
	return it.readForward(it.findNext(ok, false))
}

// leavePrefix ends prefix mode, if the iterator is in it: the iterator's
// own bounds again, and every table read again. First, Last, SeekGE and
// SeekLT call it before they move.
func (it *Iterator) leavePrefix() {
	if !it.inPrefix {
		return
	}
	it.inPrefix = false
	it.lower, it.upper = it.userLower, it.userUpper
	it.ps.unrestrict(it.lower, it.upper)
}

// outsidePrefix reports whether, in prefix mode, userKey lacks the prefix:
// a key past the prefix's run, where a move in either direction stops.
func (it *Iterator) outsidePrefix(userKey []byte) bool {
	return it.inPrefix && !bytes.Equal(it.ps.extractor.Prefix(userKey), it.ps.prefix)
}

// appendPrefixEnd appends to dst the smallest key greater than every key
// that starts with prefix — prefix with its last byte below 0xff
// incremented, and what follows it dropped — and returns it; nil (no such
// key: unbounded) if prefix is empty or all 0xff.
func appendPrefixEnd(dst, prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			dst = append(dst, prefix[:i+1]...)
			dst[i]++
			return dst
		}
	}
	return nil
}

// considerPrefix decides whether a prefix seek reads table t of level, whose
// key range overlaps the prefix's: unless its filter rules the prefix out.
// It counts the decision and traces it.
func (ps *tableSkip) considerPrefix(level int, t *table) bool {
	sought := t.reader.MayContainPrefixHash(ps.extractor, ps.prefixHash)
	ps.counters.levels[level].recordPrefix(sought)
	if ps.tr != nil {
		ps.tr.skipTable(level, t, true, prefixVerdict(t.reader, ps.extractor, sought))
	}
	return sought
}

// prefixVerdict names the answer that decided whether a prefix seek reads
// r (mayContain: r.MayContainPrefixHash's): absent, or why not — no filter, a
// filter holding no prefixes of p's Name, or a filter's "maybe".
func prefixVerdict(r *sstable.Reader, p *PrefixExtractor, mayContain bool) FilterVerdict {
	switch {
	case !mayContain:
		return FilterAbsent
	case r.Filter() == nil:
		return NoFilter
	case r.Properties().FilterPrefix != p.Name:
		return FilterNoPrefixes
	}
	return FilterMaybe
}

// skipTracer records what a prefix seek or a bounded scan consulted, step by step, as
// lookupTracer does for a point lookup; Trace is the one implementation.
type skipTracer interface {
	// skipMemtable: memtable i (0 the mutable one, then the immutable
	// ones, newest first) is searched, as every memtable is.
	skipMemtable(i int)
	// skipTable: a table whose key range overlaps the prefix's or the
	// range's keys (inRange), or not; verdict is its filter's answer
	// (its range filter's, for a range), which decided whether the table
	// is sought.
	skipTable(level int, t *table, inRange bool, verdict FilterVerdict)
	// noTable: the seek reached none of the level's tables.
	noTable(level, tables int)
}

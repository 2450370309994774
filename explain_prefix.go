package bloomkv

import (
	"bytes"
	"fmt"
)

// ExplainPrefix makes a prefix seek of key, as Iterator.SeekPrefixGE does,
// walks the prefix's keys to their end with Next, and returns the seek's
// account: every memtable searched, each L0 table with whether its key
// range overlaps the prefix's keys and, if it does, its filter's verdict
// for the prefix and whether it was sought, and each table of a deeper
// level the seek reached (or the level, if it reached none), in the order
// the seek consulted them, then the number of keys found. The steps are
// recorded by the code that decides to skip or seek each table, not
// re-enacted, so the seek counts in Metrics like any prefix seek.
//
// The error is an *ArgumentError for opts.Prefix without Options.Prefix,
// ErrClosed, or a read error, with the Trace up to the failure.
func (d *DB) ExplainPrefix(key []byte) (*Trace, error) {
	if d.opts.Prefix == nil {
		return nil, argError("opts.Prefix", "nil: a prefix seek needs a prefix extractor")
	}
	it, err := d.newIter(liveSeq, nil)
	if err != nil {
		return nil, err
	}
	t := &Trace{Key: bytes.Clone(key), Prefix: bytes.Clone(d.opts.Prefix.Prefix(key)), SeqNum: uint64(it.seq)}
	if t.Prefix == nil {
		t.Prefix = []byte{} // non-nil: the mark of a prefix seek's trace
	}
	it.ps.tr = t
	for ok := it.SeekPrefixGE(key); ok; ok = it.Next() {
		t.Keys++
	}
	t.Found = t.Keys > 0
	return t, it.Close()
}

// prefixSummary is the end of a prefix seek's Summary: what it sought and
// found.
func (t *Trace) prefixSummary(n TraceTotals) []string {
	return t.soughtFound(n, "a filter of the prefix", "no key with the prefix")
}

// prefixString is String for a prefix seek's trace.
func (t *Trace) prefixString() string {
	return t.skipString(fmt.Sprintf("prefix seek %q (prefix %q) at seqnum %d", t.Key, t.Prefix, t.SeqNum), "prefix filter")
}

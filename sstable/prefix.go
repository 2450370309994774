package sstable

import (
	"errors"

	"github.com/bloomkv/bloomkv/bloom"
)

// PrefixExtractor says what a key's prefix is, for prefix filters (Pebble's
// Comparer.Split, RocksDB's prefix_extractor): a table written with one
// holds the hash of each key's prefix in its filter beside the key's own,
// so that a seek within one prefix skips every table whose filter rules
// the prefix out.
//
// Split must be deterministic, and every key that sorts between two keys
// of a prefix should have that prefix too, so that one prefix is one
// contiguous run of keys: true of a fixed-length prefix, or of everything
// up to and including the first separator byte such as '/' (without the
// separator it is not: "a\x00/x", of prefix "a\x00", sorts between "a/"
// and "a/x", of prefix "a").
type PrefixExtractor struct {
	// Name identifies the extractor. It is recorded in each table whose
	// filter holds prefixes (Properties.FilterPrefix), and a prefix seek
	// consults a table's filter only if the table's name is its own: a
	// table written under another extractor, or none, is read.
	Name string
	// Split returns the length of key's prefix. A result outside
	// [0, len(key)] is clamped into it.
	Split func(key []byte) int
}

// check reports whether p, which may be nil (no prefixes), is usable.
func (p *PrefixExtractor) check() error {
	switch {
	case p == nil:
		return nil
	case p.Name == "":
		return errors.New("the extractor has no Name")
	case p.Split == nil:
		return errors.New("the extractor has no Split")
	}
	return nil
}

// split returns the length of key's prefix, within [0, len(key)].
func (p *PrefixExtractor) split(key []byte) int {
	return min(max(p.Split(key), 0), len(key))
}

// Prefix returns key's prefix; it aliases key.
func (p *PrefixExtractor) Prefix(key []byte) []byte { return key[:p.split(key)] }

// MayContainPrefix reports whether the table may hold a key whose prefix
// under extractor p is prefix. It is false only when the table's filter
// holds prefixes under an extractor named p.Name and rules prefix out; a
// table with no filter, or one written without that extractor, may hold
// anything. It reads nothing.
func (r *Reader) MayContainPrefix(p *PrefixExtractor, prefix []byte) bool {
	return r.MayContainPrefixHash(p, bloom.Hash(prefix))
}

// MayContainPrefixHash is MayContainPrefix of the prefix whose bloom.Hash
// is h: a seek that asks every table in its range hashes its prefix once.
func (r *Reader) MayContainPrefixHash(p *PrefixExtractor, h uint64) bool {
	if r.filter == nil || p == nil || r.props.FilterPrefix != p.Name {
		return true
	}
	return r.filter.MayContainHash(h)
}

package workload

import (
	"bytes"
	"fmt"
)

// The prefix workloads' keys. Present key i is written as the prefix of
// group i/PrefixKeys, then PrefixSeparator, then the suffix i%PrefixKeys:
// a group's keys share their prefix and are contiguous in key order. The
// prefix of present group g is the number 2g, zero-padded; the odd numbers
// 2g+1 are the missing prefixes, each sorting between two present groups
// (inside the key range of every table that covers its neighbours), so
// that no key-range check can rule it out: only a prefix filter can.
//
// With KeySize bytes per key and PrefixKeys keys per group, the suffix has
// the digits of PrefixKeys−1, the separator one byte, and the prefix the
// rest.

// PrefixSeparator ends a prefix workload key's prefix.
const PrefixSeparator = '/'

// DefaultPrefixKeys is the keys per prefix of the prefix workloads.
const DefaultPrefixKeys = 16

// PrefixLen returns the length of key's prefix under the prefix
// workloads' layout: up to and including its first PrefixSeparator, or the
// whole key if it has none. It is the Split of the stores' prefix
// extractors (see benchstore.PrefixExtractor).
func PrefixLen(key []byte) int {
	if i := bytes.IndexByte(key, PrefixSeparator); i >= 0 {
		return i + 1
	}
	return len(key)
}

// prefixLayout is the digits of a prefix key's two parts.
type prefixLayout struct {
	perPrefix      int // keys per prefix
	groups         int // present prefixes: ⌈N/perPrefix⌉
	prefix, suffix int // digits
}

// prefixLayout returns the layout of the prefix keys of k at perPrefix
// keys per prefix (0: DefaultPrefixKeys), or why they do not fit KeySize.
func (k *Keys) prefixLayout(perPrefix int) (prefixLayout, error) {
	if perPrefix == 0 {
		perPrefix = DefaultPrefixKeys
	}
	if perPrefix < 1 {
		return prefixLayout{}, fmt.Errorf("workload: %d keys per prefix is less than 1", perPrefix)
	}
	l := prefixLayout{perPrefix: perPrefix, groups: (k.N + perPrefix - 1) / perPrefix}
	l.suffix = len(fmt.Sprint(perPrefix - 1))
	l.prefix = k.KeySize - 1 - l.suffix
	if need := len(fmt.Sprint(2*uint64(l.groups) - 1)); l.prefix < need {
		return l, fmt.Errorf("workload: key size %d is too short for %d prefixes of %d keys: the prefix needs %d digits, the separator 1 and the suffix %d",
			k.KeySize, l.groups, perPrefix, need, l.suffix)
	}
	return l, nil
}

// digits appends x as width zero-padded decimal digits.
func digits(dst []byte, x uint64, width int) []byte {
	start := len(dst)
	for range width {
		dst = append(dst, '0')
	}
	for i := len(dst) - 1; i >= start && x > 0; i-- {
		dst[i] = byte('0' + x%10)
		x /= 10
	}
	return dst
}

// prefix appends the prefix numbered x (2g for present group g, 2g+1 for
// a missing one), separator included, to dst[:0].
func (l *prefixLayout) appendPrefix(dst []byte, x uint64) []byte {
	return append(digits(dst[:0], x, l.prefix), PrefixSeparator)
}

// key appends present key i in prefix form to dst[:0].
func (l *prefixLayout) key(dst []byte, i int) []byte {
	dst = l.appendPrefix(dst, 2*uint64(i/l.perPrefix))
	return digits(dst, uint64(i%l.perPrefix), l.suffix)
}

// groupKeys returns how many keys present group g holds: perPrefix, but
// for a last group the N keys leave short.
func (l *prefixLayout) groupKeys(n, g int) int { return min(l.perPrefix, n-g*l.perPrefix) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PrefixSeeker is a Store that can seek within a key prefix, which the
// prefix workloads need: SeekPrefix reads up to n entries whose keys begin
// with prefix (a prefix of the prefix workloads' layout, separator
// included), in key order from the first, with the engine's prefix seek —
// which may skip a table whose prefix filter rules the prefix out — and
// returns how many it read.
type PrefixSeeker interface {
	SeekPrefix(prefix []byte, n int) (int, error)
}

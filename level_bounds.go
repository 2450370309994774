package bloomkv

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sort"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// levelBounds packs the key ranges of one level's tables (a level of L1 or
// deeper: the ranges ascend and do not overlap) for the binary search of
// every point read. A step of a search of the FileMetadata slice is a
// bytes.Compare of two keys, which for keys that share a long prefix —
// the bench's 16-byte decimal keys share eight zeros — is most of a
// missing-key Get's table search. Here each bound is reduced to the eight
// bytes after the prefix that every bound of the level shares, a uint64
// compared in one instruction; only equal words compare the whole keys.
type levelBounds struct {
	// prefix is the longest prefix of every bound.
	prefix []byte
	// For table i of n, words[i] is the eight bytes after prefix of its
	// smallest key, words[n+i] of its largest, big-endian and zero-padded
	// (the largest apart, so that a search walks one dense array). Bound
	// j — table j/2's smallest key if j is even, its largest if odd — is
	// keys[ends[j-1]:ends[j]].
	words []uint64
	keys  []byte
	ends  []uint32
}

func newLevelBounds(files []*manifest.FileMetadata) levelBounds {
	var b levelBounds
	if len(files) == 0 {
		return b
	}
	n := 0
	for _, f := range files {
		n += len(f.Smallest.UserKey) + len(f.Largest.UserKey)
	}
	// The bounds ascend, so the prefix of the first and last is everyone's.
	first, last := files[0].Smallest.UserKey, files[len(files)-1].Largest.UserKey
	p := 0
	for p < min(len(first), len(last)) && first[p] == last[p] {
		p++
	}
	b.prefix = bytes.Clone(first[:p])
	b.words = make([]uint64, 2*len(files))
	b.keys = make([]byte, 0, n)
	b.ends = make([]uint32, 0, 2*len(files))
	for i, f := range files {
		b.words[i], b.words[len(files)+i] = word(f.Smallest.UserKey[p:]), word(f.Largest.UserKey[p:])
		for _, k := range [2][]byte{f.Smallest.UserKey, f.Largest.UserKey} {
			b.keys = append(b.keys, k...)
			b.ends = append(b.ends, uint32(len(b.keys)))
		}
	}
	return b
}

// levelRun is a run of a level's tables in the order of a new version's
// level: n tables the old version's level holds too, from its table old
// on, or, with old -1, one table new to the level.
type levelRun struct {
	old, n int
}

// spliceLevelBounds returns newLevelBounds(files), built from old, the
// bounds of the old version's level of oldN tables, where files are runs
// of it and new tables: the runs' words and keys copied, their ends
// shifted, only the new tables' bounds read from their metadata. Unless
// the prefix every bound shares changes — a new first or last table —
// which changes every word: then it builds them anew.
func spliceLevelBounds(old *levelBounds, oldN int, files []*manifest.FileMetadata, runs []levelRun) levelBounds {
	var b levelBounds
	n := len(files)
	if n == 0 {
		return b
	}
	first, last := files[0].Smallest.UserKey, files[n-1].Largest.UserKey
	p := len(old.prefix)
	if oldN == 0 || len(first) < p || len(last) < p || !bytes.Equal(first[:p], old.prefix) || !bytes.Equal(last[:p], old.prefix) ||
		len(first) > p && len(last) > p && first[p] == last[p] {
		return newLevelBounds(files)
	}
	b.prefix = old.prefix
	b.words = make([]uint64, 2*n)
	b.keys = make([]byte, 0, len(old.keys))
	b.ends = make([]uint32, 0, 2*n)
	i := 0
	for _, r := range runs {
		if r.old < 0 {
			f := files[i]
			b.words[i], b.words[n+i] = word(f.Smallest.UserKey[p:]), word(f.Largest.UserKey[p:])
			for _, k := range [2][]byte{f.Smallest.UserKey, f.Largest.UserKey} {
				b.keys = append(b.keys, k...)
				b.ends = append(b.ends, uint32(len(b.keys)))
			}
			i++
			continue
		}
		copy(b.words[i:i+r.n], old.words[r.old:r.old+r.n])
		copy(b.words[n+i:n+i+r.n], old.words[oldN+r.old:oldN+r.old+r.n])
		start := uint32(0)
		if r.old > 0 {
			start = old.ends[2*r.old-1]
		}
		shift := uint32(len(b.keys)) - start // modulo 2³²: the ends shift down as well as up
		b.keys = append(b.keys, old.keys[start:old.ends[2*(r.old+r.n)-1]]...)
		for _, e := range old.ends[2*r.old : 2*(r.old+r.n)] {
			b.ends = append(b.ends, e+shift)
		}
		i += r.n
	}
	return b
}

// word returns the first eight bytes of k as a big-endian number, k
// zero-padded if shorter. Two words that differ order as their keys do;
// equal words say nothing.
func word(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var buf [8]byte
	copy(buf[:], k)
	return binary.BigEndian.Uint64(buf[:])
}

// bound returns bound j's key.
func (b *levelBounds) bound(j int) []byte {
	start := uint32(0)
	if j > 0 {
		start = b.ends[j-1]
	}
	return b.keys[start:b.ends[j]]
}

// find returns the index of the table whose range holds userKey, or -1.
//
// The search of the words is free of branches: a branch on each comparison goes either way at random for a
// random key, and mispredicted, costs more than the step. Only where the
// key's word equals a largest key's word do whole keys decide, by a
// search of their own over the tables whose largest keys have that word.
func (b *levelBounds) find(userKey []byte) int {
	// Every bound starts with prefix, so a key that does not sorts before
	// or after all of them: no table holds it.
	n := len(b.words) / 2
	if n == 0 || !bytes.HasPrefix(userKey, b.prefix) {
		return -1
	}
	w := word(userKey[len(b.prefix):])
	largest := b.words[n:]
	// lo: the first table whose largest key's word is ≥ w, or n. The
	// answer is in [lo, lo+m]; each step halves m, moving lo up by half
	// where the word below lo+half is < w: the subtraction's borrow, made
	// a mask (the compiler keeps a branch for an if here, to spare the
	// loop a dependence on a conditional move).
	lo := 0
	for m := n; m > 1; {
		half := m / 2
		_, below := bits.Sub64(largest[lo+half-1], w, 0)
		lo += half & -int(below)
		m -= half
	}
	if largest[lo] < w {
		lo++
	}
	if lo < n && largest[lo] == w {
		// Of the tables from lo whose largest keys' words are w, in key
		// order, the first whose largest key is ≥ userKey.
		lo += sort.Search(n-lo, func(i int) bool {
			return largest[lo+i] != w || bytes.Compare(b.bound(2*(lo+i)+1), userKey) >= 0
		})
	}
	if lo < n {
		if x := b.words[lo]; x < w || x == w && bytes.Compare(b.bound(2*lo), userKey) <= 0 {
			return lo
		}
	}
	return -1
}

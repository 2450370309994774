// Package bytealg holds the byte-string helpers that more than one of
// bloomkv's packages needs on a hot path, written once.
package bytealg

import (
	"encoding/binary"
	"math/bits"
)

// CommonPrefix returns the length of the longest common prefix of a and
// b, comparing eight bytes at a time: the first differing byte of a word
// is its lowest set byte of the two words' xor, read little-endian.
func CommonPrefix(a, b []byte) int {
	m := min(len(a), len(b))
	n := 0
	for ; n+8 <= m; n += 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)/8
		}
	}
	for n < m && a[n] == b[n] {
		n++
	}
	return n
}

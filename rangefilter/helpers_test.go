package rangefilter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// A shape generates the keys of one kind from integers, in order: key(x)
// sorts as x does.
type shape struct {
	name string
	key  func(dst []byte, x uint64) []byte
	max  uint64 // x < max
}

var (
	bigEndian = shape{"big-endian", func(dst []byte, x uint64) []byte {
		return binary.BigEndian.AppendUint64(dst[:0], x)
	}, 1<<64 - 1}
	decimal = shape{"decimal", func(dst []byte, x uint64) []byte {
		return fmt.Appendf(dst[:0], "%016d", x)
	}, 1e16}
	// prefixSuffix keys are "user%04d/event%010d": 10,000 users with up to
	// 10^10 events each.
	prefixSuffix = shape{"prefix/suffix", func(dst []byte, x uint64) []byte {
		return fmt.Appendf(dst[:0], "user%04d/event%010d", x/1e10, x%1e10)
	}, 1e14}
	shapes = []shape{bigEndian, decimal, prefixSuffix}
)

// sortedKeys is the oracle: a table's distinct keys, sorted.
type sortedKeys [][]byte

func newSortedKeys(keys [][]byte) sortedKeys {
	s := slices.Clone(keys)
	slices.SortFunc(s, bytes.Compare)
	return slices.CompactFunc(s, bytes.Equal)
}

// anyIn reports whether a key lies in [lo, hi).
func (s sortedKeys) anyIn(lo, hi []byte) bool {
	i := sort.Search(len(s), func(i int) bool { return bytes.Compare(s[i], lo) >= 0 })
	return i < len(s) && bytes.Compare(s[i], hi) < 0
}

// build returns the decoded filter of keys, which must be sorted.
func build(t testing.TB, keys [][]byte, bitsPerKey float64) *Filter {
	t.Helper()
	f, err := Decode(encode(t, keys, bitsPerKey))
	if err != nil {
		t.Fatalf("decoding a filter just built: %v", err)
	}
	return f
}

// encode returns the encoding of the filter of keys, which must be sorted.
func encode(t testing.TB, keys [][]byte, bitsPerKey float64) []byte {
	t.Helper()
	b, err := NewBuilder(bitsPerKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := b.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	data, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// shapeKeys returns n distinct sorted keys of sh for integers drawn from
// [base, base+spread), and the integers.
func shapeKeys(r *rand.Rand, sh shape, n int, base, spread uint64) ([][]byte, []uint64) {
	xs := make([]uint64, 0, n)
	for len(xs) < n {
		xs = append(xs, base+r.Uint64N(spread))
		if len(xs) == n {
			slices.Sort(xs)
			xs = slices.Compact(xs)
		}
	}
	keys := make([][]byte, n)
	for i, x := range xs {
		keys[i] = sh.key(nil, x)
	}
	return keys, xs
}

// fuzzyKey returns a random byte string over a small alphabet, with the
// bytes at the edges (0x00, 0xff) and lengths from 0 to max, so that keys
// share prefixes, end inside one another and bounds fall between them.
func fuzzyKey(r *rand.Rand, max int) []byte {
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0x7f, 0xfe, 0xff}
	k := make([]byte, r.IntN(max+1))
	for i := range k {
		k[i] = alphabet[r.IntN(len(alphabet))]
	}
	return k
}

// nearby returns a bound near key: the key itself, a prefix, the key with
// a byte appended or its last byte changed by one, or a random string.
func nearby(r *rand.Rand, key []byte) []byte {
	k := slices.Clone(key)
	switch r.IntN(6) {
	case 0:
		return k
	case 1:
		return k[:r.IntN(len(k)+1)]
	case 2:
		return append(k, byte(r.IntN(3))*0x7f)
	case 3:
		if len(k) > 0 {
			k[len(k)-1]++
		}
		return k
	case 4:
		if len(k) > 0 {
			k[len(k)-1]--
		}
		return k
	}
	return fuzzyKey(r, 8)
}

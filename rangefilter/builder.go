package rangefilter

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/bloomkv/bloomkv/internal/bytealg"
	"github.com/bloomkv/bloomkv/internal/murmur"
)

// Bits per key accepted by NewBuilder. At 3 a filter answers a range of ℓ
// values falsely with probability at most ℓ/2; above 40 the bound, below
// 10^−11 per value, is smaller than any table's chance of other faults.
const (
	MinBitsPerKey = 3
	MaxBitsPerKey = 40
)

// MaxKeys is the most distinct keys one filter holds: the positions in its
// Elias–Fano high bits are 32-bit.
const MaxKeys = 1 << 30

// Builder builds the range filter of one table from its keys, given in
// sorted order as a table writer produces them. It keeps the keys — each
// as the bytes it shares with the previous one's and the rest, cut after
// the bytes the mapping may read — until Finish maps them, which needs the
// whole table's alphabets; it gathers those as the keys come. A Builder is
// not safe for concurrent use.
type Builder struct {
	bitsPerKey float64
	keys       int
	first      []byte // the first key
	prev       []byte // the previous key, whole, for the order check
	prefixLen  int    // the length of the keys' common prefix so far
	prevKept   int    // the length of the previous key as kept
	kept       []byte // per key: uvarint shared, uvarint rest, rest
	alpha      alphabets
	places     placeValues
	acc        []uint64
	vals       []uint64
	hashed     []uint64
	buf        []uint64
}

// NewBuilder returns a Builder of filters of bitsPerKey bits per key, in
// [MinBitsPerKey, MaxBitsPerKey]; for other values it returns an
// *ArgumentError. The filter answers an empty range of ℓ values of the key
// mapping falsely with probability at most ℓ/2^(bitsPerKey−2). For n
// distinct mapped values its hashes take at most bitsPerKey·n bits and
// its select samples 0.13·n more; the header, the common prefix, 32 bytes
// per position of the mapping and a few words of padding come on top.
// Keys dense enough for an exact filter take fewer bits.
func NewBuilder(bitsPerKey float64) (*Builder, error) {
	if err := checkBitsPerKey(bitsPerKey); err != nil {
		return nil, err
	}
	return &Builder{bitsPerKey: bitsPerKey}, nil
}

// SetBitsPerKey changes the bits per key of the filters Finish builds
// from now on, under NewBuilder's rule (an *ArgumentError outside
// [MinBitsPerKey, MaxBitsPerKey], and the builder unchanged), so that a
// table writer can reuse one builder, and its memory, across tables of
// different settings.
func (b *Builder) SetBitsPerKey(bitsPerKey float64) error {
	if err := checkBitsPerKey(bitsPerKey); err != nil {
		return err
	}
	b.bitsPerKey = bitsPerKey
	return nil
}

// checkBitsPerKey is NewBuilder's rule on bitsPerKey.
func checkBitsPerKey(bitsPerKey float64) error {
	if math.IsNaN(bitsPerKey) || bitsPerKey < MinBitsPerKey || bitsPerKey > MaxBitsPerKey {
		return argError("bitsPerKey", bitsPerKey, "must be in [%d, %d]", MinBitsPerKey, MaxBitsPerKey)
	}
	return nil
}

// CheckBitsPerKey reports whether bitsPerKey is a setting NewBuilder
// accepts: nil, or the *ArgumentError NewBuilder would return.
func CheckBitsPerKey(bitsPerKey float64) error { return checkBitsPerKey(bitsPerKey) }

// Reset empties the builder for the next table, keeping its memory.
func (b *Builder) Reset() {
	b.keys = 0
	b.first, b.prev, b.kept = b.first[:0], b.prev[:0], b.kept[:0]
}

// Keys returns the distinct keys added since the last Reset.
func (b *Builder) Keys() int { return b.keys }

// Add adds the next key of the table. Keys must come in sorted order
// (bytes.Compare); a key equal to the previous one is the same key, as
// the versions of one user key in a table are. A key below the previous
// one returns an *ArgumentError and is not added: a filter built from
// keys out of order would miss some. The builder copies what it needs of
// key.
func (b *Builder) Add(key []byte) error {
	shared := 0 // the bytes key shares with the previous key
	if b.keys > 0 {
		shared = bytealg.CommonPrefix(key, b.prev)
		switch {
		case shared == len(key) && shared == len(b.prev):
			return nil
		case shared == len(key) || shared < len(b.prev) && key[shared] < b.prev[shared]:
			return argError("key", printable(key), "sorts before the previous key %s", printable(b.prev))
		}
		if b.keys == MaxKeys {
			return argError("key", printable(key), "a filter holds at most %d keys", MaxKeys)
		}
		// Sorted keys share with the first what each shares with the one
		// before it, at least.
		b.prefixLen = min(b.prefixLen, shared)
	} else {
		b.first = append(b.first[:0], key...)
		b.prefixLen = len(key)
		// No key is kept longer than the first's length plus
		// maxPositions (below).
		b.alpha.reset(len(key) + maxPositions + 1)
	}
	b.keys++
	b.prev = append(b.prev[:0], key...)
	// The mapping reads no key past the common prefix, at most
	// lcp(first, key), plus maxPositions bytes.
	kept := key[:min(len(key), b.prefixLen+maxPositions)]
	shared = min(shared, b.prevKept, len(kept))
	b.kept = binary.AppendUvarint(b.kept, uint64(shared))
	b.kept = binary.AppendUvarint(b.kept, uint64(len(kept)-shared))
	b.kept = append(b.kept, kept[shared:]...)
	b.prevKept = len(kept)
	b.alpha.add(kept, shared)
	return nil
}

// mapKeys sets vals to the distinct values km maps the kept keys to, in
// order. A key's value is a sum over its positions (placeValues), and the
// sum over the positions a key shares with the previous one is the
// previous key's, so acc keeps each position's partial sum and a key adds
// only the bytes that differ from the previous key's: one table lookup
// and one add each.
func (b *Builder) mapKeys(km *keyMap) error {
	b.places = km.placeValues(b.places)
	p, c := km.p, len(km.prefix)
	b.acc = append(b.acc[:0], make([]uint64, p+1)...)
	places, acc := b.places, b.acc
	b.vals = b.vals[:0]
	for rec := b.kept; len(rec) > 0; {
		shared, n := binary.Uvarint(rec)
		rec = rec[n:]
		restLen, n := binary.Uvarint(rec)
		rest := rec[n : n+int(restLen)]
		rec = rec[n+int(restLen):]
		// Positions s ≤ i < e (after the prefix) are this key's own bytes
		// within the mapping's P.
		// INVARIANT: acc[:s+1] is the previous key's, which shares the
		// positions before s with this one (s is 0 for the first key).
		s := min(max(int(shared)-c, 0), p)
		e := min(max(int(shared)+len(rest)-c, 0), p)
		v := acc[s]
		if s < e {
			// s < P: s ≥ shared − c, so own starts within rest.
			own := rest[s+c-int(shared) : e+c-int(shared)]
			for j, ch := range own {
				i := s + j
				v += places[256*i+int(ch)]
				acc[i+1] = v
			}
		}
		switch n := len(b.vals); {
		case n == 0 || v > b.vals[n-1]:
			b.vals = append(b.vals, v)
		case v < b.vals[n-1]:
			// f is monotone and the keys sorted: this cannot happen.
			return argError("key", fmt.Sprintf("number %d", n), "maps below the previous key (a bug in rangefilter)")
		}
	}
	return nil
}

// Finish returns the encoded filter of the keys added since the last
// Reset, in the format the package doc draws; Decode reads it. With no
// keys it returns an error wrapping ErrEmpty. The builder may then be
// Reset and reused.
func (b *Builder) Finish() ([]byte, error) {
	if b.keys == 0 {
		return nil, ErrEmpty
	}
	km := b.alpha.keyMap(b.first[:b.prefixLen])
	if err := b.mapKeys(&km); err != nil {
		return nil, err
	}
	vals := b.vals
	seed := murmur.Mix13(uint64(len(vals)) ^ murmur.Mix13(vals[0]^murmur.Mix13(vals[len(vals)-1])))
	if cap(b.hashed) < len(vals) {
		b.hashed = make([]uint64, len(vals))
		b.buf = make([]uint64, len(vals))
	}
	f := buildIntFilter(vals, b.hashed, b.buf, b.bitsPerKey, seed)
	return appendFilter(nil, uint64(b.keys), uint64(len(vals)), &km, &f), nil
}

// printable quotes a key for an error message, cut to 64 bytes.
func printable(key []byte) string {
	if len(key) > 64 {
		return quote(key[:64]) + "…"
	}
	return quote(key)
}

func quote(b []byte) string { return strconv.Quote(string(b)) }

package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Default sizes and seed.
const (
	DefaultKeySize   = 16
	DefaultValueSize = 100
	DefaultSeed      = 1
)

// Keys generates the present and missing keys and the values of a run.
type Keys struct {
	N         int    // present keys: 0 … N−1
	KeySize   int    // bytes per key; at least digits(2N)
	ValueSize int    // bytes per value
	Seed      uint64 // seeds the values and every workload's generator

	values []byte
}

// NewKeys returns the keys of a run, checking the sizes.
func NewKeys(n, keySize, valueSize int, seed uint64) (*Keys, error) {
	if n < 1 {
		return nil, fmt.Errorf("workload: number of keys %d is less than 1", n)
	}
	if need := len(fmt.Sprint(2*uint64(n) - 1)); keySize < need {
		return nil, fmt.Errorf("workload: key size %d is less than the %d digits %d keys need", keySize, need, n)
	}
	if valueSize < 0 {
		return nil, fmt.Errorf("workload: value size %d is negative", valueSize)
	}
	k := &Keys{N: n, KeySize: keySize, ValueSize: valueSize, Seed: seed}
	k.values = makeValues(max(1<<20, 4*valueSize), seed)
	return k, nil
}

// makeValues returns size pseudo-random printable bytes (' ' to '~') in
// which each 100-byte stretch is 50 random bytes repeated: compressible to
// about half. overwrittenValue relies on their being below 0x80.
func makeValues(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x76616c756573)) // "values"
	b := make([]byte, size)
	for i := 0; i < size; i += 100 {
		half := b[i:min(i+50, size)]
		for j := range half {
			half[j] = byte(' ' + r.IntN(95))
		}
		copy(b[min(i+50, size):min(i+100, size)], half)
	}
	return b
}

// encode writes x as KeySize zero-padded decimal digits into dst.
func (k *Keys) encode(dst []byte, x uint64) []byte {
	dst = dst[:0]
	for range k.KeySize {
		dst = append(dst, '0')
	}
	for i := k.KeySize - 1; i >= 0 && x > 0; i-- {
		dst[i] = byte('0' + x%10)
		x /= 10
	}
	return dst
}

// Present appends present key i (0 ≤ i < N) to dst[:0] and returns it.
func (k *Keys) Present(dst []byte, i int) []byte { return k.encode(dst, 2*uint64(i)) }

// Missing appends missing key i (0 ≤ i < N) to dst[:0] and returns it: it
// sorts after Present(i) and before Present(i+1).
func (k *Keys) Missing(dst []byte, i int) []byte { return k.encode(dst, 2*uint64(i)+1) }

// Value returns the value of present key i, the one every fill leaves it
// with. The slice is shared: do not modify it.
func (k *Keys) Value(i int) []byte {
	span := len(k.values) - k.ValueSize
	off := int((uint64(i) * 7919 * 101) % uint64(span+1))
	return k.values[off : off+k.ValueSize]
}

// overwrittenValue appends to dst[:0] the value filloverwrite gives write
// j (0 ≤ j < MaxWritesPerKey−1) of present key i when it is not the key's
// last: Value(i) with its first byte set to 0x80+j. Value's bytes are all
// below 0x80, so the mark sets the value apart from Value(i), the last
// write's, and from the key's other writes, at Value's size and about its
// compressibility. ValueSize must be at least 1.
func (k *Keys) overwrittenValue(dst []byte, i, j int) []byte {
	dst = append(dst[:0], k.Value(i)...)
	dst[0] = 0x80 + byte(j)
	return dst
}

// rng returns the generator of the named workload: seeded by Seed and name.
func (k *Keys) rng(name string) *rand.Rand {
	var h uint64 = 14695981039346656037 // FNV-1a of the name
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return rand.New(rand.NewPCG(k.Seed, h))
}

// ParseCounts parses a list of key counts (the benchmarks' -sizes), each a
// number with an optional K (thousand) or M (million) suffix:
// "500K,1M,10M,30M".
func ParseCounts(list string) ([]int, error) {
	var sizes []int
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		mult, num := 1.0, item
		switch {
		case strings.HasSuffix(strings.ToUpper(item), "M"):
			mult, num = 1e6, item[:len(item)-1]
		case strings.HasSuffix(strings.ToUpper(item), "K"):
			mult, num = 1e3, item[:len(item)-1]
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil || !(x*mult >= 1) || x*mult > 1e12 {
			return nil, fmt.Errorf("workload: size %q: want a count of keys such as 500K or 10M", item)
		}
		sizes = append(sizes, int(math.Round(x*mult)))
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("workload: no size in %q", list)
	}
	return sizes, nil
}

package rangefilter

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
)

// boundsPerSet is the number of pairs of bounds drawn per key set: fewer
// under -race, which queries ten times slower.
var boundsPerSet = sizeFor(60, 25)

// checkNoFalseNegatives queries f with every range the pairs of bounds
// make and fails on a range the oracle holds a key in that f rules out.
func checkNoFalseNegatives(t *testing.T, f *Filter, oracle sortedKeys, bounds [][]byte) {
	t.Helper()
	for _, lo := range bounds {
		for _, hi := range bounds {
			if oracle.anyIn(lo, hi) && !f.MayContainRange(lo, hi) {
				t.Fatalf("false negative: [%q, %q) holds a key of %d, the filter says no", lo, hi, len(oracle))
			}
		}
	}
}

// TestNoFalseNegativesShapes builds filters of each key shape — sparse
// and dense, one table's keys near one another or spread — and queries
// ranges between keys, their neighbours and random integers.
func TestNoFalseNegativesShapes(t *testing.T) {
	for _, sh := range shapes {
		for _, tc := range []struct {
			n            int
			base, spread uint64
		}{
			{1, 0, 1 << 20},
			{2, 0, 3},
			{50, 0, sh.max},
			{300, sh.max / 3, 400},
			{300, sh.max / 2, 1e6},
			{1000, 0, sh.max},
			{200, sh.max - 1000, 1000}, // the top of the shape's values
		} {
			for _, bpk := range []float64{MinBitsPerKey, 8, 16, 23.5} {
				r := rand.New(rand.NewPCG(uint64(tc.n), uint64(bpk*10)))
				keys, xs := shapeKeys(r, sh, tc.n, tc.base, min(tc.spread, sh.max-tc.base))
				f := build(t, keys, bpk)
				oracle := newSortedKeys(keys)
				var bounds [][]byte
				for i := range boundsPerSet {
					x := xs[r.IntN(len(xs))]
					switch i % 3 {
					case 0:
						x += r.Uint64N(5)
					case 1:
						x -= min(x, r.Uint64N(5))
					}
					bounds = append(bounds, sh.key(nil, min(x, sh.max-1)), nearby(r, keys[r.IntN(len(keys))]))
				}
				bounds = append(bounds, nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
				checkNoFalseNegatives(t, f, oracle, bounds)
				for _, k := range keys {
					if !f.MayContainRange(k, append(slices.Clone(k), 0)) {
						t.Fatalf("%s: key %q not in [key, key+\\x00)", sh.name, k)
					}
				}
			}
		}
	}
}

// TestNoFalseNegativesAnyBytes builds filters of random byte strings over
// a small alphabet with the edge bytes — keys that are prefixes of others,
// empty keys, long common prefixes, bytes the alphabets lack — the cases a
// mapping gets wrong.
func TestNoFalseNegativesAnyBytes(t *testing.T) {
	for seed := range uint64(sizeFor(300, 100)) {
		r := rand.New(rand.NewPCG(seed, 7))
		prefix := fuzzyKey(r, 3+int(seed%2)*300) // some past maxPositions
		var keys [][]byte
		for range 1 + r.IntN(40) {
			keys = append(keys, append(slices.Clone(prefix), fuzzyKey(r, 6)...))
		}
		oracle := newSortedKeys(keys)
		f := build(t, oracle, float64(MinBitsPerKey+r.IntN(20)))
		var bounds [][]byte
		for range 30 {
			bounds = append(bounds, nearby(r, oracle[r.IntN(len(oracle))]), append(slices.Clone(prefix), fuzzyKey(r, 7)...))
		}
		bounds = append(bounds, nil, prefix, prefix[:len(prefix)/2])
		checkNoFalseNegatives(t, f, oracle, bounds)
	}
}

// TestLongKeys: keys that differ only past maxPositions bytes after their
// common prefix share one value; the filter must still find them.
func TestLongKeys(t *testing.T) {
	base := bytes.Repeat([]byte("k"), 10)
	var keys [][]byte
	for i := range 20 {
		k := append(slices.Clone(base), bytes.Repeat([]byte{'a' + byte(i%3)}, 1)...)
		k = append(k, bytes.Repeat([]byte("x"), maxPositions+5)...)
		keys = append(keys, append(k, byte(i)))
	}
	oracle := newSortedKeys(keys)
	f := build(t, oracle, 10)
	var bounds [][]byte
	for _, k := range oracle {
		bounds = append(bounds, k, k[:len(k)-1], append(slices.Clone(k), 0), k[:len(base)+1])
	}
	checkNoFalseNegatives(t, f, oracle, bounds)
}

// TestExactAnswers: outside the keys' common prefix, below the smallest or
// above the largest key, and in an exact filter (dense keys), the filter
// answers as the oracle does.
func TestExactAnswers(t *testing.T) {
	var keys [][]byte
	for x := uint64(1000); x < 3000; x += 2 {
		keys = append(keys, decimal.key(nil, x))
	}
	f := build(t, keys, 10)
	if !f.Exact() {
		t.Fatalf("2,000 values in a span of 2,000 at 10 bits per key: not exact")
	}
	oracle := newSortedKeys(keys)
	for lo := uint64(900); lo < 3100; lo++ {
		for _, w := range []uint64{1, 2, 3, 8} {
			l, h := decimal.key(nil, lo), decimal.key(nil, lo+w)
			if got, want := f.MayContainRange(l, h), oracle.anyIn(l, h); got != want {
				t.Fatalf("[%s, %s): %v, want %v", l, h, got, want)
			}
		}
	}
	for _, tc := range []struct {
		lo, hi string
		want   bool
	}{
		{"", "0000000000000999", false},
		{"", "00000000000010000", true}, // longer than the keys: above 1000
		{"000000000000100", "0000000000001000", false},
		{"000000000000100", "00000000000010000", true},
		{"0000000000002999", "1", false},
		{"0000000000002998", "0000000000002998\x00", true},
		{"0000000000002998\x00", "1", false},
		{"1", "2", false},
		{"/", "0", false},
		{"0000000000001001", "0000000000001001", false}, // empty
		{"0000000000001002", "0000000000001000", false}, // reversed
	} {
		if got := f.MayContainRange([]byte(tc.lo), []byte(tc.hi)); got != tc.want {
			t.Errorf("[%q, %q): %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	for _, bpk := range []float64{2.9, 40.1, -1, 0} {
		if _, err := NewBuilder(bpk); !errors.As(err, new(*ArgumentError)) {
			t.Errorf("NewBuilder(%v): %v, want an ArgumentError", bpk, err)
		}
	}
	b, _ := NewBuilder(10)
	if _, err := b.Finish(); !errors.Is(err, ErrEmpty) {
		t.Errorf("Finish of no keys: %v, want ErrEmpty", err)
	}
	for _, k := range []string{"b", "b", "c"} {
		if err := b.Add([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add([]byte("a")); !errors.As(err, new(*ArgumentError)) {
		t.Errorf("a key out of order: %v, want an ArgumentError", err)
	}
	if b.Keys() != 2 {
		t.Errorf("Keys = %d, want 2 (a repeat is one key, a refused key none)", b.Keys())
	}
	data, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := b.Add([]byte("a")); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
	again, _ := b.Finish()
	f, _ := Decode(data)
	g, _ := Decode(again)
	if !f.MayContainRange([]byte("b"), []byte("b\x00")) || f.MayContainRange([]byte("a"), []byte("b")) ||
		!g.MayContainRange([]byte("a"), []byte("b")) || g.Keys() != 1 {
		t.Errorf("a reused builder's filters answer wrongly")
	}
}

// TestQueryAllocatesNothing: a query reads the encoding in place.
func TestQueryAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys, _ := shapeKeys(r, prefixSuffix, 1000, 0, prefixSuffix.max)
	f := build(t, keys, 12)
	lo, hi := prefixSuffix.key(nil, 12345), prefixSuffix.key(nil, 12377)
	if n := testing.AllocsPerRun(100, func() { f.MayContainRange(lo, hi) }); n != 0 {
		t.Errorf("MayContainRange allocates %v times", n)
	}
}

// TestMapKeys: the values a builder maps its keys to, a digit at a time
// from each key's partial sums, are what ceil gives each key, for the keys
// of every shape — and keys past the mapping's positions, or cut after
// them, share a value.
func TestMapKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	long := bytes.Repeat([]byte("k"), maxPositions+40)
	for _, sh := range shapes {
		keys, _ := shapeKeys(r, sh, 500, 0, sh.max)
		last := keys[len(keys)-1]
		keys = append(keys, append(slices.Clone(last), 0, 1),
			append(append(slices.Clone(last), 1), long...),
			append(append(append(slices.Clone(last), 1), long...), 2))
		b, err := NewBuilder(12)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := b.Add(k); err != nil {
				t.Fatal(err)
			}
		}
		m := b.alpha.keyMap(b.first[:b.prefixLen])
		if err := b.mapKeys(&m); err != nil {
			t.Fatal(err)
		}
		var want []uint64
		for _, k := range keys {
			if v, _, _ := m.ceil(k); len(want) == 0 || v != want[len(want)-1] {
				want = append(want, v)
			}
		}
		if !slices.Equal(b.vals, want) {
			t.Fatalf("%s: the builder maps the keys to %d values, ceil to %d; first difference at %d",
				sh.name, len(b.vals), len(want), firstDifference(b.vals, want))
		}
	}
}

func firstDifference(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestCeilPair: mapping both bounds at once gives what mapping each does.
func TestCeilPair(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, sh := range shapes {
		keys, xs := shapeKeys(r, sh, 300, 0, sh.max)
		f := build(t, keys, 12)
		for range 2000 {
			x := xs[r.IntN(len(xs))] - min(xs[0], r.Uint64N(3))
			lo, hi := sh.key(nil, x), sh.key(nil, min(x+r.Uint64N(200), sh.max-1))
			if r.IntN(4) == 0 {
				lo, hi = nearby(r, lo), nearby(r, hi)
			}
			a, aAbove, b, bStrict, bAbove := f.km.ceilPair(lo, hi)
			wa, _, waAbove := f.km.ceil(lo)
			wb, wbStrict, wbAbove := f.km.ceil(hi)
			if a != wa || aAbove != waAbove || b != wb || bStrict != wbStrict || bAbove != wbAbove {
				t.Fatalf("%s: ceilPair(%q, %q) = %d %v, %d %v %v; ceil says %d %v, %d %v %v",
					sh.name, lo, hi, a, aAbove, b, bStrict, bAbove, wa, waAbove, wb, wbStrict, wbAbove)
			}
		}
	}
}

// TestEmptyRanges: a range with hi ≤ lo holds no key, whatever the keys,
// so the filter answers false for it, as its doc says — also when a bound
// is a key, the empty key or the keys' common prefix.
func TestEmptyRanges(t *testing.T) {
	keys := newSortedKeys([][]byte{{}, []byte("ab"), []byte("ab\x00"), []byte("abc"), []byte("abd")})
	f := build(t, keys, 10)
	for _, tc := range []struct{ lo, hi []byte }{
		{nil, nil},
		{nil, []byte{}},
		{[]byte("ab"), []byte("ab")},
		{[]byte("ab\x00"), []byte("ab")},
		{[]byte("abd"), []byte("abc")},
		{[]byte("abd"), nil},
		{[]byte{0xff}, []byte("ab")},
	} {
		if f.MayContainRange(tc.lo, tc.hi) {
			t.Errorf("[%q, %q) is empty, the filter says it may hold a key", tc.lo, tc.hi)
		}
		if !f.MayContainRange(tc.hi, append(slices.Clone(tc.lo), 0)) && keys.anyIn(tc.hi, append(slices.Clone(tc.lo), 0)) {
			t.Errorf("false negative: [%q, %q\\x00) holds a key", tc.hi, tc.lo)
		}
	}
}

// sizeFor returns normal, or underRace under -race (race.Enabled), which
// slows the biggest tests tenfold.
func sizeFor(normal, underRace int) int {
	if race.Enabled {
		return underRace
	}
	return normal
}

// TestSelectInWord checks the broadword selection against a scan of the
// bits, for every k of words of every density, edge words included.
func TestSelectInWord(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := []uint64{1, 1 << 63, ^uint64(0), 0x8000000000000001, 0x0101010101010101, 0xff00000000000000}
	for range 2000 {
		w := r.Uint64()
		for range r.IntN(4) {
			w &= r.Uint64() // sparser words too
		}
		words = append(words, w|1<<r.IntN(64))
	}
	for _, w := range words {
		k := uint64(0)
		for pos := range uint64(64) {
			if w>>pos&1 == 0 {
				continue
			}
			if got := selectInWord(w, k); got != pos {
				t.Fatalf("selectInWord(%#x, %d) = %d, want %d", w, k, got, pos)
			}
			k++
		}
	}
}

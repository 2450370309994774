package bloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
)

// TestCountingModel runs random adds and removes against a multiset model:
// every key the model holds must test positive, and removing a key the
// filter reports absent must fail and change nothing.
func TestCountingModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	keys := keySet('P', 500, 13)
	f, err := NewCounting(len(keys), 0.01)
	must(t, err)
	model := map[int]int{}
	for op := range 20_000 {
		i := rng.IntN(len(keys))
		if rng.IntN(2) == 0 {
			f.Add(keys[i])
			model[i]++
		} else if model[i] > 0 {
			must(t, f.Remove(keys[i]))
			model[i]--
		} else if !f.MayContain(keys[i]) {
			before, _ := f.MarshalBinary()
			if err := f.Remove(keys[i]); !errors.Is(err, ErrNotPresent) {
				t.Fatalf("op %d: removing an absent key: %v, want ErrNotPresent", op, err)
			}
			if after, _ := f.MarshalBinary(); string(before) != string(after) {
				t.Fatalf("op %d: a refused Remove changed the filter", op)
			}
		}
		if op%1000 == 0 {
			for j, c := range model {
				if c > 0 && !f.MayContain(keys[j]) {
					t.Fatalf("op %d: key %d added %d times more than removed, but absent", op, j, c)
				}
			}
		}
	}
	total := 0
	for _, c := range model {
		total += c
	}
	if f.Saturated() == 0 && f.EstimatedCount() != float64(total) {
		t.Fatalf("EstimatedCount %v, model holds %d", f.EstimatedCount(), total)
	}
}

// TestCountingSaturation adds one key more often than a counter can count,
// then removes it as often: its counters saturate and stay, so the key and
// any key sharing those counters can never become a false negative.
func TestCountingSaturation(t *testing.T) {
	f, _ := NewCountingSize(1000, 4)
	hot, other := []byte("hot"), []byte("other")
	f.Add(other)
	for range 20 {
		f.Add(hot)
	}
	if f.Saturated() == 0 {
		t.Fatal("no counter saturated after 20 adds")
	}
	for range 20 {
		must(t, f.Remove(hot))
	}
	if !f.MayContain(hot) || !f.MayContain(other) {
		t.Fatal("a saturated counter was decremented")
	}
}

// TestCountingEmptiesCleanly adds and removes a set: without saturation the
// filter returns to all zeros.
func TestCountingEmptiesCleanly(t *testing.T) {
	keys := keySet('P', 2000, 14)
	f, _ := NewCounting(len(keys), 0.01)
	for _, k := range keys {
		f.Add(k)
	}
	if got := f.EstimatedCount(); got != float64(len(keys)) {
		t.Fatalf("count %v, want %d", got, len(keys))
	}
	// Swamidass–Baldi on non-zero counters agrees with the formula.
	want := ClassicFalsePositiveRate(f.Counters(), f.Probes(), float64(len(keys)))
	if got := f.EstimatedFalsePositiveRate(); math.Abs(got-want)/want > 0.2 {
		t.Fatalf("estimated rate %v, formula %v", got, want)
	}
	for _, k := range keys {
		must(t, f.Remove(k))
	}
	if f.EstimatedCount() != 0 || f.EstimatedFalsePositiveRate() != 0 {
		t.Fatalf("after removing all: count %v", f.EstimatedCount())
	}
}

// counterAt returns counter i's value, read the way the package doc's
// format describes it: the w bits at shift w·(i mod 64/w) of word i/(64/w).
func (f *Counting) counterAt(i uint64) uint64 {
	w := uint64(f.CounterBits())
	return f.words[i/(64/w)] >> (w * (i % (64 / w))) & (1<<w - 1)
}

// counterModel is the counting filter as the Counting doc states it, one
// counter per map entry: an add increments each of an item's k counters
// unless saturated at max; a remove of an item all of whose counters are
// non-zero decrements each unless saturated (or zero, after an earlier
// probe of the same item took it there); a saturated counter never changes.
type counterModel struct {
	m, max uint64
	k      int
	c      map[uint64]uint64
}

func newCounterModel(f *Counting) *counterModel {
	return &counterModel{m: f.Counters(), max: 1<<f.CounterBits() - 1, k: f.Probes(), c: map[uint64]uint64{}}
}

func (cm *counterModel) add(item []byte) {
	for _, i := range ClassicLocations(nil, Hash(item), cm.m, cm.k) {
		if cm.c[i] != cm.max {
			cm.c[i]++
		}
	}
}

func (cm *counterModel) present(item []byte) bool {
	for _, i := range ClassicLocations(nil, Hash(item), cm.m, cm.k) {
		if cm.c[i] == 0 {
			return false
		}
	}
	return true
}

func (cm *counterModel) remove(item []byte) bool {
	if !cm.present(item) {
		return false
	}
	for _, i := range ClassicLocations(nil, Hash(item), cm.m, cm.k) {
		if c := cm.c[i]; c != cm.max && c != 0 {
			cm.c[i]--
		}
	}
	return true
}

// check fails the test unless every counter of f is the model's, and the
// summaries follow from the counters.
func (cm *counterModel) check(t *testing.T, f *Counting, what string) {
	t.Helper()
	var sum, nonZero, saturated uint64
	for i := range cm.m {
		got, want := f.counterAt(i), cm.c[i]
		if got != want {
			t.Fatalf("%s: counter %d is %d, the model's is %d", what, i, got, want)
		}
		sum += want
		if want != 0 {
			nonZero++
		}
		if want == cm.max {
			saturated++
		}
	}
	if got, want := f.EstimatedCount(), float64(sum)/float64(cm.k); got != want {
		t.Fatalf("%s: EstimatedCount %v, the model's counters sum to %d over k = %d", what, got, sum, cm.k)
	}
	if got, want := f.LoadFactor(), float64(nonZero)/float64(cm.m); got != want {
		t.Fatalf("%s: LoadFactor %v, the model has %d of %d counters non-zero", what, got, nonZero, cm.m)
	}
	if f.Saturated() != saturated {
		t.Fatalf("%s: Saturated %d, the model has %d", what, f.Saturated(), saturated)
	}
}

var counterWidths = []int{4, 8, 16}

// TestCountingWidthModel runs random adds and removes on a filter of each
// counter width against the counter model: every counter must match after
// every 1,000 operations, saturated ones included.
func TestCountingWidthModel(t *testing.T) {
	for _, width := range counterWidths {
		t.Run(fmt.Sprintf("w=%d", width), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, uint64(width)))
			keys := keySet('P', 200, 22)
			f, err := NewCountingSize(600, 5, CounterBits(width))
			must(t, err)
			cm := newCounterModel(f)
			for op := range 20_000 {
				// Add a few hot keys far more often, so that 4- and 8-bit
				// counters saturate.
				key := keys[rng.IntN(len(keys))]
				if rng.IntN(4) == 0 {
					key = keys[rng.IntN(3)]
				}
				if rng.IntN(5) < 3 {
					f.Add(key)
					cm.add(key)
				} else {
					err := f.Remove(key)
					if ok := cm.remove(key); ok != (err == nil) || (err != nil && !errors.Is(err, ErrNotPresent)) {
						t.Fatalf("op %d: Remove: %v, the model removes: %v", op, err, ok)
					}
				}
				if op%1000 == 999 {
					cm.check(t, f, fmt.Sprintf("op %d", op))
				}
			}
			if width < 16 && f.Saturated() == 0 {
				t.Fatalf("no %d-bit counter saturated: the test no longer covers saturation", width)
			}
		})
	}
}

// TestCountingRepeatedItem is the scenario people run: one item inserted
// 1,000 times and removed 1,000 times. With 16-bit counters it is absent
// afterwards and the filter empty; 4- and 8-bit counters saturate at 15 and
// 255 on the way up and stick there, so the item stays present and the
// filter counts 15 or 255 of it.
func TestCountingRepeatedItem(t *testing.T) {
	const times = 1000
	item, other := []byte("hot-item"), []byte("bystander")
	for _, tc := range []struct {
		width        int
		absentAfter  bool
		countAtPeak  float64
		countAtFinal float64
	}{
		{4, false, 15, 15},
		{8, false, 255, 255},
		{16, true, times, 0},
	} {
		t.Run(fmt.Sprintf("w=%d", tc.width), func(t *testing.T) {
			f, err := NewCounting(100, 0.01, CounterBits(tc.width))
			must(t, err)
			cm := newCounterModel(f)
			distinct := map[uint64]bool{}
			for _, i := range ClassicLocations(nil, Hash(item), f.Counters(), f.Probes()) {
				distinct[i] = true
			}
			if len(distinct) != f.Probes() {
				t.Fatalf("the item's %d probes share counters; pick another item", f.Probes())
			}
			for range times {
				f.Add(item)
				cm.add(item)
			}
			cm.check(t, f, "after the adds")
			if got := f.EstimatedCount(); got != tc.countAtPeak {
				t.Fatalf("after %d adds: EstimatedCount %v, want %v", times, got, tc.countAtPeak)
			}
			for r := range times {
				if err := f.Remove(item); err != nil {
					t.Fatalf("remove %d: %v", r+1, err)
				}
				cm.remove(item)
			}
			cm.check(t, f, "after the removes")
			if got := f.MayContain(item); got == tc.absentAfter {
				t.Fatalf("after %d adds and removes: MayContain = %v", times, got)
			}
			if got := f.EstimatedCount(); got != tc.countAtFinal {
				t.Fatalf("after %d removes: EstimatedCount %v, want %v", times, got, tc.countAtFinal)
			}
			if tc.absentAfter {
				if err := f.Remove(item); !errors.Is(err, ErrNotPresent) {
					t.Fatalf("a 1,001st remove: %v, want ErrNotPresent", err)
				}
			}
			if f.MayContain(other) {
				// One item in the filter: a false positive has odds (k/m)^k, 10^-15.
				t.Fatal("an item never added tests present")
			}
		})
	}
}

// TestCountingConcurrentMixed has 10 goroutines make 5,000 random inserts
// and removes each over 100 items, every goroutine removing only what it
// added itself, so what remains is the sum of their leftovers. A counter
// that never saturated saw every increment and decrement (none reached
// zero early, since each decrement follows its own increment), so it must
// equal the model's sum exactly; a saturated one sits at its maximum.
// The estimated count and load factor follow, and the load factor of what
// remains must match 1 − (1 − 1/m)^(k·d) for its d distinct items within
// five standard deviations (a binomial bound: counters' zeros are
// negatively correlated, so the true spread is smaller). Run under -race.
func TestCountingConcurrentMixed(t *testing.T) {
	const goroutines, ops, numItems = 10, 5000, 100
	keys := keySet('P', numItems, 23)
	for _, width := range counterWidths {
		t.Run(fmt.Sprintf("w=%d", width), func(t *testing.T) {
			f, err := NewCounting(numItems, 0.01, CounterBits(width))
			must(t, err)
			held := make([]map[int]int, goroutines)
			start := make(chan struct{}) // so that the goroutines overlap
			var wg sync.WaitGroup
			for g := range goroutines {
				held[g] = map[int]int{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					rng := rand.New(rand.NewPCG(24, uint64(g)))
					var mine []int // items this goroutine holds, with repeats
					for range ops {
						if len(mine) == 0 || rng.IntN(2) == 0 {
							i := rng.IntN(numItems)
							f.Add(keys[i])
							mine = append(mine, i)
							continue
						}
						j := rng.IntN(len(mine))
						i := mine[j]
						mine[j] = mine[len(mine)-1]
						mine = mine[:len(mine)-1]
						if err := f.Remove(keys[i]); err != nil {
							t.Errorf("goroutine %d: removing an item it holds: %v", g, err)
							return
						}
					}
					for _, i := range mine {
						held[g][i]++
					}
				}()
			}
			close(start)
			wg.Wait()
			remaining := map[int]int{}
			total := 0
			for _, h := range held {
				for i, c := range h {
					remaining[i] += c
					total += c
				}
			}
			want := map[uint64]uint64{}
			for i, c := range remaining {
				if !f.MayContain(keys[i]) {
					t.Fatalf("item %d held %d times, but absent", i, c)
				}
				for _, pos := range ClassicLocations(nil, Hash(keys[i]), f.Counters(), f.Probes()) {
					want[pos] += uint64(c)
				}
			}
			maxC := uint64(1)<<width - 1
			var sum, nonZero uint64
			for pos := range f.Counters() {
				got := f.counterAt(pos)
				if got != maxC && got != want[pos] {
					t.Fatalf("counter %d is %d, the leftovers put %d there", pos, got, want[pos])
				}
				sum += got
				if got != 0 {
					nonZero++
				}
			}
			if got := f.EstimatedCount(); got != float64(sum)/float64(f.Probes()) {
				t.Fatalf("EstimatedCount %v, counters sum to %d", got, sum)
			}
			if got := f.LoadFactor(); got != float64(nonZero)/float64(f.Counters()) {
				t.Fatalf("LoadFactor %v, %d non-zero counters", got, nonZero)
			}
			t.Logf("%d items remain (%d distinct); %d counters saturated", total, len(remaining), f.Saturated())
			if width == 4 {
				return // saturated counters may hold items since removed
			}
			// 8 and 16 bits: no counter comes near 255 here, so the
			// estimates are exact.
			if f.Saturated() != 0 {
				t.Fatalf("%d counters of %d bits saturated", f.Saturated(), width)
			}
			if got := f.EstimatedCount(); got != float64(total) {
				t.Fatalf("EstimatedCount %v, %d items remain", got, total)
			}
			m, kd := float64(f.Counters()), float64(f.Probes()*len(remaining))
			q := 1 - math.Pow(1-1/m, kd)
			if tol := 5 * math.Sqrt(q*(1-q)/m); math.Abs(f.LoadFactor()-q) > tol {
				t.Fatalf("LoadFactor %.4f, expected %.4f ± %.4f for %d distinct items", f.LoadFactor(), q, tol, len(remaining))
			}
		})
	}
}

// TestCountingWidths checks each width's size, accessors and encoding: the
// version and width bytes the package doc gives, and a round trip that
// keeps every counter.
func TestCountingWidths(t *testing.T) {
	keys := keySet('P', 300, 25)
	for _, tc := range []struct {
		opts           []CountingOption
		width          int
		version, byte7 byte
	}{
		{nil, 4, 1, 0},
		{[]CountingOption{CounterBits(4)}, 4, 1, 0},
		{[]CountingOption{CounterBits(8)}, 8, 2, 8},
		{[]CountingOption{CounterBits(16)}, 16, 2, 16},
		{[]CountingOption{CounterBits(8), CounterBits(16)}, 16, 2, 16}, // the last option wins
	} {
		f, err := NewCounting(len(keys), 0.01, tc.opts...)
		must(t, err)
		if f.CounterBits() != tc.width {
			t.Fatalf("CounterBits() = %d, want %d", f.CounterBits(), tc.width)
		}
		m := f.Counters()
		if want := int(8 * ((m*uint64(tc.width) + 63) / 64)); f.SizeBytes() != want {
			t.Fatalf("w=%d: SizeBytes %d, want %d for %d counters", tc.width, f.SizeBytes(), want, m)
		}
		for _, k := range keys {
			f.Add(k)
		}
		data, _ := f.MarshalBinary()
		if data[4] != tc.version || data[7] != tc.byte7 {
			t.Fatalf("w=%d: version byte %d and byte 7 = %d, want %d and %d", tc.width, data[4], data[7], tc.version, tc.byte7)
		}
		if got := binary.LittleEndian.Uint64(data[24:]); got != uint64(f.SizeBytes()) {
			t.Fatalf("w=%d: payload length %d, want %d", tc.width, got, f.SizeBytes())
		}
		g := new(Counting)
		must(t, g.UnmarshalBinary(data))
		if g.CounterBits() != tc.width {
			t.Fatalf("w=%d: decoded CounterBits %d", tc.width, g.CounterBits())
		}
		for i := range m {
			if f.counterAt(i) != g.counterAt(i) {
				t.Fatalf("w=%d: counter %d is %d after a round trip, was %d", tc.width, i, g.counterAt(i), f.counterAt(i))
			}
		}
	}
	for _, width := range []int{0, 1, 2, 3, 5, 12, 32, 64, -4} {
		_, err1 := NewCounting(10, 0.01, CounterBits(width))
		_, err2 := NewCountingSize(100, 3, CounterBits(width))
		for _, err := range []error{err1, err2} {
			var ae *ArgumentError
			if !errors.As(err, &ae) || ae.Arg != "counterBits" {
				t.Fatalf("CounterBits(%d): %v, want an *ArgumentError naming counterBits", width, err)
			}
		}
	}
}

// TestCountingVersion1Decodes reads testdata/counting-v1.bin, written by the
// release before counter widths existed (NewCounting(100, 0.01), "apple"
// added twice, "banana" and "cherry" once): it decodes as a 4-bit filter
// holding those items and re-encodes to the same bytes.
func TestCountingVersion1Decodes(t *testing.T) {
	data, err := os.ReadFile("testdata/counting-v1.bin")
	must(t, err)
	f := new(Counting)
	must(t, f.UnmarshalBinary(data))
	if f.CounterBits() != 4 || f.Counters() != 959 || f.Probes() != 7 || f.EstimatedCount() != 4 {
		t.Fatalf("decoded w=%d m=%d k=%d count=%v, want w=4 m=959 k=7 count=4", f.CounterBits(), f.Counters(), f.Probes(), f.EstimatedCount())
	}
	for _, w := range []string{"apple", "banana", "cherry"} {
		if !f.MayContain([]byte(w)) {
			t.Fatalf("%s absent", w)
		}
	}
	must(t, f.Remove([]byte("apple")))
	must(t, f.Remove([]byte("apple")))
	if f.MayContain([]byte("apple")) {
		t.Fatal("apple present after removing both of its adds")
	}
	g, err := NewCounting(100, 0.01)
	must(t, err)
	for _, w := range []string{"apple", "banana", "cherry", "apple"} {
		g.Add([]byte(w))
	}
	if again, _ := g.MarshalBinary(); !bytes.Equal(again, data) {
		t.Fatal("a 4-bit filter no longer encodes as the version-1 fixture")
	}
}

// TestCountingHeaderVersions re-signs headers that mix version, kind and
// width in ways no encoder writes: each must be refused as corrupt.
func TestCountingHeaderVersions(t *testing.T) {
	f, err := NewCounting(40, 0.05, CounterBits(16))
	must(t, err)
	f.Add([]byte("x"))
	v2, _ := f.MarshalBinary()
	classic, _ := NewClassic(40, 0.05)
	v1Classic, _ := classic.MarshalBinary()
	four, _ := NewCounting(40, 0.05)
	v1Counting, _ := four.MarshalBinary()
	resign := func(data []byte, edit func(b []byte)) []byte {
		b := bytes.Clone(data)
		edit(b)
		binary.LittleEndian.PutUint32(b[32:], crc32.Checksum(b[:32], castagnoli))
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"version 2, width 4", resign(v1Counting, func(b []byte) { b[4], b[7] = 2, 4 })},
		{"version 2, width 0", resign(v1Counting, func(b []byte) { b[4] = 2 })},
		{"version 2, width 12", resign(v2, func(b []byte) { b[7] = 12 })},
		{"version 2, width 8 for a 16-bit payload", resign(v2, func(b []byte) { b[7] = 8 })},
		{"version 1, width 16", resign(v2, func(b []byte) { b[4] = 1 })},
		{"version 2 classic", resign(v1Classic, func(b []byte) { b[4] = 2 })},
		{"version 2 classic with a width", resign(v1Classic, func(b []byte) { b[4], b[7] = 2, 8 })},
		{"version 3", resign(v2, func(b []byte) { b[4] = 3 })},
		{"version 0", resign(v1Counting, func(b []byte) { b[4] = 0 })},
	} {
		if _, err := Unmarshal(tc.data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

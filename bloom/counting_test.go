package bloom

import (
	"errors"
	"math"
	"math/rand/v2"
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

package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"testing"
)

// TestLoadFactor fills each kind of filter and checks LoadFactor against
// two oracles: the bits set or counters non-zero counted directly in the
// filter's serialized payload, exactly; and the expected fill
// 1 − (1 − h/m)^(n) for n items each touching a given bit or counter with
// chance h/m (h = k for classic and counting; for blocked, the chance that
// one of k probes in a 512-bit block hits it, times the block's share),
// within five binomial standard deviations, which bound the true spread.
func TestLoadFactor(t *testing.T) {
	const n = 10_000
	keys := keySet('P', n, 31)
	classic, err := NewClassic(n, 0.01)
	must(t, err)
	blocked, err := NewBlocked(n, 10)
	must(t, err)
	type filled struct {
		name   string
		f      Filter
		m      uint64
		hitsOf func(payload []byte) uint64 // bits set or counters non-zero
		perBit float64                     // an item's chance of touching one given bit or counter
	}
	filters := []filled{
		{"classic", classic, classic.Bits(), popCountBytes, float64(classic.Probes()) / float64(classic.Bits())},
		{"blocked", blocked, blocked.Bits(), popCountBytes,
			-math.Expm1(float64(blocked.Probes())*math.Log1p(-1.0/512)) / float64(blocked.Bits()/512)},
	}
	for _, width := range counterWidths {
		c, err := NewCounting(n, 0.01, CounterBits(width))
		must(t, err)
		filters = append(filters, filled{fmt.Sprintf("counting w=%d", width), c, c.Counters(), nonZeroCounters(width), float64(c.Probes()) / float64(c.Counters())})
	}
	for _, tc := range filters {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.LoadFactor(); got != 0 {
				t.Fatalf("empty filter: LoadFactor %v", got)
			}
			for _, k := range keys {
				tc.f.Add(k)
			}
			data, _ := tc.f.MarshalBinary()
			hits := tc.hitsOf(data[headerLen : len(data)-checksumLen])
			if got, want := tc.f.LoadFactor(), float64(hits)/float64(tc.m); got != want {
				t.Fatalf("LoadFactor %v, the payload has %d of %d set: %v", got, hits, tc.m, want)
			}
			m := float64(tc.m)
			q := -math.Expm1(n * math.Log1p(-tc.perBit))
			if tol := 5 * math.Sqrt(q*(1-q)/m); math.Abs(tc.f.LoadFactor()-q) > tol {
				t.Fatalf("LoadFactor %.5f, expected %.5f ± %.5f", tc.f.LoadFactor(), q, tol)
			}
			// And the textbook form, 1 − e^(−kn/m), within a percent.
			if k := tc.f.(interface{ Probes() int }).Probes(); math.Abs(tc.f.LoadFactor()+math.Expm1(-float64(k)*n/m)) > 0.01 {
				t.Fatalf("LoadFactor %.5f, 1 − e^(−kn/m) = %.5f", tc.f.LoadFactor(), -math.Expm1(-float64(k)*n/m))
			}
		})
	}
}

func popCountBytes(b []byte) uint64 {
	var n int
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return uint64(n)
}

// nonZeroCounters counts the non-zero counters in a counting filter's
// payload of width-bit counters. They are aligned within the words, so a
// byte holds two 4-bit counters or one 8-bit counter, and each pair of
// bytes one 16-bit counter, whatever the words' byte order.
func nonZeroCounters(width int) func([]byte) uint64 {
	return func(b []byte) uint64 {
		var n uint64
		switch width {
		case 4:
			for _, x := range b {
				if x&0x0f != 0 {
					n++
				}
				if x&0xf0 != 0 {
					n++
				}
			}
		case 8:
			for _, x := range b {
				if x != 0 {
					n++
				}
			}
		case 16:
			for i := 0; i < len(b); i += 2 {
				if b[i]|b[i+1] != 0 {
					n++
				}
			}
		}
		return n
	}
}

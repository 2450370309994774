package bloom

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/bloomkv/bloomkv/internal/race"
)

// settingsFor returns the settings a false-positive test measures: all of
// them, or under -race the one at index i alone. The race detector slows
// these single-goroutine loops tenfold and checks nothing in them but the
// unsafe reads' pointer rules, which one setting exercises as well as
// all; `make test-plain` measures every setting.
func settingsFor[T any](all []T, i int) []T {
	if race.Enabled {
		return all[i : i+1]
	}
	return all
}

// keySet returns n distinct 16-byte keys from a fixed seed. Keys of
// different tags never collide, so tag 'P' keys can be added and tag 'A'
// keys used as known-absent queries.
func keySet(tag byte, n int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, uint64(tag)))
	keys := make([][]byte, n)
	buf := make([]byte, 16*n)
	for i := range keys {
		k := buf[16*i : 16*i+16 : 16*i+16]
		k[0] = tag
		binary.LittleEndian.PutUint32(k[1:], uint32(i)) // distinct within the set
		binary.LittleEndian.PutUint64(k[5:], rng.Uint64())
		k[13], k[14], k[15] = byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())
		keys[i] = k
	}
	return keys
}

// queriesFor returns how many absent-key queries make a measured rate near
// q land within relative tolerance tol of q with z standard deviations of
// binomial noise to spare: N ≥ (z/tol)²·(1−q)/q, and at least min.
func queriesFor(q, tol, z float64, min int) int {
	n := int(math.Ceil(z * z / (tol * tol) * (1 - q) / q))
	return max(n, min)
}

// measureFPR counts how many of n absent keys (tag 'A', generated lazily in
// batches to bound memory) the filter reports as present.
func measureFPR(mayContain func([]byte) bool, n int, seed uint64) float64 {
	const batch = 1 << 18
	positives := 0
	for done := 0; done < n; done += batch {
		for _, k := range keySet('A', min(batch, n-done), seed+uint64(done)) {
			if mayContain(k) {
				positives++
			}
		}
	}
	return float64(positives) / float64(n)
}

package bloom

import (
	"math/rand/v2"
	"testing"
)

// TestBlockMayContainHash checks the answer from one block against the
// whole filter's, for present and absent items, at bits per key that take
// the unrolled probes (up to 7) and the probe sequence past them.
func TestBlockMayContainHash(t *testing.T) {
	for _, bitsPerKey := range []float64{1, 4.5, 10, 16, 24} {
		r := rand.New(rand.NewPCG(7, uint64(bitsPerKey*10)))
		hashes := make([]uint64, 5000)
		for i := range hashes {
			hashes[i] = r.Uint64()
		}
		f, err := BuildBlocked(hashes, bitsPerKey)
		if err != nil {
			t.Fatal(err)
		}
		blocks := f.AppendBlocks(nil, 0, f.NumBlocks())
		if got, want := len(blocks), f.SizeBytes(); got != want {
			t.Fatalf("%v bits/key: AppendBlocks wrote %d bytes, the filter has %d", bitsPerKey, got, want)
		}
		check := func(h uint64, present bool) {
			b := BlockOf(h, f.NumBlocks())
			got := BlockMayContainHash((*[64]byte)(blocks[64*b:]), h, f.Probes())
			if want := f.MayContainHash(h); got != want || present && !got {
				t.Fatalf("%v bits/key, hash %#x (present %v): block says %v, filter %v", bitsPerKey, h, present, got, want)
			}
		}
		for _, h := range hashes {
			check(h, true)
		}
		for range 50000 {
			check(r.Uint64(), false)
		}
		// A block range appends the same bytes as the whole.
		if mid := f.NumBlocks() / 2; string(f.AppendBlocks(f.AppendBlocks(nil, 0, mid), mid, f.NumBlocks())) != string(blocks) {
			t.Fatalf("%v bits/key: blocks appended in two ranges differ from the whole", bitsPerKey)
		}
	}
}

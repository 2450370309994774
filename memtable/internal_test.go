package memtable

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestCompareMatchesBase checks the tree's order against the project's
// definition of internal-key order.
func TestCompareMatchesBase(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	gen := func() (entry, base.InternalKey) {
		// Short keys over a tiny alphabet with 0x00 and 0xff: equal
		// 8-byte prefixes, zero padding and real zero bytes are all common.
		k := make([]byte, rng.IntN(12))
		for i := range k {
			k[i] = "\x00\x01\xff"[rng.IntN(3)]
		}
		tr := base.MakeTrailer(base.SeqNum(rng.IntN(4)), base.Kind(rng.IntN(2)))
		// The value must not take part in the order.
		kv := append(append([]byte{}, k...), byte(rng.IntN(256)))
		return entry{kv: kv, prefix: keyPrefix(k), klen: uint32(len(k)), trailer: tr}, base.InternalKey{UserKey: k, Trailer: tr}
	}
	for range 10000 {
		a, ia := gen()
		b, ib := gen()
		if got, want := compare(a, b), base.CompareInternal(ia, ib); got != want {
			t.Fatalf("compare(%v, %v) = %d, base.CompareInternal = %d", ia, ib, got, want)
		}
	}
}

func TestArena(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sizeHint     int64
		wantChunk    int
		entries      int
		key, value   int
		wantOwnAlloc bool // each entry bigger than a quarter chunk gets its own allocation
	}{
		{"default", 0, defaultChunkSize, 1000, 10, 100, false},
		{"tiny-hint", 1, minChunkSize, 1000, 10, 100, false},
		{"huge-hint", 1 << 40, maxChunkSize, 100, 10, 100, false},
		{"64MiB", 64 << 20, maxChunkSize, 100, 10, 100, false},
		{"4MiB", 4 << 20, 128 << 10, 100, 10, 100, false},
		{"big-values", 0, defaultChunkSize, 20, 10, defaultChunkSize / 2, true},
		{"empty-entries", 0, defaultChunkSize, 100, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := arena{chunkSize: chunkSizeFor(tc.sizeHint)}
			if a.chunkSize != tc.wantChunk {
				t.Fatalf("chunk size %d, want %d", a.chunkSize, tc.wantChunk)
			}
			var got [][]byte
			var want [][]byte
			payload := 0
			for i := range tc.entries {
				k := bytes.Repeat([]byte{byte(i)}, tc.key)
				v := bytes.Repeat([]byte{byte(i + 1)}, tc.value)
				kv := a.alloc(k, v)
				if cap(kv) != len(kv) {
					t.Fatalf("entry %d has spare capacity %d", i, cap(kv)-len(kv))
				}
				got, want = append(got, kv), append(want, append(k, v...))
				payload += len(kv)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("entry %d was overwritten", i)
				}
			}
			// Chunks waste at most the unused part of the current chunk
			// plus, in each full one, a tail too short for the next entry.
			if tc.wantOwnAlloc {
				if a.allocated != int64(payload) {
					t.Fatalf("big entries: allocated %d bytes for %d", a.allocated, payload)
				}
			} else {
				chunks := a.allocated / int64(a.chunkSize)
				slack := int64(a.chunkSize) + chunks*int64(tc.key+tc.value)
				if a.allocated > int64(payload)+slack {
					t.Fatalf("allocated %d bytes in %d chunks for %d", a.allocated, chunks, payload)
				}
			}
		})
	}
}

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
		// Keys over a tiny alphabet with 0x00 and 0xff, half of them
		// after a shared stem of 0 to 20 bytes: equal 16-byte prefixes,
		// keys ending inside and beyond the prefix, zero padding and real
		// zero bytes are all common.
		k := bytes.Repeat([]byte{'0'}, rng.IntN(21)*rng.IntN(2))
		for range rng.IntN(12) {
			k = append(k, "\x00\x01\xff"[rng.IntN(3)])
		}
		tr := base.MakeTrailer(base.SeqNum(rng.IntN(4)), base.Kind(rng.IntN(2)))
		// The value must not take part in the order.
		kv := append(append([]byte{}, k...), byte(rng.IntN(256)))
		return makeEntry(kv, len(k), tr), base.InternalKey{UserKey: k, Trailer: tr}
	}
	for range 100000 {
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
				if a.allocated.Load() != int64(payload) {
					t.Fatalf("big entries: allocated %d bytes for %d", a.allocated.Load(), payload)
				}
			} else {
				chunks := a.allocated.Load() / int64(a.chunkSize)
				slack := int64(a.chunkSize) + chunks*int64(tc.key+tc.value)
				if a.allocated.Load() > int64(payload)+slack {
					t.Fatalf("allocated %d bytes in %d chunks for %d", a.allocated.Load(), chunks, payload)
				}
			}
		})
	}
}

// TestRefsFreeArena checks the lifetime rule: the arena and the tree are
// freed exactly when the last reference is dropped, and misuse of a released memtable
// panics rather than touching freed memory.
func TestRefsFreeArena(t *testing.T) {
	m := New(1 << 20)
	for i := range 1000 {
		m.Add(base.SeqNum(i+1), base.KindSet, []byte{byte(i >> 8), byte(i)}, bytes.Repeat([]byte{byte(i)}, 100))
	}
	if len(m.arena.chunks) == 0 {
		t.Fatal("no arena chunks after 1000 adds")
	}
	m.Ref()
	m.Unref()
	if v, _, _, ok := m.Get([]byte{3, 231}, base.SeqNumMax); !ok || !bytes.Equal(v, bytes.Repeat([]byte{231}, 100)) {
		t.Fatalf("Get after Ref+Unref = %q, %v", v, ok)
	}
	m.Unref()
	if m.arena.chunks != nil || m.arena.chunk != nil {
		t.Fatal("the last Unref kept the arena")
	}
	if m.tree != nil {
		t.Fatal("the last Unref kept the tree")
	}
	for _, misuse := range []struct {
		name string
		f    func()
	}{{"Ref", m.Ref}, {"Unref", m.Unref}, {"Ref", m.Ref}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a released memtable did not panic", misuse.name)
				}
			}()
			misuse.f()
		}()
	}
}

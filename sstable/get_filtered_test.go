package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
)

// TestGetFiltered checks the two halves of Get a lookup over many tables
// calls apart: MayContainHash, which must never rule out a user key the
// table holds (the map of its keys is the oracle), and is true for every
// key of a table without a filter; and GetFiltered, which with that
// verdict must answer as modelGet does, and with a negative one must find
// nothing and count the filter's check, as Get counts it.
func TestGetFiltered(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	entries := randomEntries(rng, 2000, 6, 20)
	held := map[string]bool{}
	for _, e := range entries {
		held[string(e.key.UserKey)] = true
	}
	for _, tc := range []struct {
		name string
		opts WriterOptions
	}{
		{"bloom", WriterOptions{BlockSize: 128, Filter: Bloom(10)}},
		{"fuse", WriterOptions{BlockSize: 128, Filter: Fuse(8)}},
		{"ribbon", WriterOptions{BlockSize: 128, Filter: Ribbon(8)}},
		{"no filter", WriterOptions{BlockSize: 128}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openTable(t, buildTable(t, entries, tc.opts), nil)
			negatives := 0
			for q := range 5000 {
				uk := fmt.Appendf(nil, "%x", rng.Uint32()%4096)
				if q%2 == 0 {
					uk = entries[rng.IntN(len(entries))].key.UserKey
				}
				seq := base.SeqNum(rng.IntN(3000))
				k := MakeLookupKey(uk, seq)
				maybe := r.MayContainHash(k.Hash)
				if held[string(uk)] && !maybe || r.Filter() == nil && !maybe {
					t.Fatalf("MayContainHash(%q) = false: the table holds it, or has no filter", uk)
				}
				if want := r.Filter() == nil || r.Filter().MayContainHash(bloom.Hash(uk)); maybe != want {
					t.Fatalf("MayContainHash(%q) = %v, the filter says %v", uk, maybe, want)
				}
				var stats LookupStats
				value, kind, found, err := r.GetFiltered(k, maybe, &stats)
				if err != nil {
					t.Fatal(err)
				}
				e, ok := modelGet(entries, uk, seq)
				if found != ok || ok && (kind != e.key.Kind() || !bytes.Equal(value, e.value)) {
					t.Fatalf("GetFiltered(%q, %d) = %q, %v, %v; want %q, %v, %v", uk, seq, value, kind, found, e.value, e.key.Kind(), ok)
				}
				if stats.FilterChecked != (r.Filter() != nil) || stats.FilterNegative != !maybe {
					t.Fatalf("GetFiltered(%q) stats %+v with verdict %v", uk, stats, maybe)
				}
				if maybe && r.Filter() != nil {
					// A negative verdict, for a table with a filter, ends
					// the Get: nothing found, nothing read.
					stats = LookupStats{}
					if _, _, found, err := r.GetFiltered(k, false, &stats); found || err != nil || stats != (LookupStats{FilterChecked: true, FilterNegative: true}) {
						t.Fatalf("GetFiltered(%q, false) = found %v, %v, stats %+v; want nothing, the filter's check", uk, found, err, stats)
					}
				} else if !maybe {
					negatives++
				}
			}
			if r.Filter() != nil && negatives == 0 {
				t.Fatal("no key was ruled out: the test did not exercise the filter")
			}
		})
	}
}

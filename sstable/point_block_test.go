package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
)

// TestPointLookupsThroughAdmission answers Gets and located Gets (Locate,
// LoadBlock, GetLocated: MultiGet's path) from two goroutines at once
// against modelGet, through no cache, a cache that admits every block (room
// for the table), and one of a few blocks a shard, full after the first
// lookups, which admits a block at its second miss and reads the others
// into buffers the lookup borrows: every answer must be the model's,
// whichever way its block came, and each lookup that reaches a data block
// must count exactly one, read or cached.
func TestPointLookupsThroughAdmission(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	entries := randomEntries(rng, 20_000, 8, 40)
	data := buildTable(t, entries, WriterOptions{BlockSize: 1024, Filter: Bloom(10)})
	for _, tc := range []struct {
		name         string
		cache        *cache.Cache
		wantRejected bool // some blocks read and not cached
	}{
		{"no cache", nil, false},
		{"room for the table", cache.New(int64(len(data)) * 4), false},
		{"a few blocks a shard", cache.New(16 * 8 << 10), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.cache.Close()
			r := openTable(t, data, tc.cache)
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for g := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- pointLookups(r, entries, rand.New(rand.NewPCG(uint64(g), 5)), 4000)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			m := tc.cache.Metrics()
			if rejected := m.Rejected > 0; rejected != tc.wantRejected {
				t.Fatalf("cache metrics %+v: blocks not admitted %v, want %v", m, rejected, tc.wantRejected)
			}
			if tc.wantRejected && m.Hits == 0 {
				t.Fatalf("cache metrics %+v: no block admitted at its second miss was hit", m)
			}
		})
	}
}

// pointLookups makes n lookups of r's keys and others, by Get and by
// Locate/LoadBlock/GetLocated in turn, and returns the first that
// differs from modelGet.
func pointLookups(r *Reader, entries []entry, rng *rand.Rand, n int) error {
	for q := range n {
		uk := entries[rng.IntN(len(entries))].key.UserKey
		if q%5 == 0 {
			uk = append(bytes.Clone(uk), 'z') // most are absent
		}
		seq := base.SeqNum(rng.IntN(len(entries) + 100))
		k := MakeLookupKey(uk, seq)
		var stats LookupStats
		var value []byte
		var kind Kind
		var found bool
		if q%2 == 0 {
			var err error
			if value, kind, found, err = r.Get(k, &stats); err != nil {
				return err
			}
		} else {
			loc, ok, err := r.Locate(k, &stats)
			if err != nil {
				return err
			}
			if ok {
				b, _, err := r.LoadBlock(loc, &stats, false)
				if err != nil {
					return err
				}
				res, err := r.GetLocated(b, k, loc)
				b.Release()
				if err != nil {
					return err
				}
				value, kind, found = res.Value, res.Kind, res.Found
			}
		}
		e, ok := modelGet(entries, uk, seq)
		if found != ok || ok && (kind != e.key.Kind() || !bytes.Equal(value, e.value)) {
			return fmt.Errorf("lookup %q at %d = %q, %v, %v; want %q, %v, %v", uk, seq, value, kind, found, e.value, e.key.Kind(), ok)
		}
		if blocks := stats.BlocksRead + stats.BlocksCached; blocks > 1 || found && blocks != 1 {
			return fmt.Errorf("lookup %q: stats %+v, want one data block", uk, stats)
		}
	}
	return nil
}

package sstable

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestGetKeyPresent checks LookupStats.KeyPresent against a map of the
// table's user keys: it must say whether the table holds the user key at
// any sequence number, also when Get finds nothing because every version
// is newer than the read — the case a snapshot read of a key overwritten
// later meets, which the DB's metrics used to count as a filter false
// positive. Small blocks put a key's versions in several blocks, so the
// version a read would see, the newer ones, and the end of the table fall
// on either side of block boundaries.
func TestGetKeyPresent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	random := randomEntries(rng, 3000, 6, 20)
	// Many versions of one key, 60 bytes each, in blocks of 128 bytes: a
	// read below them all seeks past several blocks of them; "z" is last,
	// so a read below its versions seeks past the end of the table.
	var spread []entry
	for _, uk := range []string{"a", "k", "z"} {
		for seq := base.SeqNum(200); seq > 100; seq -= 5 {
			spread = append(spread, entry{base.MakeInternalKey([]byte(uk), seq, base.KindSet), make([]byte, 60)})
		}
	}
	for _, tc := range []struct {
		name    string
		entries []entry
		opts    WriterOptions
	}{
		{"random, filter", random, WriterOptions{BlockSize: 64, Filter: Bloom(10)}},
		{"random, no filter", random, WriterOptions{BlockSize: 64}},
		{"random, default blocks", random, WriterOptions{Filter: Bloom(10)}},
		{"versions over blocks", spread, WriterOptions{BlockSize: 128, Filter: Bloom(10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openTable(t, buildTable(t, tc.entries, tc.opts), nil)
			userKeys := map[string]bool{}
			var maxSeq base.SeqNum
			for _, e := range tc.entries {
				userKeys[string(e.key.UserKey)] = true
				maxSeq = max(maxSeq, e.key.SeqNum())
			}
			newerOnly := 0
			for q := range 20_000 {
				var uk []byte
				if q%2 == 0 {
					uk = tc.entries[rng.IntN(len(tc.entries))].key.UserKey
				} else {
					uk = fmt.Appendf(nil, "%c%d", 'a'+rng.IntN(26), rng.IntN(50))
				}
				seq := base.SeqNum(rng.IntN(int(maxSeq) + 2))
				var stats LookupStats
				_, _, found, err := r.Get(MakeLookupKey(uk, seq), &stats)
				if err != nil {
					t.Fatal(err)
				}
				if _, wantFound := modelGet(tc.entries, uk, seq); found != wantFound {
					t.Fatalf("Get(%q, %d): found %v, model %v", uk, seq, found, wantFound)
				}
				if want := userKeys[string(uk)]; stats.KeyPresent != want {
					t.Fatalf("Get(%q, %d): KeyPresent %v, found %v, stats %+v; the table holds the key: %v",
						uk, seq, stats.KeyPresent, found, stats, want)
				}
				if stats.KeyPresent && !found {
					newerOnly++
				}
			}
			if newerOnly == 0 {
				t.Fatal("no read found only newer versions: the case went untested")
			}
		})
	}
}
